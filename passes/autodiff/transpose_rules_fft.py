"""TRANSPOSE rule of fft, as jax's `_fft_transpose_rule` (jax/_src/lax/fft.py).

The transpose is over the reals without conjugation (JAX's convention, docs/complex.md). The
DFT matrix is symmetric, so FFT and IFFT are their own transposes (the same kind, the 1/N of
IFFT included). RFFT keeps one of each conjugate pair of frequencies: its transpose is
`N * IRFFT(conj(ct) / mask)`, the mask 1 at the frequencies without a partner (0, and n/2 for
even n) and 2 elsewhere; IRFFT's is `conj(mask * RFFT(ct) / N)`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.autodiff.emit import Emitter, MaybeValue, spec

Rule = Callable[[Emitter, ir.Operation, ir.Value, list[MaybeValue]], list[MaybeValue]]


def _weighted(e: Emitter, x: ir.Value, n: int, unpaired: float, paired: float) -> ir.Value:
    """``x`` (complex, its last axis the n // 2 + 1 frequencies of a length-n transform) times
    ``unpaired`` at the frequencies without a conjugate partner and ``paired`` at the others."""
    shape = spec(x).shape
    weights = np.full(shape[-1], paired)
    weights[0] = unpaired
    if n % 2 == 0:
        weights[-1] = unpaired
    constant = e("constant", value=weights.astype(spec(x).dtype))
    if len(shape) > 1:
        constant = e("broadcast_in_dim", constant, shape=shape, broadcast_dimensions=(len(shape) - 1,))
    return e("mul", x, constant)


def _fft(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    attrs = read_attributes(op)
    kind, lengths = attrs["fft_type"], tuple(attrs["fft_lengths"])
    if kind in ("FFT", "IFFT"):
        return [e("fft", ct, **attrs)]
    size = math.prod(lengths)
    if kind == "RFFT":  # 1 / mask is 1 or 1/2: exact, as jax's division
        halved = _weighted(e, e("conj", ct), lengths[-1], 1.0, 0.5)
        out = e("fft", halved, fft_type="IRFFT", fft_lengths=lengths)
        return [e("mul", out, e.full(out, float(size)))]
    spectrum = e("fft", ct, fft_type="RFFT", fft_lengths=lengths)
    return [e("conj", _weighted(e, spectrum, lengths[-1], 1 / size, 2 / size))]


# Rules of one cotangent: transpose_rules.py adapts them to its table's signature.
FFT_TRANSPOSE_RULES: dict[str, Rule] = {"fft": _fft}
