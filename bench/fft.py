"""FFT rows: fft of 1M complex64 points and fft2 of a 1024x1024 complex64 array, mlax (native CPU
backend, MKL's DFTI; and backend="xla") against jax.jit (XLA's CPU FFT) and numpy.fft (pocketfft),
as ratios.

    .venv/bin/python bench/fft.py [--points 1048576] [--side 1024] [--repeats 20]

Each row times one jitted call until its result is ready (median of the repeats after a warm-up
call); the ratios are mlax's time over jax's and over NumPy's (below 1: mlax is faster). The
values are checked against jax once. Not part of the tests.
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


def _complex(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def rows(points: int, side: int) -> list[tuple[str, dict[str, Callable[..., Any]], tuple[np.ndarray, ...]]]:
    import jax
    import jax.numpy as jnp

    import mlax
    import mlax.numpy as mnp

    rng = np.random.default_rng(0)
    return [
        (f"fft {points}", {
            "mlax": mlax.jit(mnp.fft.fft), "mlax xla": mlax.jit(mnp.fft.fft, backend="xla"),
            "jax": jax.jit(jnp.fft.fft), "numpy": np.fft.fft}, (_complex(rng, (points,)),)),
        (f"fft2 {side}x{side}", {
            "mlax": mlax.jit(mnp.fft.fft2), "mlax xla": mlax.jit(mnp.fft.fft2, backend="xla"),
            "jax": jax.jit(jnp.fft.fft2), "numpy": np.fft.fft2}, (_complex(rng, (side, side)),)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1 << 20)
    parser.add_argument("--side", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=20)
    options = parser.parse_args()
    print(machine_line())
    for name, systems, args in rows(options.points, options.side):
        def check(got: Any, expected: Any) -> None:
            scale = float(np.abs(np.asarray(expected)).max())
            np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=0, atol=1e-5 * scale)

        print(library_row(name, systems, args, options.repeats, check))

if __name__ == "__main__":
    main()
