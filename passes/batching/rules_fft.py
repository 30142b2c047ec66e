"""Batch rule of fft (batch dimension at 0): the op transforms trailing axes and treats the
leading ones as a batch, so the batched op is the same op (jax's `_fft_batching_rule`)."""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.autodiff.emit import Emitter

BatchRule = Callable[[Emitter, ir.Operation, list[ir.Value], list[bool], int], list[ir.Value]]


def _fft(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
         size: int) -> list[ir.Value]:
    return e.many("fft", *operands, **read_attributes(op))


FFT_BATCH_RULES: dict[str, BatchRule] = {"fft": _fft}
