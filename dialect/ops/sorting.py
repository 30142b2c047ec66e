"""Sorting ops: sort_permutation (the stable order of one key), apply_permutation, top_k.

Sorting is split in two single-result ops rather than StableHLO's one variadic `sort`:
IRDL binds one type per constraint variable, variadic ports included, so a variadic sort
could not take keys and payloads of different dtypes (f32 values with i32 indices, as
`lax.sort_key_val` and `argsort` need). `sort_permutation` computes the i32 indices that
stably sort one key along a dimension; `apply_permutation` reads any operand in that order.
`lax.sort` of N operands with `num_keys = k` is then a least-significant-key-first chain
of stable sorts (sort by key k-1, then stably by key k-2 read in that order, ... and
compose the permutations), which orders lexicographically by keys 0..k-1 with ties keeping
their original order, and applies the result to every operand. Splitting also keeps
autodiff simple: the indices have no tangent, and `apply_permutation` is linear in its
operand, transposed by applying the inverse permutation (itself a `sort_permutation` of
the indices). `top_k` is its own op (XLA's TopK: the k largest along the last axis in IEEE
total order, and their indices).
"""

from __future__ import annotations

import numpy as np

from mlax.dialect import dtypes
from mlax.dialect.ops.common import along_rows, op_type_error, op_value_error
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec

INDEX_DTYPE = np.dtype(np.int32)


def _check_dimension(op: str, x: TensorSpec, dimension: int) -> None:
    if x.ndim == 0:
        raise op_value_error(op, "operand must have rank at least 1, got a rank-0 tensor")
    if not 0 <= dimension < x.ndim:
        raise op_value_error(op, f"dimension {dimension} out of range for rank {x.ndim}")
    if x.shape[dimension] > np.iinfo(INDEX_DTYPE).max:
        raise op_value_error(op, f"dimension {dimension} of size {x.shape[dimension]} does not fit "
                                 "i32 indices")


def _sort_keys(x: np.ndarray) -> np.ndarray:
    """``x`` in a form NumPy's stable argsort orders as XLA's sort comparator does: floats
    widened exactly (bf16 has no NumPy sort), -0.0 made +0.0 and every NaN a positive NaN,
    which NumPy puts last. Complex numbers: each part so, which NumPy orders lexicographically."""
    if dtypes.is_complex(x.dtype):
        out = np.empty(x.shape, np.complex128)
        out.real, out.imag = _sort_keys(x.real), _sort_keys(x.imag)
        return out
    if not dtypes.is_float(x.dtype):
        return x
    wide = x.astype(np.float64)
    return np.where(np.isnan(wide), np.nan, wide + 0.0)


def _infer_sort_permutation(keys: TensorSpec, *, dimension: int) -> TensorSpec:
    _check_dimension("sort_permutation", keys, dimension)
    return TensorSpec(keys.shape, INDEX_DTYPE)


def _sort_permutation(keys: np.ndarray, *, dimension: int) -> np.ndarray:
    return np.argsort(_sort_keys(keys), axis=dimension, kind="stable").astype(INDEX_DTYPE)


define_op(
    "sort_permutation", "(keys: T) -> (result: U)",
    complex=True,
    attributes={"dimension": "i64"},
    infer=_infer_sort_permutation, reference=along_rows(_sort_permutation), weak_type="never",
    summary="The i32 indices that stably sort `keys` ascending along `dimension`.",
    description="""
`keys`: any element type, rank at least 1, `dimension` in `0 .. rank-1` (its size must fit
i32). The result has the keys' shape and element type i32: along `dimension`, the positions
of the keys in ascending order, equal keys in their original order (a stable sort). Floats
are in XLA's sort order: `-inf < ... < -0.0 == +0.0 < ... < +inf < NaN`, every NaN (either
sign, any payload) equal to every other; booleans order `false < true`, unsigned integers
as unsigned.

Why indices rather than sorted values: see the family description (IRDL cannot type a
variadic sort of keys and payloads of different dtypes). Multiple keys are a chain of
stable sorts, least significant key first; applying the indices is `apply_permutation`.
""",
)


def _infer_apply_permutation(x: TensorSpec, indices: TensorSpec, *, dimension: int) -> TensorSpec:
    name = "apply_permutation"
    _check_dimension(name, x, dimension)
    if indices.dtype != INDEX_DTYPE:
        raise op_type_error(name, f"indices must have element type i32, got {indices.dtype}")
    if indices.shape != x.shape:
        raise op_type_error(name, f"indices must have the operand's shape {x.shape}, got {indices.shape}")
    return x


def _apply_permutation(x: np.ndarray, indices: np.ndarray, *, dimension: int) -> np.ndarray:
    if x.size == 0:
        return x.copy()
    clamped = np.clip(indices, 0, x.shape[dimension] - 1)
    return np.take_along_axis(x, clamped, axis=dimension)


define_op(
    "apply_permutation", "(operand: T, indices: U) -> (result: T)",
    complex=True,
    attributes={"dimension": "i64"},
    infer=_infer_apply_permutation, reference=along_rows(_apply_permutation), weak_type="first",
    summary="`operand` read along `dimension` at `indices`: result[.., i, ..] = operand[.., indices[i], ..].",
    description="""
`operand`: any element type, rank at least 1; `indices`: i32 of the operand's shape; the
result has the operand's type. Each index reads the operand along `dimension` in its own
row (the other coordinates are the result element's), clamped into `0 .. size-1`.

The indices are meant to be a permutation of `0 .. size-1` along `dimension` (what
`sort_permutation` returns): the transpose rule of autodiff applies the inverse
permutation, which is only the adjoint when no index repeats.
""",
)


def _descending_key(x: np.ndarray) -> np.ndarray:
    """A key whose stable ascending sort is ``x``'s descending IEEE total order (XLA's TopK:
    NaN > +inf > ... > +0.0 > -0.0 > ... > -inf > -NaN): the float's bits, with the
    non-sign bits of negatives flipped, then bitwise negated (the boolean `not`)."""
    if dtypes.is_float(x.dtype):
        signed = np.dtype(f"int{x.dtype.itemsize * 8}")
        bits = x.view(signed)
        x = bits ^ ((bits >> (bits.dtype.itemsize * 8 - 1)) & np.iinfo(signed).max)
    return ~x


def _infer_top_k(x: TensorSpec, *, k: int) -> tuple[TensorSpec, TensorSpec]:
    _check_dimension("top_k", x, x.ndim - 1)
    if not 0 <= k <= x.shape[-1]:
        raise op_value_error("top_k", f"k = {k} must be in [0, {x.shape[-1]}] (the last dimension of "
                                      f"{x.shape})")
    shape = x.shape[:-1] + (k,)
    return TensorSpec(shape, x.dtype), TensorSpec(shape, INDEX_DTYPE)


def _top_k(x: np.ndarray, *, k: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(_descending_key(x), axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, axis=-1), order.astype(INDEX_DTYPE)


define_op(
    "top_k", "(operand: T) -> (values: U, indices: V)",
    attributes={"k": "i64"},
    infer=_infer_top_k, reference=along_rows(_top_k, None), weak_type="never",
    summary="The `k` largest elements along the last dimension, descending, and their i32 indices.",
    description="""
`operand`: any element type, rank at least 1; `k` in `0 .. n` for a last dimension of size
n. Both results have the operand's shape with the last dimension `k`: `values` the
operand's element type, `indices` i32 (positions along the last dimension). The order is
XLA's TopK: floats in IEEE total order, `NaN > +inf > ... > +0.0 > -0.0 > ... > -inf >
-NaN` (NaNs ordered by their bits); integers signed or unsigned; `true > false`. Equal
elements come lowest index first.
""",
)
