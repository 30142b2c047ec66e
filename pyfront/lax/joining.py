"""mlax.lax split, stack, unstack and tile (jax.lax's names and errors), as slices, reshapes,
concatenations and broadcasts: jax has a primitive for each, mlax needs none."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from mlax.core import abstractify
from mlax.lax.common import operand as as_operand
from mlax.lax.shape import broadcast_in_dim, concatenate, expand_dims, reshape, slice_in_dim, squeeze
from mlax.source_info import where


def _axis(fname: str, axis: int, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{fname}: axis {axis} is out of bounds for array of dimension {ndim}{where()}")
    return axis % ndim


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """Pieces of ``operand`` along ``axis`` of the given ``sizes`` (which must add up to its size)."""
    x = as_operand(operand)
    axis = _axis("mlax.lax.split", axis, x.ndim)
    sizes = [operator.index(s) for s in sizes]
    if any(s < 0 for s in sizes):
        raise ValueError(f"mlax.lax.split: sizes must be nonnegative, got {sizes}{where()}")
    if sum(sizes) != x.shape[axis]:
        raise ValueError(f"mlax.lax.split: sum of sizes {sum(sizes)} must be equal to dimension {axis} of "
                         f"the operand shape {list(x.shape)}{where()}")
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return [slice_in_dim(x, start, start + n, axis=axis) for start, n in zip(starts, sizes, strict=True)]


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Arrays of one shape joined along a new ``axis``."""
    xs = [as_operand(x) for x in operands]
    if not xs:
        raise ValueError(f"mlax.lax.stack: expects at least one operand, got 0{where()}")
    shapes = {abstractify(x).shape for x in xs}
    if len(shapes) != 1:
        raise ValueError(f"mlax.lax.stack: all input arrays must have the same shape, got "
                         f"{', '.join(str(x.shape) for x in xs)}{where()}")
    axis = _axis("mlax.lax.stack", axis, xs[0].ndim + 1)
    return concatenate([expand_dims(x, (axis,)) for x in xs], axis)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, that axis removed."""
    x = as_operand(x)
    axis = _axis("mlax.lax.unstack", axis, x.ndim)
    return tuple(squeeze(slice_in_dim(x, i, i + 1, axis=axis), (axis,)) for i in range(x.shape[axis]))


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """``operand`` repeated ``reps[i]`` times along each dimension i (one rep per dimension)."""
    x = as_operand(operand)
    reps = tuple(operator.index(r) for r in reps)
    if len(reps) != x.ndim:
        raise TypeError(f"mlax.lax.tile: reps length must be equal to the ndim of x, got "
                        f"len(reps)={len(reps)} and x.ndim={x.ndim}{where()}")
    # (r0, d0, r1, d1, ...) then merge each pair: the copies of a dimension are outer to it.
    paired = tuple(n for pair in zip(reps, x.shape, strict=True) for n in pair)
    tiled = broadcast_in_dim(x, paired, tuple(range(1, 2 * x.ndim, 2)))
    return reshape(tiled, tuple(r * d for r, d in zip(reps, x.shape, strict=True)))


__all__ = ["split", "stack", "tile", "unstack"]
