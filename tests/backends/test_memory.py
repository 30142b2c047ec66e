"""Memory of compiled programs on the CPU backend: a small program costs little, evicting it
frees it, and one executable serves several threads at once.

The RSS tests run in a fresh interpreter, so other tests' memory does not interfere; they
measure after a first compile (the libraries' pages and pass pipelines are a one-time cost).
A program cost ~3 MB with MLIR's ExecutionEngine (docs/performance.md); the bounds below
allow 0.1 MB. The 1,000-shape form is marked ``slow`` (``pytest -m slow``).
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
import weakref
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

import mlax
import mlax.numpy as mnp
from mlax.dialect import get_context

MB = 2 ** 20
PROGRAM_BOUND = 0.1 * MB  # per compiled program, on average

needs_proc = pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="RSS read from /proc")

_MEASURE = """
import gc, json, os, sys
import numpy as np
import mlax

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

shapes, passes = int(sys.argv[1]), int(sys.argv[2])
f = mlax.jit(lambda x: x * 2 + 1)
np.testing.assert_array_equal(np.asarray(f(np.ones(1, np.float32))), 3)
samples = []
for _ in range(passes):
    gc.collect()
    samples.append(rss())
    for n in range(2, shapes + 2):
        f(np.ones(n, np.float32))
gc.collect()
samples.append(rss())
print(json.dumps(samples))
"""


def _rss_samples(shapes: int, passes: int = 1, **env: str) -> list[int]:
    """RSS before each pass over ``shapes`` distinct shapes of a small jitted function, and at
    the end, in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(shapes), str(passes)],
                          capture_output=True, text=True, timeout=900, check=False,
                          env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _assert_programs_are_small(shapes: int) -> None:
    before, after = _rss_samples(shapes)
    growth = after - before
    assert growth < shapes * PROGRAM_BOUND, f"{growth / MB:.1f} MB for {shapes} programs"


@needs_proc
def test_many_shapes_of_one_function_cost_little_memory() -> None:
    _assert_programs_are_small(200)


@needs_proc
@pytest.mark.slow
def test_a_thousand_shapes_cost_little_memory() -> None:
    _assert_programs_are_small(1000)


@needs_proc
def test_evicted_programs_free_their_memory() -> None:
    """With small caches every pass recompiles every shape: RSS stays where the first pass
    left it (the MLIR types of the shapes stay uniqued). Measured: < 1 KB per recompile; an
    unlinked program's JIT memory that stayed would add ~8 KB each, an ExecutionEngine ~3 MB."""
    shapes = 40
    samples = _rss_samples(shapes, passes=4, MLAX_COMPILE_CACHE_SIZE="4", MLAX_JIT_CACHE_SIZE="4")
    growth = samples[-1] - samples[1]
    assert growth < 3 * shapes * 4 * 1024, f"{growth / MB:.2f} MB over {3 * shapes} recompiles: {samples}"


def test_evicted_executable_dies_at_once(rng: np.random.Generator) -> None:
    """The compile cache is an executable's only owner, and no reference cycle holds it: it
    and its machine code go as soon as it is evicted, without waiting for the cycle GC."""
    size = mlax.config.compile_cache_size
    x = rng.standard_normal(5).astype(np.float32)
    marker = float(rng.uniform(1, 2))  # programs no other test compiled
    mlax.config.update("compile_cache_size", 2)
    gc.disable()
    try:
        compiled = mlax.jit(lambda v: v * marker).lower(x).compile()
        np.testing.assert_allclose(np.asarray(compiled(x)), x * np.float32(marker), rtol=1e-6)
        executable, code = weakref.ref(compiled._executable), weakref.ref(compiled._executable._code)
        del compiled
        for k in range(3):
            mlax.jit(lambda v, k=k: v * marker + k)(x)
        assert executable() is None and code() is None
    finally:
        gc.enable()
        mlax.config.update("compile_cache_size", size)


def test_one_executable_called_from_many_threads_at_once(rng: np.random.Generator) -> None:
    f = mlax.jit(lambda x, k: mnp.sin(x) * k + x)
    inputs = [rng.standard_normal(20_000).astype(np.float32) for _ in range(8)]
    f(inputs[0], np.float32(1))
    failures: list[str] = []
    start = threading.Barrier(len(inputs))

    def worker(i: int) -> None:
        start.wait()
        for _ in range(200):
            got = np.asarray(f(inputs[i], np.float32(i)))
            if not np.allclose(got, np.sin(inputs[i]) * i + inputs[i], rtol=1e-5, atol=1e-5):
                failures.append(f"thread {i}")
                return

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(inputs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert f._cache_size() == 1
    assert not failures


def test_a_finished_thread_leaves_no_mlir_context_behind(rng: np.random.Generator) -> None:
    """Each thread compiles in a context of its own; the CPU pipeline's passes built for it are
    kept next to it, per thread, so they do not keep it alive once the thread is gone."""
    get_context()
    x = rng.standard_normal(4).astype(np.float32)

    def work() -> None:
        np.testing.assert_allclose(np.asarray(mlax.jit(lambda v: v * 11 + 2)(x)), x * 11 + 2, rtol=1e-6)

    gc.collect()
    before = ir.Context._get_live_count()
    thread = threading.Thread(target=work)
    thread.start()
    thread.join(60)
    gc.collect()
    assert ir.Context._get_live_count() == before
