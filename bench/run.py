"""mlax against jax.jit on the same inputs, in one process: times, ratios, correctness.

    .venv/bin/python bench/run.py [--repeats N] [--loaded]

Each case runs mlax's native CPU backend, mlax on XLA (``backend="xla"``: mlax's StableHLO
compiled by jaxlib's XLA) and JAX in turn (warm-up call first, so compile time is excluded),
takes the median of the repeats, and checks both mlax results against JAX's. The last row is
the first call of a freshly jitted MLP (trace + compile + run), with mlax's compile cache
cleared. ``--loaded`` runs it all beside one spinning process pinned to the last core
(bench/harness.py). Not part of the tests: nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import harness
import jax
import jax.numpy as jnp
import numpy as np

import mlax
import mlax.numpy as mnp
from mlax.backends import registry as backend


@dataclass
class Case:
    name: str
    build: Callable[[Any], Callable[..., Any]]  # numpy module (mlax.numpy or jax.numpy) -> function
    args: tuple[np.ndarray, ...]
    target: float
    rtol: float = 1e-5
    atol: float = 1e-6


_block, _time, _format = harness.block, harness.time_call, harness.format_seconds


def _mlp(np_: Any) -> Callable[..., Any]:
    def forward(x, w1, b1, w2, b2, w3, b3):
        h = np_.tanh(x @ w1 + b1)
        h = np_.tanh(h @ w2 + b2)
        return h @ w3 + b3
    return forward


def _softmax(np_: Any) -> Callable[..., Any]:
    def softmax(x):
        e = np_.exp(x - np_.max(x, axis=1, keepdims=True))
        return e / np_.sum(e, axis=1, keepdims=True)
    return softmax


_RNN, _CNN = harness.load_example("rnn"), harness.load_example("cnn")
_CNN_PARAMS = ("k1", "b1", "k2", "b2", "w", "b")


def _rnn_train_step(np_: Any) -> Callable[..., Any]:
    """value_and_grad of examples/rnn.py's loss; loss and gradients as one vector (one array to check)."""
    lib = jax if np_ is jnp else mlax
    value_and_grad = lib.value_and_grad(_RNN.loss_fn(lib))

    def train_step(xs, ys, wx, wh, b, wo, bo):
        loss, grads = value_and_grad({"wx": wx, "wh": wh, "b": b, "wo": wo, "bo": bo}, xs, ys)
        return np_.concatenate([np_.reshape(loss, (1,)), *(np_.ravel(grads[k]) for k in sorted(grads))])
    return train_step


def _rnn_args() -> tuple[np.ndarray, ...]:
    rng = np.random.RandomState(0)
    params = _RNN.init_params(rng, hidden=64)
    return (*_RNN.make_data(rng, batch=8, sequence=100), *(params[k] for k in ("wx", "wh", "b", "wo", "bo")))


def _cnn_train_step(np_: Any) -> Callable[..., Any]:
    """value_and_grad of examples/cnn.py's loss (convolutions, reduce_window pooling, dense)."""
    lib = jax if np_ is jnp else mlax
    value_and_grad = lib.value_and_grad(_CNN.loss_fn(lib))

    def train_step(images, onehot, *params):
        loss, grads = value_and_grad(dict(zip(_CNN_PARAMS, params, strict=True)), images, onehot)
        return np_.concatenate([np_.reshape(loss, (1,)), *(np_.ravel(grads[k]) for k in sorted(grads))])
    return train_step


def _cnn_args() -> tuple[np.ndarray, ...]:
    params = _CNN.init_params(mlax, channels=(16, 32))
    return (*_CNN.make_data(np.random.RandomState(0), batch=64), *(params[k] for k in _CNN_PARAMS))


def cases(rng: np.random.Generator) -> list[Case]:
    def f32(*shape: int, scale: float = 1.0) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    mlp_args = (f32(256, 784), f32(784, 1024, scale=0.03), f32(1024, scale=0.1), f32(1024, 1024, scale=0.03),
                f32(1024, scale=0.1), f32(1024, 10, scale=0.03), f32(10, scale=0.1))
    return [
        Case("elementwise tanh(x*1.5+0.5)*exp(-x)+1, 4M f32",
             lambda np_: lambda x: np_.tanh(x * 1.5 + 0.5) * np_.exp(-x) + 1, (f32(4 * 1024 * 1024),), 1.0),
        Case("row softmax 4096x1024", _softmax, (f32(4096, 1024),), 1.5),
        *[Case(f"matmul {n}", lambda np_: lambda a, b: a @ b, (f32(n, n), f32(n, n)), 1.2 if n == 1024 else 0,
               rtol=1e-4, atol=1e-3) for n in (256, 1024, 2048)],
        Case("MLP forward 256x784-1024-1024-10, tanh", _mlp, mlp_args, 1.3, rtol=1e-4, atol=1e-4),
        Case("sum over 16M f32", lambda np_: lambda x: np_.sum(x), (f32(16 * 1024 * 1024),), 1.2,
             rtol=1e-4, atol=1e-2),
        Case("tiny call: x*2+1 on 8 f32", lambda np_: lambda x: x * 2 + 1, (f32(8),), 3.0),
        Case("RNN train step: jit(value_and_grad), 100-step scan, hidden 64, batch 8", _rnn_train_step,
             _rnn_args(), 2.0, rtol=1e-4, atol=1e-5),
        Case("CNN train step: jit(value_and_grad), 2 convs 16/32 ch, pools, batch 64 of 12x12",
             _cnn_train_step, _cnn_args(), 0, rtol=1e-4, atol=1e-5),
        Case("sort 1M f32", lambda np_: lambda x: np_.sort(x), (f32(1024 * 1024),), 0),
    ]


BACKENDS = ("cpu", "xla")


def _check(case: Case, name: str, got: Any, expected: np.ndarray) -> str:
    try:
        np.testing.assert_allclose(np.asarray(got), expected, rtol=case.rtol, atol=case.atol)
    except AssertionError as error:
        return f"{name} MISMATCH " + str(error).splitlines()[3].strip()
    return ""


def run_case(case: Case, repeats: int) -> tuple[dict[str, float], float, str]:
    """Median seconds per mlax backend, JAX's, and the check of every backend's result."""
    ours = {b: mlax.jit(case.build(mnp), backend=b) for b in BACKENDS}
    theirs = jax.jit(case.build(jnp))
    expected = np.asarray(_block(theirs(*case.args)))
    problems = [_check(case, b, _block(f(*case.args)), expected) for b, f in ours.items()]
    n = repeats * (50 if case.args[0].size <= 64 else 1)  # tiny calls: more samples
    mine: dict[str, list[float]] = {b: [] for b in BACKENDS}
    jaxs = []
    for _ in range(n):
        for b, f in ours.items():
            mine[b].append(_time(f, case.args))
        jaxs.append(_time(theirs, case.args))
    status = "; ".join(p for p in problems if p) or "ok"
    return {b: statistics.median(t) for b, t in mine.items()}, statistics.median(jaxs), status


def compile_times(repeats: int) -> tuple[dict[str, float], float]:
    """First call of a fresh jit of the MLP: trace + compile + one run."""
    args = cases(np.random.default_rng(1))[5].args
    mine: dict[str, list[float]] = {b: [] for b in BACKENDS}
    jaxs = []
    for _ in range(repeats):
        for b in BACKENDS:
            backend._COMPILED.clear()
            mine[b].append(_time(mlax.jit(_mlp(mnp), backend=b), args))
        jaxs.append(_time(jax.jit(_mlp(jnp)), args))
    return {b: statistics.median(t) for b, t in mine.items()}, statistics.median(jaxs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=25)
    parser.add_argument("--loaded", action="store_true", help="one spinning process pinned to the last core")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    with harness.load(args.loaded) as mode:
        for case in cases(rng):
            mine, jaxs, status = run_case(case, args.repeats)
            rows.append((case.name, mine, jaxs, case.target, status))
        mine, jaxs = compile_times(max(3, args.repeats // 3))
        rows.append(("first call (compile) of the MLP", mine, jaxs, 3.0, "ok"))
    print(harness.machine_line())
    print(mode)
    print("| case | mlax cpu | mlax xla | jax.jit | cpu/JAX | xla/JAX | target (cpu) | check |")
    print("|---|---|---|---|---|---|---|---|")
    for name, mine, jaxs, target, status in rows:
        ratio = mine["cpu"] / jaxs
        goal = f"<= {target:g}" if target else "-"
        flag = "" if not target or ratio <= target else " (missed)"
        print(f"| {name} | {_format(mine['cpu'])} | {_format(mine['xla'])} | {_format(jaxs)} | "
              f"{ratio:.2f}{flag} | {mine['xla'] / jaxs:.2f} | {goal} | {status} |")


if __name__ == "__main__":
    main()
