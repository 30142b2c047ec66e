"""mlax.lax approx_max_k and approx_min_k, exact: jax's CPU and GPU lowerings fall back to
sort-and-slice, which is what these are (top_k, or a stable ascending sort, along the
reduction dimension). ``recall_target`` and ``reduction_input_size_override`` only tune TPU
kernels, so they are accepted and unused. ``aggregate_to_topk=False`` returns a
TPU-sized partial result whose size jax computes with an XLA routine mlax does not have:
it raises NotImplementedError.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from mlax.dialect import dtypes as ir_dtypes
from mlax.lax.common import operand as as_operand
from mlax.lax.elementwise import add
from mlax.lax.shape import slice_in_dim, transpose
from mlax.lax.sorting import apply_permutation, sort_permutation, top_k
from mlax.source_info import where


def _checked(fname: str, operand: Any, k: int, dimension: int,
             aggregate_to_topk: bool) -> tuple[Any, int, int]:
    x = as_operand(operand)
    k = operator.index(k)
    if k <= 0:
        raise ValueError(f"{fname}: k must be positive, got {k}{where()}")
    if x.ndim == 0:
        raise TypeError(f"{fname}: operand must have >= 1 dimension, got {x.shape}{where()}")
    dimension = operator.index(dimension)
    if not -x.ndim <= dimension < x.ndim:
        raise ValueError(f"{fname}: reduction_dimension {dimension} is out of bounds for array of dimension "
                         f"{x.ndim}{where()}")
    dimension %= x.ndim
    if x.shape[dimension] < k:
        raise ValueError(f"{fname}: k must be smaller than the size of reduction_dim "
                         f"{x.shape[dimension]}, got {k}{where()}")
    if not ir_dtypes.is_float(x.dtype):
        raise ValueError(f"{fname}: operand must be a floating type, got {x.dtype}{where()}")
    if not aggregate_to_topk:
        raise NotImplementedError(f"{fname}: aggregate_to_topk=False (a TPU-sized partial result) is not "
                                  f"supported by mlax; use the default aggregate_to_topk=True{where()}")
    return x, k, dimension


def _moved_last(x: Any, dimension: int) -> tuple[int, ...]:
    perm = list(range(x.ndim))
    perm.append(perm.pop(dimension))
    return tuple(perm)


def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(perm.index(i) for i in range(len(perm)))


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True) -> list[Any]:
    """The ``k`` largest values along ``reduction_dimension``, descending (NaN largest), and
    their int32 indices (the lower index first among ties; -0.0 and 0.0 tie except along the
    last dimension, as in jax)."""
    x, k, dimension = _checked("mlax.lax.approx_max_k", operand, k, reduction_dimension, aggregate_to_topk)
    perm = _moved_last(x, dimension)
    rows = transpose(x, perm)
    if dimension == x.ndim - 1:  # top_k ranks +0.0 above -0.0, as XLA's TopK does for the last dimension
        values, indices = top_k(rows, k)
    else:
        # along another dimension jax sorts, and they tie: adding zero makes them equal; the
        # whole order (a permutation) reads the operand's own values, as jax's sort does
        _, order = top_k(add(rows, np.zeros((), x.dtype)), rows.shape[-1])
        values = slice_in_dim(apply_permutation(rows, order), 0, k, axis=-1)
        indices = slice_in_dim(order, 0, k, axis=-1)
    back = _inverse(perm)
    return [transpose(values, back), transpose(indices, back)]  # a list, as jax's


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True) -> list[Any]:
    """The ``k`` smallest values along ``reduction_dimension``, ascending (NaN last), and
    their int32 indices (the lower index first among ties, -0.0 and 0.0 tie)."""
    x, k, dimension = _checked("mlax.lax.approx_min_k", operand, k, reduction_dimension, aggregate_to_topk)
    order = sort_permutation(x, dimension)
    values = apply_permutation(x, order, dimension)
    return [slice_in_dim(values, 0, k, axis=dimension), slice_in_dim(order, 0, k, axis=dimension)]


__all__ = ["approx_max_k", "approx_min_k"]
