"""The sharded MLP train step of examples/sharded_mlp.py on 4 CPU devices: mlax against jax, same run.

    .venv/bin/python bench/sharded.py [--repeats N] [--batch B] [--hidden H]

Both ways of writing the step (jit with NamedShardings, and shard_map with explicit collectives)
run on mlax (its `mlax-partition` program on XLA's 4 CPU devices) and on jax (GSPMD/Shardy on
the same devices), after a warm-up call; the table gives the median time per step and the
ratio mlax/jax, and checks that both give the same loss. Not part of the tests: nothing here
asserts on time.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import sharded_mlp  # noqa: E402  (the example, from examples/)


def _time_steps(lib: Any, how: str, params: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray,
                repeats: int) -> tuple[float, float]:
    """The median seconds of one train step (results ready) and the loss of the first step."""
    mesh = sharded_mlp.make_mesh(lib)
    param_specs, batch_spec = sharded_mlp.specs(lib)
    named = lib.sharding.NamedSharding
    state = {k: lib.device_put(v, named(mesh, param_specs[k])) for k, v in params.items()}
    x, y = (lib.device_put(a, named(mesh, batch_spec)) for a in (x, y))
    step = sharded_mlp.STEPS[how](lib, mesh)
    _, first = step(state, x, y)  # warm-up: trace and compile
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        state, value = step(state, x, y)
        lib.block_until_ready(value)
        times.append(time.perf_counter() - start)
    return statistics.median(times), float(first)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=512)
    args = parser.parse_args()
    sharded_mlp.BATCH, sharded_mlp.HIDDEN = args.batch, args.hidden
    sharded_mlp.use_devices(4)
    rng = np.random.RandomState(0)
    params, (x, y) = sharded_mlp.init_params(rng), sharded_mlp.make_data(rng)
    libs = {name: importlib.import_module(name) for name in ("mlax", "jax")}
    print(f"sharded MLP train step, batch {args.batch}, hidden {args.hidden}, 2x2 mesh of CPU devices, "
          f"median of {args.repeats}")
    print("| step | mlax (ms) | jax (ms) | mlax/jax | same loss |\n|---|---|---|---|---|")
    for how in sharded_mlp.STEPS:
        (ours, our_loss), (theirs, their_loss) = (
            _time_steps(lib, how, params, x, y, args.repeats) for lib in libs.values())
        same = "yes" if np.isclose(our_loss, their_loss, rtol=1e-4) else f"NO ({our_loss} vs {their_loss})"
        print(f"| {how} | {ours * 1e3:.3f} | {theirs * 1e3:.3f} | {ours / theirs:.2f} | {same} |")


if __name__ == "__main__":
    main()
