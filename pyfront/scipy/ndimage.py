"""mlax.scipy.ndimage.map_coordinates: an array read at fractional coordinates.

Each output element is a weighted sum over the neighbouring grid points of its coordinates:
one point (order 0, the nearest, halves rounded away from zero) or the 2^d corners of its cell
(order 1, multilinear weights). Indices outside the array are folded back by ``mode`` (SciPy's
nearest, wrap, mirror and reflect) or, in "constant" mode, read as ``cval``.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import mlax.numpy as mnp
from mlax import lax

__all__ = ["map_coordinates"]


def _mirror(index: Any, size: int) -> Any:
    """Fold onto [0, size) as a triangle wave of half-period size - 1 (edges not repeated)."""
    half = size - 1
    return mnp.abs((index + half) % (2 * half) - half) if half else mnp.zeros_like(index)


def _reflect(index: Any, size: int) -> Any:
    """Fold onto [0, size) with the edges repeated: the mirror fold of the half-integer grid."""
    return mnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_FOLDS: dict[str, Callable[[Any, int], Any]] = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: mnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round_half_away(x: Any) -> Any:
    return x if mnp.issubdtype(x.dtype, mnp.integer) else lax.round(x)


def _nodes(coordinate: Any, order: int) -> list[tuple[Any, Any]]:
    """(index, weight) of the grid points one coordinate reads."""
    if order == 0:
        return [(_round_half_away(coordinate).astype(np.int32), coordinate.dtype.type(1))]
    lower = mnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(input: Any, coordinates: Sequence[Any], order: int,  # noqa: A002  (SciPy's name)
                    mode: str = "constant", cval: Any = 0.0) -> Any:
    """jax.scipy.ndimage.map_coordinates: ``input`` interpolated at ``coordinates`` (one array
    per dimension of ``input``, all of the output's shape), order 0 or 1."""
    image = mnp.asarray(input)
    coords = [mnp.asarray(c) for c in coordinates]
    fill = mnp.asarray(cval, image.dtype)
    if len(coords) != image.ndim:
        raise ValueError(f"coordinates must be a sequence of length input.ndim, but {len(coords)} != "
                         f"{image.ndim}")
    if mode not in _FOLDS:
        raise NotImplementedError(f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
                                  f"Currently supported modes are {set(_FOLDS)}.")
    if order not in (0, 1):
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")
    per_axis = []
    for coordinate, size in zip(coords, image.shape, strict=True):
        per_axis.append([(_FOLDS[mode](index, size),
                          mnp.logical_and(index >= 0, index < size) if mode == "constant" else None, weight)
                         for index, weight in _nodes(coordinate, order)])
    terms = []
    for corner in itertools.product(*per_axis):
        indices = tuple(index for index, _, _ in corner)
        inside = [valid for _, valid, _ in corner if valid is not None]
        value = image[indices]
        if inside:
            value = mnp.where(functools.reduce(mnp.logical_and, inside), value, fill)
        terms.append(functools.reduce(operator.mul, [weight for _, _, weight in corner]) * value)
    result = functools.reduce(operator.add, terms)
    if mnp.issubdtype(image.dtype, mnp.integer):
        result = _round_half_away(result)
    return result.astype(image.dtype)
