"""TRANSPOSE rule of triangular_solve in b (jax's `_triangular_solve_transpose_rule`).

X = op(A)^-1 B is linear in B; its adjoint is the solve with the transposed matrix:
B̄ = op(A)^-T X̄, i.e. the same triangular_solve with `transpose_a` flipped (left or right
side alike). A must be a primal: triangular_solve is not linear in it. cholesky and lu are
not linear, so they have no transpose rule.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.autodiff.emit import Emitter, MaybeValue
from mlax.passes.registry import PassFailure

Rule = Callable[[Emitter, ir.Operation, ir.Value, list[MaybeValue]], list[MaybeValue]]


def _triangular_solve(e: Emitter, op: ir.Operation, ct: ir.Value,
                      operands: list[MaybeValue]) -> list[MaybeValue]:
    a, b = operands
    if a is None or b is not None:
        raise PassFailure(f"mlax-autodiff: {op.name} is linear only in b (its matrix a must be a primal)",
                          op.location)
    flags = read_attributes(op)
    return [None, e("triangular_solve", a, ct, **(flags | {"transpose_a": not flags["transpose_a"]}))]


# Rules of one cotangent: transpose_rules.py adapts them to its table's signature.
DECOMPOSITION_TRANSPOSE_RULES: dict[str, Rule] = {"triangular_solve": _triangular_solve}
