"""The structured matrices of jax.scipy.linalg built from the arrays given: Toeplitz, Hankel,
circulant, Leslie, companion, Fiedler and convolution matrices, and block diagonals.

Each follows jax's construction step by step, not only its values: Toeplitz and Hankel matrices
are the patches of a convolution as in jax, so an inf in ``c`` spreads NaN (inf * 0) exactly
where jax's does; the batched forms broadcast leading dimensions through mnp.vectorize.
"""

from __future__ import annotations

import operator
from typing import Any

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import check_arraylike, promote_args_inexact, promote_dtypes

__all__ = ["block_diag", "circulant", "companion", "convolution_matrix", "fiedler", "fiedler_companion",
           "hankel", "leslie", "toeplitz"]


def _patches(v: Any, nrows: int) -> Any:
    """The windows of length ``nrows`` along vector ``v``, one a row (jax's conv patches)."""
    return lax.conv_general_dilated_patches(
        v.reshape((1, v.shape[0], 1)), (nrows,), (1,), "VALID",
        dimension_numbers=("NTC", "IOT", "NTC"), precision=lax.Precision.HIGHEST)[0]


def _toeplitz(c: Any, r: Any) -> Any:
    (ncols,), (nrows,) = c.shape, r.shape
    if ncols == 0 or nrows == 0:
        return mnp.empty((ncols, nrows), dtype=mnp.promote_types(c.dtype, r.dtype))
    return mnp.flip(_patches(mnp.concatenate((c[::-1], r[1:])), nrows), axis=0)


def _hankel(c: Any, r: Any) -> Any:
    (ncols,), (nrows,) = c.shape, r.shape
    if ncols == 0 or nrows == 0:
        return mnp.empty((ncols, nrows), dtype=mnp.result_type(c, r))
    return _patches(mnp.concatenate((c, r[1:])), nrows)


_toeplitz_v = mnp.vectorize(_toeplitz, signature="(m),(n)->(m,n)")
_hankel_v = mnp.vectorize(_hankel, signature="(m),(n)->(m,n)")


def toeplitz(c: Any, r: Any = None) -> Any:
    """The Toeplitz matrices (constant diagonals) with first column ``c`` and first row ``r``
    (``r[0]`` ignored; ``conj(c)`` by default), batched over leading dimensions."""
    if r is None:
        check_arraylike("toeplitz", c)
        r = mnp.conjugate(mnp.asarray(c))
    else:
        check_arraylike("toeplitz", c, r)
    return _toeplitz_v(mnp.atleast_1d(mnp.asarray(c)), mnp.atleast_1d(mnp.asarray(r)))


def hankel(c: Any, r: Any = None) -> Any:
    """The Hankel matrices (constant anti-diagonals) with first column ``c`` and last row
    ``r`` (``r[0]`` ignored; zeros by default), batched over leading dimensions."""
    if r is None:
        check_arraylike("hankel", c)
        c = mnp.asarray(c)
        r = mnp.zeros_like(c)
    else:
        check_arraylike("hankel", c, r)
        c, r = mnp.asarray(c), mnp.asarray(r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    if c.ndim < r.ndim:  # as jax: equal batch ranks before vectorizing
        c = lax.expand_dims(c, range(r.ndim - c.ndim))
    elif r.ndim < c.ndim:
        r = lax.expand_dims(r, range(c.ndim - r.ndim))
    return _hankel_v(c, r)


def _circulant(c: Any) -> Any:
    (n,) = c.shape
    return c[(mnp.arange(n)[:, None] - mnp.arange(n)[None, :]) % n]


_circulant_v = mnp.vectorize(_circulant, signature="(n)->(n,n)")


def circulant(c: Any) -> Any:
    """The circulant matrices whose first column is ``c`` (each column the previous one
    rotated down by one)."""
    check_arraylike("circulant", c)
    return _circulant_v(mnp.atleast_1d(mnp.asarray(c)))


def _leslie(f: Any, s: Any) -> Any:
    f, s = promote_dtypes(f, s)
    return mnp.diag(s, k=-1).at[0].set(f)


_leslie_v = mnp.vectorize(_leslie, signature="(n),(m)->(n,n)")


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrices: fecundities ``f`` (length N >= 2) as the first row, survivals ``s``
    (length N - 1) on the first sub-diagonal."""
    check_arraylike("leslie", f, s)
    f_arr, s_arr = mnp.atleast_1d(f), mnp.atleast_1d(s)
    if f_arr.shape[-1] < 2:
        raise ValueError(f"The length of f along the last axis must be at least 2; got shape {f_arr.shape}.")
    if s_arr.shape[-1] != f_arr.shape[-1] - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last axis must be one "
                         f"less than the length of f; got f shape {f_arr.shape} and s shape {s_arr.shape}.")
    return _leslie_v(f_arr, s_arr)


def _companion(a: Any) -> Any:
    first_row = -a[1:] / a[0]
    m = a.shape[0] - 1
    return mnp.eye(m, m, k=-1, dtype=first_row.dtype).at[0].set(first_row)


_companion_v = mnp.vectorize(_companion, signature="(n)->(m,m)")


def companion(a: Any) -> Any:
    """The companion matrices of the polynomials with coefficients ``a`` (highest degree
    first): first row ``-a[1:] / a[0]``, ones on the first sub-diagonal."""
    (a,) = promote_args_inexact("companion", a)
    a = mnp.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got shape {a.shape}.")
    return _companion_v(a)


def fiedler(a: Any) -> Any:
    """The symmetric Fiedler matrices ``|a[i] - a[j]|``."""
    check_arraylike("fiedler", a)
    arr = mnp.atleast_1d(a)
    return mnp.abs(arr[..., None] - arr[..., None, :])


def _fiedler_companion(a: Any) -> Any:
    n = a.shape[0] - 1
    if n == 0:
        return mnp.empty_like(a, shape=(0, 0))
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    # jax's pentadiagonal layout by masks over the full grid (see jax.scipy.linalg).
    i, j = mnp.arange(n)[:, None], mnp.arange(n)[None, :]
    super_val, sub_val = -a[mnp.minimum(i + 2, n)], -a[mnp.minimum(i + 1, n)]
    i_even, i_odd = i % 2 == 0, i % 2 == 1
    one, zero = mnp.array(1, dtype=a.dtype), mnp.array(0, dtype=a.dtype)
    conditions = [(i == 0) & (j == 0), (i == 1) & (j == 0), (j == i + 1) & i_even, (j == i + 2) & i_even,
                  (j == i - 1) & i_even & (i >= 2), (j == i - 2) & i_odd & (i >= 3)]
    return mnp.select(conditions, [-a[1], one, super_val, one, sub_val, one], default=zero)


_fiedler_companion_v = mnp.vectorize(_fiedler_companion, signature="(n)->(m,m)")


def fiedler_companion(a: Any) -> Any:
    """The pentadiagonal Fiedler companion matrices of the polynomials with coefficients ``a``
    (highest degree first); same eigenvalues as :func:`companion`'s."""
    (a,) = promote_args_inexact("fiedler_companion", a)
    a = mnp.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero length, but got an "
                         f"array of shape {a.shape}.")
    return _fiedler_companion_v(a)


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The Toeplitz matrices ``A`` with ``n`` columns such that ``A @ v`` is
    ``convolve(a, v, mode)``."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    check_arraylike("convolution_matrix", a)
    a_arr = mnp.asarray(a)
    if a_arr.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = a_arr.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a_arr.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    pad_widths = [(0, 0)] * (a_arr.ndim - 1) + [(0, n - 1)]
    az = mnp.pad(a_arr, pad_widths)
    raz = mnp.pad(mnp.flip(a_arr, axis=-1), pad_widths)
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb, te = trim // 2, trim - trim // 2
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    col0 = lax.slice_in_dim(az, tb, length - te, axis=-1)
    row0 = lax.slice_in_dim(raz, length - n - tb, length - tb, axis=-1)
    return toeplitz(col0, row0)


def block_diag(*arrs: Any) -> Any:
    """The block-diagonal matrix of ``arrs`` (each at most 2-D), in their promoted dtype."""
    if len(arrs) == 0:
        arrs = (mnp.zeros((1, 0)),)
    arrs = tuple(promote_dtypes(*arrs))
    bad_shapes = [i for i, a in enumerate(arrs) if mnp.ndim(a) > 2]
    if bad_shapes:
        raise ValueError(f"Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, got "
                         f"{arrs[bad_shapes[0]]} at argument {bad_shapes[0]}.")
    converted = [mnp.atleast_2d(a) for a in arrs]
    dtype = converted[0].dtype
    total_cols = sum(a.shape[1] for a in converted)
    padded, current_col = [], 0
    for arr in converted:
        cols = arr.shape[1]
        padding = ((0, 0, 0), (current_col, total_cols - cols - current_col, 0))
        padded.append(lax.pad(arr, dtype.type(0), padding))
        current_col += cols
    return mnp.concatenate(padded, axis=0)
