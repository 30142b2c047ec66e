"""Indexing ops: gather and scatter with StableHLO dimension numbers.

A gather reads, for each position of the start indices' batch dimensions, one window of
`slice_sizes` at a run-time start; a scatter combines an updates window into the operand at
each start. The dimension numbers are StableHLO's, batching dimensions included, and every
dimension number is nonnegative (the front end normalizes). `mode` is JAX's
GatherScatterMode: "clip" clamps each start into bounds; "fill" makes a gather window that
does not fit read the fill value (NaN, the lowest signed, the highest unsigned integer,
True) and drops a scatter window that does not fit; "promise_in_bounds" clamps for gather
and drops for scatter, as XLA on CPU does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from mlax.dialect import dtypes
from mlax.dialect.ops.common import compute_dtype, op_type_error, op_value_error
from mlax.dialect.ops.elementwise import maximum, minimum
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec

MODES = ("clip", "fill", "promise_in_bounds")


@dataclass(frozen=True)
class Windows:
    """Where each window of a gather result (or scatter updates) sits in the operand.

    ``space`` is the result (updates) shape; ``window_dims`` are its dimensions that walk a
    window, along ``window_operand_dims`` of the operand; its other dimensions are the start
    indices' batch dimensions, in order. ``sizes`` is the window size per operand dimension.
    """

    operand_shape: tuple[int, ...]
    space: tuple[int, ...]
    window_dims: tuple[int, ...]
    window_operand_dims: tuple[int, ...]
    sizes: tuple[int, ...]
    start_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...]
    indices_batching_dims: tuple[int, ...]
    index_vector_dim: int


def fill_value(dtype: np.dtype) -> object:
    """The value a gather with mode "fill" reads out of bounds (JAX's default fill_value)."""
    if dtypes.is_inexact(dtype):  # complex: nan + 0i, as jax
        return np.nan
    if dtypes.is_bool(dtype):
        return True
    info = np.iinfo(dtype)
    return info.min if dtypes.is_signed_int(dtype) else info.max


def _spec(x: np.ndarray) -> TensorSpec:
    return TensorSpec(tuple(x.shape), x.dtype)


def _sorted_unique(op: str, what: str, dims: Sequence[int], bound: int, *, ordered: bool = True) -> None:
    if any(not 0 <= d < bound for d in dims) or len(set(dims)) != len(dims) or (
            ordered and list(dims) != sorted(dims)):
        order = "sorted, " if ordered else ""
        raise op_value_error(op, f"{what} {tuple(dims)} must be {order}distinct and in [0, {bound})")


def _check_windows(op: str, x: TensorSpec, indices: TensorSpec, w: Windows, window_what: str,
                   collapsed_what: str, collapsed: Sequence[int], batching_what: tuple[str, str],
                   map_what: str) -> None:
    """The checks gather and scatter share (StableHLO's constraints on dimension numbers)."""
    if not dtypes.is_int(indices.dtype):
        raise op_type_error(op, f"start indices must have an integer element type, got {indices.dtype}")
    if not 0 <= w.index_vector_dim <= indices.ndim:
        raise op_value_error(op, f"index_vector_dim {w.index_vector_dim} out of range for indices of rank "
                                 f"{indices.ndim}")
    _sorted_unique(op, window_what, w.window_dims, len(w.space))
    _sorted_unique(op, collapsed_what, collapsed, x.ndim)
    _sorted_unique(op, batching_what[0], w.operand_batching_dims, x.ndim)
    _sorted_unique(op, batching_what[1], w.indices_batching_dims, indices.ndim, ordered=False)
    if set(collapsed) & set(w.operand_batching_dims):
        raise op_value_error(op, f"{collapsed_what} {tuple(collapsed)} and {batching_what[0]} "
                                 f"{w.operand_batching_dims} must be disjoint")
    if w.index_vector_dim in w.indices_batching_dims:
        raise op_value_error(op, f"{batching_what[1]} {w.indices_batching_dims} must not contain "
                                 f"index_vector_dim {w.index_vector_dim}")
    if len(w.operand_batching_dims) != len(w.indices_batching_dims):
        raise op_value_error(op, f"{batching_what[0]} and {batching_what[1]} must have the same length")
    for a, b in zip(w.operand_batching_dims, w.indices_batching_dims, strict=True):
        if x.shape[a] != indices.shape[b]:
            raise op_value_error(op, f"operand batching dimension {a} (size {x.shape[a]}) and indices "
                                     f"batching dimension {b} (size {indices.shape[b]}) differ in size")
    depth = indices.shape[w.index_vector_dim] if w.index_vector_dim < indices.ndim else 1
    if len(w.start_map) != depth:
        raise op_value_error(op, f"{map_what} {w.start_map} must have one entry per index vector "
                                 f"element ({depth})")
    _sorted_unique(op, map_what, w.start_map, x.ndim, ordered=False)
    if set(w.start_map) & set(w.operand_batching_dims):
        raise op_value_error(op, f"{map_what} {w.start_map} must not contain {batching_what[0]} "
                                 f"{w.operand_batching_dims}")


def _batch_shape(indices: TensorSpec, index_vector_dim: int) -> tuple[int, ...]:
    return tuple(n for d, n in enumerate(indices.shape) if d != index_vector_dim)


def _as_int64(values: np.ndarray) -> np.ndarray:
    """Start indices as int64; uint64 values past the int64 range saturate (they clamp high anyway)."""
    if values.dtype == np.uint64:
        values = np.minimum(values, np.uint64(np.iinfo(np.int64).max))
    return values.astype(np.int64)


def operand_positions(w: Windows, indices: np.ndarray, clamp: bool) -> tuple[list[np.ndarray], np.ndarray]:
    """For every element of the space: its operand index (one array per operand dimension) and
    whether its window's start fits. Starts clamp into [0, dim - size] when ``clamp``."""
    grids = np.indices(w.space, dtype=np.int64)
    batch_dims = [d for d in range(len(w.space)) if d not in w.window_dims]
    vectors = np.moveaxis(indices, w.index_vector_dim, -1) if w.index_vector_dim < indices.ndim \
        else indices[..., None]
    vectors = _as_int64(vectors)[tuple(grids[d] for d in batch_dims)]
    vectors = np.broadcast_to(vectors, w.space + vectors.shape[-1:])  # no batch dimensions: one vector
    starts = [np.zeros(w.space, np.int64) for _ in w.operand_shape]
    fits = np.ones(w.space, bool)
    for k, d in enumerate(w.start_map):
        start, limit = vectors[..., k], w.operand_shape[d] - w.sizes[d]
        fits &= (start >= 0) & (start <= limit)
        starts[d] = np.clip(start, 0, limit) if clamp else start
    for a, b in zip(w.operand_batching_dims, w.indices_batching_dims, strict=True):
        starts[a] = grids[batch_dims[b if b < w.index_vector_dim else b - 1]]
    for d, od in zip(w.window_dims, w.window_operand_dims, strict=True):
        starts[od] = starts[od] + grids[d]
    return starts, fits


# --- gather --------------------------------------------------------------------------------------


def _gather_windows(x: TensorSpec, indices: TensorSpec, attrs: dict) -> tuple[Windows, tuple[int, ...]]:
    op = "gather"
    collapsed, sizes = tuple(attrs["collapsed_slice_dims"]), tuple(attrs["slice_sizes"])
    operand_batching = tuple(attrs["operand_batching_dims"])
    if attrs["mode"] not in MODES:
        raise op_value_error(op, f"mode must be one of {MODES}, got {attrs['mode']!r}")
    if len(sizes) != x.ndim or any(not 0 <= n <= d for n, d in zip(sizes, x.shape, strict=True)):
        raise op_value_error(op, f"slice_sizes {sizes} must have one entry per operand dimension, each in "
                                 f"[0, size] (operand shape {x.shape})")
    _sorted_unique(op, "collapsed_slice_dims", collapsed, x.ndim)
    _sorted_unique(op, "operand_batching_dims", operand_batching, x.ndim)
    if any(sizes[d] != 1 for d in collapsed + operand_batching):
        raise op_value_error(op, f"collapsed_slice_dims {collapsed} and operand_batching_dims "
                                 f"{operand_batching} must have slice size 1 (slice_sizes {sizes})")
    window_operand_dims = tuple(d for d in range(x.ndim) if d not in collapsed + operand_batching)
    offset_dims = tuple(attrs["offset_dims"])
    if len(offset_dims) != len(window_operand_dims):
        raise op_value_error(op, f"offset_dims {offset_dims} must have one entry per operand dimension that "
                                 f"is neither collapsed nor batching ({len(window_operand_dims)})")
    ivd = int(attrs["index_vector_dim"])
    batch = _batch_shape(indices, ivd)
    rank = len(batch) + len(offset_dims)
    space, batch_iter = [], iter(batch)
    offset_sizes = iter(sizes[d] for d in window_operand_dims)
    for d in range(rank):
        space.append(next(offset_sizes) if d in offset_dims else next(batch_iter, 0))
    w = Windows(x.shape, tuple(space), offset_dims, window_operand_dims, sizes,
                tuple(attrs["start_index_map"]), operand_batching,
                tuple(attrs["start_indices_batching_dims"]), ivd)
    _check_windows(op, x, indices, w, "offset_dims", "collapsed_slice_dims", collapsed,
                   ("operand_batching_dims", "start_indices_batching_dims"), "start_index_map")
    return w, tuple(space)


def _infer_gather(x: TensorSpec, indices: TensorSpec, **attrs: object) -> TensorSpec:
    return TensorSpec(_gather_windows(x, indices, attrs)[1], x.dtype)


def _gather(x: np.ndarray, indices: np.ndarray, **attrs: object) -> np.ndarray:
    w, space = _gather_windows(_spec(x), _spec(indices), attrs)
    positions, fits = operand_positions(w, indices, clamp=True)
    if 0 in space:
        return np.zeros(space, x.dtype)
    out = x[tuple(positions)] if x.ndim else np.broadcast_to(x, space)
    if attrs["mode"] == "fill":
        out = np.where(fits, out, np.asarray(fill_value(x.dtype)).astype(x.dtype))
    return np.asarray(out, x.dtype)


_DIMENSION_DOC = """
Dimension numbers are StableHLO's. The start indices' dimension `index_vector_dim` holds
the index vectors (`index_vector_dim == rank` means an implicit trailing 1); their other
dimensions are batch dimensions, which appear in order at the result (updates) dimensions
that are not window dimensions. Operand batching dimensions pair with start-indices
batching dimensions of the same size and take their start from that batch coordinate.
"""

define_op(
    "gather", "(operand: T, start_indices: I) -> (result: U)",
    complex=True, sharding="fallback",
    attributes={"offset_dims": "i64s", "collapsed_slice_dims": "i64s", "operand_batching_dims": "i64s",
                "start_indices_batching_dims": "i64s", "start_index_map": "i64s", "index_vector_dim": "i64",
                "slice_sizes": "i64s", "mode": "str"},
    infer=_infer_gather, reference=_gather, weak_type="first",
    summary="Windows of `slice_sizes` at run-time start indices, stacked along the batch dimensions.",
    description=_DIMENSION_DOC + """
Index vector element k is the start along operand dimension `start_index_map[k]` (other
starts 0). Operand dimensions in `collapsed_slice_dims` and `operand_batching_dims` have
slice size 1 and are dropped; the remaining window dimensions appear, in order, at
the sorted result dimensions `offset_dims`. mode "clip" and "promise_in_bounds" clamp each
start into `[0, dim - slice_size]`; "fill" gives the fill value (NaN, the lowest signed or
the highest unsigned integer, True) for a whole window whose start does not fit.
""",
)

# --- scatter ------------------------------------------------------------------------------------

# combiner op -> the reference combination of (current, update) in the operand's compute dtype
COMBINERS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray] | None] = {
    "scatter": None, "scatter_add": np.add, "scatter_mul": np.multiply, "scatter_min": minimum,
    "scatter_max": maximum,
}


def _scatter_windows(name: str, x: TensorSpec, indices: TensorSpec, updates: TensorSpec,
                     attrs: dict) -> Windows:
    inserted = tuple(attrs["inserted_window_dims"])
    input_batching = tuple(attrs["input_batching_dims"])
    if attrs["mode"] not in MODES:
        raise op_value_error(name, f"mode must be one of {MODES}, got {attrs['mode']!r}")
    if updates.dtype != x.dtype:
        raise op_type_error(name, f"operand and updates must have the same dtype, got {x.dtype} and "
                                  f"{updates.dtype}")
    _sorted_unique(name, "inserted_window_dims", inserted, x.ndim)
    _sorted_unique(name, "input_batching_dims", input_batching, x.ndim)
    window_operand_dims = tuple(d for d in range(x.ndim) if d not in inserted + input_batching)
    window_dims = tuple(attrs["update_window_dims"])
    if len(window_dims) != len(window_operand_dims):
        raise op_value_error(name, f"update_window_dims {window_dims} must have one entry per operand "
                                   f"dimension that is neither inserted nor batching "
                                   f"({len(window_operand_dims)})")
    ivd = int(attrs["index_vector_dim"])
    batch = _batch_shape(indices, ivd)
    if updates.ndim != len(batch) + len(window_dims):
        raise op_type_error(name, f"updates of shape {updates.shape} must have rank {len(batch)} (the "
                                  f"indices' batch dimensions) + {len(window_dims)} (window dimensions)")
    _sorted_unique(name, "update_window_dims", window_dims, updates.ndim)
    scatter_sizes = tuple(n for d, n in enumerate(updates.shape) if d not in window_dims)
    if scatter_sizes != batch:
        raise op_type_error(name, f"updates scatter dimensions {scatter_sizes} must match the indices' "
                                  f"batch dimensions {batch}")
    sizes = [1] * x.ndim
    for d, od in zip(window_dims, window_operand_dims, strict=True):
        if updates.shape[d] > x.shape[od]:
            raise op_type_error(name, f"update window dimension {d} (size {updates.shape[d]}) exceeds "
                                      f"operand dimension {od} (size {x.shape[od]})")
        sizes[od] = updates.shape[d]
    w = Windows(x.shape, updates.shape, window_dims, window_operand_dims, tuple(sizes),
                tuple(attrs["scatter_dims_to_operand_dims"]), input_batching,
                tuple(attrs["scatter_indices_batching_dims"]), ivd)
    _check_windows(name, x, indices, w, "update_window_dims", "inserted_window_dims", inserted,
                   ("input_batching_dims", "scatter_indices_batching_dims"), "scatter_dims_to_operand_dims")
    return w


def _scatter_infer(name: str) -> Callable[..., TensorSpec]:
    def infer(x: TensorSpec, indices: TensorSpec, updates: TensorSpec, **attrs: object) -> TensorSpec:
        _scatter_windows(name, x, indices, updates, attrs)
        return x

    return infer


def _scatter_reference(name: str) -> Callable[..., np.ndarray]:
    combine = COMBINERS[name]

    def reference(x: np.ndarray, indices: np.ndarray, updates: np.ndarray, **attrs: object) -> np.ndarray:
        """Updates visited in row-major order; each combines into the value left by the last."""
        w = _scatter_windows(name, _spec(x), _spec(indices), _spec(updates), attrs)
        positions, fits = operand_positions(w, indices, clamp=attrs["mode"] == "clip")
        if attrs["mode"] != "clip":
            positions = [p[fits] for p in positions]
            values = updates[fits]
        else:
            positions, values = [p.reshape(-1) for p in positions], updates.reshape(-1)
        out = x.copy()
        if not x.size or not values.size:
            return out
        values = values.reshape(-1)
        flat = np.ravel_multi_index(tuple(positions), x.shape) if x.ndim else np.zeros(values.size, np.intp)
        if combine is None:  # the last update of each position wins
            targets, last = np.unique(flat[::-1], return_index=True)
            out.flat[targets] = values[::-1][last]
            return out
        work = compute_dtype(x.dtype)
        while flat.size:  # one round per multiplicity: the first pending update of each position
            targets, first = np.unique(flat, return_index=True)
            with np.errstate(all="ignore"):
                combined = combine(out.flat[targets].astype(work), values[first].astype(work))
            out.flat[targets] = np.asarray(combined).astype(x.dtype)
            keep = np.ones(flat.size, bool)
            keep[first] = False
            flat, values = flat[keep], values[keep]
        return out

    return reference


_SCATTER_SUMMARY = {
    "scatter": "Overwrite windows of the operand at run-time start indices with windows of `updates`.",
    "scatter_add": "Add windows of `updates` into the operand at run-time start indices.",
    "scatter_mul": "Multiply windows of `updates` into the operand at run-time start indices.",
    "scatter_min": "Combine windows of `updates` into the operand by minimum at run-time start indices.",
    "scatter_max": "Combine windows of `updates` into the operand by maximum at run-time start indices.",
}

for _name, _summary in _SCATTER_SUMMARY.items():
    define_op(
        _name, "(operand: T, scatter_indices: I, updates: U) -> (result: T)",
        attributes={"update_window_dims": "i64s", "inserted_window_dims": "i64s",
                    "input_batching_dims": "i64s", "scatter_indices_batching_dims": "i64s",
                    "scatter_dims_to_operand_dims": "i64s", "index_vector_dim": "i64", "mode": "str"},
        infer=_scatter_infer(_name), reference=_scatter_reference(_name), weak_type="first",
        complex=True, sharding="fallback",
        summary=_summary,
        description=_DIMENSION_DOC + """
Index vector element k is the start along operand dimension
`scatter_dims_to_operand_dims[k]`. The updates' dimensions `update_window_dims` walk the
operand dimensions that are neither in `inserted_window_dims` nor in
`input_batching_dims` (those have window size 1). Update elements are combined in
row-major order, so with duplicate starts the last `scatter` wins and the combiners apply
in sequence (rounding each step; min/max propagate NaN with -0.0 < +0.0; on booleans add
is or, mul is and). mode "clip" clamps each start into `[0, dim - window]`; "fill" and
"promise_in_bounds" drop a window whose start does not fit.
""",
    )


# --- dimension numbers of the adjoint op ---------------------------------------------------------------


def scatter_attrs(gather: dict, mode: str) -> dict:
    """The scatter numbers that write a gather's result windows back where it read them."""
    return {"update_window_dims": tuple(gather["offset_dims"]),
            "inserted_window_dims": tuple(gather["collapsed_slice_dims"]),
            "input_batching_dims": tuple(gather["operand_batching_dims"]),
            "scatter_indices_batching_dims": tuple(gather["start_indices_batching_dims"]),
            "scatter_dims_to_operand_dims": tuple(gather["start_index_map"]),
            "index_vector_dim": int(gather["index_vector_dim"]), "mode": mode}


def gather_attrs(scatter: dict, operand_shape: Sequence[int], updates_shape: Sequence[int],
                 mode: str) -> dict:
    """The gather numbers that read, as updates-shaped windows, where a scatter writes."""
    skipped = (*scatter["inserted_window_dims"], *scatter["input_batching_dims"])
    sizes = [1] * len(operand_shape)
    window_operand_dims = [d for d in range(len(operand_shape)) if d not in skipped]
    for d, od in zip(scatter["update_window_dims"], window_operand_dims, strict=True):
        sizes[od] = updates_shape[d]
    return {"offset_dims": tuple(scatter["update_window_dims"]),
            "collapsed_slice_dims": tuple(scatter["inserted_window_dims"]),
            "operand_batching_dims": tuple(scatter["input_batching_dims"]),
            "start_indices_batching_dims": tuple(scatter["scatter_indices_batching_dims"]),
            "start_index_map": tuple(scatter["scatter_dims_to_operand_dims"]),
            "index_vector_dim": int(scatter["index_vector_dim"]), "slice_sizes": tuple(sizes), "mode": mode}
