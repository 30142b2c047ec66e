"""Shape ops: broadcast_in_dim, reshape, transpose, slicing, concatenation, padding, reversal.

All shapes are static. Attributes never hold negative dimension numbers (the front end
normalizes them). Out-of-range dynamic start indices clamp so the slice stays in bounds,
as StableHLO (and JAX on XLA) define it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mlax.dialect import dtypes
from mlax.dialect.attrs import SPLAT_VIEW_ELEMENTS
from mlax.dialect.ops.common import normalize_axes, op_type_error, op_value_error
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec


def _require_rank(op: str, what: str, values: Sequence[int], rank: int) -> None:
    """Per-dimension attributes carry one entry per operand dimension."""
    if len(values) != rank:
        raise op_value_error(op, f"{what} {tuple(values)} must have one entry per operand dimension "
                                 f"(operand rank {rank})")


def _require_nonnegative(op: str, what: str, values: Sequence[int]) -> None:
    if any(v < 0 for v in values):
        raise op_value_error(op, f"{what} {tuple(values)} must be nonnegative")


# --- broadcast_in_dim --------------------------------------------------------------------

def _infer_broadcast_in_dim(x: TensorSpec, *, shape: tuple[int, ...],
                            broadcast_dimensions: tuple[int, ...]) -> TensorSpec:
    name = "broadcast_in_dim"
    _require_rank(name, "broadcast_dimensions", broadcast_dimensions, x.ndim)
    if any(d < 0 for d in shape):
        raise op_value_error(name, f"negative dimension in shape {shape}")
    if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise op_value_error(name, f"broadcast_dimensions {broadcast_dimensions} must be strictly increasing")
    for i, d in enumerate(broadcast_dimensions):
        if not 0 <= d < len(shape):
            raise op_value_error(name, f"broadcast dimension {d} out of range for result rank {len(shape)}")
        if x.shape[i] not in (1, shape[d]):
            raise op_value_error(
                name, f"operand dimension {i} of size {x.shape[i]} cannot broadcast to size "
                      f"{shape[d]} of result dimension {d} (shape {x.shape} -> {shape})")
    return TensorSpec(shape, x.dtype)


def _broadcast_in_dim(x: np.ndarray, *, shape: tuple[int, ...],
                      broadcast_dimensions: tuple[int, ...]) -> np.ndarray:
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    out = np.broadcast_to(x.reshape(expanded), shape)
    # A large result stays a read-only view (zero strides on the new dims), as a large splat reads
    # back: a trace emits it as its operand's constant and a broadcast_in_dim, never filled in.
    return out if out.size > SPLAT_VIEW_ELEMENTS else out.copy()


define_op(
    "broadcast_in_dim", "(operand: T) -> (result: U)",
    linear=(0,), complex=True,
    attributes={"shape": "i64s", "broadcast_dimensions": "i64s"},
    infer=_infer_broadcast_in_dim, reference=_broadcast_in_dim, weak_type="first",
    summary="Broadcast: operand dimension i becomes result dimension broadcast_dimensions[i] "
            "(size 1 or equal); other result dimensions replicate.",
)

# --- reshape, transpose, rev -----------------------------------------------------------------


def _infer_reshape(x: TensorSpec, *, shape: tuple[int, ...]) -> TensorSpec:
    _require_nonnegative("reshape", "shape", shape)
    result = TensorSpec(shape, x.dtype)
    if result.size != x.size:
        raise op_value_error("reshape", f"cannot reshape {x.shape} ({x.size} elements) to {tuple(shape)} "
                                        f"({result.size} elements)")
    return result


define_op(
    "reshape", "(operand: T) -> (result: U)",
    linear=(0,), complex=True,
    attributes={"shape": "i64s"},
    infer=_infer_reshape, reference=lambda x, *, shape: x.reshape(shape), weak_type="first",
    summary="Reshape to `shape` in row-major (C) order; the element count is unchanged.",
    description="""
`shape` is the result shape (nonnegative sizes, no `-1`); its product must equal the
operand's element count. Elements keep their row-major order. Squeezing and inserting
unit dimensions (`lax.squeeze`, `lax.expand_dims`) are reshapes.
""",
)


def _infer_transpose(x: TensorSpec, *, permutation: tuple[int, ...]) -> TensorSpec:
    if sorted(permutation) != list(range(x.ndim)):
        raise op_value_error("transpose", f"permutation {tuple(permutation)} is not a permutation of the "
                                          f"operand dimensions (operand shape {x.shape})")
    return TensorSpec(tuple(x.shape[p] for p in permutation), x.dtype)


define_op(
    "transpose", "(operand: T) -> (result: U)",
    linear=(0,), complex=True,
    attributes={"permutation": "i64s"},
    infer=_infer_transpose, reference=lambda x, *, permutation: np.transpose(x, permutation).copy(),
    weak_type="first",
    summary="Permute dimensions: result dimension i is operand dimension permutation[i].",
    description="""
`permutation` must be a permutation of `0 .. rank-1` (no negative entries).
`result[i_0, ..., i_{n-1}] = operand[j]` with `j[permutation[k]] = i_k`.
""",
)


def _infer_rev(x: TensorSpec, *, dimensions: tuple[int, ...]) -> TensorSpec:
    normalize_axes("rev", dimensions, x.ndim)
    return x


define_op(
    "rev", "(operand: T) -> (result: T)",
    linear=(0,), complex=True,
    attributes={"dimensions": "i64s"},
    infer=_infer_rev, reference=lambda x, *, dimensions: np.flip(x, dimensions).copy(),
    weak_type="first",
    summary="Reverse the order of elements along each of `dimensions`.",
    description="`dimensions` are distinct, in `0 .. rank-1`; an empty list is the identity.",
)

# --- slice ---------------------------------------------------------------------------------


def _infer_slice(x: TensorSpec, *, start_indices: tuple[int, ...], limit_indices: tuple[int, ...],
                 strides: tuple[int, ...]) -> TensorSpec:
    name = "slice"
    for what, values in (("start_indices", start_indices), ("limit_indices", limit_indices),
                         ("strides", strides)):
        _require_rank(name, what, values, x.ndim)
    shape = []
    for dim, (size, start, limit, stride) in enumerate(zip(x.shape, start_indices, limit_indices, strides,
                                                           strict=True)):
        if stride < 1:
            raise op_value_error(name, f"strides {tuple(strides)} must be positive")
        if not 0 <= start <= limit <= size:
            raise op_value_error(
                name, f"slice [{start}:{limit}] of dimension {dim} is out of bounds: need "
                      f"0 <= start <= limit <= {size} (operand shape {x.shape})")
        shape.append(-(-(limit - start) // stride))
    return TensorSpec(tuple(shape), x.dtype)


def _slice(x: np.ndarray, *, start_indices: tuple[int, ...], limit_indices: tuple[int, ...],
           strides: tuple[int, ...]) -> np.ndarray:
    index = tuple(slice(s, e, k) for s, e, k in zip(start_indices, limit_indices, strides, strict=True))
    return x[index].copy()


define_op(
    "slice", "(operand: T) -> (result: U)",
    linear=(0,), complex=True,
    attributes={"start_indices": "i64s", "limit_indices": "i64s", "strides": "i64s"},
    infer=_infer_slice, reference=_slice, weak_type="first",
    summary="Static strided slice: `operand[start:limit:stride]` in every dimension.",
    description="""
One entry per operand dimension in each attribute, with `0 <= start <= limit <= size` and
`stride >= 1`. Result dimension d has `ceil((limit[d] - start[d]) / stride[d])` elements.
""",
)

# --- dynamic_slice, dynamic_update_slice ---------------------------------------------------------


def _check_start_indices(op: str, x: TensorSpec, indices: Sequence[TensorSpec]) -> None:
    """One rank-0 integer start index per operand dimension, all of one dtype."""
    if len(indices) != x.ndim:
        raise op_type_error(op, f"takes one start index per operand dimension: expected {x.ndim}, "
                                f"got {len(indices)} (operand shape {x.shape})")
    for i, spec in enumerate(indices):
        if spec.ndim != 0 or not dtypes.is_int(spec.dtype):
            raise op_type_error(op, f"start index {i} must be a rank-0 integer tensor, got {spec}")
        if spec.dtype != indices[0].dtype:
            raise op_type_error(op, f"start indices must share one integer dtype, got "
                                    f"{', '.join(str(s.dtype) for s in indices)}")


def _clamped_window(shape: Sequence[int], sizes: Sequence[int], starts: Sequence[np.ndarray]) -> tuple:
    """The index of the window of ``sizes`` at ``starts``, each start clamped into [0, dim - size]."""
    return tuple(slice(begin, begin + n) for begin, n in (
        (int(np.clip(int(s), 0, d - n)), n) for d, n, s in zip(shape, sizes, starts, strict=True)))


def _infer_dynamic_slice(x: TensorSpec, *indices: TensorSpec, slice_sizes: tuple[int, ...]) -> TensorSpec:
    name = "dynamic_slice"
    _check_start_indices(name, x, indices)
    _require_rank(name, "slice_sizes", slice_sizes, x.ndim)
    if any(not 0 <= n <= d for n, d in zip(slice_sizes, x.shape, strict=True)):
        raise op_value_error(name, f"slice_sizes {tuple(slice_sizes)} must be nonnegative and at most the "
                                   f"operand shape {x.shape}")
    return TensorSpec(slice_sizes, x.dtype)


def _dynamic_slice(x: np.ndarray, *indices: np.ndarray, slice_sizes: tuple[int, ...]) -> np.ndarray:
    return x[_clamped_window(x.shape, slice_sizes, indices)].copy()


define_op(
    "dynamic_slice", "(operand: T, *start_indices: I) -> (result: U)",
    linear=(0,), complex=True,
    attributes={"slice_sizes": "i64s"},
    infer=_infer_dynamic_slice, reference=_dynamic_slice, weak_type="first",
    summary="Slice of static size `slice_sizes` at run-time start indices (clamped into bounds).",
    description="""
Operands: the tensor, then one rank-0 integer tensor per operand dimension, all of one
dtype (IRDL binds one type for the variadic port). `0 <= slice_sizes[d] <= shape[d]`.
Each start index is clamped into `[0, shape[d] - slice_sizes[d]]` before slicing, so the
window always lies in bounds (StableHLO semantics): an index past the end yields the last
full window, a negative index the first. Negative indices are NOT counted from the end;
the front end (`lax.dynamic_slice`) does that wrapping before it emits the op.
""",
)


def _infer_dynamic_update_slice(x: TensorSpec, update: TensorSpec, *indices: TensorSpec) -> TensorSpec:
    name = "dynamic_update_slice"
    if update.dtype != x.dtype:
        raise op_type_error(name, f"operand and update must have the same dtype, got {x.dtype} and "
                                  f"{update.dtype}")
    if update.ndim != x.ndim or any(u > d for u, d in zip(update.shape, x.shape, strict=True)):
        raise op_type_error(name, f"update shape {update.shape} must have the operand's rank and fit "
                                  f"in the operand shape {x.shape}")
    _check_start_indices(name, x, indices)
    return x


def _dynamic_update_slice(x: np.ndarray, update: np.ndarray, *indices: np.ndarray) -> np.ndarray:
    out = x.copy()
    out[_clamped_window(x.shape, update.shape, indices)] = update
    return out


define_op(
    "dynamic_update_slice", "(operand: T, update: U, *start_indices: I) -> (result: T)",
    linear=(0, 1), complex=True,
    infer=_infer_dynamic_update_slice, reference=_dynamic_update_slice,
    summary="Overwrite the window of `update`'s shape at run-time start indices (clamped into bounds).",
    description="""
Operands: the tensor, the update (same dtype and rank, each dimension no larger), then one
rank-0 integer start index per dimension, all of one dtype. Each start index is clamped
into `[0, shape[d] - update.shape[d]]`, so the whole update is always written (StableHLO
semantics); negative indices are not counted from the end. The result has the operand's type.
""",
)

# --- concatenate, pad --------------------------------------------------------------------------


def _infer_concatenate(lhs: TensorSpec, rhs: TensorSpec, *, dimension: int) -> TensorSpec:
    name = "concatenate"
    if lhs.dtype != rhs.dtype:
        raise op_type_error(name, f"operands must have the same dtype, got {lhs.dtype} and {rhs.dtype}")
    if lhs.ndim != rhs.ndim or not 0 <= dimension < lhs.ndim:
        raise op_value_error(name, f"dimension {dimension} out of range, or operands of different rank "
                                   f"(shapes {lhs.shape} and {rhs.shape})")
    others = [d for d in range(lhs.ndim) if d != dimension]
    if any(lhs.shape[d] != rhs.shape[d] for d in others):
        raise op_value_error(name, f"shapes {lhs.shape} and {rhs.shape} differ outside dimension "
                                   f"{dimension}")
    shape = list(lhs.shape)
    shape[dimension] += rhs.shape[dimension]
    return TensorSpec(tuple(shape), lhs.dtype)


define_op(
    "concatenate", "(lhs: T, rhs: U) -> (result: V)",
    linear=(0, 1), complex=True,
    attributes={"dimension": "i64"},
    infer=_infer_concatenate,
    reference=lambda x, y, *, dimension: np.concatenate([x, y], axis=dimension),
    summary="Join two tensors along `dimension` (binary: chains express N operands).",
    description="""
The operands have one dtype and one rank (at least 1) and agree in every dimension but
`dimension`, along which `rhs` follows `lhs`.

Why binary rather than variadic as in StableHLO: IRDL binds one type per constraint
variable, variadic ports included, so a variadic port would force every operand to have
the identical type, while concatenated operands usually differ in size along
`dimension`. `lax.concatenate` therefore folds N operands into a left-to-right chain; a
lowering may re-fuse the chain into one N-ary concatenation.
""",
)


def _padded_size(size: int, low: int, high: int, interior: int) -> int:
    return low + high + size + max(size - 1, 0) * interior


def _infer_pad(x: TensorSpec, value: TensorSpec, *, edge_padding_low: tuple[int, ...],
               edge_padding_high: tuple[int, ...], interior_padding: tuple[int, ...]) -> TensorSpec:
    name = "pad"
    if value.ndim != 0 or value.dtype != x.dtype:
        raise op_type_error(name, f"padding_value must be a rank-0 tensor of the operand dtype {x.dtype}, "
                                  f"got {value}")
    for what, values in (("edge_padding_low", edge_padding_low), ("edge_padding_high", edge_padding_high),
                         ("interior_padding", interior_padding)):
        _require_rank(name, what, values, x.ndim)
    _require_nonnegative(name, "interior_padding", interior_padding)
    shape = tuple(_padded_size(*cfg) for cfg in zip(x.shape, edge_padding_low, edge_padding_high,
                                                    interior_padding, strict=True))
    if any(d < 0 for d in shape):
        raise op_value_error(name, f"padding gives negative result shape {shape} for operand shape {x.shape}")
    return TensorSpec(shape, x.dtype)


def _pad(x: np.ndarray, value: np.ndarray, *, edge_padding_low: tuple[int, ...],
         edge_padding_high: tuple[int, ...], interior_padding: tuple[int, ...]) -> np.ndarray:
    """Pad with the nonnegative parts of the edge padding, then crop the negative parts."""
    grown, place, crop = [], [], []
    for n, low, high, interior in zip(x.shape, edge_padding_low, edge_padding_high, interior_padding,
                                      strict=True):
        core = _padded_size(n, 0, 0, interior)
        grown.append(max(low, 0) + core + max(high, 0))
        place.append(slice(max(low, 0), max(low, 0) + core, interior + 1))
        crop.append(slice(max(-low, 0), grown[-1] - max(-high, 0)))
    out = np.full(grown, value, dtype=x.dtype)
    out[tuple(place)] = x
    return out[tuple(crop)].copy()


define_op(
    "pad", "(operand: T, padding_value: U) -> (result: V)",
    linear=(0, 1), complex=True,
    attributes={"edge_padding_low": "i64s", "edge_padding_high": "i64s", "interior_padding": "i64s"},
    infer=_infer_pad, reference=_pad,
    summary="Pad with `padding_value` at both edges and between elements; negative edge padding crops.",
    description="""
`padding_value` is a rank-0 tensor of the operand's dtype. Per dimension d of size n:
`interior_padding[d] >= 0` copies of the padding value go between adjacent elements, then
`edge_padding_low[d]` / `edge_padding_high[d]` at the start / end. Negative edge padding
removes that many elements from the (interior-padded) edge. The result size is
`low + high + n + max(n - 1, 0) * interior` and must be nonnegative.
""",
)
