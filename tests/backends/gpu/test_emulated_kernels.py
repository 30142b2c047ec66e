"""GPU numerics without a GPU: every program of the GPU backend's test tables (test_pipeline,
test_row_kernels, test_vectorize, test_control_flow, test_matmul_kernels) lowered to the ``gpu``
stage and run by the lockstep kernel emulator (kernel_emulator.py) on random inputs, against
the CPU backend; and tests of the emulator itself (races, a missing barrier, unknown ops, warp
and block op semantics, TF32 rounding, a wrong mma fragment)."""

from __future__ import annotations

import re
from collections.abc import Callable

import jax
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax import lax
from tests.backends.gpu import (
    test_control_flow,
    test_matmul_kernels,
    test_pipeline,
    test_row_kernels,
    test_vectorize,
)
from tests.backends.gpu.kernel_emulator import (
    EmulationError,
    RaceError,
    UnknownOpError,
    emulate,
    emulate_text,
)
from tests.oracle import random_array

Maker = Callable[[np.random.Generator], list[np.ndarray]]


def _f32(*shapes: tuple[int, ...]) -> Maker:
    return lambda rng: [random_array(rng, shape, np.float32) for shape in shapes]


def _programs() -> dict[str, tuple[Callable, Maker, str]]:
    """name -> (function, argument maker, tolerance kind: "f32", "f32dot", "half" or "tf32")."""
    out: dict[str, tuple[Callable, Maker, str]] = {}
    for name, (f, shapes) in test_pipeline.PROGRAMS.items():
        out[f"pipeline/{name}"] = (f, _f32(*shapes), "tf32" if name.startswith(("matmul", "mlp")) else "f32")
    for name, (f, shape, dtype, _, _) in test_row_kernels.PROGRAMS.items():
        half = np.dtype(dtype).itemsize == 2
        out[f"rows/{name}"] = (f, lambda rng, s=shape, d=dtype: [random_array(rng, s, d)],
                               "half" if half else "f32")
    for name, (program, specs, _) in test_vectorize.PROGRAMS.items():
        half = any(np.dtype(d).itemsize == 2 and np.dtype(d).kind == "f" for _, d in specs) or "16" in name
        out[f"vectorize/{name}"] = (program(test_vectorize.MLAX),
                                    lambda rng, s=specs: [random_array(rng, shape, d) for shape, d in s],
                                    "half" if half else "f32")
    for name, (f, shapes) in test_control_flow.PROGRAMS.items():
        out[f"control/{name}"] = (f, _f32(*shapes), "f32")
    for name, (f, makers, mma) in test_matmul_kernels.PROGRAMS.items():
        kind = "half" if name.startswith(("f16", "bf16")) else "tf32" if mma else "f32"
        out[f"matmul/{name}"] = (f, lambda rng, m=makers: [make(rng) for make in m], kind)
    # NaN rows: max/min propagate NaN, nanmax/nanmin skip it (block and warp reductions).
    for shape in ((37, 53), (16, 10)):
        out[f"rows/nan_rows_{shape[1]}"] = (_nan_program, lambda rng, s=shape: [_nan_rows(rng, s)], "f32")
    # Bigger shapes of the same kernels (more blocks, partial tiles, several k steps).
    for name, f, shapes in (("softmax", lambda x: mlax.nn.softmax(x, axis=-1), ((64, 1000),)),
                            ("rows", lambda x: (x.sum(1), x.max(1), x.min(0)), ((129, 517),)),
                            ("layernorm", test_row_kernels._layernorm, ((33, 2048),)),
                            ("elementwise", test_pipeline.PROGRAMS["elementwise"][0], ((96, 1024),) * 2),
                            ("matmul", lambda a, b: a @ b, ((200, 150), (150, 130)))):
        out[f"big/{name}"] = (f, _f32(*shapes), "tf32" if name == "matmul" else "f32")
    out["big/matmul_f16"] = (lambda a, b: a @ b, lambda rng: [random_array(rng, s, np.float16)
                                                              for s in ((128, 96), (96, 136))], "half")
    # Edges: one-element and odd tiles, rows shorter/longer than a block, signless integer
    # buffers of unsigned values, float-to-int conversions of NaN and infinities, arg-reductions.
    for m, k, n in ((1, 1, 1), (17, 9, 7), (5, 3, 130)):
        out[f"edges/matmul_{m}x{k}x{n}"] = (lambda a, b: a @ b, _f32((m, k), (k, n)), "tf32")
        out[f"edges/matmul_bf16_{m}x{k}x{n}"] = (lambda a, b: a @ b, lambda rng, m=m, k=k, n=n: [
            random_array(rng, s, ml_dtypes.bfloat16) for s in ((m, k), (k, n))], "half")
    for n in (1, 33, 4097):
        out[f"edges/rows_{n}"] = (_nan_program, _f32((3, n)), "f32")
    out["edges/unsigned"] = (_unsigned, lambda rng: [rng.integers(0, 2 ** 32, (6, 37), dtype=np.uint32)],
                             "f32")
    out["edges/to_int"] = (_to_int, lambda rng: [_special(random_array(rng, (5, 40), np.float32) * 1e9)],
                           "f32")
    # precision=HIGHEST asks for true f32 (the SIMT kernel): f32 accuracy, not TF32's.
    out["edges/matmul_highest"] = (lambda a, b: lax.dot(a, b, precision=lax.Precision.HIGHEST),
                                   _f32((40, 72), (72, 50)), "f32dot")
    out["edges/f64_vectors"] = (lambda x, y: (x * y + x / y, (x - y).sum(1)), lambda rng: [
        random_array(rng, (8, 32), np.float64) for _ in range(2)], "f32")
    out["huge/matmul"] = (lambda a, b: a @ b, _f32((512, 384), (384, 640)), "tf32")
    out["huge/softmax"] = (lambda x: mlax.nn.softmax(x, axis=-1), _f32((256, 4096)), "f32")
    out["huge/scan"] = (test_control_flow.PROGRAMS["scan"][0], _f32((64, 1000)), "f32")
    return out


def _nan_program(x):
    return (x.max(axis=1), x.min(axis=1), mnp.nanmax(x, axis=1), mnp.nanmin(x, axis=1), x.sum(),
            mlax.nn.softmax(x), mlax.nn.log_softmax(x))


def _unsigned(u):
    return u // 7, u % 9, u >> 3, u.max(1), u.min(0), u.astype(np.float32), u.sum(1)


def _to_int(x):
    return x.astype(np.int32), (x / 1e7).astype(np.int8), x.argmax(1), x.argmin(0)


def _special(x: np.ndarray) -> np.ndarray:
    x[0, :5] = [np.nan, np.inf, -np.inf, 3e9, -3e9]
    return x


def _nan_rows(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    x = random_array(rng, shape, np.float32)
    x[3, 7] = x[-1, -1] = np.nan
    x[9, :] = np.nan
    return x


# matmul/f32_4096 (half a million threads, gigabytes of emulator state) is left out: it is
# f32_edges's kernel on exact tiles. The "huge/" programs are for `-m slow`.
PROGRAMS = {name: p for name, p in _programs().items() if name != "matmul/f32_4096"}
PARAMS = [pytest.param(name, marks=[pytest.mark.slow] if name.startswith("huge/") else [], id=name)
          for name in sorted(PROGRAMS)]


def _tolerance(kind: str, expected) -> tuple[float, float]:
    if kind == "half":
        return 2e-2, 1e-2
    if kind == "tf32":  # TF32 keeps 10 mantissa bits of each operand: ~1e-3 of the outputs' scale
        return 1e-2, 1e-2 * _scale(expected)
    if kind == "f32dot":  # true f32 sums in another order than the CPU's
        return 2e-5, 1e-5 * _scale(expected)
    return 2e-5, 1e-5


def _scale(expected) -> float:
    """The largest magnitude among the expected results."""
    leaves = jax.tree_util.tree_leaves(expected)
    return max(float(np.max(np.abs(np.asarray(leaf, np.float64)))) for leaf in leaves)


def _compare(actual: list[np.ndarray], expected, rtol: float, atol: float) -> None:
    leaves = [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(expected)]
    assert len(actual) == len(leaves)
    for got, want in zip(actual, leaves, strict=True):
        got = got.reshape(want.shape)
        if want.dtype == np.bool_:  # bools live as bytes on the GPU (mlax-widen-bool-buffers)
            assert got.dtype == np.int8 and set(np.unique(got)) <= {0, 1}
            got = got.astype(bool)
        elif want.dtype.kind == "u":  # memrefs are signless: unsigned results come as iN
            assert got.dtype == np.dtype(f"i{want.dtype.itemsize}")
            got = got.view(want.dtype)
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        if want.dtype.kind == "f" or want.dtype == ml_dtypes.bfloat16:
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol,
                                       equal_nan=True)
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", PARAMS)
def test_emulated_kernels_agree_with_the_cpu_backend(name: str, rng: np.random.Generator) -> None:
    f, make, kind = PROGRAMS[name]
    arguments = make(rng)
    with mlax.enable_x64(any(a.dtype.itemsize == 8 for a in arguments)):
        expected = mlax.jit(f, backend="cpu")(*arguments)
        actual = emulate(mlax.jit(f, backend="gpu").lower(*arguments), *arguments)
    _compare(actual, expected, *_tolerance(kind, expected))


# ----- the emulator itself -----

_REDUCE = """
module attributes {gpu.container_module} {
  func.func @main(%x: memref<64xf32>, %out: memref<1xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%x : memref<64xf32>, %out : memref<1xf32>)
    return
  }
  gpu.module @k {
    gpu.func @k(%x: memref<64xf32>, %out: memref<1xf32>)
        workgroup(%s : memref<64xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<64xf32>
      memref.store %v, %s[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      BARRIER
      %c32 = arith.constant 32 : index
      %half = arith.cmpi ult, %t, %c32 : index
      scf.if %half {
        %u = arith.addi %t, %c32 : index
        %a = memref.load %s[%t] : memref<64xf32, #gpu.address_space<workgroup>>
        %b = memref.load %s[%u] : memref<64xf32, #gpu.address_space<workgroup>>
        %sum = arith.addf %a, %b : f32
        memref.store %sum, %s[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      }
      gpu.barrier
      %first = arith.cmpi eq, %t, %c0 : index
      scf.if %first {
        %total = scf.for %i = %c0 to %c32 step %c1 iter_args(%acc = %c0f) -> (f32) {
          %e = memref.load %s[%i] : memref<64xf32, #gpu.address_space<workgroup>>
          %n = arith.addf %acc, %e : f32
          scf.yield %n : f32
        }
        memref.store %total, %out[%c0] : memref<1xf32>
      }
      gpu.return
    }
  }
}
"""


def _reduce(barrier: bool) -> str:
    text = _REDUCE.replace("BARRIER", "gpu.barrier" if barrier else "")
    return text.replace("%c0 = arith.constant 0 : index",
                        "%c0 = arith.constant 0 : index\n      %c1 = arith.constant 1 : index\n"
                        "      %c0f = arith.constant 0.0 : f32")


def test_a_shared_memory_reduction_runs(rng: np.random.Generator) -> None:
    x = random_array(rng, (64,), np.float32)
    (out,) = emulate_text(_reduce(barrier=True), [x])
    np.testing.assert_allclose(out[0], x.astype(np.float64).sum(), rtol=1e-5)


def test_a_missing_barrier_is_a_race(rng: np.random.Generator) -> None:
    message = r"between two barriers: workgroup memory %\w+ of k\[32\] .* threads \[0, 32\]"
    with pytest.raises(RaceError, match=message):
        emulate_text(_reduce(barrier=False), [random_array(rng, (64,), np.float32)])


_RACY = """
module attributes {gpu.container_module} {
  func.func @main(%out: memref<4xi32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @k::@k blocks in (%BLOCKS, %c1, %c1) threads in (%THREADS, %c1, %c1)
        args(%out : memref<4xi32>)
    return
  }
  gpu.module @k {
    gpu.func @k(%out: memref<4xi32>) kernel {
      %t = gpu.thread_id x
      %b = gpu.block_id x
      %c2 = arith.constant 2 : index
      %i = arith.remui %t, %c2 : index
      %v = arith.index_cast %b : index to i32
      memref.store %v, %out[%i] : memref<4xi32>
      gpu.return
    }
  }
}
"""


@pytest.mark.parametrize("blocks, threads, message", [
    ("c1", "c4", r"between two barriers: argument 0\[0\] is written and accessed by threads \[0, 2\]"),
    ("c2", "c2", r"in one launch: argument 0\[0\] is written and accessed by blocks \[0, 1\]"),
])
def test_racy_kernels_are_reported(blocks: str, threads: str, message: str) -> None:
    with pytest.raises(RaceError, match=message):
        emulate_text(_RACY.replace("BLOCKS", blocks).replace("THREADS", threads), [])
    (out,) = emulate_text(_RACY.replace("BLOCKS", "c1").replace("THREADS", "c2"), [])
    assert out.dtype == np.int32 and out[:2].tolist() == [0, 0]


def test_an_unknown_op_names_itself() -> None:
    text = _RACY.replace("BLOCKS", "c1").replace("THREADS", "c2").replace(
        "%v = arith.index_cast %b : index to i32", "%w = arith.index_cast %b : index to i32\n"
        "      %v = arith.ceildivsi %w, %w : i32")
    with pytest.raises(UnknownOpError, match=r"does not know arith\.ceildivsi \(in kernel k\)"):
        emulate_text(text, [])


def test_out_of_bounds_and_host_reads_of_device_memory_are_reported() -> None:
    text = _RACY.replace("BLOCKS", "c1").replace("THREADS", "c4").replace("remui %t", "addi %t")
    with pytest.raises(EmulationError, match="out of bounds in k: index 4 of a dimension of size 4"):
        emulate_text(text, [])
    host = re.sub(r"gpu.launch_func[^)]*\)[^)]*\)[^)]*\)",
                  "%c0 = arith.constant 0 : index\n    %v = memref.load %out[%c0] : memref<4xi32>", _RACY)
    with pytest.raises(EmulationError, match="the host accesses device memory"):
        emulate_text(host, [])


_LANES = """
module attributes {gpu.container_module} {
  func.func @main(%x: memref<64xT>, %out: memref<64xT>, %flags: memref<64xi8>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)
        args(%x : memref<64xT>, %out : memref<64xT>, %flags : memref<64xi8>)
    return
  }
  gpu.module @k {
    gpu.func @k(%x: memref<64xT>, %out: memref<64xT>, %flags: memref<64xi8>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %x[%t] : memref<64xT>
      BODY
      memref.store %r, %out[%t] : memref<64xT>
      %f = arith.extui %valid : i1 to i8
      memref.store %f, %flags[%t] : memref<64xi8>
      gpu.return
    }
  }
}
"""


def _lanes(body: str, dtype: str, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return tuple(emulate_text(_LANES.replace("BODY", body).replace("xT", f"x{dtype}"), [x]))


@pytest.mark.parametrize("mode, offset", [("xor", 5), ("down", 3), ("up", 7), ("idx", 9), ("idx", 40)])
def test_shuffles_follow_shfl_sync(mode: str, offset: int, rng: np.random.Generator) -> None:
    """Width 32 (what the passes emit): source lane from the offset's low 5 bits; out of range,
    the thread keeps its value and ``valid`` is false (PTX ISA, shfl.sync)."""
    x = random_array(rng, (64,), np.float32)
    body = (f"%o = arith.constant {offset} : i32\n      %w = arith.constant 32 : i32\n"
            f"      %r, %valid = gpu.shuffle {mode} %v, %o, %w : f32")
    out, flags = _lanes(body, "f32", x)
    lane, b = np.arange(64) % 32, offset & 31
    source = {"xor": lane ^ b, "down": lane + b, "up": lane - b, "idx": np.full(64, b)}[mode]
    valid = (source >= 0) & (source < 32)
    np.testing.assert_array_equal(flags, valid)
    np.testing.assert_array_equal(out, np.where(valid, x[np.arange(64) - lane + np.clip(source, 0, 31)], x))


def _reduce_body(kind: str, t: str) -> str:
    return (f"%r = gpu.all_reduce {kind} %v uniform {{\n      }} : ({t}) -> {t}\n"
            "      %valid = arith.constant true")


@pytest.mark.parametrize("kind, expected", [
    ("add", lambda x: x.sum()), ("mul", lambda x: np.prod(x)), ("maxsi", np.max), ("minsi", np.min),
    ("and", np.bitwise_and.reduce), ("or", np.bitwise_or.reduce), ("xor", np.bitwise_xor.reduce),
    ("maxui", lambda x: x.view(np.uint32).max().view(np.int32)),
    ("minui", lambda x: x.view(np.uint32).min().view(np.int32)),
])
def test_all_reduce_kinds_on_integers(kind: str, expected: Callable, rng: np.random.Generator) -> None:
    x = rng.integers(-2 ** 31, 2 ** 31, 64).astype(np.int32)
    x = x % 7 + 1 if kind == "mul" else x  # products wrap: small factors keep the check readable
    out, _ = _lanes(_reduce_body(kind, "i32"), "i32", x)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, np.full(64, expected(x), np.int32))


@pytest.mark.parametrize("kind, nan", [("maximumf", True), ("minimumf", True), ("maxnumf", False),
                                       ("minnumf", False)])
def test_all_reduce_nan_semantics(kind: str, nan: bool, rng: np.random.Generator) -> None:
    x = random_array(rng, (64,), np.float32)
    x[17] = np.nan
    out, _ = _lanes(_reduce_body(kind, "f32"), "f32", x)
    expected = np.nan if nan else (np.nanmax(x) if "max" in kind else np.nanmin(x))
    np.testing.assert_array_equal(out, np.full(64, expected, np.float32))


def test_tf32_rounds_to_nearest_ties_away() -> None:
    from tests.backends.gpu.kernel_emulator_ops import _to_tf32_bits

    ulp = 2.0 ** -10  # tf32 keeps 10 mantissa bits
    x = np.array([1 + ulp / 2, -(1 + ulp / 2), 1 + ulp / 2 - 2 ** -23, 1 + 1.5 * ulp, 3.4028235e38, np.inf],
                 np.float32)
    got = _to_tf32_bits(x).astype(np.int32).view(np.float32)
    expected = np.array([1 + ulp, -(1 + ulp), 1, 1 + 2 * ulp, np.inf, np.inf], np.float32)
    np.testing.assert_array_equal(got, expected)
    assert np.isnan(_to_tf32_bits(np.array([np.nan], np.float32)).astype(np.int32).view(np.float32)).all()


def test_a_wrong_mma_fragment_is_caught(rng: np.random.Generator) -> None:
    """Swapping two A registers of every mma.sync (a kernel with the wrong fragment layout) must
    change the emulated product: the tensor-core ops are checked, not passed through."""
    f, make, kind = PROGRAMS["matmul/f16"]
    arguments = make(rng)
    text = mlax.jit(f, backend="gpu").lower(*arguments).as_text("gpu", debug_info=False)
    swapped = re.sub(r"nvvm\.mma\.sync A\[(%\w+), (%\w+),", r"nvvm.mma.sync A[\2, \1,", text)
    assert swapped != text
    expected = mlax.jit(f, backend="cpu")(*arguments)
    _compare(emulate_text(text, arguments), expected, *_tolerance(kind, expected))
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        _compare(emulate_text(swapped, arguments), expected, *_tolerance(kind, expected))
