"""The LAPACK the CPU backend calls for decompositions: the OpenBLAS SciPy ships (LP64), through
its C interfaces (LAPACKE for potrf/getrf, CBLAS for trsm: scalars by value, so compiled code
calls them without spilling arguments to memory).

It is the library jax's own LAPACK custom calls run (jaxlib binds its kernels to
scipy.linalg.cython_lapack), and the interpreter's reference (scipy.linalg.lapack), so all three
roads compute with the same routines. NumPy's OpenBLAS (backends/native/blas.py, ILP64) is as fast
(dpotrf 1024: 43 ms both, spotrf 32 ms, with the same thread settings; docs/linalg.md).

As for NumPy's copy (backends/native/blas.py), its idle threads are made to sleep at once: with
OpenBLAS's default they spin ~0.1 s after each call and take the cores from the OpenMP loops
that follow (the pivots and clean-up of `lu`) and from the next program: lu 1024 took 287 ms
instead of 22, solve 248 instead of 56, on 2 cores.

`lapack_symbols()` maps the symbols `mlax-lower-to-linalg` emits (`SYMBOLS`) to addresses (empty
when the library is missing); the lowering itself needs no library, and the CPU backend loads it
only for programs with a decomposition (`calls_lapack`): SciPy and its OpenBLAS cost time to load.
"""

from __future__ import annotations

import ctypes
import functools
from pathlib import Path

from mlir import ir

from mlax.backends.native.blas import load_openblas, symbol_addresses
from mlax.passes.walk import nested_ops

# IR symbol -> the library's export, for each routine and the element types it is called on
# (s, d: f32, f64; c, z: complex64, complex128).
_ROUTINES = (("potrf", "LAPACKE", "sdcz"), ("getrf", "LAPACKE", "sdcz"), ("trsm", "cblas", "sdcz"),
             ("geqrf", "LAPACKE", "sdcz"), ("orgqr", "LAPACKE", "sd"), ("ungqr", "LAPACKE", "cz"),
             ("syevd", "LAPACKE", "sd"), ("heevd", "LAPACKE", "cz"), ("gesdd", "LAPACKE", "sdcz"),
             ("geev", "LAPACKE", "sdcz"), ("gehrd", "LAPACKE", "sdcz"), ("sytrd", "LAPACKE", "sd"),
             ("hetrd", "LAPACKE", "cz"), ("gees", "LAPACKE", "sdcz"),
             ("geqp3", "LAPACKE", "sdcz"), ("ormqr", "LAPACKE", "sd"), ("unmqr", "LAPACKE", "cz"),
             ("lange", "LAPACKE", "sdcz"))
SYMBOLS = {f"mlax_{t}{routine}": f"scipy_{interface}_{t}{routine}"
           for routine, interface, types in _ROUTINES for t in types}


@functools.cache
def scipy_openblas() -> ctypes.CDLL | None:
    """SciPy's bundled OpenBLAS, loaded once per process (None when absent), with LAPACKE's NaN
    check off: with it on, a routine given a NaN returns at once, leaving its outputs (a
    factor, getrf's pivots) unwritten; jaxlib calls LAPACK itself, which lets NaN propagate."""
    import scipy

    library = load_openblas(Path(scipy.__file__).parent.parent / "scipy.libs", "libscipy_openblas*.so*",
                            SYMBOLS.values())
    if library is not None and hasattr(library, "scipy_LAPACKE_set_nancheck"):
        library.scipy_LAPACKE_set_nancheck(0)
    return library


@functools.cache
def lapack_symbols() -> dict[str, int]:
    """{IR symbol: address} of the LAPACK/CBLAS routines compiled decompositions call."""
    return symbol_addresses(scipy_openblas(), SYMBOLS)


DECOMPOSITIONS = frozenset({"mlax.cholesky", "mlax.triangular_solve", "mlax.lu", "mlax.qr", "mlax.eigh",
                            "mlax.svd", "mlax.eig", "mlax.geqrf", "mlax.geqp3", "mlax.householder_product",
                            "mlax.ormqr",
                            "mlax.hessenberg", "mlax.tridiagonal", "mlax.schur"})


def calls_lapack(module: ir.Module) -> bool:
    """Whether ``module`` has an op the CPU lowering turns into a LAPACK call, or (a module
    already lowered) declares one of the routines."""
    return any(op.name in DECOMPOSITIONS
               or (op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value in SYMBOLS)
               for op in nested_ops(module.operation))
