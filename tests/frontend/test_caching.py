"""The bounded caches: LRU order, one computation per key under concurrent misses, the config
bounds of jit's caches, and evicted executables really dropped."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Iterator

import numpy as np
import pytest

import mlax
from mlax.backends import registry as backend_module
from mlax.caching import LRUCache


def test_least_recently_used_goes_first() -> None:
    cache: LRUCache[str] = LRUCache(lambda: 2)
    cache.put("a", "A"), cache.put("b", "B")
    assert cache.get("a") == "A"  # now b is the oldest
    cache.put("c", "C")
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == ("A", None, "C")
    assert len(cache) == 2


def test_concurrent_misses_compute_once_and_failures_retry() -> None:
    cache: LRUCache[int] = LRUCache(lambda: 8)
    calls: list[str] = []
    barrier = threading.Barrier(6)

    def slow() -> int:
        calls.append(threading.current_thread().name)
        time.sleep(0.2)
        return 42

    results: list[int] = []

    def ask() -> None:
        barrier.wait()
        results.append(cache.get_or_create("k", slow))

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert results == [42] * 6 and len(calls) == 1

    attempts: list[int] = []

    def failing() -> int:
        attempts.append(1)
        raise ValueError("each caller meets its own error")

    for _ in range(2):
        with pytest.raises(ValueError, match="its own error"):
            cache.get_or_create("bad", failing)
    assert len(attempts) == 2 and cache.get("bad") is None


def test_reentrant_miss_computes_uncached() -> None:
    cache: LRUCache[int] = LRUCache(lambda: 8)
    assert cache.get_or_create("k", lambda: cache.get_or_create("k", lambda: 1) + 1) == 2
    assert cache.get("k") == 2


@pytest.fixture
def small_caches() -> Iterator[None]:
    sizes = mlax.config.jit_cache_size, mlax.config.compile_cache_size
    mlax.config.update("jit_cache_size", 3)
    mlax.config.update("compile_cache_size", 2)
    try:
        yield
    finally:
        mlax.config.update("jit_cache_size", sizes[0])
        mlax.config.update("compile_cache_size", sizes[1])


def test_jit_caches_follow_the_config_bounds(small_caches: None, rng: np.random.Generator) -> None:
    marker = float(rng.uniform(3, 4))
    f = mlax.jit(lambda x: x * marker)
    for n in range(1, 9):
        x = rng.standard_normal(n).astype(np.float32)
        np.testing.assert_allclose(np.asarray(f(x)), x * np.float32(marker), rtol=1e-6)
    assert f._cache_size() == 3
    assert len(backend_module._COMPILED) <= 2


def test_evicted_executables_are_freed(small_caches: None, rng: np.random.Generator) -> None:
    marker = float(rng.uniform(5, 6))
    f = mlax.jit(lambda x: x - marker)
    x = rng.standard_normal(3).astype(np.float32)
    f(x)
    first = weakref.ref(f.lower(x).compile()._executable)
    gc.collect()
    for n in range(4, 8):  # newer programs push the first one out of the compile cache
        f(np.ones(n, np.float32))
    gc.collect()
    assert first() is None
    np.testing.assert_allclose(np.asarray(f(x)), x - np.float32(marker), rtol=1e-6)  # compiles again
