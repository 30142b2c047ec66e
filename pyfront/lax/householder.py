"""mlax.lax.linalg's Householder reductions, with jax's `lax.linalg` signatures, on the dialect's ops
of the same names (dialect/ops/householder.py): ``geqrf`` and ``geqp3`` (jax keeps them in
jax._src.lax.linalg; jnp.linalg.qr(mode='raw') and scipy's qr_multiply use them),
``householder_product``, ``ormqr``, ``hessenberg`` and ``tridiagonal``. The reductions return LAPACK's
packed form, as jax's."""

from __future__ import annotations

from typing import Any

from mlax.core import bind
from mlax.lax.common import operand as as_operand


def geqrf(a: Any) -> tuple[Any, Any]:
    """``(a, taus)``: R on and above the diagonal of ``a``, Q's Householder reflectors below it
    and their scalar factors in ``taus`` (LAPACK ``?geqrf``)."""
    packed, taus = bind("geqrf", as_operand(a))
    return packed, taus


def geqp3(a: Any, jpvt: Any, *, use_magma: bool | None = None) -> tuple[Any, Any, Any]:
    """``(a, jpvt, taus)``: ``geqrf``'s packed form of the column-pivoted QR decomposition, with
    the 1-based pivots (``a[:, jpvt - 1] = q @ r``); nonzero entries of the int32 ``jpvt`` put
    their columns first (LAPACK ``?geqp3``). ``use_magma`` picks a GPU library in jax."""
    del use_magma
    packed, pivots, taus = bind("geqp3", as_operand(a), as_operand(jpvt))
    return packed, pivots, taus


def householder_product(a: Any, taus: Any) -> Any:
    """The orthogonal (unitary) matrix, ``a``'s shape, of the reflectors below ``a``'s diagonal
    with scalar factors ``taus`` (LAPACK ``?orgqr`` / ``?ungqr``)."""
    return bind("householder_product", as_operand(a), as_operand(taus))


def ormqr(a: Any, taus: Any, c: Any, *, left: bool = True, transpose: bool = False) -> Any:
    """``Q @ c`` (``c @ Q`` unless ``left``; ``Q^T``, or ``Q^H``, for ``transpose``) for the Q of
    the reflectors below ``a``'s diagonal with scalar factors ``taus``, without forming Q
    (LAPACK ``?ormqr`` / ``?unmqr``)."""
    return bind("ormqr", as_operand(a), as_operand(taus), as_operand(c), left=bool(left),
                transpose=bool(transpose))


def hessenberg(a: Any) -> list[Any]:
    """``[a, taus]`` (a list, as jax's): the upper Hessenberg form on and above the first
    subdiagonal of ``a``, the Householder reflectors below it (LAPACK ``?gehrd``)."""
    return list(bind("hessenberg", as_operand(a)))


def tridiagonal(a: Any, *, lower: bool = True) -> list[Any]:
    """``[a, d, e, taus]`` (a list, as jax's): the tridiagonal form of a symmetric (Hermitian)
    matrix read from its ``lower`` (or upper) triangle; ``d`` and ``e`` its real diagonal and
    off-diagonal (LAPACK ``?sytrd`` / ``?hetrd``)."""
    return list(bind("tridiagonal", as_operand(a), lower=bool(lower)))
