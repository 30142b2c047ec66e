"""mlax.numpy array manipulation: reshaping, joining, splitting, tiling, flipping, rolling.

Everything is static-shape and built from mlax.lax shape primitives (reshape, transpose,
slice, concatenate, pad, rev, broadcast_in_dim, dynamic_slice); names, signatures and
result dtypes follow jax.numpy. ``pad`` lives in padding.py and is exported from here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from mlax import lax, prng
from mlax.core import Tracer
from mlax.numpy.padding import pad
from mlax.numpy.util import (
    asarray,
    broadcast_shapes_or_raise,
    normalize_axes,
    normalize_axis,
    promote_dtypes,
    slice_axis,
    static_ints,
)
from mlax.source_info import where

__all__ = [
    "append", "array_split", "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_arrays",
    "broadcast_shapes", "broadcast_to", "column_stack", "concat", "concatenate", "diagonal", "dsplit",
    "dstack", "expand_dims", "flip", "fliplr", "flipud", "hsplit", "hstack", "insert", "moveaxis", "pad",
    "permute_dims", "ravel", "repeat", "reshape", "roll", "rot90", "split", "squeeze", "stack",
    "swapaxes", "tile", "transpose", "unstack", "vsplit", "vstack",
]


def _reshape(x: Any, shape: Sequence[int]) -> Any:
    shape = tuple(shape)
    return x if x.shape == shape else lax.reshape(x, shape)


def _transpose(x: Any, perm: Sequence[int]) -> Any:
    perm = tuple(perm)
    return x if perm == tuple(range(x.ndim)) else lax.transpose(x, perm)


# --- shape and axes -------------------------------------------------------------------------------

def _target_shape(fname: str, size: int, shape: Any) -> tuple[int, ...]:
    """NumPy's reading of a new shape: an int or a sequence with at most one -1."""
    shape = static_ints(fname, "the new shape", shape)
    unknown = [i for i, d in enumerate(shape) if d == -1]
    if len(unknown) > 1 or any(d < -1 for d in shape):
        raise ValueError(f"{fname}: invalid shape {shape}: only one dimension may be -1 and none "
                         f"may be negative otherwise{where()}")
    known = math.prod(d for d in shape if d != -1)
    if unknown:
        if known == 0 or size % known:
            raise ValueError(f"{fname}: cannot reshape array of size {size} into shape {shape}{where()}")
        shape = tuple(size // known if d == -1 else d for d in shape)
    elif known != size:
        raise ValueError(f"{fname}: cannot reshape array of size {size} into shape {shape}{where()}")
    return shape


def reshape(a: Any, shape: Any = None, order: str = "C", *, copy: bool | None = None) -> Any:
    """``jnp.reshape``: C order is one lax.reshape; F order reshapes the reversed-axes view."""
    a = asarray(a)
    if shape is None:
        raise TypeError(f"reshape: a new shape is required{where()}")
    if prng.is_key(a):
        return a.reshape(shape, order=order)
    shape = _target_shape("reshape", a.size, shape)
    if order == "C":
        return _reshape(a, shape)
    if order == "F":
        reversed_a = _transpose(a, range(a.ndim)[::-1])
        return _transpose(_reshape(reversed_a, shape[::-1]), range(len(shape))[::-1])
    if order == "A":
        raise NotImplementedError(f"reshape: order='A' is not supported (use 'C' or 'F'){where()}")
    raise ValueError(f"reshape: order must be 'C' or 'F', got {order!r}{where()}")


def ravel(a: Any, order: str = "C") -> Any:
    a = asarray(a)
    return reshape(a, (a.size,), order)


def transpose(a: Any, axes: Sequence[int] | None = None) -> Any:
    """``jnp.transpose``: reverse the axes, or permute them by ``axes``."""
    a = asarray(a)
    if axes is None:
        return _transpose(a, range(a.ndim)[::-1])
    perm = normalize_axes("transpose", tuple(axes), a.ndim)
    if len(perm) != a.ndim:
        raise ValueError(f"transpose: axes {tuple(axes)} don't match an array of rank {a.ndim}{where()}")
    return _transpose(a, perm)


permute_dims = transpose


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    a = asarray(a)
    perm = list(range(a.ndim))
    i, j = normalize_axis("swapaxes", axis1, a.ndim), normalize_axis("swapaxes", axis2, a.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return _transpose(a, perm)


def moveaxis(a: Any, source: int | Sequence[int], destination: int | Sequence[int]) -> Any:
    """``jnp.moveaxis``: the other axes keep their order."""
    a = asarray(a)
    src = normalize_axes("moveaxis", source, a.ndim)
    dst = normalize_axes("moveaxis", destination, a.ndim)
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} must have the "
                         f"same number of elements{where()}")
    rest = [i for i in range(a.ndim) if i not in src]
    perm = [-1] * a.ndim
    for s, d in zip(src, dst, strict=True):
        perm[d] = s
    rest_iter = iter(rest)
    return _transpose(a, [p if p >= 0 else next(rest_iter) for p in perm])


def expand_dims(a: Any, axis: int | Sequence[int]) -> Any:
    """``jnp.expand_dims``: ``axis`` counts positions in the result."""
    a = asarray(a)
    axis = tuple(axis) if isinstance(axis, range) else axis  # (jax takes any index sequence)
    axes = normalize_axes("expand_dims", axis, a.ndim + (len(axis) if isinstance(axis, (tuple, list))
                                                         else 1))
    dims = iter(a.shape)
    return _reshape(a, [1 if i in axes else next(dims) for i in range(a.ndim + len(axes))])


def squeeze(a: Any, axis: int | Sequence[int] | None = None) -> Any:
    a = asarray(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        axes = normalize_axes("squeeze", axis, a.ndim)
        bad = [i for i in axes if a.shape[i] != 1]
        if bad:
            raise ValueError(f"squeeze: cannot squeeze axis {bad[0]} of size {a.shape[bad[0]]} "
                             f"(shape {a.shape}); only axes of size 1 can be removed{where()}")
    return _reshape(a, [d for i, d in enumerate(a.shape) if i not in axes])


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    return broadcast_shapes_or_raise("broadcast_shapes", *(static_ints("broadcast_shapes", "shapes", s)
                                                           for s in shapes))


def broadcast_to(array: Any, shape: Any) -> Any:
    """``jnp.broadcast_to``: NumPy broadcasting of ``array`` to exactly ``shape``."""
    array = asarray(array)
    shape = static_ints("broadcast_to", "shape", shape)
    if prng.is_key(array):  # keys: their data, whose trailing axes are each key's words
        return array._with(broadcast_to(array._base_array, (*shape, *prng.key_shape(array.dtype))))
    lead = len(shape) - array.ndim
    if lead < 0 or any(d not in (1, t) for d, t in zip(array.shape, shape[lead:], strict=True)):
        raise ValueError(f"broadcast_to: cannot broadcast an array of shape {array.shape} to shape "
                         f"{shape}{where()}")
    if array.shape == shape:
        return array
    return lax.broadcast_in_dim(array, shape, tuple(range(lead, len(shape))))


def broadcast_arrays(*args: Any) -> list[Any]:
    arrays = [asarray(a) for a in args]
    shape = broadcast_shapes_or_raise("broadcast_arrays", *(a.shape for a in arrays))
    return [broadcast_to(a, shape) for a in arrays]


def atleast_1d(*arys: Any) -> Any:
    return _atleast(arys, lambda s: s if s else (1,))


def atleast_2d(*arys: Any) -> Any:
    return _atleast(arys, lambda s: (1,) * (2 - len(s)) + s if len(s) < 2 else s)


def atleast_3d(*arys: Any) -> Any:
    """NumPy's rule: () -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    def shape3(s: tuple[int, ...]) -> tuple[int, ...]:
        return {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}.get(len(s), s)

    return _atleast(arys, shape3)


def _atleast(arys: tuple[Any, ...], new_shape: Any) -> Any:
    out = [_reshape(a, new_shape(a.shape)) for a in map(asarray, arys)]
    return out[0] if len(out) == 1 else out


# --- joining --------------------------------------------------------------------------------------

def _as_sequence(fname: str, arrays: Any) -> list[Any]:
    if isinstance(arrays, (list, tuple)):
        return list(arrays)
    arrays = asarray(arrays)
    if arrays.ndim == 0:
        raise ValueError(f"{fname}: expects a sequence of arrays, got a 0-d array{where()}")
    return [arrays[i] for i in range(arrays.shape[0])]


def concatenate(arrays: Any, axis: int | None = 0, dtype: Any = None) -> Any:
    """``jnp.concatenate``: promote to one dtype, then one lax.concatenate (``axis=None`` ravels)."""
    arrays = _as_sequence("concatenate", arrays)
    if not arrays:
        raise ValueError(f"concatenate: need at least one array to concatenate{where()}")
    if any(prng.is_key(a) for a in arrays):
        keys = _same_keys("concatenate", arrays)
        if axis is None:
            keys, axis = [k.ravel() for k in keys], 0
        axis = normalize_axis("concatenate", axis, keys[0].ndim)
        return keys[0]._with(concatenate([k._base_array for k in keys], axis))
    arrays = promote_dtypes(*arrays) if dtype is None else [asarray(a, dtype) for a in arrays]
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    if any(a.ndim == 0 for a in arrays):
        raise ValueError(f"concatenate: zero-dimensional arrays cannot be concatenated{where()}")
    axis = normalize_axis("concatenate", axis, arrays[0].ndim)
    first = arrays[0].shape
    for a in arrays[1:]:
        if a.ndim != len(first) or any(d != f for i, (d, f) in enumerate(zip(a.shape, first, strict=True))
                                       if i != axis):
            raise TypeError(f"concatenate: shapes {first} and {a.shape} differ outside axis {axis}"
                             f"{where()}")
    return arrays[0] if len(arrays) == 1 else lax.concatenate(arrays, axis)


concat = concatenate


def _same_keys(name: str, arrays: Sequence[Any]) -> list[Any]:
    """``arrays``, all key arrays of one key dtype (jax's TypeError otherwise)."""
    dtypes = {getattr(a, "dtype", None) for a in arrays}
    if not all(prng.is_key(a) for a in arrays) or len(dtypes) > 1:
        raise TypeError(f"{name}: key arrays combine only with key arrays of the same dtype, got "
                        f"{sorted(map(str, dtypes))}{where()}")
    return list(arrays)


def stack(arrays: Any, axis: int = 0, out: None = None, dtype: Any = None) -> Any:
    """``jnp.stack``: a new axis, then concatenate (arrays must share one shape)."""
    arrays = [asarray(a) for a in _as_sequence("stack", arrays)]
    if not arrays:
        raise ValueError(f"stack: need at least one array to stack{where()}")
    if any(prng.is_key(a) for a in arrays):
        keys = _same_keys("stack", arrays)
        axis = normalize_axis("stack", axis, keys[0].ndim + 1)
        return keys[0]._with(stack([k._base_array for k in keys], axis))
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise ValueError(f"stack: all input arrays must have the same shape, got {sorted(shapes)}"
                         f"{where()}")
    axis = normalize_axis("stack", axis, arrays[0].ndim + 1)
    return concatenate([expand_dims(a, axis) for a in arrays], axis, dtype)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    x = asarray(x)
    axis = normalize_axis("unstack", axis, x.ndim)
    shape = x.shape[:axis] + x.shape[axis + 1:]
    return tuple(_reshape(slice_axis(x, axis, i, i + 1), shape) for i in range(x.shape[axis]))


def hstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    arrays = [atleast_1d(a) for a in _as_sequence("hstack", tup)]
    return concatenate(arrays, 0 if arrays and arrays[0].ndim == 1 else 1, dtype)


def vstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    return concatenate([atleast_2d(a) for a in _as_sequence("vstack", tup)], 0, dtype)


def dstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    return concatenate([atleast_3d(a) for a in _as_sequence("dstack", tup)], 2, dtype)


def column_stack(tup: Sequence[Any]) -> Any:
    """1-D (and 0-d) inputs become columns; others are stacked along axis 1 as they are."""
    arrays = [asarray(a) for a in _as_sequence("column_stack", tup)]
    return concatenate([_reshape(a, (a.size, 1)) if a.ndim < 2 else a for a in arrays], 1)


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    return concatenate([arr, values], axis)


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """``jnp.insert`` with static positions ``obj`` (an int, a slice or a sequence of ints).

    A scalar ``obj`` inserts all of ``values`` (its first axis along ``axis``) before that
    position; a sequence inserts one value slice per entry, as NumPy does. The result is
    the original pieces and the value slices, concatenated once.
    """
    arr = asarray(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = normalize_axis("insert", axis, arr.ndim)
    n = arr.shape[axis]
    scalar = not isinstance(obj, slice) and np.ndim(obj) == 0 and not isinstance(obj, (list, tuple))
    positions = list(range(*obj.indices(n))) if isinstance(obj, slice) else list(
        static_ints("insert", "obj", obj))
    for p in positions:
        if not -n <= p <= n:
            raise IndexError(f"insert: index {p} is out of bounds for axis {axis} with size {n}{where()}")
    positions = [p + n if p < 0 else p for p in positions]
    values = lax.convert_element_type(asarray(values), arr.dtype)
    if scalar:
        values = moveaxis(_reshape(values, (1,) * (arr.ndim - values.ndim) + values.shape), 0, axis)
        values = broadcast_to(values, arr.shape[:axis] + (values.shape[axis],) + arr.shape[axis + 1:])
        p = positions[0]
        return concatenate([slice_axis(arr, axis, 0, p), values, slice_axis(arr, axis, p, n)], axis)
    shape = arr.shape[:axis] + (len(positions),) + arr.shape[axis + 1:]
    values = broadcast_to(values, shape)
    pieces, done = [], 0
    for j in sorted(range(len(positions)), key=lambda j: positions[j]):
        pieces += [slice_axis(arr, axis, done, positions[j]), slice_axis(values, axis, j, j + 1)]
        done = positions[j]
    return concatenate(pieces + [slice_axis(arr, axis, done, n)], axis)


# --- splitting ------------------------------------------------------------------------------------

def _split(fname: str, ary: Any, indices_or_sections: Any, axis: int, equal: bool) -> list[Any]:
    ary = asarray(ary)
    axis = normalize_axis(fname, axis, ary.ndim)
    n = ary.shape[axis]
    if isinstance(indices_or_sections, (list, tuple, np.ndarray)) or getattr(indices_or_sections, "ndim", 0):
        points = list(static_ints(fname, "indices", indices_or_sections))
    else:
        (sections,) = static_ints(fname, "the number of sections", indices_or_sections)
        if sections <= 0:
            raise ValueError(f"{fname}: number of sections must be larger than 0, got {sections}{where()}")
        if equal and n % sections:
            raise ValueError(f"{fname}: array split does not result in an equal division ({n} into "
                             f"{sections}){where()}")
        small, extra = divmod(n, sections)
        points = [i * small + min(i, extra) for i in range(1, sections)]
    bounds = zip([0, *points], [*points, n], strict=True)
    out = []
    for lo, hi in bounds:
        start, stop, _ = slice(lo, hi).indices(n)
        out.append(slice_axis(ary, axis, start, max(start, stop)))
    return out


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    return _split("split", ary, indices_or_sections, axis, equal=True)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


def _split_min_rank(fname: str, min_rank: int, axis_of: Any) -> Any:
    def fn(ary: Any, indices_or_sections: Any) -> list[Any]:
        ary = asarray(ary)
        if ary.ndim < min_rank:
            raise ValueError(f"{fname}: needs an array of rank >= {min_rank}, got shape {ary.shape}"
                             f"{where()}")
        return _split(fname, ary, indices_or_sections, axis_of(ary.ndim), equal=True)

    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f"``jnp.{fname}``: ``split`` along its fixed axis."
    return fn


hsplit = _split_min_rank("hsplit", 1, lambda ndim: 1 if ndim > 1 else 0)
vsplit = _split_min_rank("vsplit", 2, lambda ndim: 0)
dsplit = _split_min_rank("dsplit", 3, lambda ndim: 2)


# --- repetition -----------------------------------------------------------------------------------

def tile(A: Any, reps: Any) -> Any:
    """``jnp.tile``: broadcast to interleaved (rep, dim) axes and merge them."""
    A = asarray(A)
    reps = static_ints("tile", "reps", reps)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps}{where()}")
    rank = max(len(reps), A.ndim)
    reps = (1,) * (rank - len(reps)) + reps
    A = _reshape(A, (1,) * (rank - A.ndim) + A.shape)
    wide = [d for pair in zip(reps, A.shape, strict=True) for d in pair]
    tiled = lax.broadcast_in_dim(A, wide, tuple(range(1, 2 * rank, 2)))
    return _reshape(tiled, [r * d for r, d in zip(reps, A.shape, strict=True)])


def _repeat_each(x: Any, axis: int, count: int) -> Any:
    """Every element along ``axis`` ``count`` times in a row."""
    wide = x.shape[:axis + 1] + (count,) + x.shape[axis + 1:]
    dims = tuple(range(axis + 1)) + tuple(range(axis + 2, x.ndim + 1))
    out_shape = x.shape[:axis] + (x.shape[axis] * count,) + x.shape[axis + 1:]
    return _reshape(lax.broadcast_in_dim(x, wide, dims), out_shape)


def repeat(a: Any, repeats: Any, axis: int | None = None, *, total_repeat_length: int | None = None) -> Any:
    """``jnp.repeat`` with static repeats: runs of equal counts become one broadcast each."""
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalize_axis("repeat", axis, a.ndim)
    n = a.shape[axis]
    counts = list(static_ints("repeat", "repeats", repeats))
    if len(counts) == 1:
        counts *= n
    if len(counts) != n or any(c < 0 for c in counts):
        raise ValueError(f"repeat: repeats must be non-negative and have one entry or one per element "
                         f"({n}), got {len(counts)} entries{where()}")
    if total_repeat_length is not None:
        counts = _fit_counts(counts, int(total_repeat_length))
    if len(set(counts)) <= 1:
        return _repeat_each(a, axis, counts[0] if counts else 0)
    pieces, start = [], 0
    for i in range(1, n + 1):
        if i == n or counts[i] != counts[start]:
            if counts[start]:
                pieces.append(_repeat_each(slice_axis(a, axis, start, i), axis, counts[start]))
            start = i
    return concatenate(pieces, axis) if pieces else slice_axis(a, axis, 0, 0)


def _fit_counts(counts: list[int], total: int) -> list[int]:
    """JAX's total_repeat_length: truncate the output, or repeat the last element to fill it."""
    if total < 0:
        raise ValueError(f"repeat: total_repeat_length must be non-negative, got {total}{where()}")
    extra = total - sum(counts)
    if extra >= 0:
        return counts[:-1] + [counts[-1] + extra] if counts else counts
    fitted, left = [], total
    for c in counts:
        fitted.append(min(c, left))
        left -= fitted[-1]
    return fitted


# --- flipping and rotating ------------------------------------------------------------------------

def flip(m: Any, axis: int | Sequence[int] | None = None) -> Any:
    m = asarray(m)
    axes = tuple(range(m.ndim)) if axis is None else normalize_axes("flip", axis, m.ndim)
    return lax.rev(m, axes) if axes else m


def fliplr(m: Any) -> Any:
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError(f"fliplr: needs an array of rank >= 2, got shape {m.shape}{where()}")
    return flip(m, 1)


def flipud(m: Any) -> Any:
    m = asarray(m)
    if m.ndim < 1:
        raise ValueError(f"flipud: needs an array of rank >= 1, got a 0-d array{where()}")
    return flip(m, 0)


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """``jnp.rot90``: rotate by 90 degrees ``k`` times from the first axis towards the second."""
    m = asarray(m)
    if m.ndim < 2 or len(axes) != 2:
        raise ValueError(f"rot90: needs an array of rank >= 2 and two axes, got shape {m.shape} and "
                         f"axes {axes}{where()}")
    ax0, ax1 = normalize_axes("rot90", axes, m.ndim)
    k = int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(m, (ax0, ax1))
    if k == 1:
        return swapaxes(flip(m, ax1), ax0, ax1)
    return flip(swapaxes(m, ax0, ax1), ax1)


def roll(a: Any, shift: Any, axis: int | Sequence[int] | None = None) -> Any:
    """``jnp.roll``: static shifts are two slices; a traced shift slices the array doubled."""
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    axes = normalize_axes("roll", axis, a.ndim) if isinstance(axis, (tuple, list)) else \
        (normalize_axis("roll", axis, a.ndim),)
    shifts = _shift_list(shift)
    if len(shifts) == 1:
        shifts *= len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes *= len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift and axis must have the same length, got {len(shifts)} and "
                         f"{len(axes)}{where()}")
    for ax, s in zip(axes, shifts, strict=True):
        a = _roll_axis(a, ax, s)
    return a


def _shift_list(shift: Any) -> list[Any]:
    """Roll shifts as a list of static ints or scalar tracers."""
    if isinstance(shift, Tracer):
        return [shift] if shift.ndim == 0 else list(unstack(shift))
    if isinstance(shift, (tuple, list)) and any(isinstance(s, Tracer) for s in shift):
        return list(shift)
    return list(static_ints("roll", "shift", shift))


def _roll_axis(a: Any, axis: int, shift: Any) -> Any:
    n = a.shape[axis]
    if n == 0:
        return a
    if not isinstance(shift, Tracer):
        s = shift % n
        return concatenate([slice_axis(a, axis, n - s, n), slice_axis(a, axis, 0, n - s)], axis) if s else a
    s = lax.rem(shift, n)
    start = lax.sub(n, lax.select(lax.lt(s, 0), lax.add(s, n), s))
    doubled = lax.concatenate([a, a], axis)
    return lax.dynamic_slice(doubled, [start if i == axis else 0 for i in range(a.ndim)], a.shape)


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """``jnp.diagonal``: a strided slice of the two axes merged (they move to the end, the
    diagonal becomes the last axis)."""
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError(f"diagonal: needs an array of rank >= 2, got shape {a.shape}{where()}")
    ax1, ax2 = normalize_axes("diagonal", (axis1, axis2), a.ndim)
    rest = [i for i in range(a.ndim) if i not in (ax1, ax2)]
    a = _transpose(a, rest + [ax1, ax2])
    lead, (n, m) = a.shape[:-2], a.shape[-2:]
    offset = int(offset)
    count = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    flat = _reshape(a, lead + (n * m,))
    if count == 0:
        return slice_axis(flat, len(lead), 0, 0)
    start = offset if offset >= 0 else -offset * m
    return slice_axis(flat, len(lead), start, start + (count - 1) * (m + 1) + 1, m + 1)
