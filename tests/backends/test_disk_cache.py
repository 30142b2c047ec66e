"""The CPU backend's persistent compilation cache (backends/cpu/disk_cache.py): a later process links
the stored object instead of running the passes and LLVM; bad entries are recompiled, never
trusted; the directory is bounded; an unusable one only warns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.backends.cpu import disk_cache, orc

REPO = Path(__file__).resolve().parents[2]

# One process's use of the cache: an MLP forward and its gradient, on inputs from a seed; the
# results go to a .npz, what the compile did to stdout.
_PROCESS = """
import json, sys
import numpy as np
import mlax, mlax.numpy as mnp
if sys.argv[1] != "env":
    mlax.config.update(sys.argv[1], sys.argv[2])
rng = np.random.default_rng(7)
x = rng.standard_normal((16, 12), dtype=np.float32)
params = (rng.standard_normal((12, 32), dtype=np.float32) * 0.3, rng.standard_normal(32, dtype=np.float32),
          rng.standard_normal((32, 3), dtype=np.float32) * 0.3, rng.standard_normal(3, dtype=np.float32))

def mlp(params, x):
    w1, b1, w2, b2 = params
    return mnp.tanh(x @ w1 + b1) @ w2 + b2

loss = lambda params, x: mnp.mean(mlp(params, x) ** 2)
out = mlax.jit(mlp)(params, x)
grads = mlax.jit(mlax.grad(loss))(params, x)
np.savez(sys.argv[3], out=np.asarray(out), *[np.asarray(g) for g in grads])
from mlax.backends.cpu import disk_cache, orc
print(json.dumps({"hits": disk_cache.stats.hits, "writes": disk_cache.stats.writes,
                  "llvm": orc.llvm_compiles, "passes": "mlax.passes.lower_to_linalg" in sys.modules,
                  "runner_utils": any("runner_utils" in name for name in orc._jit().libraries)}))
"""


def _run_process(tmp_path: Path, how: tuple[str, str], tag: str,
                 env: dict[str, str] | None = None) -> tuple[dict, dict[str, np.ndarray]]:
    out = tmp_path / f"{tag}.npz"
    result = subprocess.run([sys.executable, "-c", _PROCESS, *how, str(out)], capture_output=True, text=True,
                            cwd=REPO, env={**os.environ, **(env or {})}, timeout=300)
    assert result.returncode == 0, result.stderr
    with np.load(out) as arrays:
        return json.loads(result.stdout.strip().splitlines()[-1]), dict(arrays)


def test_a_second_process_links_the_stored_objects(tmp_path: Path) -> None:
    import jax
    import jax.numpy as jnp

    cache = tmp_path / "cache"
    first, first_results = _run_process(tmp_path, ("compilation_cache_dir", str(cache)), "first")
    assert first["llvm"] == 2 and first["writes"] == 2 and first["hits"] == 0 and first["passes"]
    assert len(list(cache.glob("*" + disk_cache.SUFFIX))) == 2
    # jax's name of the option, then the environment variable read by mlax.config
    for how, env in [(("jax_compilation_cache_dir", str(cache)), None),
                     (("env", ""), {"MLAX_COMPILATION_CACHE_DIR": str(cache)})]:
        second, second_results = _run_process(tmp_path, how, "second", env)
        # neither LLVM nor the pass pipeline ran (its passes were not even imported)
        assert second == {"hits": 2, "writes": 0, "llvm": 0, "passes": False, "runner_utils": False}
        for name, value in first_results.items():
            np.testing.assert_array_equal(second_results[name], value)

    rng = np.random.default_rng(7)
    f32 = np.float32
    x = rng.standard_normal((16, 12), dtype=f32)
    params = (rng.standard_normal((12, 32), dtype=f32) * 0.3, rng.standard_normal(32, dtype=f32),
              rng.standard_normal((32, 3), dtype=f32) * 0.3, rng.standard_normal(3, dtype=f32))

    def mlp(params, x):
        w1, b1, w2, b2 = params
        return jnp.tanh(x @ w1 + b1) @ w2 + b2

    np.testing.assert_allclose(first_results["out"], jax.jit(mlp)(params, x), rtol=2e-5, atol=2e-6)
    expected = jax.grad(lambda p, x: jnp.mean(mlp(p, x) ** 2))(params, x)
    for i, g in enumerate(expected):
        np.testing.assert_allclose(first_results[f"arr_{i}"], g, rtol=2e-4, atol=2e-6)


@pytest.fixture
def cache_dir(tmp_path: Path) -> Iterator[Path]:
    """The cache on in this process for one test, in a fresh directory."""
    path = tmp_path / "cache"
    mlax.config.update("compilation_cache_dir", str(path))
    try:
        yield path
    finally:
        mlax.config.update("compilation_cache_dir", None)
        mlax.config.update("compilation_cache_max_size", 1 << 30)


def _program(rng: np.random.Generator):
    """A program no other test compiles (its constant is random), its input, and the expected
    result (NumPy, in f64)."""
    scale = float(rng.uniform(1, 2))
    x = rng.standard_normal((5, 7)).astype(np.float32)
    w = rng.standard_normal((7, 3)).astype(np.float32)
    expected = np.tanh(x.astype(np.float64) @ w * scale) + scale
    return (lambda x, w: mnp.tanh(x @ w * scale) + scale), (x, w), expected


def _compile_and_check(f, args, expected) -> None:
    mlax.clear_caches()  # this process's cache, so that only the disk may skip the compile
    np.testing.assert_allclose(np.asarray(mlax.jit(f)(*args)), expected, rtol=2e-5, atol=2e-6)


def _counts() -> tuple[int, int, int, int]:
    s = disk_cache.stats
    return s.hits, s.writes, s.rejected, orc.llvm_compiles


def _delta(before: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(now - then for now, then in zip(_counts(), before, strict=True))


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*" + disk_cache.SUFFIX))


def test_hit_miss_and_a_changed_program(cache_dir: Path, rng: np.random.Generator) -> None:
    f, args, expected = _program(rng)
    before = _counts()
    _compile_and_check(f, args, expected)
    assert _delta(before) == (0, 1, 0, 1)  # compiled and written
    before = _counts()
    _compile_and_check(f, args, expected)
    assert _delta(before) == (1, 0, 0, 0)  # linked from disk
    g, args, expected = _program(rng)  # another constant: another key
    before = _counts()
    _compile_and_check(g, args, expected)
    assert _delta(before) == (0, 1, 0, 1)
    assert len(_entries(cache_dir)) == 2


def _corrupt_object(data: bytes) -> bytes:
    middle = len(data) - 100
    return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1:]


@pytest.mark.parametrize("damage", [
    _corrupt_object,
    lambda data: data[:len(data) // 2],  # truncated
    lambda data: b"",
    lambda data: b"\x7fELF" + data[4:],  # another magic
    lambda data: os.urandom(len(data)),
])
def test_a_damaged_entry_is_recompiled_and_rewritten(cache_dir: Path, rng: np.random.Generator,
                                                     damage) -> None:
    f, args, expected = _program(rng)
    _compile_and_check(f, args, expected)
    (entry,) = _entries(cache_dir)
    good = entry.read_bytes()
    entry.write_bytes(damage(good))
    before = _counts()
    _compile_and_check(f, args, expected)
    assert _delta(before) == (0, 1, 1, 1)  # rejected, compiled, written
    assert entry.read_bytes() == good  # rewritten (the same compile gives the same object)
    before = _counts()
    _compile_and_check(f, args, expected)
    assert _delta(before) == (1, 0, 0, 0)


def test_a_foreign_entry_is_ignored(cache_dir: Path, rng: np.random.Generator) -> None:
    """Another program's entry under this program's name (its header names another key)."""
    f, f_args, f_expected = _program(rng)
    g, g_args, g_expected = _program(rng)
    _compile_and_check(f, f_args, f_expected)
    (f_entry,) = _entries(cache_dir)
    _compile_and_check(g, g_args, g_expected)
    (g_entry,) = [e for e in _entries(cache_dir) if e != f_entry]
    good = g_entry.read_bytes()
    g_entry.write_bytes(f_entry.read_bytes())
    before = _counts()
    _compile_and_check(g, g_args, g_expected)  # f's code would give f's numbers
    assert _delta(before) == (0, 1, 1, 1)
    assert g_entry.read_bytes() == good


def test_concurrent_first_compiles_in_threads(cache_dir: Path, rng: np.random.Generator) -> None:
    """Eight threads compile four programs (two threads each) at once with the cache on; then
    each program is linked from disk."""
    programs = [_program(rng) for _ in range(4)]
    mlax.clear_caches()
    barrier, failures = threading.Barrier(8), []

    def work(i: int) -> None:
        f, args, expected = programs[i % 4]
        barrier.wait()
        try:
            np.testing.assert_allclose(np.asarray(mlax.jit(f)(*args)), expected, rtol=2e-5, atol=2e-6)
        except Exception as error:  # noqa: BLE001 (reported below)
            failures.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    assert not failures, failures
    assert len(_entries(cache_dir)) == 4
    assert not [p for p in cache_dir.iterdir() if not p.name.endswith(disk_cache.SUFFIX)]  # no temporaries
    before = _counts()
    for f, args, expected in programs:
        _compile_and_check(f, args, expected)
    assert _delta(before) == (4, 0, 0, 0)


def test_the_directory_is_bounded_least_recently_used_first(cache_dir: Path,
                                                            rng: np.random.Generator) -> None:
    programs = [_program(rng) for _ in range(3)]
    _compile_and_check(*programs[0])
    (first,) = _entries(cache_dir)
    bound = int(first.stat().st_size * 2.5)  # room for two entries
    mlax.config.update("jax_compilation_cache_max_size", bound)
    _compile_and_check(*programs[1])
    (second,) = [e for e in _entries(cache_dir) if e != first]
    os.utime(first, ns=(1, 1))  # the oldest two entries, the first older still
    os.utime(second, ns=(2, 2))
    before = _counts()
    _compile_and_check(*programs[0])  # a hit makes the first entry the most recently used
    assert _delta(before) == (1, 0, 0, 0)
    _compile_and_check(*programs[2])  # a third entry: the least recently used one goes
    assert first.exists() and not second.exists() and len(_entries(cache_dir)) == 2
    assert disk_cache.stats.evicted >= 1
    before = _counts()
    _compile_and_check(*programs[1])
    assert _delta(before) == (0, 1, 0, 1)  # compiled again
    assert sum(e.stat().st_size for e in _entries(cache_dir)) <= bound


def test_a_bound_of_zero_turns_the_cache_off(cache_dir: Path, rng: np.random.Generator) -> None:
    mlax.config.update("compilation_cache_max_size", 0)
    _compile_and_check(*_program(rng))
    assert not cache_dir.exists()


def test_an_unusable_directory_warns_once_and_compiles(tmp_path: Path, rng: np.random.Generator) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    mlax.config.update("compilation_cache_dir", str(blocker / "cache"))
    try:
        with pytest.warns(RuntimeWarning, match="cannot be used"):
            _compile_and_check(*_program(rng))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _compile_and_check(*_program(rng))  # no second warning, no cache
    finally:
        mlax.config.update("compilation_cache_dir", None)


def test_programs_with_host_callbacks_are_not_stored(cache_dir: Path, rng: np.random.Generator) -> None:
    x = rng.standard_normal(6).astype(np.float32)
    offset = float(rng.uniform(1, 2))

    def f(x):
        y = mlax.pure_callback(lambda v: np.sin(v), mlax.ShapeDtypeStruct(x.shape, x.dtype), x)
        return y + offset

    mlax.clear_caches()
    np.testing.assert_allclose(np.asarray(mlax.jit(f)(x)), np.sin(x) + offset, rtol=1e-6)
    assert not cache_dir.exists() or not _entries(cache_dir)


def test_config_names_and_values(tmp_path: Path) -> None:
    try:
        mlax.config.update("jax_compilation_cache_dir", tmp_path)
        assert mlax.config.compilation_cache_dir == str(tmp_path)
        assert mlax.config.jax_compilation_cache_dir == str(tmp_path)  # read() refuses it, as jax
        mlax.config.update("compilation_cache_dir", None)
        assert mlax.config.jax_compilation_cache_dir is None
        with pytest.raises(ValueError, match="must be a path or None"):
            mlax.config.update("compilation_cache_dir", 3)
        for bad in (-2, 1.5, "big", True):
            with pytest.raises(ValueError, match="compilation_cache_max_size"):
                mlax.config.update("compilation_cache_max_size", bad)
        mlax.config.update("jax_compilation_cache_max_size", -1)
        assert mlax.config.compilation_cache_max_size == -1
    finally:
        mlax.config.update("compilation_cache_dir", None)
        mlax.config.update("compilation_cache_max_size", 1 << 30)


def test_the_key_names_what_decides_the_code() -> None:
    key = disk_cache.cache_key("module {}", "main", "canonicalize")
    triple, cpu, features = orc.host()
    text = key.decode()
    for part in (triple, cpu, features, "canonicalize", "main", orc.CODEGEN, orc.llvm_version(),
                 disk_cache.compiler_fingerprint()):
        assert part in text
    assert disk_cache.cache_key("module {}", "other", "canonicalize") != key
    other = disk_cache.cache_key("module {} ", "main", "")
    assert disk_cache.symbol_name(key) != disk_cache.symbol_name(other)


def test_runtime_libraries_load_only_when_code_needs_them() -> None:
    """A fresh process compiling `x * 2 + 1` does not load libmlir_c_runner_utils (it brings
    libMLIR.so, ~60 ms); the reader of an object's undefined symbols sees the BLAS call."""
    code = ("import numpy as np, mlax\n"
            "from mlax.backends.cpu import orc\n"
            "x = np.random.default_rng(0).standard_normal(8).astype(np.float32)\n"
            "np.testing.assert_allclose(np.asarray(mlax.jit(lambda x: x * 2 + 1)(x)), x * 2 + 1)\n"
            "print(sorted(orc._jit().libraries))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert "runner_utils" not in result.stdout

    captured = []
    original = orc.object_file

    def spy(module, entry, name):
        captured.append(original(module, entry, name))
        return captured[-1]

    orc.object_file = spy
    try:
        rng = np.random.default_rng(3)
        a, b = rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal((5, 2)).astype(np.float32)
        scale = float(rng.uniform(1, 2))
        mlax.clear_caches()
        np.testing.assert_allclose(np.asarray(mlax.jit(lambda a, b: (a @ b) * scale)(a, b)), (a @ b) * scale,
                                   rtol=1e-5)
    finally:
        orc.object_file = original
    assert "mlax_sgemm" in orc.undefined_symbols(captured[-1])
    assert orc.unresolved(captured[-1]) == []
    assert orc.undefined_symbols(b"not an object") is None
    rng = np.random.default_rng(5)
    for _ in range(50):  # a malformed ELF header is no object this reads, never an exception
        damaged = b"\x7fELF\x02\x01" + rng.integers(0, 256, 200, dtype=np.uint8).tobytes()
        assert orc.undefined_symbols(damaged) is None or isinstance(orc.undefined_symbols(damaged), list)
