"""``jax.interpreters.partial_eval.trace_to_jaxpr_nounits`` over mlax's tracing: which outputs
of a function are known from its known inputs, and their values.

flax calls it on mlax's functions: ``Module.lazy_init`` (variables initialized from the shapes
of inputs whose values are never computed) and ``nn.scan`` (the loop-invariant outputs of the
body, its parameters among them, checked to depend on no carry or scanned input). jax answers
by partial evaluation; mlax traces ``fun`` with a tracer for each unknown input and keeps the
outputs computed without them:

- inside a trace, in that trace, the unknown inputs standing as splat constants (no array is
  built): a known output is a value of that trace (or concrete), an unknown one reads a
  stand-in (walked up the IR, `trace_state.value_sources`, through nested jits). The ops that
  read a stand-in are dead code there, removed when the program is compiled (a stand-in of a
  huge input is then too large a constant for the CPU backend's size check: lazy_init inside
  a jit of such shapes is refused with ProgramTooLargeError);
- outside any trace, the same inside a program of its own (as grad's, pyfront/staging.py:
  retraced with values where Python asks for known ones), which computes the known outputs.

mlax keeps no jaxpr of the unknown part: the first result is None (flax reads only the known
outputs, and raises its own error for an unknown one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jax.core import ShapedArray
from jax.interpreters.partial_eval import PartialVal
from mlir import ir

from mlax import prng
from mlax.core import Aval, Trace, Tracer, abstractify, current_trace, held_tracer, is_array_like
from mlax.staging import Staged, as_static
from mlax.trace_state import value_sources

__all__ = ["trace_to_jaxpr_nounits"]


def _aval(pval: PartialVal) -> Aval:
    """The abstract value of an unknown input as programs see it (a key array's: its data's)."""
    aval = pval.get_aval()
    if prng.is_key_dtype(aval.dtype):
        return Aval((*aval.shape, *prng.key_shape(aval.dtype)), np.dtype(np.uint32), False)
    return Aval(tuple(aval.shape), np.dtype(aval.dtype), bool(getattr(aval, "weak_type", False)))


def _unknown(leaf: Any) -> PartialVal:
    if prng.is_key(leaf):
        return PartialVal.unknown(ShapedArray(leaf.shape, leaf.dtype))
    aval = abstractify(leaf)
    return PartialVal.unknown(ShapedArray(aval.shape, aval.dtype, weak_type=aval.weak_type))


def trace_to_jaxpr_nounits(fun: Any, pvals: Sequence[PartialVal], instantiate: bool | Sequence[bool] = False
                           ) -> tuple[None, list[PartialVal], list[Any]]:
    """``(None, out_pvals, [])``: ``fun`` (a ``jax.extend.linear_util.WrappedFun``, or any
    callable of the flat inputs) applied to ``pvals``; each output known (its value) or unknown
    (its aval), as jax's; ``instantiate`` makes known outputs unknown (all, or per output)."""
    pvals = list(pvals)
    call = getattr(fun, "call_wrapped", fun)
    unknown = [i for i, pval in enumerate(pvals) if not pval.is_known()]
    outer = current_trace()
    if outer is None:
        out_pvals, reads = _eager(call, pvals, unknown)
    else:
        outs, reads = _in_trace(outer, call, pvals, unknown)
        out_pvals = [_unknown(leaf) if read else PartialVal.known(leaf)
                     for leaf, read in zip(outs, reads, strict=True)]
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(out_pvals)
    return None, [PartialVal.unknown(_shaped(pval)) if inst and pval.is_known() else pval
                  for pval, inst in zip(out_pvals, instantiate, strict=True)], []


def _shaped(pval: PartialVal) -> ShapedArray:
    return _unknown(pval.get_known()).get_aval()


def _eager(call: Any, pvals: list[PartialVal], unknown: list[int]) -> tuple[list[Any], list[bool]]:
    """Outside any trace: the partial evaluation inside a program of its own (pyfront/staging.py,
    retraced with values where Python asks for known ones), which computes the known outputs."""
    arrays = [i for i, pval in enumerate(pvals) if pval.is_known() and is_array_like(pval.get_known())]
    found: dict[str, list[Any]] = {}

    def run(trace: Trace, *known: Any) -> Any:
        given = list(pvals)
        for i, value in zip(arrays, known, strict=True):
            given[i] = PartialVal.known(value)
        outs, reads = _in_trace(trace, call, given, unknown, erase=True)
        found["reads"], found["unknown"] = reads, [_unknown(o) for o, r in zip(outs, reads, strict=True) if r]
        kept = [o for o, r in zip(outs, reads, strict=True) if not r]
        return as_static(kept, [held_tracer(o) is None for o in kept])

    known_outs = iter(Staged(run, static_outputs=True)(*(pvals[i].get_known() for i in arrays)))
    unknown_outs = iter(found["unknown"])
    return ([next(unknown_outs) if r else PartialVal.known(next(known_outs)) for r in found["reads"]],
            found["reads"])


def _in_trace(outer: Trace, call: Any, pvals: list[PartialVal], unknown: list[int],
              erase: bool = False) -> tuple[list[Any], list[bool]]:
    """``call`` traced into ``outer`` with stand-ins for the unknown inputs; its outputs and
    which read a stand-in. With ``erase`` (a trace of our own, which ends with this call: no
    tracer of the unknown part can be used again) the ops of the unknown part are erased."""
    args = [pval.get_known() for pval in pvals]
    stand_ins: set[ir.Value] = set()
    for i in unknown:
        aval = _aval(pvals[i])
        value = outer._constant(np.broadcast_to(np.zeros((), aval.dtype), aval.shape))
        stand_ins.add(value)
        stand_in = Tracer(outer, value, aval, f"unknown input args[{i}] of partial evaluation")
        key_dtype = pvals[i].get_aval().dtype
        args[i] = prng.wrap_key_data(stand_in, key_dtype) if prng.is_key_dtype(key_dtype) else stand_in
    outs = list(call(*args))
    table = ir.SymbolTable(outer.block.owner.parent)
    callees: dict[Any, Any] = {}
    reads = [(t := held_tracer(leaf)) is not None and t.trace is outer
             and bool(value_sources(t.value, table, callees, stand_ins) & stand_ins) for leaf in outs]
    if erase:
        _erase_unknown_part(outer.block, stand_ins)
    return outs, reads


def _erase_unknown_part(block: ir.Block, stand_ins: set[ir.Value]) -> None:
    """Erase the ops that read a stand-in (and the stand-ins), last first, where nothing else
    reads their results: the unknown part is never run, and a stand-in of a huge input must
    not reach the compiler's size checks."""
    reading: list[ir.Operation] = []
    tainted = set(stand_ins)
    for op in block.operations:
        op = op.operation
        if any(operand in tainted for operand in op.operands):
            reading.append(op)
            tainted.update(op.results)
    owners = [value.owner.operation for value in stand_ins if not isinstance(value.owner, ir.Block)]
    for op in [*reversed(reading), *owners]:
        if all(not list(result.uses) for result in op.results):
            op.erase()
