"""LLVM's work on one program shared among threads (backends/cpu/orc.py `object_file`): a big
module's functions are compiled as several object files at once, linked together as one
program. Forced here on small programs (every module of two or more functions shared), the
results equal the one-object compile's and jax's: kernels called across parts, mutable globals
(the FFT plan cache, freed by the release function; the profiler's event buffer) defined once,
bundles through the disk cache in a later process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.backends.cpu import orc
from tests.oracle import assert_same, random_array


def _layers(m, x, w):
    for i in range(4):
        x = m.tanh(x @ w) + m.sin(x) * (i + 1)
    return x


def _program(m, x, w):
    y = _layers(m, x, w)
    return (y * y).sum() + m.abs(m.fft.fft(y)).sum() * 1e-3


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every module of two or more functions shared between two threads; the parts made."""
    made: list[int] = []
    compile_object = orc.object_file

    def spy(module, entry, name, threads=2):
        code = compile_object(module, entry, name, threads=2)
        made.append(len(orc.split_objects(code)))
        return code

    monkeypatch.setattr(orc, "_SHARED_BLOCKS", 1)
    monkeypatch.setattr(orc, "object_file", spy)
    mlax.clear_caches()
    yield made
    mlax.clear_caches()


def test_a_shared_program_computes_as_one_object(rng: np.random.Generator, shared: list[int],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    x = random_array(rng, (32, 48), np.float32)
    w = random_array(rng, (48, 48), np.float32) / 8

    def program() -> tuple:
        mlax.clear_caches()
        return mlax.jit(mlax.value_and_grad(lambda x, w: _program(mnp, x, w), argnums=(0, 1)))(x, w)

    loss, grads = program()
    assert shared and max(shared) == 2  # the program was compiled as two objects
    monkeypatch.setattr(orc, "_SHARED_BLOCKS", 1 << 30)
    one_loss, one_grads = program()
    assert shared[-1] == 1
    for got, want in zip((loss, *grads), (one_loss, *one_grads), strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    want_loss, want_grads = jax.value_and_grad(lambda x, w: _program(jnp, x, w), argnums=(0, 1))(x, w)
    assert_same(loss, want_loss, rtol=2e-5)
    for got, want in zip(grads, want_grads, strict=True):  # deep tanh chains: f32 rounding differs
        assert_same(got, want, rtol=1e-3, atol=1e-3 * float(np.abs(want).max()))


def test_the_profilers_buffer_is_defined_once(rng: np.random.Generator, shared: list[int]) -> None:
    """The kernels of both parts write the one event buffer part 0 defines."""
    x = random_array(rng, (64, 64), np.float32)
    w = random_array(rng, (64, 64), np.float32) / 8
    f = mlax.jit(lambda x, w: _layers(mnp, x, w))
    want = np.asarray(f(x, w))
    with mlax.profiler.kernel_profile() as profile:
        got = np.asarray(f(x, w))
    assert max(shared) == 2
    np.testing.assert_array_equal(got, want)
    (call,) = profile.calls
    assert len(call.kernels) >= 4  # the kernels of both objects were recorded, each once
    assert sorted(call.events[:, 0].tolist()) == list(range(len(call.kernels)))


def test_a_bundle_needs_only_what_its_objects_do_not_define() -> None:
    one = _object(needs=("sinf", "kernel"), defines="main")
    two = _object(needs=("cosf",), defines="kernel")
    assert orc.split_objects(one) == [one]
    bundle = orc._bundle([one, two])
    assert orc.split_objects(bundle) == [one, two]
    assert orc.undefined_symbols(bundle) == ["sinf", "cosf"]


def _object(needs: tuple[str, ...], defines: str) -> bytes:
    """An object file defining ``defines``, which calls each of ``needs`` (declared only)."""
    from mlir import ir

    from mlax.dialect import get_context

    declarations = "\n".join(f"llvm.func @{n}(f32) -> f32" for n in needs)
    calls = "\n".join(f"%{i} = llvm.call @{n}(%arg0) : (f32) -> f32" for i, n in enumerate(needs))
    with get_context():
        module = ir.Module.parse(f"module {{\n{declarations}\nllvm.func @{defines}(%arg0: f32) -> f32 {{\n"
                                 f"{calls}\nllvm.return %arg0 : f32\n}}\n}}")
        return orc.object_file(module, defines, defines, threads=1)


def test_bundles_link_from_the_disk_cache_in_a_later_process(tmp_path) -> None:
    script = textwrap.dedent(f"""
        import numpy as np, mlax, mlax.numpy as mnp
        from mlax.backends.cpu import orc
        orc._SHARED_BLOCKS = 1
        mlax.config.update("compilation_cache_dir", {str(tmp_path)!r})
        x = np.linspace(-1, 1, 64 * 64, dtype=np.float32).reshape(64, 64)
        f = mlax.jit(lambda x: mnp.tanh(x @ x).sum(0) + mnp.abs(mnp.fft.fft(x)).sum(0))
        result = np.asarray(f(x)).tolist()
        print(orc.llvm_compiles, repr(result))
    """)
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
            for _ in range(2)]
    (compiled, first), (cached, second) = (run.split(" ", 1) for run in runs)
    assert (compiled, cached) == ("1", "0")  # the second process linked the stored bundle
    assert first == second
    assert any(b"\0mlax objects\0" in p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
