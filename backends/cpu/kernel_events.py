"""The CPU runtime's side of ``mlax.profiler``: the event buffer profiled programs append to,
and what one profiled call recorded.

While `recording` is on, each CPU executable runs a variant of its program compiled with
``mlax-cpu-pipeline{profile=1}`` (`mlax-profile-kernels`: each kernel appends (index, start,
end) to the buffer, no Python between kernels) and hands `record_call` the rows its call
wrote. Profiled calls take one lock, so the rows of a call are its own; the calls of a
program outside a profile run the code compiled without the pass, unchanged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlax.backends.cpu import orc
from mlax.passes.abi import PROFILE_CAPACITY, PROFILE_COUNT, PROFILE_EVENTS

_EVENTS = np.zeros((PROFILE_CAPACITY, 3), np.int64)
_COUNT = np.zeros(1, np.int64)
_LOCK = threading.Lock()
_exposed = False


@dataclass(frozen=True)
class Kernel:
    """One kernel of a profiled program, as `mlax-profile-kernels` described it."""

    kind: str  # elementwise, reduction, sgemm, copy, loop ...
    type: str  # the buffer it writes, ``f32[32,64]``
    bytes: int  # the bytes of the buffers it reads and writes
    source: str  # the user's lines its ops come from

    @property
    def is_span(self) -> bool:
        """A loop or conditional: its time is that of the kernels it runs, and its own control."""
        return self.kind in ("loop", "while loop", "cond", "parallel loop")


@dataclass
class ProgramCall:
    """One call of a profiled program: its span, its kernels' events (rows of kernel index,
    start and end, in ns of CLOCK_MONOTONIC) and the events the buffer had no room for."""

    program: str
    kernels: Sequence[Kernel]
    start: int
    end: int
    events: np.ndarray
    dropped: int = 0
    thread: int = field(default_factory=threading.get_ident)


class Recording:
    """The calls recorded while on (`start`/`stop` nest: the outermost ones count)."""

    def __init__(self) -> None:
        self.on = False
        self._depth = 0
        self.calls: list[ProgramCall] = []

    def start(self) -> None:
        global _exposed
        with _LOCK:
            if not _exposed:
                orc.expose((), {PROFILE_EVENTS: _EVENTS.ctypes.data, PROFILE_COUNT: _COUNT.ctypes.data})
                _exposed = True
            self._depth += 1
            if self._depth == 1:
                self.calls = []
            self.on = True

    def stop(self) -> list[ProgramCall]:
        with _LOCK:
            self._depth = max(self._depth - 1, 0)
            self.on = self._depth > 0
            return list(self.calls)


recording = Recording()


def now_ns() -> int:
    """The clock the events are in (CLOCK_MONOTONIC, as `mlax-profile-kernels` reads it)."""
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def profiled_call(program: str, kernels: Sequence[Kernel], run: Callable[[], Any]) -> Any:
    """``run()`` (a call of a profiled program) with its events recorded."""
    with _LOCK:
        _COUNT[0] = 0
        start = now_ns()
        result = run()
        end = now_ns()
        written = int(_COUNT[0])
        kept = min(written, PROFILE_CAPACITY)
        if recording.on:
            recording.calls.append(ProgramCall(program, kernels, start, end, _EVENTS[:kept].copy(),
                                               written - kept))
    return result
