"""The BLAS the CPU backend calls for matmuls: the OpenBLAS that NumPy ships (ILP64 cblas).

`gemm_symbols()` maps the symbols `mlax-linalg-to-blas` emits to function addresses, or is
empty when no such library is found (the pipeline then keeps matmuls as loops).

OpenBLAS's idle threads spin for 2**28 cycles (~0.1 s) after each call before they sleep. A
program alternates gemms with its own OpenMP loops, so on a machine where another process holds
a core those spinning threads took the cores from the loops and from the next gemm (the
16-layer MLP train step ran at 2x JAX's time with one core busy, 1.4x once they sleep).
Unless the user set ``OPENBLAS_THREAD_TIMEOUT``, the first load sets it to 4 (2**4 cycles, the
least OpenBLAS takes), has OpenBLAS read it again and stops its thread pool, which the next
threaded call restarts with the short timeout. NumPy shares this OpenBLAS, so its threads
sleep sooner too (as with ``KMP_BLOCKTIME=0`` for mlax's OpenMP threads, runtime/cpu.py).
"""

from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

import numpy as np

# The symbols `mlax-linalg-to-blas` calls, by element type (defined here, where the CPU
# runtime binds them, so that the runtime need not import the pass).
GEMM_SYMBOLS = {"f32": "mlax_sgemm", "f64": "mlax_dgemm"}
_EXPORTS = {"f32": "scipy_cblas_sgemm64_", "f64": "scipy_cblas_dgemm64_"}


@functools.cache
def openblas() -> ctypes.CDLL | None:
    """NumPy's OpenBLAS with the gemm routines, loaded once per process (None if absent); its
    idle threads made to sleep at once (module docstring)."""
    libs = Path(np.__file__).parent.parent / "numpy.libs"
    for path in sorted(libs.glob("libscipy_openblas64_*.so*")):
        library = ctypes.CDLL(str(path))
        if all(hasattr(library, name) for name in _EXPORTS.values()):
            short_thread_timeout(library)
            return library
    return None


@functools.cache
def gemm_symbols() -> dict[str, int]:
    """{IR symbol: address} of the gemm routines (empty without the library)."""
    library = openblas()
    if library is None:
        return {}
    return {GEMM_SYMBOLS[t]: ctypes.cast(getattr(library, name), ctypes.c_void_p).value
            for t, name in _EXPORTS.items()}


THREAD_TIMEOUT = "4"


def short_thread_timeout(library: ctypes.CDLL) -> None:
    """Have OpenBLAS's idle threads sleep at once (module docstring); the user's setting wins."""
    if "OPENBLAS_THREAD_TIMEOUT" in os.environ or not all(
            hasattr(library, name) for name in ("openblas_read_env", "blas_thread_shutdown_")):
        return
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = THREAD_TIMEOUT
    try:
        library.openblas_read_env()
    finally:
        del os.environ["OPENBLAS_THREAD_TIMEOUT"]  # child processes start as they would have
    library.blas_thread_shutdown_()
