"""mlax.numpy products: dot, matmul, tensordot, inner, outer, vdot, kron, trace, einsum; and, as
the `mlax.numpy.linalg` namespace, `norm`.

Every contraction is one lax.dot_general on operands promoted to JAX's result type, with
``preferred_element_type`` passed through as jax.numpy does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlax import lax
from mlax.numpy.einsum import einsum, einsum_path
from mlax.numpy.manipulation import diagonal, ravel, reshape
from mlax.numpy.norms import norm  # noqa: F401  (mlax.numpy.linalg.norm, as jnp.linalg.norm)
from mlax.numpy.util import (
    broadcast_shapes_or_raise,
    normalize_axes,
    promote_args,
    promote_dtypes,
    static_ints,
)
from mlax.source_info import where

__all__ = ["dot", "einsum", "einsum_path", "inner", "kron", "matmul", "outer", "tensordot", "trace", "vdot"]


def _contract(fname: str, a: Any, b: Any, a_axes: Sequence[int], b_axes: Sequence[int],
              preferred_element_type: Any, batch: tuple[Sequence[int], Sequence[int]] = ((), ())) -> Any:
    """lax.dot_general with a shape check that names the numpy function."""
    for i, j in zip(a_axes, b_axes, strict=True):
        if a.shape[i] != b.shape[j]:
            raise ValueError(f"{fname}: contracted dimensions differ: axis {i} of shape {a.shape} and "
                             f"axis {j} of shape {b.shape}{where()}")
    return lax.dot_general(a, b, ((tuple(a_axes), tuple(b_axes)), tuple(map(tuple, batch))),
                           preferred_element_type=preferred_element_type)


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
    return _contract("dot", a, b, (a.ndim - 1,), (max(b.ndim - 2, 0),), preferred_element_type)


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
    out = _batched_matmul(a, b, preferred_element_type)
    if vec_a or vec_b:
        out = reshape(out, out.shape[:-2] + out.shape[-2:][vec_a:2 - vec_b])
    return out


def _batched_matmul(a: Any, b: Any, preferred_element_type: Any) -> Any:
    from mlax.numpy.manipulation import broadcast_to, moveaxis

    if b.ndim == 2:  # a's batch axes are free axes of one dot_general
        return _contract("matmul", a, b, (a.ndim - 1,), (0,), preferred_element_type)
    if a.ndim == 2:
        out = _contract("matmul", a, b, (1,), (b.ndim - 2,), preferred_element_type)
        return moveaxis(out, 0, -2)
    batch = broadcast_shapes_or_raise("matmul", a.shape[:-2], b.shape[:-2])
    a, b = broadcast_to(a, batch + a.shape[-2:]), broadcast_to(b, batch + b.shape[-2:])
    dims = tuple(range(len(batch)))
    return _contract("matmul", a, b, (a.ndim - 1,), (b.ndim - 2,), preferred_element_type, (dims, dims))


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
    return _contract("tensordot", a, b, a_axes, b_axes, preferred_element_type)


def inner(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``jnp.inner``: the last axes of ``a`` and ``b`` contracted."""
    a, b = promote_dtypes(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return _scalar_product(a, b, preferred_element_type)
    return _contract("inner", a, b, (a.ndim - 1,), (b.ndim - 1,), preferred_element_type)


def vdot(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """``jnp.vdot``: the dot product of the flattened operands (no complex types in mlax)."""
    return dot(ravel(a), ravel(b), preferred_element_type=preferred_element_type)


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
    from mlax.numpy.reductions import sum as sum_

    return sum_(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)
