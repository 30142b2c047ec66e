"""The CPU backend: compiled code agrees with the interpreter and JAX; the runtime's calling
convention (caller-owned inputs, fresh outputs, bare pointers) holds at its edges."""

from __future__ import annotations

import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.backends import registry as backend
from mlax.backends.cpu import executable as cpu
from tests.oracle import assert_same, random_array


def both_backends(f, *args):
    compiled = mlax.jit(f, backend="cpu")(*args)
    interpreted = mlax.jit(f, backend="interpreter")(*args)
    assert_same(compiled, interpreted)
    return compiled


def test_cpu_is_the_default_backend() -> None:
    assert mlax.config.backend == "cpu"
    assert mlax.jit(lambda x: x).backend == "cpu"


def test_elementwise_chain_agrees_with_jax(rng: np.random.Generator) -> None:
    import jax
    import jax.numpy as jnp

    x = random_array(rng, (3, 37), np.float32)
    got = both_backends(lambda x: mnp.tanh(x * 1.5 + 0.5) * mnp.exp(-x) + 1, x)
    assert_same(got, jax.jit(lambda x: jnp.tanh(x * 1.5 + 0.5) * jnp.exp(-x) + 1)(x), rtol=4e-6)


def test_bf16_sign_bits_in_vector_loops(rng: np.random.Generator) -> None:
    """bf16 sign, copysign and abs inside vectorized loops (the fuzzer's ``cbrt(sign(x))`` made
    LLVM fail an assertion): bit masks, equal to jax on -0.0, NaN, subnormals and infinities."""
    import jax
    import jax.numpy as jnp
    import ml_dtypes

    special = [-0.0, 0.0, np.nan, -np.nan, np.inf, -np.inf, 1e-40, -1e-40, 3.0, -2.5]
    x = np.concatenate([special, rng.normal(size=54)]).astype(ml_dtypes.bfloat16)
    y = rng.permutation(x)
    cases = [(lambda a, b: mlax.lax.cbrt(mlax.lax.sign(a)), lambda a, b: jax.lax.cbrt(jax.lax.sign(a))),
             (lambda a, b: mnp.copysign(a, b) * 2, lambda a, b: jnp.copysign(a, b) * 2),
             (lambda a, b: mnp.abs(a) + b, lambda a, b: jnp.abs(a) + b)]
    def subnormal(v: np.ndarray) -> np.ndarray:
        v = np.abs(v.astype(np.float32))
        return (v > 0) & (v < 1.2e-38)

    for ours, theirs in cases:
        got = np.asarray(mlax.jit(ours, backend="cpu")(x, y), np.float32)
        want = np.asarray(jax.jit(theirs)(x, y), np.float32)
        kept = ~(np.isnan(want) | subnormal(want) | subnormal(x) | subnormal(y))  # XLA flushes them
        np.testing.assert_array_equal(got[kept], want[kept])
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shapes", [((5, 7), (7, 3)), ((2, 5, 7), (2, 7, 3)), ((4, 2, 3), (2, 3, 5))])
def test_matmuls_call_blas(rng: np.random.Generator, dtype, shapes, x64) -> None:
    a, b = (random_array(rng, s, dtype) for s in shapes)
    if len(shapes[0]) == 3 and shapes[0][0] != shapes[1][0]:  # contract two dims at once
        f = lambda a, b: mnp.tensordot(a, b, axes=2)  # noqa: E731
        expected = np.tensordot(a.astype(np.float64), b.astype(np.float64), axes=2)
    else:
        f = lambda a, b: a @ b  # noqa: E731
        expected = a.astype(np.float64) @ b.astype(np.float64)
    got = both_backends(f, a, b)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_inputs_are_never_written(rng: np.random.Generator) -> None:
    x = random_array(rng, (6,), np.float32)
    before = x.copy()
    out = mlax.jit(lambda x: x.at[2:4].set(7.0))(x)
    np.testing.assert_array_equal(x, before)
    assert np.asarray(out)[2] == 7.0


def test_returned_input_is_a_copy(rng: np.random.Generator) -> None:
    x = random_array(rng, (4,), np.int32)
    a, b, c = mlax.jit(lambda x: (x, x, x + 1))(x)
    x[0] += 1  # the outputs must not see it
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert np.asarray(a)[0] == x[0] - 1


def test_non_contiguous_and_non_canonical_inputs(rng: np.random.Generator) -> None:
    x = random_array(rng, (4, 6), np.float64)  # float64 becomes float32 without x64
    got = both_backends(lambda x: x * 2, x.T)
    np.testing.assert_allclose(np.asarray(got), (x.T * 2).astype(np.float32), rtol=1e-6)


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3, 1), ()])
def test_empty_and_rank_zero(rng: np.random.Generator, shape) -> None:
    x = random_array(rng, shape, np.float32)
    both_backends(lambda x: (x + 1, mnp.sum(x, axis=-1) if x.ndim else x, x > 0), x)


def test_bools_cross_the_boundary_as_bytes(rng: np.random.Generator) -> None:
    x = random_array(rng, (5, 3), np.bool_)
    y = random_array(rng, (5, 3), np.bool_)
    both_backends(lambda x, y: (x & ~y, mnp.any(x, axis=0), mnp.where(x, 1, 2), mnp.array([True, False])),
                  x, y)


@pytest.mark.parametrize("shape", [(300, 257), (70_001,)])
def test_big_loops_run_on_threads(rng: np.random.Generator, shape) -> None:
    """Past mlax-parallel-loops' threshold the outer loop runs on OpenMP threads: the same
    numbers, elementwise, per row, and in bools."""
    x = random_array(rng, shape, np.float32)
    f = lambda x: (mnp.tanh(x) * 2 + 3, mnp.max(x, axis=-1), mnp.sum(x * x, axis=-1), x > 0.5)  # noqa: E731
    assert "omp.parallel" in mlax.jit(f).lower(x).as_text("loops")
    both_backends(f, x)


def test_without_openmp_runtime_loops_stay_sequential(rng: np.random.Generator, monkeypatch) -> None:
    monkeypatch.setattr(cpu, "openmp_library", lambda: None)
    x = random_array(rng, (300, 257), np.float32)
    f = lambda x: mnp.exp(x) + 1  # noqa: E731
    assert "omp." not in mlax.jit(f).lower(x).as_text("loops")
    backend._COMPILED.clear()
    both_backends(f, x)


def test_buffers_keep_their_provenance_for_llvm(rng: np.random.Generator) -> None:
    """Buffers come from aligned_alloc, not from malloc plus pointer arithmetic: LLVM then knows two
    buffers never alias and hoists loop-invariant loads. With malloc, a weighted random.choice
    feeding a gather kept a Threefry hash inside a 30-step loop, and LLVM 22's loop vectorizer
    never finished compiling it."""
    p = rng.random(30).astype(np.float32)
    p /= p.sum()
    d = rng.standard_normal((2, 30)).astype(np.float32)

    def draw(d: np.ndarray, key: mlax.Array) -> mlax.Array:
        k1, k2 = mlax.random.split(key)
        return d[:, mlax.random.choice(k1, 30, (6,), p=p)] + mlax.random.normal(k2, (2, 6))

    key = mlax.random.PRNGKey(0)
    assert_same(mlax.jit(draw, backend="cpu")(d, key), draw(d, key), rtol=1e-6)


def test_stages_print(rng: np.random.Generator) -> None:
    lowered = mlax.jit(lambda x: mnp.exp(x) + 1).lower(random_array(rng, (8,), np.float32))
    assert '"mlax.exp"' in lowered.as_text("mlax")
    assert "linalg.generic" in lowered.as_text("linalg")
    assert "memref<8xf32>" in lowered.as_text("buffers")
    assert "scf.for" in lowered.as_text("loops")
    llvm = lowered.as_text("llvm", debug_info=False)
    assert "llvm.func @jit.lambda(%arg0: !llvm.ptr {llvm.noalias}" in llvm
    stages = r"available stages: \['mlax', 'linalg', 'buffers', 'loops', 'llvm'\]"
    with pytest.raises(ValueError, match=stages):
        lowered.as_text("asm")


def test_dump_dir_gets_the_ir_after_every_pass(rng: np.random.Generator, tmp_path) -> None:
    mlax.config.update("dump_dir", str(tmp_path))
    try:
        mlax.jit(lambda x: mnp.sin(x) * 3)(random_array(rng, (4,), np.float32))
    finally:
        mlax.config.update("dump_dir", None)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names[0] == "lambda.00.input.mlir"
    assert any("mlax-lower-to-linalg" in n for n in names)
    assert names[-1].endswith("reconcile-unrealized-casts.mlir")
    assert "llvm.func" in (tmp_path / names[-1]).read_text()


def test_equal_programs_share_one_executable(rng: np.random.Generator) -> None:
    x = random_array(rng, (3,), np.float32)
    first, second = mlax.jit(lambda v: v * 5 - 1), mlax.jit(lambda v: v * 5 - 1)
    first(x), second(x)
    executables = {id(f.lower(x).compile()._executable) for f in (first, second)}
    assert len(executables) == 1


def test_fast_path_matches_the_general_path(rng: np.random.Generator) -> None:
    f = mlax.jit(lambda a, b: a * b + 1)
    a = random_array(rng, (4,), np.float32)
    b = mlax.numpy.asarray(random_array(rng, (4,), np.float32))
    first = f(a, b)
    again = f(a, b)  # served by the fast path
    assert_same(again, first)
    assert f._cache_size() == 1
    weak = f(a, 2.0)  # a Python scalar: general path, another signature
    assert_same(weak, mlax.jit(lambda a, b: a * b + 1, backend="interpreter")(a, 2.0))
    assert f._cache_size() == 2


def test_executable_outputs_are_fresh(rng: np.random.Generator) -> None:
    f = mlax.jit(lambda a: a + 1)
    x = random_array(rng, (3,), np.float32)
    one, two = f(x), f(x)
    assert np.asarray(one).ctypes.data != np.asarray(two).ctypes.data
    assert not np.asarray(one).flags.writeable


def test_compile_cache_is_bounded(rng: np.random.Generator) -> None:
    size = mlax.config.compile_cache_size
    mlax.config.update("compile_cache_size", 2)
    try:
        for k in range(4):
            mlax.jit(lambda v, k=k: v * (k + 10))(random_array(rng, (2,), np.float32))
        assert len(backend._COMPILED) <= 2
    finally:
        mlax.config.update("compile_cache_size", size)


def test_matmul_of_a_stacked_slice_calls_blas(rng: np.random.Generator) -> None:
    """Each step of a scan reads a slice of its stacked operand: a dense matrix at an offset."""
    xs, w = random_array(rng, (6, 5, 7), np.float32), random_array(rng, (7, 3), np.float32)
    text = mlax.jit(lambda xs, w: mlax.lax.map(lambda x: x @ w, xs)).lower(xs, w).as_text("buffers")
    assert "call @mlax_sgemm" in text
    got = mlax.jit(lambda xs, w: mlax.lax.map(lambda x: x @ w, xs))(xs, w)
    np.testing.assert_allclose(np.asarray(got), xs.astype(np.float64) @ w, rtol=1e-5, atol=1e-6)


_THREAD_TIMEOUT = """
import os, numpy as np, mlax
from mlax.backends.native import blas
mlax.jit(lambda a, b: a @ b)(np.ones((64, 64), np.float32), np.ones((64, 64), np.float32))
print(blas.openblas().openblas_thread_timeout(), os.environ.get("OPENBLAS_THREAD_TIMEOUT"))
"""


@pytest.mark.parametrize(("env", "expected"), [(None, "4 None"), ("9", "9 9")])
def test_openblas_threads_sleep_unless_the_user_says(env: str | None, expected: str) -> None:
    """After the first CPU program OpenBLAS's idle threads no longer spin (2**4 cycles), and
    the environment is left as it was; a user's OPENBLAS_THREAD_TIMEOUT is kept."""
    import os
    import subprocess
    import sys

    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if env is not None:
        environment["OPENBLAS_THREAD_TIMEOUT"] = env
    done = subprocess.run([sys.executable, "-c", _THREAD_TIMEOUT], env=environment, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == expected
