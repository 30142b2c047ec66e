"""What the examples share: SGD on ``lib.jit(lib.value_and_grad(loss))`` for ``lib`` = mlax or
jax, and the comparison of two loss curves."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

Params = dict[str, np.ndarray]


def arguments(doc: str, steps: int) -> argparse.Namespace:
    """An example's command line: ``--steps N``, ``--check`` (also train through JAX) and
    ``--backend`` (mlax's jit backend: cpu, xla or interpreter)."""
    import mlax

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--steps", type=int, default=steps, help="SGD steps")
    parser.add_argument("--check", action="store_true", help="also train through JAX and compare")
    parser.add_argument("--backend", default=mlax.config.backend,
                        help="mlax's jit backend (cpu, xla, interpreter)")
    args = parser.parse_args()
    mlax.config.update("backend", args.backend)
    return args


def train(lib: Any, loss: Any, params: Params, data: tuple[np.ndarray, ...], steps: int,
          lr: float) -> tuple[Params, list[float]]:
    """``steps`` of SGD (the update in NumPy); returns the params and the loss before each step."""
    step = lib.jit(lib.value_and_grad(loss))
    lr32, losses = np.float32(lr), []
    for _ in range(steps):
        value, grads = step(params, *data)
        losses.append(float(value))
        params = {k: (v - lr32 * np.asarray(grads[k])).astype(np.float32) for k, v in params.items()}
    return params, losses


def report(losses: list[float], expected: list[float] | None = None, every: int = 10) -> None:
    """Print the loss curve (next to jax's when given) and check the two agree to rtol 1e-4."""
    for i in range(0, len(losses), every):
        print(f"step {i:4d}  loss {losses[i]:.6f}" + (f"  jax {expected[i]:.6f}" if expected else ""))
    print(f"final loss {losses[-1]:.6f} (from {losses[0]:.6f})")
    if expected is not None:
        np.testing.assert_allclose(losses, expected, rtol=1e-4)
        worst = float(np.max(np.abs(np.subtract(losses, expected)) / np.abs(expected)))
        print(f"mlax and jax losses agree over {len(losses)} steps: max relative difference {worst:.1e} "
              "(tolerance 1e-4)")
