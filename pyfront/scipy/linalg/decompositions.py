"""mlax.scipy.linalg's solvers on the Cholesky, LU and triangular-solve primitives, ported from
jax/_src/scipy/linalg.py: cholesky, cho_factor, cho_solve, lu, lu_factor, lu_solve,
solve_triangular, solve (assume_a 'gen'/'sym'/'her' through jnp.linalg.solve's LU, 'pos'
through a Cholesky factorization with the derivative of the linear system), inv and det (jnp's).

The triangular and factored solves are jnp.vectorize'd primitives, as jax's; a b of one
dimension less than the matrix with a matching last axis is a batch of vectors (jax's
deprecated reading, with its FutureWarning).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from mlax.lax import decompositions as lax_linalg
from mlax.numpy.creation import arange, eye, tril, triu
from mlax.numpy.differences import _promote_inexact
from mlax.numpy.linalg_decompositions import (
    check_solve_shapes,
    linear_system,
)
from mlax.numpy.linalg_decompositions import (
    det as _det,
)
from mlax.numpy.linalg_decompositions import (
    inv as _inv,
)
from mlax.numpy.linalg_decompositions import (
    lu_solve as _lu_solve,
)
from mlax.numpy.linalg_decompositions import (
    solve as _solve,
)
from mlax.numpy.manipulation import broadcast_to, swapaxes
from mlax.numpy.util import asarray
from mlax.numpy.vectorize import vectorize


def _signature(fname: str, matrix: Any, b: Any, cores: str) -> str:
    """jax's choice between a vector and a matrix right-hand side (``cores``: the operands before b)."""
    if b.ndim == 1:
        return f"{cores},(n)->(n)"
    if matrix.ndim == b.ndim + 1 and matrix.shape[-1] == b.shape[-1]:
        warnings.warn(f"jax.scipy.linalg.{fname}: batched 1D solves with b.ndim > 1 are deprecated, and in "
                      "the future will be treated as a batched 2D solve. Use "
                      f"{fname}(..., b[..., None]).squeeze(-1) to avoid this warning.", FutureWarning,
                      stacklevel=3)
        return f"{cores},(n)->(n)"
    return f"{cores},(n,k)->(n,k)"


def _transpose(x: Any) -> Any:
    return swapaxes(x, -1, -2)


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The Cholesky factor of each matrix, upper unless ``lower`` (only that triangle is read)."""
    (a,) = _promote_inexact(asarray(a))
    factor = lax_linalg.cholesky(a if lower else _transpose(a), symmetrize_input=False)
    return factor if lower else _transpose(factor)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
               ) -> tuple[Any, bool]:
    """``(cholesky(a, lower), lower)``, for cho_solve."""
    return cholesky(a, lower=lower), lower


def _cho_solve_core(c: Any, b: Any, lower: bool) -> Any:
    """Two triangular solves with the factor ``c`` (b a vector when it has one dimension less)."""
    b = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower,
                                    conjugate_a=not lower)
    return lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=lower,
                                       conjugate_a=lower)


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """x with ``a @ x == b`` from ``cho_factor(a)``."""
    c, lower = c_and_lower
    c, b = _promote_inexact(asarray(c), asarray(b))
    signature = _signature("cho_solve", c, b, "(n,n)")
    return vectorize(functools.partial(_cho_solve_core, lower=lower), signature=signature)(c, b)


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """The packed LU factors and the 0-based row swaps (int32)."""
    (a,) = _promote_inexact(asarray(a))
    lu, pivots, _ = lax_linalg.lu(a)
    return lu, pivots


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """x with ``a @ x == b`` (trans 0) or ``a.T @ x == b`` (1, 2) from ``lu_factor(a)``."""
    lu, pivots = lu_and_piv
    lu, b = _promote_inexact(asarray(lu), asarray(b))
    permutation = lax_linalg.lu_pivots_to_permutation(asarray(pivots), lu.shape[-2])
    signature = _signature("lu_solve", lu, b, "(n,n),(n)")
    return vectorize(functools.partial(_lu_solve, trans=trans), signature=signature)(lu, permutation, b)


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True
       ) -> tuple[Any, Any] | tuple[Any, Any, Any]:
    """``(p, l, u)`` with ``a == p @ l @ u`` for one matrix, or ``(p @ l, u)`` when ``permute_l``."""
    (a,) = _promote_inexact(asarray(a))
    packed, _, permutation = lax_linalg.lu(a)
    m, n = np.shape(a)
    p = (permutation[None, :] == arange(m, dtype=permutation.dtype)[:, None]).astype(a.dtype)
    k = min(m, n)
    lower = tril(packed, -1)[:, :k] + eye(m, k, dtype=a.dtype)
    upper = triu(packed)[:k, :]
    return (p @ lower, upper) if permute_l else (p, lower, upper)


def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug: Any = None, check_finite: bool = True) -> Any:
    """x with ``op(a) @ x == b`` for a triangular ``a`` (op: none, transpose or adjoint by ``trans``)."""
    modes = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False), 2: (True, True),
             "C": (True, True)}
    if trans not in modes:
        raise ValueError(f"Invalid 'trans' value {trans}")
    transpose_a, conjugate_a = modes[trans]
    a, b = _promote_inexact(asarray(a), asarray(b))
    solve = functools.partial(lax_linalg.triangular_solve, left_side=True, lower=lower,
                              transpose_a=transpose_a, conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return vectorize(solve, signature=_signature("solve_triangular", a, b, "(n,n)"))(a, b)


def _cho_system(lower: bool) -> Callable[[Any, Any], Any]:
    factor = functools.partial(cholesky, lower=lower)
    return linear_system(factor, lambda c, b: _cho_solve_core(c, b, lower))


_CHO_SYSTEMS = {lower: _cho_system(lower) for lower in (False, True)}


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen") -> Any:
    """x with ``a @ x == b``; ``assume_a='pos'`` factors by Cholesky (reading the ``lower`` or upper
    triangle), the others by LU."""
    valid = ["gen", "sym", "her", "pos"]
    if assume_a not in valid:
        raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
    if assume_a != "pos":
        return _solve(a, b)
    a, b = _promote_inexact(asarray(a), asarray(b))
    check_solve_shapes(a, b)
    vector = a.ndim == b.ndim + 1
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-1] if vector else b.shape[:-2])
    a = broadcast_to(a, (*batch, *a.shape[-2:]))
    b = broadcast_to(b, (*batch, *b.shape[-1 if vector else -2:]))
    return _CHO_SYSTEMS[bool(lower)](a, b)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The inverse of each square matrix (jnp.linalg.inv)."""
    return _inv(a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The determinant of each square matrix (jnp.linalg.det)."""
    return _det(a)


__all__ = ["cho_factor", "cho_solve", "cholesky", "det", "inv", "lu", "lu_factor", "lu_solve", "solve",
           "solve_triangular"]
