"""Rules for complex, real, imag and conj: StableHLO's complex/real/imag, and conj as JAX lowers
it, `complex(real(x), negate(imag(x)))`."""

from __future__ import annotations

from mlir import ir

from mlax.passes.lower_to_stablehlo.common import Rule, element_type, value, with_element


def conjugate(x: ir.Value) -> ir.Value:
    """The complex conjugate of ``x``."""
    part = with_element(x, ir.ComplexType(element_type(x)).element_type)
    imag = value("negate", [value("imag", [x], part)], part)
    return value("complex", [value("real", [x], part), imag], x.type)


def _conj(op: ir.Operation) -> ir.Value:
    return conjugate(op.operands[0])


# complex, real and imag are renamings (their ``stablehlo`` traits; renamings.py).
RULES: dict[str, Rule] = {"conj": _conj}
