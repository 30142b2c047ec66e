"""TRANSPOSE rules of complex, real, imag and conj, as JAX's (lax.py): transposes over the reals,
without conjugating, so `grad` of a real-valued function of complex inputs gives JAX's numbers.

real: ct -> complex(ct, 0); imag: ct -> complex(0, -ct); complex: ct -> (real(ct), -imag(ct));
conj: ct -> conj(ct).
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from mlax.passes.autodiff.emit import Emitter, MaybeValue

Rule = Callable[[Emitter, ir.Operation, ir.Value, list[MaybeValue]], list[MaybeValue]]


def _real(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    return [e("complex", ct, e.zeros(ct))]


def _imag(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    return [e("complex", e.zeros(ct), e("neg", ct))]


def _complex(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    real, imag = operands
    return [e("real", ct) if real is None else None, e("neg", e("imag", ct)) if imag is None else None]


def _conj(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    return [e("conj", ct)]


# Rules of one cotangent: transpose_rules.py adapts them to its table's signature.
COMPLEX_TRANSPOSE_RULES: dict[str, Rule] = {"real": _real, "imag": _imag, "complex": _complex, "conj": _conj}
