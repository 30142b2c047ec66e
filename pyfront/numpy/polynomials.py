"""mlax.numpy polynomials (coefficient arrays, highest power first) and 1-d convolutions: poly,
polyadd/sub/mul/div, polyder, polyint, polyval, vander, convolve, correlate and trim_zeros, as
jax.numpy.

Products of polynomials are convolutions, and convolutions are one ``conv_general_dilated``
(the shorter operand is the kernel), as in jnp. polyfit solves with ``linalg.lstsq`` and roots
takes the eigenvalues of the companion matrix (``linalg.eigvals``), both as jnp.
"""

from __future__ import annotations

import operator
from typing import Any

import ml_dtypes
import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax
from mlax.dialect import dtypes as ir_dtypes
from mlax.numpy import elementwise as ew
from mlax.numpy import linalg
from mlax.numpy.creation import arange, diag, full, ones, zeros
from mlax.numpy.manipulation import atleast_1d, concatenate, roll
from mlax.numpy.math_extra import where as where_
from mlax.numpy.reductions import all as all_
from mlax.numpy.reductions import argmin
from mlax.numpy.reductions import prod as prod_
from mlax.numpy.util import (
    asarray,
    broadcast_shapes_or_raise,
    check_arraylike,
    concrete,
    normalize_axes,
    promote_dtypes,
    to_inexact_dtype,
)
from mlax.source_info import where

__all__ = [
    "convolve", "correlate", "poly", "polyadd", "polyder", "polydiv", "polyfit", "polyint", "polymul",
    "polysub", "polyval", "roots", "trim_zeros", "vander",
]


def _promote_inexact(*args: Any) -> list[Any]:
    """jnp's ``promote_dtypes_inexact``: one inexact dtype for all, no broadcasting."""
    dtype, weak = front_dtypes.result_type(*args, return_weak_type_flag=True)
    return [lax.convert_element_type(asarray(a), to_inexact_dtype(dtype), weak_type=weak) for a in args]


# --- convolutions -------------------------------------------------------------------------

def _conv(name: str, x: Any, y: Any, mode: str, precision: Any, preferred_element_type: Any) -> Any:
    """The full/same/valid 1-d convolution (or correlation) of ``x`` and ``y``."""
    check_arraylike(name, x, y)
    if np.ndim(x) != 1 or np.ndim(y) != 1:
        raise ValueError(f"mlax.numpy.{name}: {name}() only support 1-dimensional inputs{where()}")
    if preferred_element_type is None:
        x, y = _promote_inexact(x, y)  # NumPy's default for convolutions
    else:
        x, y = promote_dtypes(x, y)
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"mlax.numpy.{name}: inputs cannot be empty, got shapes {x.shape} and {y.shape}"
                         f"{where()}")
    reverse_output = False
    if x.shape[0] < y.shape[0]:
        x, y = y, x
        reverse_output = name == "correlate"
    if name == "convolve":
        y = lax.rev(y, (0,))
    k = y.shape[0]
    paddings = {"valid": (0, 0), "same": (k // 2, k - k // 2 - 1), "full": (k - 1, k - 1)}
    if mode not in paddings:
        raise ValueError(f"mlax.numpy.{name}: mode must be one of ['full', 'same', 'valid']{where()}")
    out = lax.conv_general_dilated(lax.reshape(x, (1, 1, x.shape[0])), lax.reshape(y, (1, 1, k)), (1,),
                                   [paddings[mode]], precision=precision,
                                   preferred_element_type=preferred_element_type)
    out = lax.reshape(out, (out.shape[2],))
    return lax.rev(out, (0,)) if reverse_output else out


def convolve(a: Any, v: Any, mode: str = "full", *, precision: Any = None,
             preferred_element_type: Any = None) -> Any:
    """The discrete linear convolution of two 1-d arrays."""
    return _conv("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a: Any, v: Any, mode: str = "valid", *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """The cross-correlation of two 1-d arrays (``v`` slides over ``a`` unflipped)."""
    return _conv("correlate", a, v, mode, precision, preferred_element_type)


# --- trimming -----------------------------------------------------------------------------

def trim_zeros(filt: Any, trim: str = "fb", axis: Any = None) -> Any:
    """``filt`` without its leading ('f') and/or trailing ('b') all-zero slices along ``axis``
    (every axis by default); needs a concrete array, as the result's shape depends on it."""
    check_arraylike("trim_zeros", filt)
    filt = asarray(filt)
    values = concrete(filt)
    axes = set(range(filt.ndim)) if axis is None else set(normalize_axes("trim_zeros", axis, filt.ndim))
    front, back = "f" in trim.lower(), "b" in trim.lower()
    if not axes or not (front or back):
        return filt

    def bounds(d: int) -> slice:
        if d not in axes:
            return slice(None)
        mask = np.any(values != 0, axis=tuple(k for k in range(filt.ndim) if k != d))
        if not mask.any():
            return slice(0, 0)
        start = int(mask.argmax()) if front else None
        stop = filt.shape[d] - int(mask[::-1].argmax()) if back else None
        return slice(start, stop)

    return filt[tuple(bounds(d) for d in range(filt.ndim))]


def _trim_leading_small(u: Any, tol: Any) -> Any:
    """``u`` without its leading elements smaller than ``tol`` in magnitude (jnp's
    ``trim_zeros_tol(trim='f')``); empty if all are."""
    small = concrete(ew.absolute(u) < tol)
    if small.all():
        return zeros(0, u.dtype)
    return u[int(np.argmin(small)):]


# --- polynomial arithmetic ----------------------------------------------------------------

def poly(seq_of_zeros: Any) -> Any:
    """The coefficients of the monic polynomial with the given roots (a square matrix: its
    characteristic polynomial, from its eigenvalues, so complex as in jnp)."""
    check_arraylike("poly", seq_of_zeros)
    (zeros_,) = _promote_inexact(seq_of_zeros)
    zeros_ = atleast_1d(zeros_)
    shape = zeros_.shape
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        zeros_ = linalg.eigvals(zeros_)
        shape = zeros_.shape
    if zeros_.ndim != 1:
        raise ValueError(f"mlax.numpy.poly: input must be 1d or non-empty square 2d array{where()}")
    dtype = zeros_.dtype
    coefficients = asarray(np.ones((), dtype))
    if shape[0] == 0:
        return coefficients
    coefficients = lax.reshape(coefficients, (1,))
    one = asarray(np.ones(1, dtype))
    for k in range(shape[0]):
        factor = concatenate([one, lax.reshape(lax.neg(zeros_[k]), (1,))])
        coefficients = convolve(coefficients, factor, mode="full")
    return coefficients


def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """The polynomial with coefficients ``p`` (along axis 0) at ``x``, by Horner's scheme."""
    check_arraylike("polyval", p, x)
    p, x = promote_dtypes(p, x)
    shape = broadcast_shapes_or_raise("polyval", p.shape[1:], x.shape)
    start = lax.broadcast_in_dim(asarray(np.zeros((), x.dtype)), shape, ())  # never weak, as jnp's
    result, _ = lax.scan(lambda y, c: (y * x + c, None), start, p, unroll=unroll)
    return result


def _add(a1: Any, a2: Any) -> Any:
    """The sum of two coefficient arrays of one dtype, aligned at the constant term."""
    if a2.shape[0] <= a1.shape[0]:
        return a1.at[-a2.shape[0]:].add(a2)
    return a2.at[-a1.shape[0]:].add(a1)


def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials."""
    check_arraylike("polyadd", a1, a2)
    return _add(*promote_dtypes(a1, a2))


def polysub(a1: Any, a2: Any) -> Any:
    """The difference of two polynomials."""
    check_arraylike("polysub", a1, a2)
    a1, a2 = promote_dtypes(a1, a2)
    return _add(a1, -a2)


def _unsized(*arrays: Any) -> None:
    if any(a.ndim == 0 for a in arrays):
        raise TypeError(f"len() of unsized object{where()}")


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    """The product of two polynomials (a full convolution)."""
    check_arraylike("polymul", a1, a2)
    a1, a2 = _promote_inexact(a1, a2)
    _unsized(a1, a2)
    if trim_leading_zeros and (a1.shape[0] > 1 or a2.shape[0] > 1):
        a1, a2 = trim_zeros(a1, trim="f"), trim_zeros(a2, trim="f")
    if a1.shape[0] == 0:
        a1 = zeros(1, dtype=a2.dtype)
    if a2.shape[0] == 0:
        a2 = zeros(1, dtype=a1.dtype)
    return convolve(a1, a2, mode="full")


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """Quotient and remainder of polynomial long division (the remainder keeps ``u``'s length
    unless ``trim_leading_zeros``, which needs concrete inputs)."""
    check_arraylike("polydiv", u, v)
    u, v = _promote_inexact(u, v)
    _unsized(u, v)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    quotient = zeros(max(m - n + 1, 1), dtype=u.dtype)
    for k in range(m - n + 1):
        d = scale * u[k]
        quotient = quotient.at[k].set(d)
        u = u.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        u = _trim_leading_small(u, np.sqrt(ml_dtypes.finfo(u.dtype).eps))
    return quotient, u


def polyder(p: Any, m: int = 1) -> Any:
    """The ``m``-th derivative of a polynomial."""
    check_arraylike("polyder", p)
    m = operator.index(m)
    (p,) = _promote_inexact(p)
    if m < 0:
        raise ValueError(f"mlax.numpy.polyder: order of derivative must be positive{where()}")
    if m == 0:
        return p
    grid = arange(m, p.shape[0], dtype=p.dtype)[None] - arange(m, dtype=p.dtype)[:, None]
    return p[:-m] * prod_(grid, 0)[::-1]


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The ``m``-th antiderivative of a polynomial, with integration constants ``k`` (a scalar
    or one per integration)."""
    m = operator.index(m)
    k = 0 if k is None else k
    check_arraylike("polyint", p, k)
    p, k = _promote_inexact(p, k)
    if m < 0:
        raise ValueError(f"mlax.numpy.polyint: order of integral must be positive (see polyder){where()}")
    k = atleast_1d(k)
    if k.shape[0] == 1:
        k = full((m,), k[0])
    if k.shape != (m,):
        raise ValueError(f"mlax.numpy.polyint: k must be a scalar or a rank-1 array of length 1 or "
                         f"m{where()}")
    if m == 0:
        return p
    grid = arange(p.shape[0] + m, dtype=p.dtype)[None] - arange(m, dtype=p.dtype)[:, None]
    coefficients = prod_(ew.maximum(1, grid), 0)[::-1]
    return ew.true_divide(concatenate((p, k)), coefficients)


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:  # noqa: N803 (jnp's name)
    """The Vandermonde matrix: columns are powers of ``x`` (decreasing unless ``increasing``)."""
    check_arraylike("vander", x)
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError(f"mlax.numpy.vander: x must be a one-dimensional array{where()}")
    N = x.shape[0] if N is None else operator.index(N)  # noqa: N806
    if N < 0:
        raise ValueError(f"mlax.numpy.vander: N must be nonnegative{where()}")
    powers = lax.iota(x.dtype, N)
    if not increasing:
        powers = lax.sub(asarray(np.full(N, N - 1, x.dtype)), powers)
    return ew.power(x[:, None], powers[None, :])


# --- on the decompositions: least squares (an SVD) and eigenvalues -----------------------


def _checked_fit_inputs(x: Any, y: Any, deg: Any, w: Any) -> tuple[Any, Any, int]:
    check_arraylike("polyfit", x, y, *(() if w is None else (w,)))
    x, y = asarray(x), asarray(y)
    if operator.index(deg) < 0:  # a traced deg raises TracerIntegerConversionError here
        raise ValueError(f"mlax.numpy.polyfit: expected deg >= 0{where()}")
    if x.ndim != 1:
        raise TypeError(f"mlax.numpy.polyfit: expected 1D vector for x{where()}")
    if x.shape[0] == 0:
        raise TypeError(f"mlax.numpy.polyfit: expected non-empty vector for x{where()}")
    if not 1 <= y.ndim <= 2:
        raise TypeError(f"mlax.numpy.polyfit: expected 1D or 2D array for y{where()}")
    if x.shape[0] != y.shape[0]:
        raise TypeError(f"mlax.numpy.polyfit: expected x and y to have same length{where()}")
    return x, y, operator.index(deg)


def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False, w: Any = None,
            cov: bool | str = False) -> Any:
    """Least-squares polynomial fit (jnp's: the Vandermonde matrix, weighted, its columns scaled to
    unit norm, then linalg.lstsq; ``full`` adds lstsq's diagnostics, ``cov`` the covariance)."""
    x, y, deg = _checked_fit_inputs(x, y, deg, w)
    order = deg + 1
    if rcond is None:
        rcond = len(x) * float(np.finfo(to_inexact_dtype(x.dtype)).eps)
    rcond = float(rcond)
    lhs, rhs = vander(x, order), y
    if w is not None:
        (w,) = _promote_inexact(w)
        if w.ndim != 1:
            raise TypeError(f"mlax.numpy.polyfit: expected a 1-d array for weights{where()}")
        if w.shape[0] != y.shape[0]:
            raise TypeError(f"mlax.numpy.polyfit: expected w and y to have the same length{where()}")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    scale = ew.sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, asarray(rcond)
    if not cov:
        return c
    base = linalg.inv(lhs.T @ lhs) / ew.multiply(scale[:, None], scale[None, :])
    if cov == "unscaled":
        fac = asarray(1.0)
    else:
        if len(x) <= order:
            raise ValueError("mlax.numpy.polyfit: the number of data points must exceed order to scale the "
                             f"covariance matrix{where()}")
        fac = resids / (len(x) - order)
    if y.ndim == 1:
        return c, base * atleast_1d(fac)[None]
    return c, base[:, :, None] * atleast_1d(fac)[None, None, :]


def _complex_of(dtype: np.dtype) -> np.dtype:
    """The complex dtype of ``dtype``'s precision (roots are complex, as jnp's)."""
    return dtype if ir_dtypes.is_complex(dtype) else ir_dtypes.complex_dtype(dtype)


def _roots_no_zeros(p: Any) -> Any:
    """The eigenvalues of ``p``'s companion matrix (its first row -p[1:] / p[0], ones below)."""
    if p.size < 2:
        return zeros((0,), _complex_of(p.dtype))
    companion = diag(ones((p.size - 2,), p.dtype), -1)
    companion = companion.at[0, :].set(-p[1:] / p[0])
    return linalg.eigvals(companion)


def _roots_with_zeros(p: Any, leading_zeros: Any) -> Any:
    """jnp's traceable form: the leading zeros rolled to the end, their roots NaN."""
    p = where_(len(p) == leading_zeros, 1.0, p)  # all zero: no LAPACK failure
    found = _roots_no_zeros(roll(p, -leading_zeros))
    found = lax.sort_key_val(found == 0, found)[1]
    return where_(arange(found.size) < found.size - leading_zeros, found, complex(np.nan, np.nan))


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """The roots of a polynomial (``p`` highest power first), complex, as jnp: the eigenvalues of
    its companion matrix. ``strip_zeros=False`` keeps shapes static (NaN for each leading zero)."""
    check_arraylike("roots", p)
    (p,) = _promote_inexact(p)
    p = atleast_1d(p)
    if p.ndim != 1:
        raise ValueError(f"mlax.numpy.roots: input must be a rank-1 array{where()}")
    if p.size < 2:
        return zeros((0,), _complex_of(p.dtype))
    leading_zeros = where_(all_(p == 0), len(p), argmin(p == 0))
    if strip_zeros:
        # under jit, int() of the traced count raises ConcretizationTypeError: pass strip_zeros=False
        return _roots_no_zeros(p[int(leading_zeros):])
    return _roots_with_zeros(p, leading_zeros)
