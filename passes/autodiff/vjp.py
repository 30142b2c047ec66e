"""Reverse mode as JAX does it: linearize (forward mode), then transpose the linear part.

`emit_vjp` first writes the JVP of the function into a scratch function whose tangent
arguments are those of the differentiated inputs. Every op there that depends on a tangent is
linear in the tangents (the JVP rules promise it); every other op computes primal values.
Primal ops are copied into the function being built in their order; the linear ops are then
visited in reverse and each one's TRANSPOSE rule turns the cotangents of its results into
cotangents of its linear operands (summed where a value has several uses). The scratch
function is erased. One rule table per concern: JVP rules for every op, transpose rules only
for the few linear ops the JVP rules emit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from mlax.passes.autodiff.emit import Emitter, MaybeValue
from mlax.passes.autodiff.jvp import FunctionLookup, emit_jvp
from mlax.passes.autodiff.transpose_rules import TRANSPOSE_RULES
from mlax.passes.registry import PassFailure


@dataclass
class _Linearized:
    """The scratch function holding a JVP: its arguments, primal outputs and output tangents."""

    function: ir.Operation
    primals: list[ir.Value]
    tangents: list[ir.Value]
    outs: list[ir.Value]
    out_tangents: list[MaybeValue]


def _linearize(function: ir.Operation, argnums: Sequence[int], module: ir.Operation,
               lookup: FunctionLookup) -> _Linearized:
    """A scratch function (primals..., tangents of the argnums inputs...) holding the JVP of
    ``function``."""
    inputs = list(ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value).inputs)
    with function.location, ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]):
        scratch = func.FuncOp("__mlax_linearize", ir.FunctionType.get(
            inputs + [inputs[a] for a in argnums], []), visibility="private")
        block = scratch.add_entry_block()  # under the function's location
    primals = list(block.arguments)[:len(inputs)]
    tangent_args = list(block.arguments)[len(inputs):]
    tangents: list[MaybeValue] = [None] * len(inputs)
    for a, t in zip(argnums, tangent_args, strict=True):
        tangents[a] = t
    outs, out_tangents = emit_jvp(function, primals, tangents, ir.InsertionPoint(block), lookup)
    return _Linearized(scratch.operation, primals, tangent_args, outs, out_tangents)


def emit_vjp(function: ir.Operation, primals: Sequence[ir.Value], cotangents: Sequence[MaybeValue],
             argnums: Sequence[int], point: ir.InsertionPoint, module: ir.Operation,
             lookup: FunctionLookup) -> tuple[list[ir.Value], list[MaybeValue]]:
    """Emit at ``point`` the outputs of ``function`` on ``primals`` and the cotangents of its
    ``argnums`` inputs given the output ``cotangents`` (None = zero)."""
    linearized = _linearize(function, argnums, module, lookup)
    block = linearized.function.regions[0].blocks[0]
    linear: set[ir.Value] = set(linearized.tangents)
    values: dict[ir.Value, ir.Value] = dict(zip(linearized.primals, primals, strict=True))
    linear_ops = []
    for op in [o.operation for o in block.operations]:
        if any(v in linear for v in op.operands):
            linear.update(op.results)
            linear_ops.append(op)
            continue
        clone = op.clone(ip=point)
        for i, v in enumerate(op.operands):
            clone.operands[i] = values[v]
        values.update(zip(op.results, clone.results, strict=True))
    outs = [values[v] for v in linearized.outs]
    ct: dict[ir.Value, MaybeValue] = {}
    for tangent, cotangent in zip(linearized.out_tangents, cotangents, strict=True):
        if tangent is not None and tangent in linear and cotangent is not None:
            ct[tangent] = Emitter(point, function.location).add(ct.get(tangent), cotangent)
    for op in reversed(linear_ops):
        result_cts = [ct.pop(r, None) for r in op.results]
        if all(c is None for c in result_cts):
            continue
        name = op.name.removeprefix("mlax.")
        rule = TRANSPOSE_RULES.get(name)
        if rule is None:
            raise PassFailure(f"mlax-autodiff: no transpose rule for {op.name} (reverse mode needs one for "
                              f"every op that is linear in the tangents)", op.location)
        emitter = Emitter(point, op.location)
        known = [None if v in linear else values[v] for v in op.operands]
        contributions = rule(emitter, op, result_cts, known)
        for operand, contribution in zip(op.operands, contributions, strict=True):
            if operand in linear and contribution is not None:
                if contribution.type != operand.type:
                    raise PassFailure(f"mlax-autodiff: the transpose rule of {op.name} gave a cotangent of "
                                      f"type {contribution.type} for an operand of type {operand.type}",
                                      op.location)
                ct[operand] = emitter.add(ct.get(operand), contribution)
    input_cts = [ct.get(t) for t in linearized.tangents]
    linearized.function.erase()
    return outs, input_cts
