"""Complex number ops: complex (two reals -> complex), real, imag, conj.

Element types `complex<f32>` (complex64) and `complex<f64>` (complex128) are the real and
imaginary parts side by side, as NumPy stores them. These four ops are `jax.lax`'s: `complex`
takes two f32 or two f64 operands; `real` and `imag` take a complex operand and give its
parts' type; `conj` takes and gives a complex type (the front end does not emit it for real
values, whose conjugate is themselves). An op that accepts complex operands says so with its
``complex`` trait (`define_op(..., complex=True)`: its inference, reference, jvp/transpose/
batching rules and both lowerings handle complex values, with tests in tests/complex/); the
others refuse them by name (dialect/registry.py), and docs/complex.md lists both.
"""

from __future__ import annotations

import numpy as np

from mlax.dialect import dtypes
from mlax.dialect.ops.common import op_type_error, require_same_types
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec

_PART_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _infer_complex(real: TensorSpec, imag: TensorSpec) -> TensorSpec:
    require_same_types("complex", [real, imag], ["lhs", "rhs"])
    if real.dtype not in _PART_DTYPES:
        raise op_type_error("complex", f"operands must be f32 or f64, got {real.dtype}")
    return TensorSpec(real.shape, dtypes.complex_dtype(real.dtype))


def _complex(real: np.ndarray, imag: np.ndarray) -> np.ndarray:
    """Parts stored as they are (``real + 1j * imag`` would turn an infinite part into NaNs)."""
    out = np.empty(real.shape, dtypes.complex_dtype(real.dtype))
    out.real, out.imag = real, imag
    return out


define_op(
    "complex", "(lhs: T, rhs: T) -> (result: U)",
    elementwise=True, stablehlo="stablehlo.complex", linear=(0, 1), complex=True,
    infer=_infer_complex, reference=_complex,
    summary="The complex number lhs + i rhs of two f32 (complex64) or two f64 (complex128) operands.",
    description="Each part is stored as it is, so infinities and NaNs stay in their own part.",
)


def _require_complex(op: str, x: TensorSpec) -> None:
    if not dtypes.is_complex(x.dtype):
        raise op_type_error(op, f"operand must have complex element type, got {x.dtype}")


def _define_part(name: str, fn: np.ufunc, summary: str) -> None:
    def infer(x: TensorSpec) -> TensorSpec:
        _require_complex(name, x)
        return TensorSpec(x.shape, dtypes.real_dtype(x.dtype))

    define_op(name, "(operand: T) -> (result: U)", infer=infer,
              reference=lambda x: np.ascontiguousarray(fn(x)), summary=summary,
              elementwise=True, stablehlo=f"stablehlo.{name}", linear=(0,), complex=True)


_define_part("real", np.real, "The real part of a complex operand, in its parts' float type.")
_define_part("imag", np.imag, "The imaginary part of a complex operand, in its parts' float type.")


def _infer_conj(x: TensorSpec) -> TensorSpec:
    _require_complex("conj", x)
    return x


define_op("conj", "(operand: T) -> (result: T)", infer=_infer_conj, reference=np.conjugate,
          summary="The complex conjugate real - i imag.", elementwise=True, linear=(0,), complex=True)

