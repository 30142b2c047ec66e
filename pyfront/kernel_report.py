"""What a profile of native CPU programs shows: a table of the kernels where the time went, and
a trace for Perfetto or chrome://tracing (``mlax.profiler``).

The calls come from the CPU runtime (backends/cpu/kernel_events.py): each call of a profiled
program with its kernels' (index, start, end) events. Loops and conditionals are spans around
the kernels they run; the time of a call that no kernel accounts for (allocation, freeing,
loop control, the call itself) is shown as "outside kernels".
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mlax.backends.cpu.kernel_events import Kernel, ProgramCall


@dataclass
class KernelStats:
    """One kernel of one program, over every call of it."""

    program: str
    kernel: Kernel
    calls: int = 0
    total_ns: int = 0

    @property
    def gigabytes_per_second(self) -> float:
        return self.kernel.bytes * self.calls / self.total_ns if self.total_ns else 0.0


def _short_source(source: str) -> str:
    """``a/b/train.py:12 (loss); a/b/train.py:14 (loss)`` -> ``train.py:12,14``."""
    by_file: dict[str, list[str]] = defaultdict(list)
    for part in filter(None, source.split("; ")):
        where = part.split(" (")[0]
        file, _, line = where.rpartition(":")
        by_file[os.path.basename(file)].append(line)
    return "; ".join(f"{file}:{','.join(lines)}" for file, lines in by_file.items())


class KernelProfile:
    """The native CPU calls recorded by one profile (``mlax.profiler.kernel_profile()``)."""

    def __init__(self, calls: Sequence[ProgramCall] = ()) -> None:
        self.calls = list(calls)

    def kernel_stats(self) -> list[KernelStats]:
        """Every kernel that ran, most total time first."""
        stats: dict[tuple[int, int], KernelStats] = {}
        for call in self.calls:
            for index, start, end in call.events.tolist():
                key = (id(call.kernels), index)
                if key not in stats:
                    stats[key] = KernelStats(call.program, call.kernels[index])
                stats[key].calls += 1
                stats[key].total_ns += end - start
        return sorted(stats.values(), key=lambda s: -s.total_ns)

    def table(self, top: int = 25) -> str:
        """The kernels where the time went, as text: share of the calls' time, total, calls,
        mean, bandwidth, what each is and the source lines it comes from."""
        total = sum(c.end - c.start for c in self.calls)
        stats = self.kernel_stats()
        kernel_ns = sum(s.total_ns for s in stats if not s.kernel.is_span)
        programs = sorted({c.program for c in self.calls})
        dropped = sum(c.dropped for c in self.calls)
        lines = [f"mlax native kernels: {len(self.calls)} calls of {len(programs)} programs, "
                 f"{total / 1e6:.3f} ms; in kernels {kernel_ns / 1e6:.3f} ms "
                 f"({100 * kernel_ns / max(total, 1):.1f} %), outside kernels "
                 f"{(total - kernel_ns) / 1e6:.3f} ms"]
        if dropped:
            lines.append(f"({dropped} events past the buffer's capacity were not recorded)")
        lines.append(f"{'share':>7} {'total ms':>9} {'calls':>6} {'mean us':>9} {'GB/s':>7}  "
                     f"{'kind':<12} {'writes':<18} {'program':<16} source")
        for s in stats[:top]:
            share = "" if s.kernel.is_span else f"{100 * s.total_ns / max(total, 1):.1f} %"
            lines.append(f"{share:>7} {s.total_ns / 1e6:9.3f} {s.calls:6d} "
                         f"{s.total_ns / s.calls / 1e3:9.1f} {s.gigabytes_per_second:7.2f}  "
                         f"{s.kernel.kind:<12} {s.kernel.type:<18} {s.program:<16} "
                         f"{_short_source(s.kernel.source)}")
        if len(stats) > top:
            rest = sum(s.total_ns for s in stats[top:] if not s.kernel.is_span)
            lines.append(f"{100 * rest / max(total, 1):6.1f} % {rest / 1e6:9.3f}  "
                         f"({len(stats) - top} more kernels)")
        return "\n".join(lines)

    def chrome_trace(self) -> dict:
        """The calls and their kernels as Chrome trace events (Perfetto, chrome://tracing): one
        track per thread, a program call around its kernels, loops around theirs."""
        origin = min((c.start for c in self.calls), default=0)
        threads: dict[int, int] = {}
        pid = os.getpid()
        events: list[dict] = []
        for call in self.calls:
            tid = threads.setdefault(call.thread, len(threads) + 1)
            events.append({"name": f"jit({call.program})", "cat": "program", "ph": "X", "pid": pid,
                           "tid": tid, "ts": (call.start - origin) / 1e3,
                           "dur": (call.end - call.start) / 1e3})
            for index, start, end in call.events.tolist():
                kernel = call.kernels[index]
                events.append({"name": kernel.kind, "cat": "span" if kernel.is_span else "kernel",
                               "ph": "X", "pid": pid, "tid": tid, "ts": (start - origin) / 1e3,
                               "dur": (end - start) / 1e3,
                               "args": {"writes": kernel.type, "bytes": kernel.bytes,
                                        "source": kernel.source, "program": call.program}})
        names = [{"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                  "args": {"name": f"mlax native (thread {tid})"}} for tid in threads.values()]
        return {"traceEvents": names + events, "displayTimeUnit": "ns"}

    def save(self, directory: str | os.PathLike) -> tuple[Path, Path]:
        """Write ``mlax-kernels-<time>.trace.json`` and ``.txt`` into ``directory``."""
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        stem = folder / f"mlax-kernels-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        trace, table = stem.with_suffix(".trace.json"), stem.with_suffix(".txt")
        trace.write_text(json.dumps(self.chrome_trace()))
        table.write_text(self.table() + "\n")
        return trace, table
