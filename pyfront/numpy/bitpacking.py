"""mlax.numpy packbits / unpackbits: booleans (nonzero elements) packed eight to a uint8 along an
axis and back, most significant bit first unless ``bitorder="little"``, as jax.numpy."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax
from mlax.numpy import elementwise as ew
from mlax.numpy import math_extra as mx
from mlax.numpy.manipulation import ravel, reshape, swapaxes
from mlax.numpy.padding import pad
from mlax.numpy.util import asarray, check_arraylike, const_like

__all__ = ["packbits", "unpackbits"]


def _bit_values(bitorder: str) -> np.ndarray:
    """The uint8 value of each bit position within a byte, in the order the bits are laid out."""
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")
    shifts = np.arange(8, dtype=np.uint8)
    return shifts[::-1] if bitorder == "big" else shifts


def _along_last(x: Any, axis: int | None) -> tuple[Any, int]:
    """``x`` with ``axis`` swapped last (flattened when None), and the axis to swap back."""
    if axis is None:
        return ravel(x), 0
    return swapaxes(x, axis, -1), axis


def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    """``jnp.packbits``: groups of eight along ``axis`` (zero-padded at the end) as one uint8 each."""
    check_arraylike("packbits", a)
    arr = asarray(a)
    if not (front_dtypes.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_):
        raise TypeError("Expected an input array of integer or boolean data type")
    shifts = _bit_values(bitorder)
    bits = mx.astype(ew.not_equal(arr, const_like(arr, 0, "never")), np.uint8)
    bits, axis = _along_last(bits, axis)
    remainder = bits.shape[-1] % 8
    if remainder:
        bits = pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, 8 - remainder)])
    bits = reshape(bits, bits.shape[:-1] + (bits.shape[-1] // 8, 8))
    packed = lax.reduce_sum(lax.shift_left(bits, asarray(np.broadcast_to(shifts, bits.shape))),
                            (bits.ndim - 1,))
    return swapaxes(packed, axis, -1)


def unpackbits(a: Any, axis: int | None = None, count: int | None = None, bitorder: str = "big") -> Any:
    """``jnp.unpackbits``: each uint8 along ``axis`` as eight 0/1 uint8 values; ``count`` keeps
    that many of them (zero-padding when it asks for more)."""
    check_arraylike("unpackbits", a)
    arr = asarray(a)
    if arr.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    masks = (1 << _bit_values(bitorder)).astype(np.uint8)
    arr, axis = _along_last(arr, axis)
    wide = arr.shape + (8,)
    set_bits = lax.bitwise_and(lax.broadcast_in_dim(arr, wide, tuple(range(arr.ndim))),
                               asarray(np.broadcast_to(masks, wide)))
    bits = mx.astype(ew.greater(set_bits, const_like(set_bits, 0, "never")), np.uint8)
    bits = reshape(bits, arr.shape[:-1] + (arr.shape[-1] * 8,))
    if count is not None:
        if count > bits.shape[-1]:
            bits = pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, count - bits.shape[-1])])
        else:
            bits = bits[..., :count]
    return swapaxes(bits, axis, -1)
