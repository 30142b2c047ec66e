"""Fast Fourier transforms: the fft op, as jax's `lax.fft_p` and StableHLO's `fft`.

One op with jax's four kinds (`fft_type`): FFT and IFFT (complex -> complex), RFFT (real ->
the non-negative frequencies, `n // 2 + 1` of them along the last axis), IRFFT (those back to
real). `fft_lengths` names the transformed trailing axes (1 to 3, as StableHLO): the leading
ones are a batch. IFFT and IRFFT carry the 1/N factor (jax's and numpy's "backward"
normalization). IRFFT over several axes is an inverse FFT over all but the last, then a
real inverse over the last, as numpy (and jax on CPU) compute it: only the last axis is read
as conjugate-even. The reference is numpy.fft in the operand's precision. Every error is a
ValueError naming the op, as jax's `fft_abstract_eval` raises ValueErrors.
"""

from __future__ import annotations

import numpy as np

from mlax.dialect import dtypes
from mlax.dialect.ops.common import op_value_error
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec

FFT_TYPES = ("FFT", "IFFT", "RFFT", "IRFFT")
_REAL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _infer_fft(x: TensorSpec, *, fft_type: str, fft_lengths: tuple[int, ...]) -> TensorSpec:
    if fft_type not in FFT_TYPES:
        raise op_value_error("fft", f"fft_type must be one of {', '.join(FFT_TYPES)}, got {fft_type!r}")
    lengths = tuple(int(n) for n in fft_lengths)
    if not 1 <= len(lengths) <= 3:
        raise op_value_error("fft", f"fft_lengths must name 1 to 3 trailing axes, got {lengths}")
    if len(lengths) > x.ndim:
        raise op_value_error("fft", f"operand shape {x.shape} must have at least as many dimensions as "
                                    f"fft_lengths {lengths}")
    if any(n < 1 for n in lengths):
        raise op_value_error("fft", f"fft_lengths must be positive, got {lengths}")
    batch, minor = x.shape[:-len(lengths)], x.shape[-len(lengths):]
    if fft_type == "RFFT":
        if x.dtype not in _REAL_DTYPES:
            raise op_value_error("fft", f"RFFT operand must be f32 or f64, got {x.dtype}")
        if minor != lengths:
            raise op_value_error("fft", f"RFFT operand shape {x.shape} must end in fft_lengths {lengths}")
        return TensorSpec((*batch, *lengths[:-1], lengths[-1] // 2 + 1), dtypes.complex_dtype(x.dtype))
    if not dtypes.is_complex(x.dtype):
        raise op_value_error("fft", f"{fft_type} operand must be complex64 or complex128, got {x.dtype}")
    if fft_type == "IRFFT":
        expected = (*lengths[:-1], lengths[-1] // 2 + 1)
        if minor != expected:
            raise op_value_error("fft", f"IRFFT operand shape {x.shape} must end in {expected} (fft_lengths "
                                        f"{lengths}, the last one n // 2 + 1)")
        return TensorSpec((*batch, *lengths), dtypes.real_dtype(x.dtype))
    if minor != lengths:
        raise op_value_error("fft", f"{fft_type} operand shape {x.shape} must end in fft_lengths {lengths}")
    return x


def _fft(x: np.ndarray, *, fft_type: str, fft_lengths: tuple[int, ...]) -> np.ndarray:
    lengths = tuple(int(n) for n in fft_lengths)
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    transform = {"FFT": np.fft.fftn, "IFFT": np.fft.ifftn, "RFFT": np.fft.rfftn, "IRFFT": np.fft.irfftn}
    out = transform[fft_type](x, s=lengths, axes=axes)
    dtype = dtypes.real_dtype(x.dtype) if fft_type == "IRFFT" else (
        dtypes.complex_dtype(x.dtype) if fft_type == "RFFT" else x.dtype)
    return np.ascontiguousarray(out, dtype=dtype)


define_op(
    "fft", "(operand: T) -> (result: U)",
    complex=True,
    attributes={"fft_type": "str", "fft_lengths": "i64s"},
    infer=_infer_fft, reference=_fft, weak_type="never",
    summary="A discrete Fourier transform over the trailing fft_lengths axes (jax's lax.fft).",
    description="""
`fft_type`: `"FFT"`, `"IFFT"` (complex64/complex128 in and out, same shape), `"RFFT"` (f32/f64
in, complex out with the last axis `n // 2 + 1` long) or `"IRFFT"` (complex in, ending in
`(..., n // 2 + 1)`, real out ending in `fft_lengths`). `fft_lengths`: 1 to 3 positive sizes
of the trailing axes transformed; leading axes are a batch. The inverse kinds divide by the
product of `fft_lengths`. IRFFT over several axes reads only the last one as conjugate-even
(an inverse FFT over the others first), as numpy and jax on CPU.
""",
)

