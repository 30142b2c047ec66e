"""The CPU backend's DFTI descriptors: one per call site, made by the first execution and kept in
the code (threads racing on it keep one), freed when the code is unlinked; a descriptor MKL
refuses gives NaN results, as jax's failed factorizations.

Each case runs in a fresh process whose DFTI commit and free are counting stand-ins (the
runtime binds each library symbol once per process), delegating to MKL's own.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from mlax.backends.native.fft import mkl

pytestmark = pytest.mark.skipif(mkl() is None, reason="the mkl wheel is not installed")

_STAND_INS = textwrap.dedent("""
    import ctypes, gc, threading
    import numpy as np
    import mlax, mlax.numpy as mnp
    from mlax.backends.cpu import executable as cpu
    from mlax.backends.native import fft

    real = fft.fft_symbols()
    status = ctypes.CFUNCTYPE(ctypes.c_long, ctypes.c_void_p)
    real_commit, real_free = status(real["mlax_dfti_commit"]), status(real["mlax_dfti_free"])
    counts = {"commit": 0, "free": 0}
    refuse = [False]
    lock = threading.Lock()

    @status
    def commit(handle):
        with lock:
            counts["commit"] += 1
        return 7 if refuse[0] else real_commit(handle)

    @status
    def free(slot):
        with lock:
            counts["free"] += 1
        return real_free(slot)

    address = lambda f: ctypes.cast(f, ctypes.c_void_p).value
    cpu.fft_symbols = lambda: {**real, "mlax_dfti_commit": address(commit), "mlax_dfti_free": address(free)}
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((3, 64)) + 1j * rng.standard_normal((3, 64))).astype(np.complex64)

    def unlink():
        mlax.clear_caches()
        gc.collect()
""")


def _run(body: str) -> None:
    done = subprocess.run([sys.executable, "-c", _STAND_INS + textwrap.dedent(body)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def test_one_descriptor_per_call_site_freed_with_the_code() -> None:
    _run("""
        f = mlax.jit(lambda v: (mnp.fft.fft(v), mnp.fft.irfft2(v)))
        for _ in range(3):
            spectrum, real_part = f(x)
            np.testing.assert_allclose(spectrum, np.fft.fft(x), rtol=1e-4, atol=1e-4)
            np.testing.assert_allclose(real_part, np.fft.irfft2(x), rtol=1e-4, atol=1e-5)
        # fft: one descriptor; irfft2: the leading axis's and the last axis's.
        assert counts == {"commit": 3, "free": 0}, counts
        del f
        unlink()
        assert counts == {"commit": 3, "free": 3}, counts
    """)


def test_threads_racing_on_the_first_execution_keep_one() -> None:
    _run("""
        f = mlax.jit(mnp.fft.fft)
        f.lower(x).compile()
        start, results = threading.Barrier(8), [None] * 8

        def call(i):
            start.wait()
            results[i] = np.asarray(f(x))

        threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for r in results:
            np.testing.assert_allclose(r, np.fft.fft(x), rtol=1e-4, atol=1e-4)
        made = counts["commit"]
        assert counts["free"] == made - 1, counts  # the losers freed theirs
        f(x)
        assert counts["commit"] == made, counts
        del f
        unlink()
        assert counts["free"] == made, counts
    """)


def test_a_refused_descriptor_gives_nans_and_is_retried() -> None:
    _run("""
        refuse[0] = True
        f = mlax.jit(lambda v: mnp.fft.fft(v) * 2)
        assert np.isnan(np.asarray(f(x))).all()
        assert np.isnan(np.asarray(f(x))).all()
        assert counts == {"commit": 2, "free": 2}, counts  # nothing kept: each execution tries again
        refuse[0] = False
        np.testing.assert_allclose(f(x), 2 * np.fft.fft(x), rtol=1e-4, atol=1e-4)
        del f
        unlink()
        assert counts == {"commit": 3, "free": 3}, counts
    """)
