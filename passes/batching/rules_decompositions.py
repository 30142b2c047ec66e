"""Batch rules of the matrix decompositions (batch dimension at 0, as every batch rule).

cholesky, triangular_solve, lu, qr, eigh, svd, eig, schur and the Householder reductions (geqrf,
geqp3, householder_product, ormqr, hessenberg, tridiagonal) work on the last two dimensions and treat
every leading one as a batch (the vectors beside them, taus and pivots, on the last one), so the
batched op is the same op with one more leading dimension. triangular_solve needs the batch
dimensions of a and b equal: an unbatched operand is broadcast along the new one (jax folds an
unbatched b's batch into its columns instead; the values agree).
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.autodiff.emit import Emitter, spec

BatchRule = Callable[[Emitter, ir.Operation, list[ir.Value], list[bool], int], list[ir.Value]]


def _leading_batch(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
                   size: int) -> list[ir.Value]:
    def broadcast(value: ir.Value) -> ir.Value:
        shape = spec(value).shape
        return e("broadcast_in_dim", value, shape=(size, *shape),
                 broadcast_dimensions=tuple(range(1, len(shape) + 1)))

    operands = [v if b else broadcast(v) for v, b in zip(operands, batched, strict=True)]
    return e.many(op.name.removeprefix("mlax."), *operands, **read_attributes(op))


DECOMPOSITION_BATCH_RULES: dict[str, BatchRule] = dict.fromkeys(
    ("cholesky", "triangular_solve", "lu", "qr", "eigh", "svd", "eig", "geqrf", "geqp3",
     "householder_product", "ormqr", "hessenberg", "tridiagonal", "schur"), _leading_batch)
