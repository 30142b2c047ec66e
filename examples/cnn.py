"""A small CNN trained with mlax: conv -> relu -> max pool (`lax.reduce_window`) -> conv ->
relu -> average pool -> dense, under `mlax.jit(mlax.value_and_grad)`.

The task: tell apart 12x12 images of horizontal and vertical bars (a random bar position per
image, noise added), with a softmax cross-entropy over the two classes. Data come from a
seeded NumPy RandomState and the initial weights from `mlax.random` (threefry keys, the same
numbers as `jax.random`); the SGD update is done in NumPy, so with `--check` the same code
trained through JAX must give the same loss curve to float32 rounding.

    .venv/bin/python examples/cnn.py [--steps N] [--check]

The model is written once for either library (``lib`` is ``mlax`` or ``jax``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import training

Params = training.Params

SIZE, BATCH, CLASSES = 12, 16, 2


def init_params(lib: Any, seed: int = 0, channels: tuple[int, int] = (4, 8)) -> Params:
    """He-normal kernels (OIHW) and a dense readout, drawn from ``lib.random`` with one key."""
    keys = lib.random.split(lib.random.key(seed), 3)
    c1, c2 = channels
    pooled = (SIZE // 2 // 2) ** 2 * c2

    def normal(key: Any, shape: tuple[int, ...], fan_in: int) -> np.ndarray:
        return np.asarray(lib.random.normal(key, shape) * np.float32(np.sqrt(2.0 / fan_in)), np.float32)

    return {"k1": normal(keys[0], (c1, 1, 3, 3), 9), "b1": np.zeros(c1, np.float32),
            "k2": normal(keys[1], (c2, c1, 3, 3), 9 * c1), "b2": np.zeros(c2, np.float32),
            "w": normal(keys[2], (pooled, CLASSES), pooled), "b": np.zeros(CLASSES, np.float32)}


def make_data(rng: np.random.RandomState, batch: int = BATCH) -> tuple[np.ndarray, np.ndarray]:
    """NCHW images of one bar each, and labels (0: horizontal, 1: vertical) as one-hot rows."""
    labels = rng.randint(0, CLASSES, size=batch)
    images = 0.3 * rng.standard_normal((batch, 1, SIZE, SIZE))
    for i, (label, where) in enumerate(zip(labels, rng.randint(1, SIZE - 1, size=batch), strict=True)):
        if label == 0:
            images[i, 0, where, :] += 1.0
        else:
            images[i, 0, :, where] += 1.0
    return images.astype(np.float32), np.eye(CLASSES, dtype=np.float32)[labels]


def loss_fn(lib: Any) -> Any:
    """The mean softmax cross-entropy of the CNN's logits, written with ``lib``."""
    lax, np_ = lib.lax, lib.numpy

    def conv_relu(x: Any, kernel: Any, bias: Any) -> Any:
        y = lax.conv_general_dilated(x, kernel, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))
        return np_.maximum(y + bias[None, :, None, None], 0.0)

    def max_pool(x: Any) -> Any:
        return lax.reduce_window(x, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def avg_pool(x: Any) -> Any:
        return lax.reduce_window(x, 0.0, lax.add, (1, 1, 2, 2), (1, 1, 2, 2), "VALID") / 4.0

    def loss(params: Params, images: Any, onehot: Any) -> Any:
        x = max_pool(conv_relu(images, params["k1"], params["b1"]))
        x = avg_pool(conv_relu(x, params["k2"], params["b2"]))
        logits = x.reshape(x.shape[0], -1) @ params["w"] + params["b"]
        shifted = logits - np_.max(logits, axis=1, keepdims=True)
        log_probs = shifted - np_.log(np_.sum(np_.exp(shifted), axis=1, keepdims=True))
        return -np_.mean(np_.sum(onehot * log_probs, axis=1))

    return loss


def train(lib: Any, params: Params, *data: np.ndarray, steps: int,
          lr: float = 0.1) -> tuple[Params, list[float]]:
    """``steps`` of SGD on ``lib.jit(lib.value_and_grad(loss))``; returns the params and the losses."""
    return training.train(lib, loss_fn(lib), params, data, steps, lr)


def main() -> None:
    args = training.arguments(__doc__, steps=50)

    import mlax

    params = init_params(mlax)
    images, onehot = make_data(np.random.RandomState(0))
    _, losses = train(mlax, params, images, onehot, steps=args.steps)
    expected = None
    if args.check:
        import jax

        jax_params = init_params(jax)
        for name, value in params.items():  # mlax.random gives jax.random's numbers
            np.testing.assert_allclose(value, jax_params[name], rtol=1e-6, atol=1e-7, err_msg=name)
        _, expected = train(jax, params, images, onehot, steps=args.steps)
    training.report(losses, expected)


if __name__ == "__main__":
    main()
