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
sleep sooner too (as with ``KMP_BLOCKTIME=0`` for mlax's OpenMP threads, backends/cpu/executable.py).
"""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

# The symbols `mlax-linalg-to-blas` calls, by element type (defined here, where the CPU
# runtime binds them, so that the runtime need not import the pass): one gemm on OpenBLAS's
# threads, and a strided batch of gemms whose threads each take whole gemms (a batch of one runs
# on the calling thread alone).
GEMM_SYMBOLS = {"f32": "mlax_sgemm", "f64": "mlax_dgemm", "complex<f32>": "mlax_cgemm",
                "complex<f64>": "mlax_zgemm"}
BATCH_SYMBOLS = {t: f"{symbol}_batch" for t, symbol in GEMM_SYMBOLS.items()}
_EXPORTS = {"f32": "scipy_cblas_sgemm64_", "f64": "scipy_cblas_dgemm64_",
            "complex<f32>": "scipy_cblas_cgemm64_", "complex<f64>": "scipy_cblas_zgemm64_"}
_BATCH_EXPORTS = {t: f"cblas_{symbol.removeprefix('mlax_')}_batch_strided"
                  for t, symbol in GEMM_SYMBOLS.items()}


def load_openblas(libs: Path, pattern: str, exports: Iterable[str]) -> ctypes.CDLL | None:
    """The first OpenBLAS in ``libs`` matching ``pattern`` that has every export (None if none),
    its idle threads made to sleep at once (module docstring)."""
    for path in sorted(libs.glob(pattern)):
        library = ctypes.CDLL(str(path))
        if all(hasattr(library, name) for name in exports):
            short_thread_timeout(library)
            return library
    return None


def symbol_addresses(library: ctypes.CDLL | None, exports: dict[str, str]) -> dict[str, int]:
    """{IR symbol: address} for ``exports`` (IR symbol -> the library's name); empty without the
    library, so that linking a program that calls one names the missing symbol."""
    if library is None:
        return {}
    return {symbol: ctypes.cast(getattr(library, name), ctypes.c_void_p).value
            for symbol, name in exports.items()}


@functools.cache
def openblas() -> ctypes.CDLL | None:
    """NumPy's OpenBLAS with the gemm routines, loaded once per process."""
    return load_openblas(Path(np.__file__).parent.parent / "numpy.libs", "libscipy_openblas64_*.so*",
                         [*_EXPORTS.values(), *_BATCH_EXPORTS.values()])


@functools.cache
def gemm_symbols() -> dict[str, int]:
    """{IR symbol: address} of the gemm routines (empty without the library)."""
    return symbol_addresses(openblas(), {**{GEMM_SYMBOLS[t]: name for t, name in _EXPORTS.items()},
                                         **{BATCH_SYMBOLS[t]: name for t, name in _BATCH_EXPORTS.items()}})


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
