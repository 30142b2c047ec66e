"""`mlax.numpy.linalg.norm`: vector and matrix norms as jnp.linalg.norm (mlax.numpy.linalg re-exports
it; jnp has no top-level norm)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax.lax import decompositions_spectral as lax_spectral
from mlax.numpy import elementwise as ew
from mlax.numpy import reductions as red
from mlax.numpy.complex_numbers import conjugate, real
from mlax.numpy.manipulation import expand_dims, moveaxis, squeeze
from mlax.numpy.util import asarray, check_arraylike, normalize_axes, promote_args_inexact


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002
    """Vector norms (ord None/2, inf, -inf, 0, 1, other p) and matrix norms ('fro'/'f', 1, -1,
    inf, -inf), as jnp.linalg.norm; the spectral ones (2, -2, 'nuc') from the singular values. As jnp, the
    max-based norms of empty inputs are 0 and the min-based ones an error."""
    check_arraylike("norm", x)
    (x,) = promote_args_inexact("norm", asarray(x))
    if axis is None:
        if ord is None:  # the 2-norm of the flattened array, whatever its rank
            return ew.sqrt(red.sum(squared_magnitude(x), keepdims=keepdims))
        axis = tuple(range(x.ndim))
    axes = normalize_axes("norm", (axis,) if isinstance(axis, int) else axis, x.ndim)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(f"Improper number of axes for norm: axis={axes}. Pass one axis to compute a "
                     "vector-norm, or two axes to compute a matrix-norm.")


def squared_magnitude(x: Any) -> Any:
    """``real(x * conj(x))``, jnp's squares for the 2-norms (``x * x`` for real x)."""
    return real(ew.multiply(x, conjugate(x)))


def _vector_norm(x: Any, ord: Any, axes: tuple[int, ...], keepdims: bool) -> Any:  # noqa: A002
    magnitude = ew.absolute(x)
    if ord is None or ord == 2:
        return ew.sqrt(red.sum(squared_magnitude(x), axis=axes, keepdims=keepdims))
    if ord == np.inf:
        return red.max(magnitude, axis=axes, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return red.min(magnitude, axis=axes, keepdims=keepdims)
    if ord == 0:
        return red.sum(ew.not_equal(x, 0), axis=axes, keepdims=keepdims, dtype=x.dtype)
    if ord == 1:
        return red.sum(magnitude, axis=axes, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    p = np.asarray(ord, magnitude.dtype)
    return ew.power(red.sum(ew.power(magnitude, p), axis=axes, keepdims=keepdims), ew.reciprocal(p))


def _matrix_norm(x: Any, ord: Any, axes: tuple[int, ...], keepdims: bool) -> Any:  # noqa: A002
    row, col = axes
    magnitude = ew.absolute(x)
    if ord is None or ord in ("f", "fro"):
        return ew.sqrt(red.sum(squared_magnitude(x), axis=axes, keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        summed, picked = (row, col) if ord in (1, -1) else (col, row)
        totals = red.sum(magnitude, axis=summed, keepdims=True)
        out = (red.max(totals, axis=picked, keepdims=True, initial=0) if ord > 0
               else red.min(totals, axis=picked, keepdims=True))
        return out if keepdims else squeeze(out, axes)
    if ord in (2, -2, "nuc"):
        return _spectral_norm(x, ord, axes, keepdims)
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def _spectral_norm(x: Any, ord: Any, axes: tuple[int, int], keepdims: bool) -> Any:  # noqa: A002
    """The matrix norms of jnp.linalg.norm that need the singular values: 2 (the largest), -2 (the
    smallest), 'nuc' (their sum), over the two ``axes``."""
    s = lax_spectral.svd(moveaxis(x, axes, (-2, -1)), compute_uv=False)
    if ord == 2:
        y = red.max(s, axis=-1, initial=0)
    elif ord == -2:
        y = red.min(s, axis=-1)
    else:
        y = red.sum(s, axis=-1)
    return expand_dims(y, axes) if keepdims else y
