"""Rules for complex, real, imag and conj: one linalg.generic of the `complex` dialect op each.

Complex values stay `complex<fN>` through the linalg stage; the CPU pipeline expands the complex
dialect into arith/math (`convert-complex-to-standard`) and the rest into LLVM structs of two
floats (`convert-complex-to-llvm`), the layout NumPy's complex64/complex128 buffers have.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import complex as cplx

from mlax.passes.lower_to_linalg.common import Rule, element_type, elementwise


def _complex(op: ir.Operation) -> ir.Value:
    t = element_type(op.results[0])
    return elementwise(lambda re, im: cplx.create_(t, re, im))(op)


RULES: dict[str, Rule] = {
    "complex": _complex,
    "real": elementwise(cplx.re),
    "imag": elementwise(cplx.im),
    "conj": elementwise(cplx.conj),
}
