"""mlax.flatten_util.ravel_pytree: a pytree of arrays as one flat vector, and back (as jax's).

Optimizers that work on one parameter vector (L-BFGS, natural gradients) flatten the model's
pytree with it; jax's version applies jax's own ops, so mlax has its own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from jax import tree_util

import mlax.numpy as mnp

__all__ = ["ravel_pytree"]


def _unravel(tree: Any, sizes: tuple[int, ...], shapes: tuple[tuple[int, ...], ...],
             from_dtypes: tuple[np.dtype, ...] | None, to_dtype: np.dtype | None, flat: Any) -> Any:
    if from_dtypes is not None and mnp.result_type(flat) != to_dtype:
        raise TypeError(f"unravel function given array of dtype {mnp.result_type(flat)}, but expected "
                        f"dtype {to_dtype}")
    if np.shape(flat) != (sum(sizes),):
        raise ValueError(f"The unravel function expected an array of shape {(sum(sizes),)}, got shape "
                         f"{np.shape(flat)}.")
    chunks = mnp.split(flat, np.cumsum(sizes)[:-1]) if sizes else []
    leaves = [chunk.reshape(shape) for chunk, shape in zip(chunks, shapes, strict=True)]
    if from_dtypes is not None:
        leaves = [leaf.astype(dtype) for leaf, dtype in zip(leaves, from_dtypes, strict=True)]
    return tree_util.tree_unflatten(tree, leaves)


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """``(flat, unravel)``: the leaves raveled and concatenated (promoted to their common
    dtype), and the function that splits such a vector back into the pytree. With one dtype
    the unravel function accepts vectors of any dtype, as jax's does."""
    leaves, tree = tree_util.tree_flatten(pytree)
    leaves = [mnp.asarray(leaf) for leaf in leaves]
    sizes = tuple(int(np.prod(leaf.shape)) for leaf in leaves)
    shapes = tuple(tuple(leaf.shape) for leaf in leaves)
    if not leaves:
        return mnp.zeros((0,), np.float32), functools.partial(
            _unravel, tree, (), (), None, None)
    from_dtypes = tuple(np.dtype(leaf.dtype) for leaf in leaves)
    to_dtype = np.dtype(mnp.result_type(*from_dtypes))
    flat = mnp.concatenate([mnp.ravel(leaf).astype(to_dtype) for leaf in leaves])
    if all(dtype == to_dtype for dtype in from_dtypes):
        return flat, functools.partial(_unravel, tree, sizes, shapes, None, None)
    return flat, functools.partial(_unravel, tree, sizes, shapes, from_dtypes, to_dtype)
