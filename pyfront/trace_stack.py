"""Each thread's trace state: its stack of traces and its concrete mode (the state mlax.core
keeps and reads), in a module of its own so that the modules core is built on (sharding,
tracer_text) can ask whether code runs in a trace without importing core.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from mlir import ir

    from mlax.core import Trace, Tracer


class _ThreadTraces(threading.local):
    """Each thread's stack of traces, innermost last: tracing in one thread never changes
    what mlax calls in another do (as JAX keeps its trace state per thread)."""

    def __init__(self) -> None:
        self.stack: list[Trace] = []
        self.mode: str | None = None  # concrete mode: None, "deferred" or "concrete" (core.Known)
        self.capture_logs: list[list[Tracer]] = []  # core.captures_logged
        self.opaque = False  # core.opaque: inside a nested jit, Python sees no value
        self.substitutes: dict[ir.Value, np.ndarray] = {}  # core.suspended: traced value -> its value
        self.observer: Callable[..., None] | None = None  # core.observed_binds: checkify's instrumentation


TRACES = _ThreadTraces()


def current_trace() -> Trace | None:
    """The innermost trace of this thread, or None outside any trace."""
    stack = TRACES.stack
    return stack[-1] if stack else None


def concrete_mode() -> str | None:
    """This thread's concrete mode: None (values unknown, as in any jit), "deferred" (an
    abstract first trace that may be retried) or "concrete"."""
    return TRACES.mode
