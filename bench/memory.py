"""RSS per compiled program: mlax's CPU backend, MLIR's ExecutionEngine (the runtime mlax used
before backends/cpu/orc.py) and jax.jit, on the same functions and shapes.

    .venv/bin/python bench/memory.py [--programs N]

Each (system, case) runs in a fresh interpreter: one warm-up compile (its cost, the libraries'
pages and pass pipelines, is the "one-time" column), then N compiles of the case's function
on N distinct shapes, all kept alive; the RSS growth over the second half of them is the cost
of a program (the first half also pays for caches and heaps growing once). "jax"
jits one function, as the other two do (JAX then also keeps each shape's jaxpr and lowering in
its caches); "XLA executable" jits a fresh function per shape, so that only the compiled
executable stays. Not part of the tests: the figures move a little between runs (the
allocator), never by 10x.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

CASES: dict[str, str] = {
    "x * 2 + 1, (n,) f32": "small",
    "tanh(x @ w + b), (n, 16) @ (16, 16)": "layer",
}
SYSTEMS = ("mlax", "ExecutionEngine", "jax", "XLA executable")


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _function(case: str, np_: Any) -> tuple[Callable[..., Any], Callable[[int], tuple[np.ndarray, ...]]]:
    """The case's function written with ``np_`` (mlax.numpy or jax.numpy), and its arguments
    for shape number ``n``."""
    if case == "small":
        return (lambda x: x * 2 + 1), lambda n: (np.ones(n, np.float32),)
    return (lambda x, w, b: np_.tanh(x @ w + b),
            lambda n: (np.ones((n, 16), np.float32), np.ones((16, 16), np.float32), np.ones(16, np.float32)))


def _compiler(system: str, case: str) -> Callable[[int], object]:
    """Compiles the case for shape number ``n`` and returns what keeps the program alive."""
    if system in ("jax", "XLA executable"):
        import jax
        import jax.numpy as jnp

        function, arguments = _function(case, jnp)
        if system == "jax":
            jitted = jax.jit(function)
            return lambda n: jitted.lower(*arguments(n)).compile()
        return lambda n: jax.jit(_function(case, jnp)[0]).lower(*arguments(n)).compile()
    import mlax
    import mlax.numpy as mnp

    function, arguments = _function(case, mnp)
    jitted = mlax.jit(function)
    if system == "mlax":
        return lambda n: jitted.lower(*arguments(n)).compile()

    import ctypes

    from mlir.execution_engine import ExecutionEngine

    from mlax.backends.cpu import CPU
    from mlax.backends.cpu import executable as cpu
    from mlax.backends.native.blas import gemm_symbols
    from mlax.passes.abi import entry_symbol

    def engine(n: int) -> object:
        lowered = jitted.lower(*arguments(n))
        module = lowered.mlir_module()
        with module.context:
            CPU.lower(module, lowered._traced.entry)
            engine = ExecutionEngine(module, opt_level=3, shared_libs=cpu._runtime_libraries())
        for symbol, address in gemm_symbols().items():
            engine.raw_register_runtime(symbol, ctypes.c_void_p(address))
        assert engine.raw_lookup(entry_symbol(lowered._traced.entry))
        return engine
    return engine


def measure(system: str, case: str, programs: int) -> dict[str, float]:
    """In this process: the one-time cost, then RSS and time per program."""
    compile_one = _compiler(system, case)
    gc.collect()
    start = _rss()
    kept = [compile_one(1)]
    gc.collect()
    warm = _rss()
    half = programs // 2
    began = time.perf_counter()
    kept += [compile_one(n) for n in range(2, half + 2)]
    gc.collect()
    middle = _rss()
    kept += [compile_one(n) for n in range(half + 2, programs + 2)]
    seconds = time.perf_counter() - began
    gc.collect()
    return {"one_time_mb": (warm - start) / 2 ** 20,
            "kb_per_program": (_rss() - middle) / 1024 / (programs - half),
            "ms_per_compile": seconds / programs * 1e3}


def _in_subprocess(system: str, case: str, programs: int) -> dict[str, float]:
    environment = {**os.environ, "MLAX_COMPILE_CACHE_SIZE": str(programs + 8), "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, __file__, "--one", system, case, "--programs", str(programs)],
                          capture_output=True, text=True, check=True, env=environment)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=100)
    parser.add_argument("--one", nargs=2, metavar=("SYSTEM", "CASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(*args.one, args.programs)))
        return
    print(f"{args.programs} programs per case, each kept alive; KB of RSS per program "
          f"(ms per compile), one-time cost of the first compile in MB")
    print("| case | " + " | ".join(SYSTEMS) + " | one-time: " + ", ".join(SYSTEMS) + " |")
    print("|---|" + "---|" * (len(SYSTEMS) + 1))
    for name, case in CASES.items():
        results = [_in_subprocess(system, case, args.programs) for system in SYSTEMS]
        cells = [f"{r['kb_per_program']:.0f} KB ({r['ms_per_compile']:.0f} ms)" for r in results]
        one_time = ", ".join(f"{r['one_time_mb']:.0f}" for r in results)
        print(f"| {name} | " + " | ".join(cells) + f" | {one_time} MB |")


if __name__ == "__main__":
    main()
