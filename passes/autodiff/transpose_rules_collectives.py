"""TRANSPOSE rules of the linear collectives, as jax's (jax/_src/lax/parallel.py).

- psum: psum of the cotangent. jax treats psum as psum + pbroadcast (outside its
  varying-manual-axes typing, which mlax does not track, a psum's result is per instance),
  so the cotangent is summed over the axes again: ``vmap(grad(lambda x: psum(x**2, 'i')))``
  gives ``2 * x * size``, as in jax.
- all_gather <-> psum_scatter (same axes, dimension and axis_size).
- all_to_all: all_to_all with split and concat dimensions exchanged.
- ppermute: ppermute by the inverse pairs (destination -> source).
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from mlax.dialect import read_attributes
from mlax.dialect.ops.collectives import pairs_of
from mlax.passes.autodiff.emit import Emitter, MaybeValue

Rule = Callable[[Emitter, ir.Operation, ir.Value, list[MaybeValue]], list[MaybeValue]]


def _psum(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    return [e("psum", ct, **read_attributes(op))]


def _swapping(name: str) -> Rule:
    """all_gather and psum_scatter transpose into each other with the same attributes."""

    def rule(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
        return [e(name, ct, **read_attributes(op))]

    return rule


def _all_to_all(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    a = read_attributes(op)
    return [e("all_to_all", ct, axes=a["axes"], split_dimension=a["concat_dimension"],
              concat_dimension=a["split_dimension"], axis_size=a["axis_size"])]


def _ppermute(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    a = read_attributes(op)
    inverse = tuple(i for source, destination in pairs_of(a["pairs"]) for i in (destination, source))
    return [e("ppermute", ct, axes=a["axes"], pairs=inverse)]


# Rules of one cotangent: transpose_rules.py adapts them to its table's signature.
COLLECTIVE_TRANSPOSE_RULES: dict[str, Rule] = {
    "psum": _psum,
    "all_gather": _swapping("psum_scatter"),
    "psum_scatter": _swapping("all_gather"),
    "all_to_all": _all_to_all,
    "ppermute": _ppermute,
}
