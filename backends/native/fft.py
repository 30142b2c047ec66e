"""The FFT library the CPU backend calls: MKL's DFTI, from the `mkl` wheel's libmkl_rt.

`fft_symbols()` maps the symbols `mlax-lower-to-linalg` emits for `mlax.fft`
(passes/lower_to_linalg/fft.py: `mlax_dfti_create`, ...) to the addresses of DftiCreateDescriptor,
DftiSetValue, DftiCommitDescriptor, DftiComputeForward/Backward and DftiFreeDescriptor (empty when
the library is missing: linking a program that calls one then names the missing symbol). The
lowering needs no library, and the backend loads MKL only for programs with an fft
(`calls_fft`). MKL threads with the libiomp5 mlax's own parallel loops use (backends/cpu/executable.py).
Measured against numpy.fft (pocketfft) and XLA in docs/fft.md: 4-9x faster than numpy.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from pathlib import Path

from mlir import ir

from mlax.backends.native.blas import symbol_addresses
from mlax.passes.walk import nested_ops

# IR symbol -> the library's export.
SYMBOLS = {
    "mlax_dfti_create": "DftiCreateDescriptor",
    "mlax_dfti_set": "DftiSetValue",
    "mlax_dfti_commit": "DftiCommitDescriptor",
    "mlax_dfti_forward": "DftiComputeForward",
    "mlax_dfti_backward": "DftiComputeBackward",
    "mlax_dfti_free": "DftiFreeDescriptor",
}


@functools.cache
def mkl() -> ctypes.CDLL | None:
    """libmkl_rt (MKL's single dynamic library), loaded once per process; None when absent."""
    for path in sorted((Path(sys.prefix) / "lib").glob("libmkl_rt.so*")):
        library = ctypes.CDLL(str(path))
        if all(hasattr(library, name) for name in SYMBOLS.values()):
            return library
    return None


@functools.cache
def fft_symbols() -> dict[str, int]:
    """{IR symbol: address} of the DFTI functions compiled ffts call."""
    return symbol_addresses(mkl(), SYMBOLS)


def calls_fft(module: ir.Module) -> bool:
    """Whether ``module`` has an fft, or (a module already lowered) declares a DFTI function."""
    return any(op.name == "mlax.fft"
               or (op.name in ("llvm.func", "func.func")
                   and ir.StringAttr(op.attributes["sym_name"]).value in SYMBOLS)
               for op in nested_ops(module.operation))
