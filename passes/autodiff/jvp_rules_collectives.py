"""JVP rules of the collective ops (jax/_src/lax/parallel.py).

psum, all_gather, psum_scatter, all_to_all and ppermute are linear (jax's ``deflinear2``): the
tangent goes through the same collective, whose transpose rule (transpose_rules_collectives.py)
reverse mode uses. axis_index has no operand, so no tangent. jax 0.10.2 defines no derivative
of pmax / pmin ("Differentiation rule for 'pmax' not implemented"); mlax raises the same,
and only when a tangent reaches them (under ``vmap`` over their axis, `mlax-batch` resolves
them into reduce_max / reduce_min first, which have rules).
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.autodiff.emit import Emitter, MaybeValue, is_float
from mlax.passes.registry import PassFailure

JvpRule = Callable[[Emitter, ir.Operation, list[ir.Value], list[MaybeValue], list[ir.Value]],
                   list[MaybeValue]]


def _linear(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
            outs: list[ir.Value]) -> list[MaybeValue]:
    if tangents[0] is None or not is_float(outs[0]):
        return [None]
    return [e(op.name.removeprefix("mlax."), tangents[0], **read_attributes(op))]


def _not_differentiable(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
                        outs: list[ir.Value]) -> list[MaybeValue]:
    if tangents[0] is None or not is_float(outs[0]):
        return [None]
    name = op.name.removeprefix("mlax.")
    raise PassFailure(f"mlax-autodiff: Differentiation rule for '{name}' not implemented (as in jax: "
                      f"{op.name} has no derivative over its named axes)", op.location,
                      kind=NotImplementedError)


def _axis_index(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
                outs: list[ir.Value]) -> list[MaybeValue]:
    return [None]


COLLECTIVE_JVP_RULES: dict[str, JvpRule] = {
    **{name: _linear for name in ("psum", "all_gather", "psum_scatter", "all_to_all", "ppermute")},
    "pmax": _not_differentiable,
    "pmin": _not_differentiable,
    "axis_index": _axis_index,
}
