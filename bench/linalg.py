"""Linear-algebra rows: cholesky and solve of 1024x1024 float32 matrices, mlax (native CPU backend,
LAPACK through SciPy's OpenBLAS; and backend="xla") against jax.jit and NumPy, as ratios.

    .venv/bin/python bench/linalg.py [--size 1024] [--repeats 20]

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
from harness import format_seconds, machine_line, median_time  # noqa: E402


def _problems(size: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((size, size))
    spd = (x @ x.T / size + np.eye(size)).astype(np.float32)
    return spd, rng.standard_normal((size, size)).astype(np.float32)


def rows(size: int) -> list[tuple[str, dict[str, Callable[..., Any]], tuple[np.ndarray, ...]]]:
    import jax
    import jax.numpy as jnp

    import mlax
    import mlax.numpy as mnp

    spd, b = _problems(size)
    return [
        (f"cholesky {size}", {
            "mlax": mlax.jit(mnp.linalg.cholesky), "mlax xla": mlax.jit(mnp.linalg.cholesky, backend="xla"),
            "jax": jax.jit(jnp.linalg.cholesky), "numpy": np.linalg.cholesky}, (spd,)),
        (f"solve {size}", {
            "mlax": mlax.jit(mnp.linalg.solve), "mlax xla": mlax.jit(mnp.linalg.solve, backend="xla"),
            "jax": jax.jit(jnp.linalg.solve), "numpy": np.linalg.solve}, (spd, b)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=20)
    options = parser.parse_args()
    print(machine_line())
    for name, systems, args in rows(options.size):
        times = {}
        for system, fn in systems.items():
            expected = np.asarray(systems["jax"](*args))
            np.testing.assert_allclose(np.asarray(fn(*args)), expected, rtol=2e-2, atol=2e-2)
            times[system] = median_time(fn, args, options.repeats)
        cells = ", ".join(f"{system} {format_seconds(t)}" for system, t in times.items())
        print(f"{name}: {cells}; mlax/jax {times['mlax'] / times['jax']:.2f}, "
              f"mlax/numpy {times['mlax'] / times['numpy']:.2f}, "
              f"mlax xla/jax {times['mlax xla'] / times['jax']:.2f}")


if __name__ == "__main__":
    main()
