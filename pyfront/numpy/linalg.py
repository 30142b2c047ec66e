"""`mlax.numpy.linalg`: jnp.linalg's namespace. Its names that need no LAPACK-style decomposition:
products with the array API's signatures (positional-only operands, keyword-only options),
diagonal and trace over the last two axes, and the vector and matrix norms.

cholesky, solve, inv, det and slogdet come from linalg_decompositions.py (the LU and Cholesky
primitives), tensorsolve and tensorinv reshape to them; qr, svd, eigh and what builds on them
from linalg_spectral.py, eig and eigvals from linalg_eig.py.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Sequence
from typing import Any

import jax.numpy.linalg as _jax_linalg
import numpy as np

from mlax.numpy import elementwise as ew
from mlax.numpy import linalg_decompositions as _decompositions
from mlax.numpy import linalg_eig as _eig
from mlax.numpy import linalg_spectral as _spectral
from mlax.numpy import products
from mlax.numpy import reductions as red
from mlax.numpy.creation import eye
from mlax.numpy.dtypes import finfo
from mlax.numpy.einsum import einsum
from mlax.numpy.linalg_decompositions import *  # noqa: F403
from mlax.numpy.linalg_eig import *  # noqa: F403
from mlax.numpy.linalg_spectral import *  # noqa: F403
from mlax.numpy.manipulation import broadcast_to, transpose
from mlax.numpy.manipulation import diagonal as _diagonal
from mlax.numpy.norms import norm, squared_magnitude
from mlax.numpy.products import matrix_transpose, vecdot  # noqa: F401  (the same functions in jnp.linalg)
from mlax.numpy.util import asarray, check_arraylike, normalize_axis
from mlax.out_sharding import accept_out_sharding
from mlax.source_info import where

__all__ = ["cross", "diagonal", "matmul", "matrix_norm", "matrix_power", "matrix_transpose", "multi_dot",
           "norm", "outer", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm",
           *_decompositions.__all__, *_spectral.__all__, *_eig.__all__]


def _operands(fname: str, *xs: Any) -> list[Any]:
    check_arraylike(fname, *xs)
    return [asarray(x) for x in xs]


def matmul(x1: Any, x2: Any, /, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``jnp.linalg.matmul``: ``jnp.matmul`` with positional-only operands."""
    x1, x2 = _operands("linalg.matmul", x1, x2)
    return products.matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """``jnp.linalg.tensordot``: ``jnp.tensordot`` with keyword-only ``axes``."""
    x1, x2 = _operands("linalg.tensordot", x1, x2)
    return products.tensordot(x1, x2, axes, precision=precision,
                              preferred_element_type=preferred_element_type)


def outer(x1: Any, x2: Any, /) -> Any:
    """``jnp.linalg.outer``: the outer product of two vectors (no flattening, unlike jnp.outer)."""
    x1, x2 = _operands("linalg.outer", x1, x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"linalg.outer: input arrays must be one-dimensional, but they are "
                         f"x1.ndim={x1.ndim} x2.ndim={x2.ndim}{where()}")
    return ew.multiply(x1[:, None], x2[None, :])


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """``jnp.linalg.cross``: cross products of 3-vectors along ``axis``."""
    x1, x2 = _operands("linalg.cross", x1, x2)
    sizes = [x.shape[normalize_axis("linalg.cross", axis, x.ndim)] for x in (x1, x2)]
    if sizes != [3, 3]:
        raise ValueError(f"linalg.cross: both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they have sizes {sizes[0]} and {sizes[1]} along axis {axis}{where()}")
    return products.cross(x1, x2, axis=axis)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """``jnp.linalg.diagonal``: the diagonals of the matrices in the last two axes."""
    (x,) = _operands("linalg.diagonal", x)
    return _diagonal(x, offset, -2, -1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """``jnp.linalg.trace``: the traces of the matrices in the last two axes."""
    (x,) = _operands("linalg.trace", x)
    return products.trace(x, offset, -2, -1, dtype)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:  # noqa: A002 (jnp name)
    """``jnp.linalg.matrix_norm``: ``norm`` over the last two axes."""
    (x,) = _operands("linalg.matrix_norm", x)
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:  # noqa: A002
    """``jnp.linalg.vector_norm``: a p-norm over ``axis`` (all axes by default). Unlike ``norm``
    the input is not made inexact first: the infinity norms of integers are integers."""
    (x,) = _operands("linalg.vector_norm", x)
    if ord is None or ord == 2:
        return ew.sqrt(red.sum(squared_magnitude(x), axis=axis, keepdims=keepdims))
    if isinstance(ord, str):
        hint = {"inf": " Use 'jax.numpy.inf' instead.", "-inf": " Use '-jax.numpy.inf' instead."}
        raise ValueError(f"Invalid order '{ord}' for vector norm.{hint.get(ord, '')}")
    if ord == np.inf:
        return red.max(ew.absolute(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return red.min(ew.absolute(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return red.sum(ew.not_equal(x, 0), axis=axis, keepdims=keepdims, dtype=finfo(x.dtype).dtype)
    magnitude = ew.absolute(x)
    if ord == 1:
        return red.sum(magnitude, axis=axis, keepdims=keepdims)
    p = np.asarray(ord).astype(magnitude.dtype)  # lax._const: ord in |x|'s dtype, not weak
    total = red.sum(ew.power(magnitude, asarray(p)), axis=axis, keepdims=keepdims)
    return ew.power(total, asarray((1.0 / p).astype(magnitude.dtype)))


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Any:
    """``jnp.linalg.multi_dot``: a chain of matrix products (the ends may be vectors), as one
    einsum whose pairwise order opt_einsum picks to keep intermediates small, as in jax."""
    arrays = _operands("linalg.multi_dot", *arrays)
    if len(arrays) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(arrays)}{where()}")
    shapes = [a.shape for a in arrays]
    if not (arrays[0].ndim in (1, 2) and arrays[-1].ndim in (1, 2)
            and all(a.ndim == 2 for a in arrays[1:-1])):
        raise ValueError("multi_dot: input arrays must all be two-dimensional, except for the first and last "
                         f"array which may be 1 or 2 dimensional. Got array shapes {shapes}{where()}")
    if any(a.shape[-1] != b.shape[0] for a, b in itertools.pairwise(arrays)):
        raise ValueError("multi_dot: last dimension of each array must match first dimension of following "
                         f"array. Got array shapes {shapes}{where()}")
    axes = [[i, i + 1] for i in range(len(arrays))]
    axes[0] = axes[0][2 - arrays[0].ndim:]
    axes[-1] = axes[-1][:arrays[-1].ndim]
    return einsum(*itertools.chain(*zip(arrays, axes, strict=True)), optimize="auto", precision=precision)


def matrix_power(a: Any, n: int) -> Any:
    """``jnp.linalg.matrix_power``: ``a`` (square in its last two axes) to an integer power by
    repeated squaring, in jax's product order; a negative power is the inverse's."""
    (a,) = _operands("linalg.matrix_power", a)
    if a.ndim < 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be at least two-dimensional")
    if a.shape[-2] != a.shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"exponent must be an integer, got {n}") from None
    if n == 0:
        return broadcast_to(eye(a.shape[-1], dtype=a.dtype), a.shape)
    if n < 0:
        a, n = _decompositions.inv(a), -n
    if n <= 3:
        out = a
        for _ in range(n - 1):
            out = products.matmul(out, a)
        return out
    square, result = None, None
    while n > 0:
        square = a if square is None else products.matmul(square, square)
        n, bit = divmod(n, 2)
        if bit:
            result = square if result is None else products.matmul(result, square)
    return result


def tensorinv(a: Any, ind: int = 2) -> Any:
    """``jnp.linalg.tensorinv``: the inverse of ``a`` for ``tensordot`` over ``ind`` axes: the
    inverse of ``a`` as a matrix (its first ``ind`` axes against the rest), reshaped back."""
    (a,) = _operands("tensorinv", a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    contracting, batch = a.shape[:ind], a.shape[ind:]
    rows, cols = math.prod(contracting), math.prod(batch)
    if rows != cols:
        raise ValueError("tensorinv is only possible when the product of the first `ind` dimensions equals "
                         f"that of the remaining dimensions. got a.shape={a.shape} with ind={ind}.")
    return _decompositions.inv(a.reshape(rows, cols)).reshape(*batch, *contracting)


def tensorsolve(a: Any, b: Any, axes: tuple[int, ...] | None = None) -> Any:
    """``jnp.linalg.tensorsolve``: x with ``tensordot(a, x, x.ndim) == b`` (the ``axes`` of ``a``
    moved to the end first, in increasing order as jax moves them), solved as one square linear
    system."""
    a, b = _operands("tensorsolve", a, b)
    if axes is not None:
        moved = sorted(normalize_axis("tensorsolve", axis, a.ndim) for axis in axes)
        a = transpose(a, [axis for axis in range(a.ndim) if axis not in moved] + moved)
    out_shape = a.shape[b.ndim:]
    if a.shape[:b.ndim] != b.shape:
        raise ValueError("After moving axes to end, leading shape of a must match shape of b. "
                         f"got a.shape={a.shape}, b.shape={b.shape}")
    if b.size != math.prod(out_shape):
        raise ValueError("Input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]); "
                         f"got a.shape={a.shape}, b.ndim={b.ndim}.")
    return _decompositions.solve(a.reshape(b.size, math.prod(out_shape)), b.ravel()).reshape(out_shape)


accept_out_sharding(globals(), _jax_linalg, "mlax.numpy.linalg")
