"""jax.extend.core's names that must know mlax's values: ``get_opaque_trace_state`` (which
trace the calling code runs in) and ``valid_jaxtype`` (which objects are array data).

Libraries that keep state between calls compare it to tell whether a value is being used in
the trace it was made in: flax.nnx refuses to mutate a Variable from inside a transformation it
was not created in (``TraceContextError``), dm-haiku refuses ``hk.get_parameter`` inside a
``jax.jit``/``jax.vmap`` of an untransformed function (``JaxUsageError``). jax's answer is an
opaque object comparing equal for the same trace; mlax's is the same for its traces: equal
within one trace (or outside any), different across traces.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from mlax.core import Tracer, current_trace, is_array_like

__all__ = ["OpaqueTraceState", "get_opaque_trace_state", "valid_jaxtype"]


class OpaqueTraceState:
    """The trace some code ran in (None: none, eager), compared by identity, as jax's."""

    __slots__ = ("_trace_ref",)

    def __init__(self, trace: Any) -> None:
        self._trace_ref = None if trace is None else weakref.ref(trace)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OpaqueTraceState) and self._trace_ref == other._trace_ref

    def __hash__(self) -> int:
        return hash(self._trace_ref)

    def __repr__(self) -> str:
        trace = None if self._trace_ref is None else self._trace_ref()
        return f"OpaqueTraceState({'eager' if self._trace_ref is None else trace})"


def get_opaque_trace_state(convention: Any = None) -> OpaqueTraceState:
    """The current trace of this thread as an opaque, comparable object (``convention``, which
    jax takes to name its caller, is accepted and unused, as in jax)."""
    del convention
    return OpaqueTraceState(current_trace())


def valid_jaxtype(x: Any) -> bool:
    """Whether ``x`` is array data to jax: arrays (mlax's, tracers, NumPy's, jax's) and scalars of
    a numeric or boolean dtype, and PRNG keys; strings, objects and None are not. Libraries tell
    data from metadata by it (distrax's pytrees keep only data as leaves, so vmap maps them)."""
    from mlax import prng

    if not is_array_like(x):
        return False
    if prng.is_key(x) or isinstance(x, Tracer):
        return True
    dtype = getattr(x, "dtype", None)
    return dtype is None or np.dtype(dtype).kind not in "OSUV"
