"""stablehlo.fft -> mlax.lax.fft: the kind (``#stablehlo<fft_type RFFT>``) and lengths as they are,
the inverse of mlax's lowering (passes/lower_to_stablehlo/fft.py)."""

from __future__ import annotations

from typing import Any

from mlir import ir

import mlax.lax as lax
from mlax.import_stablehlo.core import Entry, Importer, enum, ints

CONVERTERS: dict[str, Entry] = {}


def fft(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    return [lax.fft(args[0], enum(op, "fft_type"), ints(op, "fft_length"))]


CONVERTERS.update({"stablehlo.fft": Entry(fft, "mlax.fft")})
