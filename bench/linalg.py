"""Linear-algebra rows: cholesky and solve of 1024x1024 float32 matrices, svd, eigh and qr of
512x512 ones, mlax (native CPU backend, LAPACK through SciPy's OpenBLAS; and backend="xla")
against jax.jit and NumPy, as ratios.

    .venv/bin/python bench/linalg.py [--size 1024] [--spectral-size 512] [--repeats 20]

Each row times one jitted call until its result is ready (median of the repeats after a warm-up
call); the ratios are mlax's time over jax's and over NumPy's (below 1: mlax is faster). The
values are checked against jax once (for the spectral rows, the part every LAPACK gives alike:
singular values, eigenvalues, |R|). Not part of the tests.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import library_row, machine_line  # noqa: E402


def _problems(size: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((size, size))
    spd = (x @ x.T / size + np.eye(size)).astype(np.float32)
    return spd, rng.standard_normal((size, size)).astype(np.float32)


Row = tuple[str, dict[str, Callable[..., Any]], tuple[np.ndarray, ...], Callable[[Any], Any]]


def _systems(name: str) -> dict[str, Callable[..., Any]]:
    """jnp.linalg.<name> jitted by mlax (both backends) and jax, and NumPy's."""
    import jax
    import jax.numpy as jnp

    import mlax
    import mlax.numpy as mnp

    fn = getattr(mnp.linalg, name)
    return {"mlax": mlax.jit(fn), "mlax xla": mlax.jit(fn, backend="xla"),
            "jax": jax.jit(getattr(jnp.linalg, name)), "numpy": getattr(np.linalg, name)}


def rows(size: int, spectral_size: int) -> list[Row]:
    spd, b = _problems(size)
    small, _ = _problems(spectral_size)
    general = np.random.default_rng(1).standard_normal((spectral_size, spectral_size)).astype(np.float32)
    same = lambda out: out  # noqa: E731
    return [
        (f"cholesky {size}", _systems("cholesky"), (spd,), same),
        (f"solve {size}", _systems("solve"), (spd, b), same),
        (f"svd {spectral_size}", _systems("svd"), (general,), lambda out: out[1]),
        (f"eigh {spectral_size}", _systems("eigh"), (small,), lambda out: out[0]),
        (f"qr {spectral_size}", _systems("qr"), (general,), lambda out: np.abs(np.asarray(out[1]))),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--spectral-size", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=20)
    options = parser.parse_args()
    print(machine_line())
    for name, systems, args, invariant in rows(options.size, options.spectral_size):
        def check(got: Any, expected: Any, invariant: Callable[[Any], Any] = invariant) -> None:
            np.testing.assert_allclose(np.asarray(invariant(got)), np.asarray(invariant(expected)),
                                       rtol=2e-2, atol=2e-2)

        print(library_row(name, systems, args, options.repeats, check))

if __name__ == "__main__":
    main()
