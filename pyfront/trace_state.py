"""jax.extend.core's names that must know mlax's values: ``get_opaque_trace_state`` (which
trace the calling code runs in), ``find_top_trace`` and the class ``JVPTracer`` of
``jax.interpreters.ad`` (which values a forward-mode trace computes), and ``valid_jaxtype``
(which objects are array data).

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
from jax.interpreters import ad as _jax_ad
from mlir import ir

from mlax import prng
from mlax.core import Trace, Tracer, current_trace, is_array_like

__all__ = ["JVPTracer", "OpaqueTraceState", "find_top_trace", "get_opaque_trace_state", "valid_jaxtype"]


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


def find_top_trace(xs: Any) -> Trace | None:
    """The trace new values go into, as jax's (which ignores ``xs`` too): the current trace of
    this thread, None outside any. Its ``main`` is itself (`mlax.core.Trace.main`)."""
    del xs
    return current_trace()


def _reads_inputs(tracer: Tracer) -> bool:
    """Whether ``tracer``'s value is computed from its function's own arguments (not only from
    constants and values captured from enclosing traces)."""
    block = tracer.trace.block
    captured = {value for _, value in tracer.trace.captures.values()}
    inputs = {arg for arg in block.arguments if arg not in captured}
    table = ir.SymbolTable(block.owner.parent)
    return bool(value_sources(tracer.value, table, {}) & inputs)


def value_sources(value: ir.Value, table: ir.SymbolTable, callees: dict[tuple[str, int], set[int]],
             targets: frozenset[ir.Value] | set[ir.Value] = frozenset()) -> set[ir.Value]:
    """The arguments of its function's entry block (and the ``targets``) that ``value`` is
    computed from: a walk up its ops' operands, into the functions called (a nested jit is a
    call: its result reads only the operands its body reads), and from an argument of an inner
    block to its op's operands."""
    found: set[ir.Value] = set()
    stack, seen = [value], set()
    while stack:
        value = stack.pop()
        if value in seen:
            continue
        seen.add(value)
        if value in targets:
            found.add(value)
            continue
        owner = value.owner
        if isinstance(owner, ir.Block):
            parent = owner.owner
            if parent is None or parent.operation.name == "func.func":
                found.add(value)
            else:
                stack.extend(parent.operation.operands)
            continue
        op = owner.operation
        if op.name == "func.call":
            index = ir.OpResult(value).result_number
            read = _callee_reads(ir.FlatSymbolRefAttr(op.attributes["callee"]).value, index, table, callees)
            stack.extend(op.operands[i] for i in (range(len(op.operands)) if read is None else read))
        else:
            stack.extend(op.operands)
    return found


def _callee_reads(name: str, index: int, table: ir.SymbolTable,
                  callees: dict[tuple[str, int], set[int]]) -> set[int] | None:
    """Which arguments result ``index`` of function ``name`` reads (None: not known, all)."""
    key = (name, index)
    if key not in callees:
        try:
            function = table[name]
        except KeyError:
            return None
        blocks = function.regions[0].blocks if function.regions else []
        if len(blocks) == 0:
            return None  # a declaration (a transform's): its results read every argument
        callees[key] = set()  # (a recursive call reads nothing more)
        returned = list(blocks[0].operations)[-1].operands[index]
        callees[key] = {ir.BlockArgument(arg).arg_number for arg in value_sources(returned, table, callees)
                        if ir.BlockArgument(arg).owner == blocks[0]}
    return callees[key]


class _JVPTracerType(type):
    def __instancecheck__(cls, x: Any) -> bool:
        if isinstance(x, Tracer):
            return x.trace.traced_for == "jvp" and _reads_inputs(x)
        return isinstance(x, _jax_ad.JVPTracer)


class JVPTracer(metaclass=_JVPTracerType):
    """``jax.interpreters.ad.JVPTracer`` to ``isinstance``: jax's own, and mlax's tracers of a
    function traced for forward mode (`mlax.jvp`) that are computed from its arguments -- as
    in jax, where a value the tangents do not reach is no JVPTracer (equinox's filter_jvp tells
    its differentiated outputs by it)."""


def valid_jaxtype(x: Any) -> bool:
    """Whether ``x`` is array data to jax: arrays (mlax's, tracers, NumPy's, jax's) and scalars of
    a numeric or boolean dtype, and PRNG keys; strings, objects and None are not. Libraries tell
    data from metadata by it (distrax's pytrees keep only data as leaves, so vmap maps them)."""
    if not is_array_like(x):
        return False
    if prng.is_key(x) or isinstance(x, Tracer):
        return True
    dtype = getattr(x, "dtype", None)
    return dtype is None or np.dtype(dtype).kind not in "OSUV"
