"""Building mlax ops inside a derivative function: the one helper every autodiff rule uses.

A rule gets an `Emitter` positioned where its ops belong (at the differentiated op's
location) and writes ``e("mul", t, y)``; types come from the dialect's inference rules.
Zero tangents and cotangents are `None` ("symbolic zeros", as in JAX) until something
needs them as values (`zeros`), so differentiating through non-differentiable paths emits
nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mlir import ir

from mlax.dialect import build, dtypes
from mlax.dialect.tensor_spec import TensorSpec

MaybeValue = ir.Value | None


def spec(value: ir.Value | ir.Type) -> TensorSpec:
    return TensorSpec.from_mlir(value if isinstance(value, ir.Type) else value.type)


def is_float(value: ir.Value | ir.Type) -> bool:
    """Whether values of this type carry tangents: floats and complex numbers (JAX: integer and
    bool inputs get float0)."""
    return dtypes.is_inexact(spec(value).dtype)


class Emitter:
    """Creates mlax ops at an insertion point with one location."""

    def __init__(self, point: ir.InsertionPoint, location: ir.Location) -> None:
        self.point = point
        self.location = location

    def many(self, op_name: str, *operands: ir.Value, **attrs: Any) -> list[ir.Value]:
        with self.point, self.location:
            return build(op_name, list(operands), attrs, loc=self.location)

    def __call__(self, op_name: str, *operands: ir.Value, **attrs: Any) -> ir.Value:
        (result,) = self.many(op_name, *operands, **attrs)
        return result

    def full(self, like: ir.Value | ir.Type, value: float) -> ir.Value:
        """A tensor of ``like``'s type filled with ``value`` (a rank-0 constant, broadcast)."""
        s = spec(like)
        scalar = self("constant", value=np.asarray(value, dtype=s.dtype))
        if not s.shape:
            return scalar
        return self("broadcast_in_dim", scalar, shape=tuple(s.shape), broadcast_dimensions=())

    def zeros(self, like: ir.Value | ir.Type) -> ir.Value:
        return self.full(like, 0)

    def add(self, a: MaybeValue, b: MaybeValue) -> MaybeValue:
        """The sum of two possibly-zero tangents/cotangents."""
        if a is None:
            return b
        if b is None:
            return a
        return self("add", a, b)

    def materialize(self, value: MaybeValue, like: ir.Value | ir.Type) -> ir.Value:
        return self.zeros(like) if value is None else value


def clone_all(ops: Sequence[ir.Operation], values: dict[ir.Value, ir.Value],
              point: ir.InsertionPoint) -> None:
    """Clone ``ops`` at ``point`` in order, their operands mapped through ``values`` (which
    receives the clones' results)."""
    for op in ops:
        clone = op.clone(ip=point)
        for i, v in enumerate(op.operands):
            clone.operands[i] = values[v]
        values.update(zip(op.results, clone.results, strict=True))
