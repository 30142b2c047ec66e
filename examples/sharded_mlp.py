"""An MLP trained on a 2x2 mesh of CPU devices: data parallel over "data", tensor parallel over "model".

Two ways to write the same train step, as JAX users do:

- ``jit``: the batch is split over "data", the hidden layer over "model"
  (``NamedSharding``s on the inputs, ``out_shardings`` on the updated parameters); mlax's
  `mlax-partition` pass turns the global program into the per-device program and its
  collectives.
- ``shard_map``: the per-device program written by hand, the collectives explicit
  (``psum`` over "model" finishes the second layer's product, ``pmean`` over "data" makes the
  loss the mean over the whole batch; the gradient of a parameter every data shard shares is
  summed over "data" by the transposition, as in jax).

Both run on mlax and, with ``--check``, on jax with the same data; the losses must agree.
``--processes 2`` runs the same on two processes of two CPU devices each (127.0.0.1, through
``mlax.distributed``), each process printing its losses.

    .venv/bin/python examples/sharded_mlp.py [--steps N] [--check] [--processes 2]

The model is written once for either library (``lib`` is ``mlax`` or ``jax``).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
from typing import Any

import numpy as np

Params = dict[str, Any]

BATCH, INPUTS, HIDDEN, OUTPUTS = 32, 16, 64, 4
LEARNING_RATE = np.float32(0.05)


def init_params(rng: np.random.RandomState) -> dict[str, np.ndarray]:
    def normal(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)

    return {"w1": normal(INPUTS, HIDDEN), "b1": np.zeros(HIDDEN, np.float32),
            "w2": normal(HIDDEN, OUTPUTS), "b2": np.zeros(OUTPUTS, np.float32)}


def make_data(rng: np.random.RandomState) -> tuple[np.ndarray, np.ndarray]:
    x = rng.standard_normal((BATCH, INPUTS)).astype(np.float32)
    teacher = rng.standard_normal((INPUTS, OUTPUTS)).astype(np.float32)
    return x, np.tanh(x @ teacher).astype(np.float32)


def make_mesh(lib: Any) -> Any:
    """A 2x2 mesh over the first four devices (of every process), "data" major."""
    devices = np.array(lib.devices()[:4]).reshape(2, 2)
    return lib.sharding.Mesh(devices, ("data", "model"))


def specs(lib: Any) -> tuple[dict[str, Any], Any]:
    """How each parameter and the batch are split: the hidden layer over "model", the batch over "data"."""
    P = lib.sharding.PartitionSpec
    return {"w1": P(None, "model"), "b1": P("model"), "w2": P("model", None), "b2": P()}, P("data", None)


def jit_step(lib: Any, mesh: Any) -> Any:
    """The global train step; the shardings of its inputs and outputs decide how it is split."""
    jnp = lib.numpy
    param_specs, _ = specs(lib)

    def loss(params: Params, x: Any, y: Any) -> Any:
        h = jnp.tanh(x @ params["w1"] + params["b1"])
        return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)

    def step(params: Params, x: Any, y: Any) -> tuple[Params, Any]:
        value, grads = lib.value_and_grad(loss)(params, x, y)
        return {k: params[k] - LEARNING_RATE * grads[k] for k in params}, value

    shardings = {k: lib.sharding.NamedSharding(mesh, s) for k, s in param_specs.items()}
    replicated = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec())
    return lib.jit(step, out_shardings=(shardings, replicated))


def shard_map_step(lib: Any, mesh: Any) -> Any:
    """The per-device train step: each device holds a quarter of the work and says how to combine it."""
    jnp = lib.numpy
    P = lib.sharding.PartitionSpec
    param_specs, batch_spec = specs(lib)

    def local_loss(params: Params, x: Any, y: Any) -> Any:
        h = jnp.tanh(x @ params["w1"] + params["b1"])                 # this device's hidden units
        out = lib.lax.psum(h @ params["w2"], "model") + params["b2"]  # the product over all of them
        return lib.lax.pmean(jnp.mean((out - y) ** 2), "data")        # the mean over every batch shard

    def step(params: Params, x: Any, y: Any) -> tuple[Params, Any]:
        value, grads = lib.value_and_grad(local_loss)(params, x, y)
        return {k: params[k] - LEARNING_RATE * grads[k] for k in params}, value

    mapped = lib.shard_map(step, mesh=mesh, in_specs=(param_specs, batch_spec, batch_spec),
                           out_specs=(param_specs, P()))
    return lib.jit(mapped)


STEPS = {"jit": jit_step, "shard_map": shard_map_step}


def train(lib: Any, how: str, params: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray,
          steps: int) -> list[float]:
    """``steps`` SGD steps of the ``how`` train step on ``lib``; the loss before each step."""
    mesh = make_mesh(lib)
    param_specs, batch_spec = specs(lib)
    place = lib.device_put
    state = {k: place(v, lib.sharding.NamedSharding(mesh, param_specs[k])) for k, v in params.items()}
    x, y = (place(a, lib.sharding.NamedSharding(mesh, batch_spec)) for a in (x, y))
    step = STEPS[how](lib, mesh)
    losses = []
    for _ in range(steps):
        state, value = step(state, x, y)
        losses.append(float(value))
    return losses


def run(lib_name: str, steps: int) -> dict[str, list[float]]:
    import importlib

    lib = importlib.import_module(lib_name)
    rng = np.random.RandomState(0)
    params, (x, y) = init_params(rng), make_data(rng)
    return {how: train(lib, how, params, x, y, steps) for how in STEPS}


def report(losses: dict[str, list[float]], expected: dict[str, list[float]] | None) -> None:
    for how, curve in losses.items():
        theirs = f", jax {expected[how][-1]:.6f}" if expected else ""
        print(f"{how:9s}: loss {curve[0]:.6f} -> {curve[-1]:.6f} over {len(curve)} steps{theirs}")
        if expected is not None:
            np.testing.assert_allclose(curve, expected[how], rtol=1e-4)
    if expected is not None:
        worst = max(float(np.max(np.abs(np.subtract(losses[h], expected[h])) / np.abs(expected[h])))
                    for h in losses)
        print(f"mlax and jax losses agree: max relative difference {worst:.1e} (tolerance 1e-4)")


def use_devices(count: int) -> None:
    """``count`` CPU devices in this process, for both libraries (before either starts its backend)."""
    import mlax

    mlax.config.update("jax_num_cpu_devices", count)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_processes(args: argparse.Namespace) -> None:
    """Start ``--processes`` copies of this script, one per process id, and wait for them."""
    port = free_port()
    command = [sys.executable, __file__, "--steps", str(args.steps), "--coordinator", f"127.0.0.1:{port}",
               "--processes", str(args.processes)] + (["--check"] if args.check else [])
    children = [subprocess.Popen([*command, "--process-id", str(i)]) for i in range(args.processes)]
    codes = [child.wait(timeout=600) for child in children]
    if any(codes):
        sys.exit(f"a process failed: exit codes {codes}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--check", action="store_true", help="also train through JAX and compare")
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--process-id", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--coordinator", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.processes > 1 and args.process_id is None:
        run_processes(args)
        return
    use_devices(4 // args.processes)
    if args.processes > 1:
        import mlax

        mlax.distributed.initialize(args.coordinator, args.processes, args.process_id)
    losses = run("mlax", args.steps)
    expected = run("jax", args.steps) if args.check else None
    if args.processes > 1:
        print(f"process {args.process_id}:", flush=True)
    report(losses, expected)
    os.sys.stdout.flush()


if __name__ == "__main__":
    main()
