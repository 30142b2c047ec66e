"""The BLAS the CPU backend calls for matmuls: the OpenBLAS that NumPy ships (ILP64 cblas).

`gemm_symbols()` maps the symbols `mlax-linalg-to-blas` emits to function addresses, or is
empty when no such library is found (the pipeline then keeps matmuls as loops).
"""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path

import numpy as np

# The symbols `mlax-linalg-to-blas` calls, by element type (defined here, where the CPU
# runtime binds them, so that the runtime need not import the pass).
GEMM_SYMBOLS = {"f32": "mlax_sgemm", "f64": "mlax_dgemm"}
_EXPORTS = {"f32": "scipy_cblas_sgemm64_", "f64": "scipy_cblas_dgemm64_"}


@functools.cache
def gemm_symbols() -> dict[str, int]:
    """{IR symbol: address} of the gemm routines, loaded once per process."""
    libs = Path(np.__file__).parent.parent / "numpy.libs"
    for path in sorted(libs.glob("libscipy_openblas64_*.so*")):
        library = ctypes.CDLL(str(path))
        try:
            return {GEMM_SYMBOLS[t]: ctypes.cast(getattr(library, name), ctypes.c_void_p).value
                    for t, name in _EXPORTS.items()}
        except AttributeError:
            continue
    return {}
