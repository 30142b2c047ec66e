"""mlax.numpy products: dot, matmul, tensordot, inner, outer, vdot, kron, trace, einsum, and the
array-API batched products vecdot, matvec, vecmat (with matrix_transpose) and cross.

Every contraction is one lax.dot_general on operands promoted to JAX's result type, with
``precision`` and ``preferred_element_type`` passed through as jax.numpy does. The
`mlax.numpy.linalg` namespace (pyfront/numpy/linalg.py) wraps these with jnp.linalg's signatures.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlax import lax
from mlax.numpy import elementwise as ew
from mlax.numpy.complex_numbers import conjugate
from mlax.numpy.einsum import einsum, einsum_path
from mlax.numpy.manipulation import broadcast_to, diagonal, moveaxis, ravel, reshape, stack
from mlax.numpy.reductions import sum as sum_
from mlax.numpy.util import (
    asarray,
    broadcast_shapes_or_raise,
    broadcast_to_shape,
    check_arraylike,
    const_like,
    normalize_axes,
    normalize_axis,
    promote_args,
    promote_dtypes,
    static_ints,
)
from mlax.source_info import where

__all__ = ["cross", "dot", "einsum", "einsum_path", "inner", "kron", "matmul", "matrix_transpose", "matvec",
           "outer", "tensordot", "trace", "vdot", "vecdot", "vecmat"]


def _contract(fname: str, a: Any, b: Any, a_axes: Sequence[int], b_axes: Sequence[int],
              preferred_element_type: Any, batch: tuple[Sequence[int], Sequence[int]] = ((), ()),
              precision: Any = None) -> Any:
    """lax.dot_general with a shape check that names the numpy function."""
    for i, j in zip(a_axes, b_axes, strict=True):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"{fname}: contracted dimensions differ: axis {i} of shape {a.shape} and "
                             f"axis {j} of shape {b.shape}{where()}")
    return lax.dot_general(a, b, ((tuple(a_axes), tuple(b_axes)), tuple(map(tuple, batch))), precision,
                           preferred_element_type)


def _scalar_product(a: Any, b: Any, preferred_element_type: Any) -> Any:
    out = lax.mul(*promote_args("dot", a, b))
    if preferred_element_type is None:
        return out
    return lax.convert_element_type(out, preferred_element_type)


def dot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``jnp.dot``: the last axis of ``a`` against the second-to-last (or only) axis of ``b``."""
    a, b = promote_dtypes(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return _scalar_product(a, b, preferred_element_type)
    return _contract("dot", a, b, (a.ndim - 1,), (max(b.ndim - 2, 0),), preferred_element_type,
                     precision=precision)


def matmul(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``jnp.matmul``: matrix product over the last two axes, broadcasting the batch axes."""
    a, b = promote_dtypes(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands must be at least 1-dimensional, got shapes {a.shape} and "
                         f"{b.shape}{where()}")
    vec_a, vec_b = a.ndim == 1, b.ndim == 1
    if vec_a:
        a = reshape(a, (1, a.shape[0]))
    if vec_b:
        b = reshape(b, (b.shape[0], 1))
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: the last axis of the first operand ({a.shape}) must match the "
                         f"second-to-last axis of the second ({b.shape}){where()}")
    out = _batched_matmul(a, b, preferred_element_type, precision)
    if vec_a or vec_b:
        out = reshape(out, out.shape[:-2] + out.shape[-2:][vec_a:2 - vec_b])
    return out


def _batched_matmul(a: Any, b: Any, preferred_element_type: Any, precision: Any) -> Any:
    if b.ndim == 2:  # a's batch axes are free axes of one dot_general
        return _contract("matmul", a, b, (a.ndim - 1,), (0,), preferred_element_type, precision=precision)
    if a.ndim == 2:
        out = _contract("matmul", a, b, (1,), (b.ndim - 2,), preferred_element_type, precision=precision)
        return moveaxis(out, 0, -2)
    batch = broadcast_shapes_or_raise("matmul", a.shape[:-2], b.shape[:-2])
    a, b = broadcast_to(a, batch + a.shape[-2:]), broadcast_to(b, batch + b.shape[-2:])
    dims = tuple(range(len(batch)))
    return _contract("matmul", a, b, (a.ndim - 1,), (b.ndim - 2,), preferred_element_type, (dims, dims),
                     precision)


def tensordot(a: Any, b: Any, axes: int | Sequence[Any] = 2, *, precision: Any = None,
              preferred_element_type: Any = None) -> Any:
    """``jnp.tensordot``: ``axes`` is a count (last of a with first of b) or a pair of axis lists."""
    a, b = promote_dtypes(a, b)
    if isinstance(axes, (list, tuple)):
        if len(axes) != 2:
            raise ValueError(f"tensordot: axes must be an int or a pair of axis sequences, got {axes}"
                             f"{where()}")
        a_axes = normalize_axes("tensordot", axes[0], a.ndim)
        b_axes = normalize_axes("tensordot", axes[1], b.ndim)
        if len(a_axes) != len(b_axes):
            raise ValueError(f"tensordot: axes {axes} pair sequences of different lengths{where()}")
    else:
        (count,) = static_ints("tensordot", "axes", axes)
        if not 0 <= count <= min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: axes={count} must be in [0, {min(a.ndim, b.ndim)}] for shapes "
                             f"{a.shape} and {b.shape}{where()}")
        a_axes, b_axes = tuple(range(a.ndim - count, a.ndim)), tuple(range(count))
    return _contract("tensordot", a, b, a_axes, b_axes, preferred_element_type, precision=precision)


def inner(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``jnp.inner``: the last axes of ``a`` and ``b`` contracted."""
    a, b = promote_dtypes(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return _scalar_product(a, b, preferred_element_type)
    return _contract("inner", a, b, (a.ndim - 1,), (b.ndim - 1,), preferred_element_type, precision=precision)


def vdot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``jnp.vdot``: the dot product of the flattened operands, ``a`` conjugated."""
    return dot(conjugate(ravel(a)), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


def outer(a: Any, b: Any, out: None = None) -> Any:
    """``jnp.outer``: ``ravel(a)[:, None] * ravel(b)[None, :]``."""
    a, b = ravel(a), ravel(b)
    a, b = promote_dtypes(a, b)
    shape = (a.shape[0], b.shape[0])
    return lax.mul(lax.broadcast_in_dim(a, shape, (0,)), lax.broadcast_in_dim(b, shape, (1,)))


def kron(a: Any, b: Any) -> Any:
    """``jnp.kron``: the product of every pair, with interleaved (a, b) axes merged."""
    a, b = promote_dtypes(a, b)
    rank = max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (rank - a.ndim) + a.shape)
    b = reshape(b, (1,) * (rank - b.ndim) + b.shape)
    wide = tuple(d for pair in zip(a.shape, b.shape, strict=True) for d in pair)
    prod = lax.mul(lax.broadcast_in_dim(a, wide, tuple(range(0, 2 * rank, 2))),
                   lax.broadcast_in_dim(b, wide, tuple(range(1, 2 * rank, 2))))
    return reshape(prod, tuple(x * y for x, y in zip(a.shape, b.shape, strict=True)))


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None,
          out: None = None) -> Any:
    """``jnp.trace``: the sum of a diagonal, with ``jnp.sum``'s result dtype."""
    return sum_(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


# --- array-API batched products: core dimensions last, batch dimensions broadcast ----------

def matrix_transpose(x: Any, /) -> Any:
    """``jnp.matrix_transpose``: the last two axes swapped."""
    check_arraylike("matrix_transpose", x)
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got ndim={x.ndim}"
                         f"{where()}")
    return lax.transpose(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


def _batched_product(fname: str, x1: Any, x2: Any, cores: tuple[int, int],
                     preferred_element_type: Any = None, precision: Any = None) -> Any:
    """One dot_general of the last axis of ``x1`` with axis ``-cores[1]`` of ``x2`` (``cores``: the
    number of core axes of each), their other leading axes broadcast into batch axes; as
    ``jnp.vectorize`` of matmul or vdot with a signature of those core ranks."""
    check_arraylike(fname, x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    for x, core in zip((x1, x2), cores, strict=True):
        if x.ndim < core:
            raise ValueError(f"{fname}: input with shape {x.shape} does not have enough dimensions for "
                             f"its {core} core dimension(s){where()}")
    batch = broadcast_shapes_or_raise(fname, x1.shape[:x1.ndim - cores[0]], x2.shape[:x2.ndim - cores[1]])
    x1, x2 = (broadcast_to_shape(x, batch + x.shape[x.ndim - core:])
              for x, core in zip((x1, x2), cores, strict=True))
    dims = tuple(range(len(batch)))
    return _contract(fname, x1, x2, (x1.ndim - 1,), (x2.ndim - cores[1],), preferred_element_type,
                     (dims, dims), precision)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    """``jnp.vecdot``: dot products along ``axis`` (``x1`` conjugated), the other axes broadcast."""
    check_arraylike("vecdot", x1, x2)
    x1, x2 = conjugate(asarray(x1)), asarray(x2)
    a1, a2 = normalize_axis("vecdot", axis, x1.ndim), normalize_axis("vecdot", axis, x2.ndim)
    if x1.shape[a1] != x2.shape[a2]:
        raise ValueError(f"vecdot: axes must match; got shapes {x1.shape} and {x2.shape} with axis={axis}"
                         f"{where()}")
    return _batched_product("vecdot", moveaxis(x1, a1, -1), moveaxis(x2, a2, -1), (1, 1),
                            preferred_element_type, precision)


def matvec(x1: Any, x2: Any, /) -> Any:
    """``jnp.matvec``: matrices (last two axes of ``x1``) times vectors (last axis of ``x2``)."""
    return _batched_product("matvec", x1, x2, (2, 1))


def vecmat(x1: Any, x2: Any, /) -> Any:
    """``jnp.vecmat``: vectors (last axis of ``x1``) times matrices (last two axes of ``x2``)."""
    return _batched_product("vecmat", x1, x2, (1, 2))


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> Any:
    """``jnp.cross``: cross products of 2- or 3-vectors along ``axisa``/``axisb`` (``axis`` sets all
    three); two 2-vectors give the z component only."""
    check_arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = moveaxis(asarray(a), axisa, -1), moveaxis(asarray(b), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(f"cross: dimension must be either 2 or 3 for cross product, got shapes {a.shape} "
                         f"and {b.shape}{where()}")

    def components(v: Any) -> list[Any]:
        parts = [v[..., i] for i in range(v.shape[-1])]
        return parts + [const_like(parts[0], 0, "like")] * (3 - len(parts))  # jnp's zeros_like

    def minor(i: int, j: int) -> Any:
        return ew.subtract(ew.multiply(a_[i], b_[j]), ew.multiply(a_[j], b_[i]))

    a_, b_ = components(a), components(b)
    if a.shape[-1] == b.shape[-1] == 2:
        return minor(0, 1)
    return moveaxis(stack([minor(1, 2), minor(2, 0), minor(0, 1)]), 0, axisc)
