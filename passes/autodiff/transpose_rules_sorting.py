"""TRANSPOSE rule of apply_permutation: read the cotangent in the inverse order.

y[.., i, ..] = x[.., p[i], ..] for a permutation p along the dimension, so the adjoint sends
the cotangent of y[i] to x[p[i]]: x̄[j] = ȳ[p⁻¹[j]]. The inverse permutation is the stable
sort order of p itself (sort_permutation of the indices), so no scatter is needed. The
indices get no cotangent.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.autodiff.emit import Emitter, MaybeValue

Rule = Callable[[Emitter, ir.Operation, ir.Value, list[MaybeValue]], list[MaybeValue]]


def _apply_permutation(e: Emitter, op: ir.Operation, ct: ir.Value,
                       operands: list[MaybeValue]) -> list[MaybeValue]:
    attrs = read_attributes(op)
    inverse = e("sort_permutation", operands[1], **attrs)
    return [e("apply_permutation", ct, inverse, **attrs), None]


# Rules of one cotangent: transpose_rules.py adapts them to its table's signature.
SORTING_TRANSPOSE_RULES: dict[str, Rule] = {"apply_permutation": _apply_permutation}
