"""JVP entries of the primitives jax 0.10.2 registers no derivative for: refusals, as in jax.

geqrf, geqp3, householder_product, ormqr, hessenberg, tridiagonal and schur have no differentiation
rule in jax (`jax.jvp` raises NotImplementedError "Differentiation rule for 'geqrf' not
implemented"; jax.scipy.linalg's sqrtm, funm and solve_sylvester, built on schur, are not
differentiable either). mlax-autodiff refuses a tangent through them with the same message and
error type; a primal-only use (every tangent a symbolic zero) goes through. Their derivatives
exist where the factorizations are unique, but jax's users differentiate qr/eigh/eig instead,
whose rules mlax has.
"""

from __future__ import annotations

from mlir import ir

from mlax.passes.autodiff.emit import Emitter, MaybeValue
from mlax.passes.autodiff.jvp_rules_decompositions import JvpRule
from mlax.passes.registry import PassFailure


def _refuse(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
            outs: list[ir.Value]) -> list[MaybeValue]:
    if all(t is None for t in tangents):
        return [None] * len(outs)
    name = op.name.removeprefix("mlax.")
    raise PassFailure(f"mlax-autodiff: Differentiation rule for '{name}' not implemented (as in jax)",
                      op.location, kind=NotImplementedError)


UNDEFINED_JVP_RULES: dict[str, JvpRule] = dict.fromkeys(
    ("geqrf", "geqp3", "householder_product", "ormqr", "hessenberg", "tridiagonal", "schur"), _refuse)
