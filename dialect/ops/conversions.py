"""Type conversions: convert (value-preserving cast) and bitcast_convert (reinterpret bits)."""

from __future__ import annotations

import numpy as np

from mlax.dialect import dtypes
from mlax.dialect.ops.common import op_type_error, op_value_error
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec

_HALF = (np.dtype(np.float16), dtypes.bfloat16)


def _require_supported(op: str, new_dtype: np.dtype) -> np.dtype:
    try:
        new_dtype = np.dtype(new_dtype)
    except TypeError:
        raise op_type_error(op, f"new_dtype must be a dtype, got {new_dtype!r}") from None
    if not dtypes.is_supported(new_dtype):
        raise op_type_error(op, f"unsupported target dtype {new_dtype}")
    return new_dtype


def _infer_convert(x: TensorSpec, *, new_dtype: np.dtype) -> TensorSpec:
    return TensorSpec(x.shape, _require_supported("convert", new_dtype))


def _float_to_int(x: np.ndarray, new_dtype: np.dtype) -> np.ndarray:
    """Truncate toward zero and saturate; NaN -> 0 (XLA's CPU)."""
    info = np.iinfo(new_dtype)
    wide = np.trunc(x.astype(np.float64))  # exact for every float type mlax has
    upper = 2.0 ** (info.bits - (1 if dtypes.is_signed_int(new_dtype) else 0))  # first value too big
    in_range = (wide >= info.min) & (wide < upper)
    out = np.where(in_range, wide, 0).astype(new_dtype)
    out = np.where(wide >= upper, info.max, out)
    return np.where(wide < info.min, info.min, out).astype(new_dtype)


def _convert(x: np.ndarray, *, new_dtype: np.dtype) -> np.ndarray:
    new_dtype = np.dtype(new_dtype)
    if dtypes.is_bool(new_dtype):
        return x != 0
    if dtypes.is_complex(x.dtype) and not dtypes.is_complex(new_dtype):
        x = np.ascontiguousarray(x.real)  # JAX's convert_element_type keeps the real part
    if dtypes.is_float(x.dtype) and dtypes.is_int(new_dtype):
        return _float_to_int(x, new_dtype)
    with np.errstate(all="ignore"):
        if new_dtype in _HALF and x.dtype != np.float32:
            x = x.astype(np.float32)  # XLA's CPU reaches the half types through f32
        return x.astype(new_dtype)


define_op(
    "convert", "(operand: T) -> (result: U)",
    elementwise=True, linear=(0,), complex=True,
    attributes={"new_dtype": "type"},
    infer=_infer_convert, reference=_convert, weak_type="never",
    summary="Elementwise conversion to `new_dtype`, value-preserving where it can be.",
    description="Float -> int truncates toward zero and saturates at the target's range "
                "(+-inf too); NaN -> 0; negative -> 0 for unsigned targets. Int -> int wraps "
                "(two's complement). Int/float -> float rounds to nearest even; conversions to "
                "f16/bf16 go through f32 (as XLA's CPU: f64 -> f16 and int -> bf16 may round "
                "twice). Any -> i1 is `x != 0` (NaN -> true); i1 -> number gives 0 or 1. "
                "Complex -> real converts the real part (as JAX); real -> complex has imaginary "
                "part 0.",
)


def _bitcast_shape(shape: tuple[int, ...], src: np.dtype, dst: np.dtype) -> tuple[int, ...]:
    op = "bitcast_convert"
    if (dtypes.is_bool(src) or dtypes.is_bool(dst)) and src != dst:
        raise op_type_error(op, f"cannot bitcast between {src} and {dst}: i1 only bitcasts to i1")
    if (dtypes.is_complex(src) or dtypes.is_complex(dst)) and src != dst:
        raise op_type_error(op, "does not support complex values unless the operand and destination types "
                                f"match (as jax). Got operand dtype={src}, new_dtype={dst}. Consider using "
                                "the arr.view() method instead.")
    if src.itemsize == dst.itemsize:
        return shape
    if src.itemsize > dst.itemsize:
        return (*shape, src.itemsize // dst.itemsize)
    ratio = dst.itemsize // src.itemsize
    if not shape or shape[-1] != ratio:
        raise op_value_error(op, f"bitcasting {shape} from {src} to the {ratio}x wider {dst} needs a "
                                 f"minor dimension of size {ratio}, got shape {shape}")
    return shape[:-1]


def _infer_bitcast(x: TensorSpec, *, new_dtype: np.dtype) -> TensorSpec:
    new_dtype = _require_supported("bitcast_convert", new_dtype)
    return TensorSpec(_bitcast_shape(x.shape, x.dtype, new_dtype), new_dtype)


def _bitcast(x: np.ndarray, *, new_dtype: np.dtype) -> np.ndarray:
    new_dtype = np.dtype(new_dtype)
    shape = _bitcast_shape(x.shape, x.dtype, new_dtype)
    return np.ascontiguousarray(x).reshape(-1).view(new_dtype).reshape(shape)


define_op(
    "bitcast_convert", "(operand: T) -> (result: U)",
    stablehlo="stablehlo.bitcast_convert", zero_derivative=True, complex=True,
    attributes={"new_dtype": "type"},
    infer=_infer_bitcast, reference=_bitcast, weak_type="never",
    summary="Reinterpret the bits of each element as `new_dtype`.",
    description="Same bit width: same shape. To an n times narrower type: the result gains a "
                "minor dimension of size n (little-endian order: element 0 holds the lowest "
                "bits). To an n times wider type: the operand's minor dimension must be n and "
                "is consumed. `i1` and complex types bitcast only to themselves (as jax).",
)
