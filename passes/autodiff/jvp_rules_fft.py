"""JVP rule of fft: linear, so the tangent is the same transform of the operand's tangent
(jax's `ad.deflinear2(fft_p, ...)`)."""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.autodiff.emit import Emitter, MaybeValue

JvpRule = Callable[[Emitter, ir.Operation, list[ir.Value], list[MaybeValue], list[ir.Value]],
                   list[MaybeValue]]


def _fft(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
         outs: list[ir.Value]) -> list[MaybeValue]:
    (tangent,) = tangents
    return [None if tangent is None else e("fft", tangent, **read_attributes(op))]


FFT_JVP_RULES: dict[str, JvpRule] = {"fft": _fft}
