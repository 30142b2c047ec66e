"""mlax from several threads, as a data loader, a thread pool or a threaded server uses it.

The trace state is per thread, the caches compute each key once under concurrent first calls,
and a tracer used by another thread is an UnexpectedTracerError naming both threads. The
stress test runs for ``MLAX_STRESS_SECONDS`` (a few seconds in CI; e.g.
``MLAX_STRESS_SECONDS=300 pytest tests/frontend/test_threads.py`` for the long form).
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from collections.abc import Callable

import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.backends import registry as backend_module
from mlax.errors import UnexpectedTracerError

THREADS = 8
STRESS_SECONDS = float(os.environ.get("MLAX_STRESS_SECONDS", "8"))

Check = tuple[object, np.ndarray]  # (what mlax returned, what NumPy says it must be)


def _eager(rng: np.random.Generator) -> Check:
    n = int(rng.integers(1, 40))
    x = rng.standard_normal(n).astype(np.float32)
    return mnp.tanh(mnp.arange(n) * 0.5 + x), np.tanh(np.arange(n, dtype=np.float32) * 0.5 + x)


_NEW_SHAPES = mlax.jit(lambda x: mnp.sin(x) * 2.0 + x)


def _fresh_shape(rng: np.random.Generator) -> Check:
    x = rng.standard_normal(int(rng.integers(1, 300))).astype(np.float32)
    return _NEW_SHAPES(x), np.sin(x) * 2.0 + x


def _long_trace(rng: np.random.Generator) -> Check:
    """A fresh jit of a function of a few hundred ops: a long trace while others run."""
    scale = float(rng.uniform(0.5, 1.5))

    def chain(x):
        for _ in range(120):
            x = mnp.cos(x) * scale + 0.25
        return x

    x = rng.standard_normal(7).astype(np.float32)
    expected = x.astype(np.float64)
    for _ in range(120):
        expected = np.cos(expected) * scale + 0.25
    return mlax.jit(chain)(x), expected


_CACHED = mlax.jit(lambda a, b: a @ b + 1.0)


def _cached_call(rng: np.random.Generator) -> Check:
    a = rng.standard_normal((5, 4)).astype(np.float32)
    b = rng.standard_normal((4, 3)).astype(np.float32)
    return _CACHED(a, b), a.astype(np.float64) @ b + 1.0


def _grad(rng: np.random.Generator) -> Check:
    x = rng.standard_normal(int(rng.integers(1, 9))).astype(np.float32)
    got = mlax.grad(lambda v: mnp.sum(mnp.sin(v) ** 2))(x)
    return got, 2 * np.sin(x) * np.cos(x)


def _jit_of_grad_and_vmap(rng: np.random.Generator) -> Check:
    w = rng.standard_normal((3, 2)).astype(np.float32)
    xs = rng.standard_normal((int(rng.integers(1, 6)), 3)).astype(np.float32)
    per_example = mlax.jit(mlax.vmap(mlax.grad(lambda w, x: mnp.sum(mnp.tanh(x @ w))), in_axes=(None, 0)))
    t = np.tanh(xs.astype(np.float64) @ w)
    return per_example(w, xs), np.einsum("bi,bj->bij", xs, 1 - t ** 2)


def _vmap_eager(rng: np.random.Generator) -> Check:
    xs = rng.standard_normal((int(rng.integers(1, 6)), 4)).astype(np.float32)
    return mlax.vmap(lambda v: mnp.max(v) - v)(xs), xs.max(axis=1, keepdims=True) - xs


def _scan(rng: np.random.Generator) -> Check:
    xs = rng.standard_normal(int(rng.integers(1, 12))).astype(np.float32)
    _, ys = mlax.lax.scan(lambda c, x: (c + x, c * x), np.float32(0), xs)
    carry = np.concatenate([[0.0], np.cumsum(xs)[:-1]])
    return ys, carry * xs


WORKLOADS: list[Callable[[np.random.Generator], Check]] = [
    _eager, _fresh_shape, _long_trace, _cached_call, _grad, _jit_of_grad_and_vmap, _vmap_eager, _scan]


def test_mixed_work_from_eight_threads_gives_every_result_right() -> None:
    deadline = time.monotonic() + STRESS_SECONDS
    failures: list[str] = []
    counts = [0] * len(WORKLOADS)
    start, lock = threading.Barrier(THREADS), threading.Lock()

    def worker(seed: int) -> None:
        rng = np.random.default_rng(seed)
        k = seed % len(WORKLOADS)  # first, a different kind in each thread: all of them overlap
        start.wait()
        while time.monotonic() < deadline and len(failures) < 10:
            try:
                got, expected = WORKLOADS[k](rng)
                np.testing.assert_allclose(np.asarray(got), expected, rtol=2e-4, atol=2e-5)
            except Exception:
                failures.append(f"{WORKLOADS[k].__name__}: {traceback.format_exc()}")
            with lock:
                counts[k] += 1
            k = int(rng.integers(len(WORKLOADS)))

    threads = [threading.Thread(target=worker, args=(seed,), name=f"stress-{seed}")
               for seed in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(STRESS_SECONDS + 600)
    assert not any(thread.is_alive() for thread in threads), "a worker hangs"
    assert not failures, "\n".join(failures)
    assert all(counts), dict(zip((w.__name__ for w in WORKLOADS), counts, strict=True))


class _CountingBackend:
    """A backend that counts its compiles and lets every waiting thread pile up first."""

    def __init__(self, inner: backend_module.Backend) -> None:
        self.inner, self.name, self.compiles = inner, inner.name, 0

    def compile(self, module, entry, donated=()):
        self.compiles += 1
        time.sleep(0.2)
        return self.inner.compile(module, entry, donated)


def test_concurrent_first_calls_trace_and_compile_once(backend: str, monkeypatch) -> None:
    counting = _CountingBackend(backend_module.BACKENDS[backend])
    monkeypatch.setitem(backend_module.BACKENDS, backend, counting)
    traces: list[str] = []
    marker = float(np.random.default_rng().uniform(1, 2))  # a program no other test compiled

    @mlax.jit
    def f(x):
        traces.append(threading.current_thread().name)
        time.sleep(0.1)
        return x * marker + 1

    x = np.arange(6, dtype=np.float32)
    results: list[np.ndarray] = []
    barrier = threading.Barrier(THREADS)

    def call() -> None:
        barrier.wait()
        results.append(np.asarray(f(x)))

    threads = [threading.Thread(target=call) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(traces) == 1 and counting.compiles == 1
    assert len(results) == THREADS
    for result in results:
        np.testing.assert_allclose(result, x * np.float32(marker) + 1, rtol=1e-6)


def test_tracer_used_by_another_thread_is_an_unexpected_tracer_error() -> None:
    leaked: dict[str, object] = {}
    traced, release = threading.Event(), threading.Event()

    def owner_function(x):
        leaked["x"] = x
        traced.set()
        release.wait(30)
        return x + 1

    owner = threading.Thread(target=lambda: mlax.jit(owner_function)(np.ones(3, np.float32)),
                             name="tracer-owner")
    owner.start()
    assert traced.wait(30)
    try:
        with pytest.raises(UnexpectedTracerError, match="thread 'tracer-owner' is tracing it"):
            mnp.sin(leaked["x"])
        with pytest.raises(UnexpectedTracerError, match="owner_function.*thread 'tracer-owner'"):
            mlax.jit(lambda y: y + leaked["x"])(np.ones(3, np.float32))
        # meanwhile this thread's own work is neither traced into the other's function nor broken
        np.testing.assert_allclose(np.asarray(mnp.arange(4) * 3), np.arange(4) * 3)
        np.testing.assert_allclose(np.asarray(mlax.jit(lambda v: v * 2)(np.arange(3.0))), [0, 2, 4])
    finally:
        release.set()
        owner.join(30)
