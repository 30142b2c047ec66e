"""An Elman RNN trained with mlax: `mlax.lax.scan` over 100 time steps, `mlax.jit(mlax.value_and_grad)`.

The task: from a noisy sine wave (random frequency and phase per sequence), predict the clean
wave's next value at every step. Data and initial weights come from a seeded NumPy
RandomState; the SGD update is done in NumPy, so with `--check` the same code trained through
JAX must give the same loss curve to float32 rounding.

    .venv/bin/python examples/rnn.py [--steps N] [--check]

The model is written once for either library (``lib`` is ``mlax`` or ``jax``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import training

Params = training.Params

SEQUENCE, HIDDEN, BATCH, INPUTS = 100, 32, 8, 1


def init_params(rng: np.random.RandomState, inputs: int = INPUTS, hidden: int = HIDDEN) -> Params:
    """Scaled normal weights: ``wh`` below 1 so the state neither explodes nor dies, a small readout."""
    def normal(*shape: int, scale: float) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    return {"wx": normal(inputs, hidden, scale=1.0 / np.sqrt(inputs)),
            "wh": normal(hidden, hidden, scale=0.9 / np.sqrt(hidden)),
            "b": np.zeros(hidden, np.float32),
            "wo": normal(hidden, 1, scale=0.1 / np.sqrt(hidden)),
            "bo": np.zeros(1, np.float32)}


def make_data(rng: np.random.RandomState, batch: int = BATCH, sequence: int = SEQUENCE,
              inputs: int = INPUTS) -> tuple[np.ndarray, np.ndarray]:
    """Time-major ``xs`` (sequence, batch, inputs) and targets ``ys`` (sequence, batch, 1)."""
    t = np.arange(sequence + 1, dtype=np.float64)[:, None]
    freq, phase = rng.uniform(0.05, 0.3, size=(1, batch)), rng.uniform(0, 2 * np.pi, size=(1, batch))
    clean = np.sin(freq * t + phase)
    noisy = clean[:-1, :, None] + 0.1 * rng.standard_normal((sequence, batch, inputs))
    return noisy.astype(np.float32), clean[1:, :, None].astype(np.float32)


def loss_fn(lib: Any) -> Any:
    """The mean squared error of the RNN's readout over every step, written with ``lib``."""
    np_ = lib.numpy

    def loss(params: Params, xs: Any, ys: Any) -> Any:
        def step(h: Any, x: Any) -> tuple[Any, Any]:
            h = np_.tanh(h @ params["wh"] + x @ params["wx"] + params["b"])
            return h, h

        h0 = np_.zeros((xs.shape[1], params["wh"].shape[0]), np.float32)
        _, hs = lib.lax.scan(step, h0, xs)
        return np_.mean((hs @ params["wo"] + params["bo"] - ys) ** 2)

    return loss


def train(lib: Any, params: Params, *data: np.ndarray, steps: int,
          lr: float = 0.1) -> tuple[Params, list[float]]:
    """``steps`` of SGD on ``lib.jit(lib.value_and_grad(loss))``; returns the params and the losses."""
    return training.train(lib, loss_fn(lib), params, data, steps, lr)


def main() -> None:
    args = training.arguments(__doc__, steps=100)

    import mlax

    rng = np.random.RandomState(0)
    params, (xs, ys) = init_params(rng), make_data(rng)
    _, losses = train(mlax, params, xs, ys, steps=args.steps)
    expected = None
    if args.check:
        import jax

        _, expected = train(jax, params, xs, ys, steps=args.steps)
    training.report(losses, expected)


if __name__ == "__main__":
    main()
