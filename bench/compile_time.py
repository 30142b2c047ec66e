"""Where a first call's time goes: tracing, each stage of the CPU pipeline, LLVM; beside jax.

    .venv/bin/python bench/compile_time.py [--repeats N]

For each program (bench/train.py's models), a fresh ``mlax.jit`` of a fresh function object is
called once after ``mlax.clear_caches()``, with the pipeline's stages (`run_stage`) and LLVM's
part (`orc.object_file`: translation to LLVM IR, O3, code generation) timed by wrappers; the
rest of the call is tracing, linking and the run. The ops of the program before and after
mlax-expand-transforms show what deriving a shared callee (a nested jit) once saves.
jax's first call (``jax.clear_caches()``, a fresh ``jax.jit``) is timed in the same process.
Medians over the repeats. Not part of the tests: nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import collections
import statistics
import time
from collections.abc import Callable
from typing import Any

import harness
import jax
import numpy as np
import train

import mlax
from mlax.backends import dumping
from mlax.backends.cpu import orc
from mlax.passes.walk import nested_ops

Timings = dict[str, float]


def _timed(timings: Timings) -> None:
    """Wrap the backends' stage runner and the CPU backend's object emission to add into
    ``timings``."""
    run_stage, object_file = dumping.run_stage, orc.object_file

    def stage(stage: Any, module: Any, **kwargs: Any) -> None:
        name = str(stage.element)
        if name == "mlax-expand-transforms":
            IR_SIZE["ops before the transformations"] = _count_ops(module)
        start = time.perf_counter()
        run_stage(stage, module, **kwargs)
        timings[name if len(name) < 60 else name[:57] + "..."] += time.perf_counter() - start
        if name == "mlax-expand-transforms":
            IR_SIZE["ops after them"] = _count_ops(module)

    def emit(*args: Any) -> bytes:
        start = time.perf_counter()
        obj = object_file(*args)
        timings["LLVM: IR, O3, code generation"] += time.perf_counter() - start
        return obj

    dumping.run_stage, orc.object_file = stage, emit


# Ops of the program around mlax-expand-transforms, of the last first call.
IR_SIZE: dict[str, int] = {}


def _count_ops(module: Any) -> int:
    return sum(1 for _ in nested_ops(module))


PROGRAMS: dict[str, tuple[Callable[[Any], Callable[..., Any]], Callable[[], tuple[Any, ...]]]] = {
    "MLP forward 784-1024-1024-10": (
        lambda lib: lambda p, x: train._mlp_loss(lib, 2)(p, x, np.zeros(x.shape[0], np.int32)),
        lambda: (train._mlp_params(np.random.default_rng(0), (784, 1024, 1024, 10)),
                 np.random.default_rng(1).standard_normal((256, 784)).astype(np.float32))),
    "jit(value_and_grad) of that MLP, + SGD": (
        lambda lib: train._sgd(lib, train._mlp_loss(lib, 2)),
        lambda: (train._mlp_params(np.random.default_rng(0), (784, 1024, 1024, 10)),
                 np.random.default_rng(1).standard_normal((256, 784)).astype(np.float32),
                 np.random.default_rng(2).integers(0, 10, 256).astype(np.int32))),
    "transformer block train step": (train._transformer_step, train._transformer_inputs),
    "4-layer decoder train step": (
        lambda lib: train._transformer_step(lib, train.DECODER_SEQ),
        lambda: train._transformer_inputs(train.DECODER_LAYERS, train.DECODER_SEQ)),
    "16-layer MLP train step, layers inlined": (lambda lib: train._sgd(lib, train._mlp_loss(lib, 16)),
                                                train._mlp16_inputs),
    "16-layer MLP train step, the layer a nested jit": (
        lambda lib: train._sgd(lib, train._mlp_loss(lib, 16, shared=True)), train._mlp16_inputs),
}


def _first_call(lib: Any, make: Callable[[Any], Callable[..., Any]], args: tuple[Any, ...]) -> float:
    lib.clear_caches()
    f = lib.jit(make(lib))
    start = time.perf_counter()
    harness.block(f(*args))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="", help="run the programs whose name contains this")
    options = parser.parse_args()
    timings: Timings = collections.defaultdict(float)
    _timed(timings)
    harness.block(mlax.jit(lambda x: x + 1)(np.ones(2, np.float32)))  # backends up
    harness.block(jax.jit(lambda x: x + 1)(np.ones(2, np.float32)))
    for name, (make, inputs) in PROGRAMS.items():
        if options.only and options.only not in name:
            continue
        args = inputs()
        runs: list[Timings] = []
        totals, jax_totals = [], []
        for _ in range(options.repeats):
            timings.clear()
            totals.append(_first_call(mlax, make, args))
            runs.append(dict(timings))
            jax_totals.append(_first_call(jax, make, args))
        total, jax_total = statistics.median(totals), statistics.median(jax_totals)
        parts = {key: statistics.median(run.get(key, 0.0) for run in runs) for key in runs[0]}
        rest = total - sum(parts.values())
        print(f"\n### {name}: mlax {total * 1e3:.0f} ms, jax {jax_total * 1e3:.0f} ms "
              f"(mlax/JAX {total / jax_total:.2f})\n")
        print("| part | ms | share |\n|---|---|---|")
        for key, seconds in sorted(parts.items(), key=lambda item: -item[1]):
            print(f"| {key} | {seconds * 1e3:.1f} | {seconds / total:.0%} |")
        print(f"| tracing, linking, the run | {rest * 1e3:.1f} | {rest / total:.0%} |")
        print("\n" + ", ".join(f"{key}: {count}" for key, count in IR_SIZE.items()))


if __name__ == "__main__":
    main()
