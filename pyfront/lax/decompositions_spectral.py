"""mlax.lax.linalg's qr, eigh and svd (jax's `jax.lax.linalg` names and signatures) on the
dialect's ops (dialect/ops/decompositions_spectral.py).

As jax's wrappers: eigh symmetrizes its operand first unless told not to and returns (v, w);
svd returns (u, s, vh), or s alone without ``compute_uv``; qr returns (q, r), or (q, r, p) with
``pivoting``. The options jax has only for other platforms (subset_by_index, the GPU/TPU
algorithms) are refused; ``use_magma`` (GPU only in jax) changes nothing.
"""

from __future__ import annotations

from typing import Any

from mlax.core import bind
from mlax.lax.common import operand as as_operand
from mlax.lax.decompositions import symmetrize


def _not_here(name: str, option: str) -> NotImplementedError:
    return NotImplementedError(f"mlax.lax.linalg.{name}: {option} is not supported by mlax (jax has it only "
                               "on some platforms)")


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Any, ...]:
    """(q, r) with ``x = q @ r`` for each matrix of ``x`` (..., m, n): q (..., m, k) orthonormal
    columns, r (..., k, n) upper triangular, k = m if ``full_matrices`` else min(m, n). With
    ``pivoting``, (q, r, p): p (..., n) int32 the column permutation, ``x[..., p] = q @ r``."""
    del use_magma  # jax reads it on GPU only
    return tuple(bind("qr", as_operand(x), full_matrices=bool(full_matrices), pivoting=bool(pivoting)))


def eigh(x: Any, *, lower: bool = True, symmetrize_input: bool = True, sort_eigenvalues: bool = True,
         subset_by_index: tuple[int, int] | None = None, implementation: Any = None) -> tuple[Any, Any]:
    """(v, w): eigenvectors (columns of v) and ascending eigenvalues of each symmetric matrix of
    ``x`` (..., n, n); only the ``lower`` (else upper) triangle is read when not symmetrized."""
    x = as_operand(x)
    n = x.shape[-1] if x.ndim else 0
    if subset_by_index is not None and tuple(subset_by_index) != (0, n):
        raise _not_here("eigh", "subset_by_index")
    if implementation is not None:
        raise _not_here("eigh", "implementation")
    if symmetrize_input:
        x = symmetrize(x)
    v, w = bind("eigh", x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues))
    return v, w


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None, algorithm: Any = None) -> Any:
    """(u, s, vh) with ``x = u @ diag(s) @ vh`` (s descending), or s alone without ``compute_uv``."""
    x = as_operand(x)
    if subset_by_index is not None and tuple(subset_by_index) != (0, min(x.shape[-2:])):
        raise _not_here("svd", "subset_by_index")
    if algorithm is not None and getattr(algorithm, "name", None) not in ("DEFAULT", "DIVIDE_AND_CONQUER"):
        raise _not_here("svd", f"algorithm={algorithm}")
    s, u, vh = bind("svd", x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))
    return (u, s, vh) if compute_uv else s


__all__ = ["eigh", "qr", "svd"]
