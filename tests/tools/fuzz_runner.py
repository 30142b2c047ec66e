"""Run fuzz cases (fuzz_inputs.py) through mlax-opt: in-process, or supervised in chunks.

In-process (`run_case`) is what the test does: mlax-opt's ``main`` on a file holding the
case, stdout and stderr captured. An abort inside the bundled MLIR (an assertions build)
kills the process, so to *find* aborts run this module, which runs the cases in worker
processes, notes which case each worker was on when it died or stalled, and goes on with
the next:

    .venv/bin/python -m tests.tools.fuzz_runner --start 0 --count 10000 --report fuzz.jsonl

Every finding (internal error, traceback, bad exit status, abort, stall) is one JSON line
in the report, with the case's description; the last line sums up. Workers may use at most
``--memory-gb`` of address space, so a case that would allocate without bound fails with a
MemoryError (an internal error) instead of taking the machine's memory.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mlax.tools.process_watch import wait_unless_stalled
from tests.tools.fuzz_inputs import Case, case

_BAD_WORDS = ("internal error", "Traceback (most recent call last)")


@dataclass(frozen=True)
class Outcome:
    status: int
    stdout: str
    stderr: str

    @property
    def problem(self) -> str | None:
        """Why this outcome is a bug in mlax-opt (None: a result, or a diagnostic for bad input)."""
        if self.status not in (0, 1):
            return f"exit status {self.status}"
        for line in (self.stdout + self.stderr).splitlines():
            if any(word in line for word in _BAD_WORDS):
                return line.strip()
        if self.status == 1 and not self.stderr.strip():
            return "exit status 1 without a diagnostic"
        return None


def run_case(fuzz_case: Case, workdir: Path) -> Outcome:
    """mlax-opt on the case, in this process."""
    from mlax.tools import mlax_opt

    path = workdir / "case.mlir"
    path.write_bytes(fuzz_case.data)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = mlax_opt.main([str(path), *fuzz_case.argv])
        except SystemExit as exit_:  # argparse
            status = exit_.code if isinstance(exit_.code, int) else 1
    return Outcome(status, out.getvalue(), err.getvalue())


def _worker(start: int, stop: int, base_seed: int, progress: Path, findings: Path) -> None:
    """Run cases [start, stop), noting each index in ``progress`` before running it; findings
    are appended to ``findings`` as JSON lines."""
    with tempfile.TemporaryDirectory() as tmp, progress.open("w") as note, findings.open("a") as out:
        for index in range(start, stop):
            note.write(f"{index}\n")
            note.flush()
            fuzz_case = case(index, base_seed)
            problem = run_case(fuzz_case, Path(tmp)).problem
            if problem is not None:
                out.write(json.dumps({"index": index, "kind": "error", "problem": problem,
                                      "case": str(fuzz_case)}) + "\n")
                out.flush()


def _last_started(progress: Path) -> int | None:
    lines = progress.read_text().split() if progress.exists() else []
    return int(lines[-1]) if lines else None


def _limit_memory(gigabytes: float) -> None:
    limit = int(gigabytes * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def supervise(start: int, count: int, base_seed: int, chunk: int, stall_s: float, memory_gb: float,
              report: Path) -> int:
    """Run cases [start, start + count) in workers of ``chunk`` cases, findings into ``report``;
    returns how many there were."""
    began, stop = time.monotonic(), start + count
    report.write_text("")
    with tempfile.TemporaryDirectory() as tmp:
        progress = Path(tmp) / "progress"
        index = start
        while index < stop:
            end = min(index + chunk, stop)
            progress.unlink(missing_ok=True)
            command = [sys.executable, "-m", "tests.tools.fuzz_runner", "--worker", "--start", str(index),
                       "--count", str(end - index), "--base-seed", str(base_seed),
                       "--progress", str(progress), "--report", str(report)]
            with tempfile.TemporaryFile("w+") as err:
                worker = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, text=True,
                                          preexec_fn=lambda: _limit_memory(memory_gb))
                stalled = wait_unless_stalled(worker, lambda: _last_started(progress), stall_s)
                err.seek(0)
                tail = err.read().strip().splitlines()[-3:]
            if worker.returncode == 0 and not stalled:
                index = end
                continue
            culprit = _last_started(progress)
            culprit = index if culprit is None else culprit
            kind = "stall" if stalled else f"abort (exit status {worker.returncode})"
            with report.open("a") as out:
                out.write(json.dumps({"index": culprit, "kind": kind, "problem": tail,
                                      "case": str(case(culprit, base_seed))}) + "\n")
            index = culprit + 1
    findings = len(report.read_text().splitlines())
    with report.open("a") as out:
        out.write(json.dumps({"cases": count, "findings": findings,
                              "seconds": round(time.monotonic() - began, 1)}) + "\n")
    return findings


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--base-seed", type=int, default=0)
    parser.add_argument("--chunk", type=int, default=500, help="cases per worker process")
    parser.add_argument("--stall", type=float, default=120.0, help="seconds one case may take")
    parser.add_argument("--memory-gb", type=float, default=8.0, help="address space of a worker")
    parser.add_argument("--report", type=Path, default=Path("fuzz-report.jsonl"))
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--progress", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.start, args.start + args.count, args.base_seed, args.progress, args.report)
        return 0
    findings = supervise(args.start, args.count, args.base_seed, args.chunk, args.stall, args.memory_gb,
                         args.report)
    print(f"{findings} finding(s) in {args.count} cases; see {args.report}")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
