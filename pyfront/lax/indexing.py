"""mlax.lax gather and scatter: JAX's signatures over the dialect's indexing ops.

Dimension numbers may be mlax's dataclasses below or jax.lax's (any object with the same
fields). ``mode`` is a GatherScatterMode name ("clip", "fill" / "drop", "promise_in_bounds")
or a jax GatherScatterMode; None means what it means in jax.lax: "promise_in_bounds" for
gather (starts clamp) and "fill" for scatter (out-of-bounds windows are dropped). A gather's
non-default ``fill_value`` is a select on where the default fill landed (the op fills with
JAX's default value).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlax.core import bind
from mlax.lax.common import operand as as_operand
from mlax.lax.common import operands_like, reject_bool
from mlax.lax.elementwise import convert_element_type, ne, neg, select
from mlax.lax.shape import broadcast_in_dim
from mlax.source_info import where

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "gather", "scatter",
           "scatter_add", "scatter_mul", "scatter_min", "scatter_max", "scatter_sub"]


@dataclass(frozen=True)
class GatherDimensionNumbers:
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


@dataclass(frozen=True)
class ScatterDimensionNumbers:
    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode:
    """The mode names (jax.lax.GatherScatterMode members are accepted too)."""

    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"


_MODES = {"clip": "clip", "fill": "fill", "drop": "fill", "fill_or_drop": "fill",
          "promise_in_bounds": "promise_in_bounds"}


def mode_name(fname: str, mode: Any, default: str) -> str:
    """The op's ``mode`` attribute for a jax-style mode argument."""
    if mode is None:
        return default
    key = (getattr(mode, "name", None) or str(mode)).lower()
    if key not in _MODES:
        raise ValueError(f"{fname}: unknown mode {mode!r}; expected 'clip', 'fill', 'drop' or "
                         f"'promise_in_bounds'{where()}")
    return _MODES[key]


def _dims(numbers: Any, field: str) -> tuple[int, ...]:
    return tuple(int(d) for d in getattr(numbers, field, ()) or ())


def _index_operand(fname: str, indices: Any) -> Any:
    indices = as_operand(indices)
    if np.dtype(indices.dtype).kind not in "iu":
        raise TypeError(f"{fname}: indices must have an integer dtype, got {indices.dtype}{where()}")
    return indices


def gather(operand: Any, start_indices: Any, dimension_numbers: Any, slice_sizes: Sequence[int], *,
           unique_indices: bool = False, indices_are_sorted: bool = False, mode: Any = None,
           fill_value: Any = None) -> Any:
    """XLA's gather; the index vector is the last dimension of ``start_indices`` (as jax.lax)."""
    x = as_operand(operand)
    indices = _index_operand("gather", start_indices)
    attrs = dict(offset_dims=_dims(dimension_numbers, "offset_dims"),
                 collapsed_slice_dims=_dims(dimension_numbers, "collapsed_slice_dims"),
                 operand_batching_dims=_dims(dimension_numbers, "operand_batching_dims"),
                 start_indices_batching_dims=_dims(dimension_numbers, "start_indices_batching_dims"),
                 start_index_map=_dims(dimension_numbers, "start_index_map"),
                 index_vector_dim=indices.ndim - 1, slice_sizes=tuple(int(s) for s in slice_sizes),
                 mode=mode_name("gather", mode, "promise_in_bounds"))
    out = bind("gather", x, indices, **attrs)
    if fill_value is None or attrs["mode"] != "fill":
        return out
    # Which windows did not fit: gather zeros of int8 with the fill mode, which reads -128 there.
    probe = broadcast_in_dim(np.zeros((), np.int8), x.shape, ())
    missed = ne(bind("gather", probe, indices, **attrs), np.int8(0))
    fill = broadcast_in_dim(convert_element_type(fill_value, x.dtype), out.shape, ())
    return select(missed, fill, out)


_NUMERIC_SCATTERS = {"scatter_add": "add", "scatter_mul": "mul"}  # their combiner's dtype rule, as jax


def _scatter(name: str) -> Any:
    def scatter_op(operand: Any, scatter_indices: Any, updates: Any, dimension_numbers: Any, *,
                   indices_are_sorted: bool = False, unique_indices: bool = False, mode: Any = None) -> Any:
        x, values = operands_like(operand, updates)
        if name in _NUMERIC_SCATTERS:
            reject_bool(_NUMERIC_SCATTERS[name], x, values)
        indices = _index_operand(name, scatter_indices)
        return bind(name, x, indices, values,
                    update_window_dims=_dims(dimension_numbers, "update_window_dims"),
                    inserted_window_dims=_dims(dimension_numbers, "inserted_window_dims"),
                    input_batching_dims=_dims(dimension_numbers, "operand_batching_dims"),
                    scatter_indices_batching_dims=_dims(dimension_numbers, "scatter_indices_batching_dims"),
                    scatter_dims_to_operand_dims=_dims(dimension_numbers, "scatter_dims_to_operand_dims"),
                    index_vector_dim=indices.ndim - 1, mode=mode_name(name, mode, "fill"))

    scatter_op.__name__ = scatter_op.__qualname__ = name
    scatter_op.__doc__ = f"XLA's {name} (mlax.{name}); the index vector is the last indices dimension."
    return scatter_op


scatter = _scatter("scatter")
scatter_add = _scatter("scatter_add")
scatter_mul = _scatter("scatter_mul")
scatter_min = _scatter("scatter_min")
scatter_max = _scatter("scatter_max")


def scatter_sub(operand: Any, scatter_indices: Any, updates: Any, dimension_numbers: Any,
                **kwargs: Any) -> Any:
    """scatter_add of the negated updates."""
    x, values = operands_like(operand, updates)
    return scatter_add(x, scatter_indices, neg(values), dimension_numbers, **kwargs)

