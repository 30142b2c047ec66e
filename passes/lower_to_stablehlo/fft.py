"""Rule for fft: `stablehlo.fft` with the op's kind and lengths, as jax lowers `lax.fft`
(`fft_type = #stablehlo<fft_type RFFT>`, `fft_length = array<i64: ...>`)."""

from __future__ import annotations

from mlir import ir

from mlax.passes.lower_to_stablehlo.common import Rule, dims, enum, value


def _fft(op: ir.Operation) -> ir.Value:
    kind = ir.StringAttr(op.attributes["fft_type"]).value
    lengths = list(ir.DenseI64ArrayAttr(op.attributes["fft_lengths"]))
    return value("fft", list(op.operands), op.results[0].type,
                 {"fft_type": enum("fft_type", kind), "fft_length": dims(lengths)})


RULES: dict[str, Rule] = {"fft": _fft}
