"""mlax.lax select_n, index_take and scatter_apply (jax.lax's names and errors), built on
select, gather and scatter_add.

select_n picks among its cases as XLA lowers it: a balanced tree of two-way selects on
``which < middle``. scatter_apply applies ``func`` at the scattered positions as many times
as positions repeat (jax's scatter calls it once per index): a count of hits is scattered,
and ``func`` is applied while some element still has hits left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mlax.batching import vmap
from mlax.core import abstractify
from mlax.dialect import dtypes as ir_dtypes
from mlax.lax import elementwise as ew
from mlax.lax.common import operand as as_operand
from mlax.lax.control_flow import while_loop
from mlax.lax.indexing import GatherDimensionNumbers, gather, scatter_add
from mlax.lax.reductions import reduce_or
from mlax.lax.shape import broadcast_in_dim, concatenate, expand_dims, reshape
from mlax.source_info import where


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise: ``which`` is boolean (at most two cases) or an integer,
    a scalar or of the cases' shape; out-of-range values pick an unspecified case."""
    if not cases:
        raise ValueError(f"mlax.lax.select_n: must have at least one case{where()}")
    which = as_operand(which)
    cases = tuple(as_operand(c) for c in cases)
    if any(c.shape != cases[0].shape for c in cases):
        raise TypeError(f"mlax.lax.select_n: cases must have the same shapes, got "
                        f"[{', '.join(str(c.shape) for c in cases)}]{where()}")
    if any(c.dtype != cases[0].dtype for c in cases):
        raise TypeError(f"mlax.lax.select_n: cases must have the same dtypes, got "
                        f"[{', '.join(str(c.dtype) for c in cases)}]{where()}")
    if which.shape and which.shape != cases[0].shape:
        raise TypeError(f"mlax.lax.select_n: which must be scalar or have the same shape as cases, got which "
                        f"shape {which.shape} but case shape {cases[0].shape}{where()}")
    if which.dtype != np.bool_ and not ir_dtypes.is_int(which.dtype):
        raise TypeError(f"mlax.lax.select_n: which must be boolean or integer type, got "
                        f"{which.dtype}{where()}")
    if which.dtype == np.bool_ and len(cases) > 2:
        raise TypeError(f"mlax.lax.select_n: a boolean which cannot have more than 2 cases{where()}")
    weak = all(c.weak_type for c in cases)
    cases = tuple(ew.convert_element_type(c, c.dtype, weak) for c in cases)
    if len(cases) == 1:
        return cases[0]
    if which.dtype == np.bool_:
        return ew.select(which, cases[1], cases[0])

    def pick(offset: int, group: tuple[Any, ...]) -> Any:
        if len(group) == 1:
            return group[0]
        middle = len(group) // 2
        below = ew.lt(which, np.array(offset + middle, which.dtype))
        return ew.select(below, pick(offset, group[:middle]), pick(offset + middle, group[middle:]))

    return pick(0, cases)


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """``src`` indexed by one index array per axis of ``axes`` (wrapping negatives modulo the
    size), the rest of each row kept: result shape ``idxs[0].shape + remaining dimensions``."""
    src = as_operand(src)
    axes = tuple(int(a) for a in axes)
    columns = [expand_dims(as_operand(i), (1,)) for i in idxs]
    indices = concatenate(columns, 1) if len(columns) > 1 else columns[0]
    sizes = np.array([src.shape[a] for a in axes], indices.dtype)
    bounds = broadcast_in_dim(sizes, indices.shape, (indices.ndim - 1,))
    indices = ew.rem(ew.add(ew.rem(indices, bounds), bounds), bounds)  # a floor modulo, as jax's %
    slice_sizes = tuple(1 if d in axes else n for d, n in enumerate(src.shape))
    numbers = GatherDimensionNumbers(offset_dims=tuple(range(1, src.ndim - len(axes) + 1)),
                                     collapsed_slice_dims=axes, start_index_map=axes)
    return gather(src, indices, numbers, slice_sizes)


def scatter_apply(operand: Any, scatter_indices: Any, func: Callable[[Any], Any], dimension_numbers: Any, *,
                  update_shape: Sequence[int] = (), indices_are_sorted: bool = False,
                  unique_indices: bool = False, mode: Any = None) -> Any:
    """``operand`` with ``func`` applied to every element a scatter with these indices and
    ``dimension_numbers`` (of updates of ``update_shape``) reaches, once per time it is reached."""
    x = as_operand(operand)
    ones = broadcast_in_dim(np.ones((), np.int32), tuple(int(d) for d in update_shape), ())
    zeros = broadcast_in_dim(np.zeros((), np.int32), x.shape, ())
    hits = scatter_add(zeros, scatter_indices, ones, dimension_numbers, indices_are_sorted=indices_are_sorted,
                       unique_indices=unique_indices, mode=mode)
    size = int(np.prod(x.shape, dtype=np.int64))
    apply = vmap(func)  # jax calls func on scalars

    def step(state: tuple[Any, Any]) -> tuple[Any, Any]:
        value, left = state
        applied = reshape(apply(reshape(value, (size,))), x.shape)
        return ew.select(ew.gt(left, np.int32(0)), applied, value), ew.sub(left, np.int32(1))

    if 0 in x.shape:
        return x
    if unique_indices:  # one application at most: no loop
        return step((x, hits))[0]
    return while_loop(lambda s: _any_positive(s[1]), step, (x, hits))[0]


def _any_positive(counts: Any) -> Any:
    return reduce_or(ew.gt(counts, np.int32(0)), tuple(range(abstractify(counts).ndim)))


__all__ = ["index_take", "scatter_apply", "select_n"]
