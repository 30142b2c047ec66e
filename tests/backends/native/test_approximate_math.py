"""mlax-approximate-math: the arith approximations, compiled to LLVM and run, are within a few
ulp of the exact result and of jax.numpy on CPU, over the whole range, with the exact answers
at NaN, +-inf, +-0 and the overflow/underflow edges."""

from __future__ import annotations

import ctypes
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.special
from mlir import ir
from mlir.execution_engine import ExecutionEngine
from mlir.runtime import get_ranked_memref_descriptor, make_nd_memref_descriptor, ranked_memref_to_numpy

from mlax.backends.native.approximate_math import ApproximateMath
from mlax.dialect import dtypes, get_context
from mlax.passes.pipeline import run_pipeline
from tests.passes import test_lower_to_linalg as linalg_tests
from tests.passes.test_lower_to_linalg import LOWER_TO_LLVM

JAX = {"exp": jnp.exp, "expm1": jnp.expm1, "log": jnp.log, "log1p": jnp.log1p, "tanh": jnp.tanh,
       "erf": jax.scipy.special.erf}
# Computed in float64 for f32 and in x87 long double (64-bit mantissa) for f64, then rounded.
EXACT = {"exp": np.exp, "expm1": np.expm1, "log": np.log, "log1p": np.log1p, "tanh": np.tanh,
         "erf": scipy.special.erf}
# Where the function is not constant, for the dense samples: (f32, f64); erf has no f64 rule.
INTERVALS = {
    "exp": ((-104.0, 89.0), (-746.0, 710.0)),
    "expm1": ((-18.0, 89.0), (-38.0, 710.0)),
    "log": ((0.0, 4.0), (0.0, 4.0)),
    "log1p": ((-1.0, 4.0), (-1.0, 4.0)),
    "tanh": ((-10.0, 10.0), (-20.0, 20.0)),
    "erf": ((-4.5, 4.5), None),
}
CASES = [(op, dtype) for op in sorted(INTERVALS) for dtype in (np.float32, np.float64)
         if INTERVALS[op][dtype == np.float64] is not None]
# Largest error allowed, in ulp: against the exact result (f64 tanh: 2), and against JAX, whose
# own f32 exp, expm1, tanh and erf are up to 5 ulp from exact.
MAX_ULP_EXACT = 1
MAX_ULP_F64_TANH = 2
MAX_ULP_JAX = 6
MLIR_NAME = {np.float32: "f32", np.float64: "f64"}


def _module(op: str, dtype: str) -> str:
    """@f: one math op over a 1-D tensor of any size, in a linalg.generic body."""
    t = f"tensor<?x{dtype}>"
    return f"""
#id = affine_map<(d0) -> (d0)>
func.func @f(%x: {t}) -> {t} attributes {{llvm.emit_c_interface}} {{
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : {t}
  %e = tensor.empty(%n) : {t}
  %r = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel"]}}
      ins(%x : {t}) outs(%e : {t}) {{
  ^bb0(%a: {dtype}, %b: {dtype}):
    %y = math.{op} %a : {dtype}
    linalg.yield %y : {dtype}
  }} -> {t}
  return %r : {t}
}}
"""


def compile_module(text: str, pipeline: str = LOWER_TO_LLVM, approximate: bool = True,
                   opt_level: int = 0) -> ExecutionEngine:
    with get_context():
        module = ir.Module.parse(text)
        if approximate:
            ApproximateMath().run(module.operation)
        run_pipeline(module, pipeline)
        return ExecutionEngine(module, opt_level=opt_level)


@functools.cache
def compiled(op: str, dtype: type = np.float32, approximate: bool = True,
             opt_level: int = 0) -> ExecutionEngine:
    return compile_module(_module(op, MLIR_NAME[dtype]), approximate=approximate, opt_level=opt_level)


def run(engine: ExecutionEngine, x: np.ndarray) -> np.ndarray:
    """@f on a 1-D array (its argument buffer may be written to)."""
    result = make_nd_memref_descriptor(1, np.ctypeslib.as_ctypes_type(x.dtype))()
    engine.invoke("f", ctypes.pointer(ctypes.pointer(result)),
                  ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(x))))
    return ranked_memref_to_numpy([result]).copy()


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """How many floats of a's type lie between a and b (0 when equal; -0.0 == +0.0)."""
    ints = np.int32 if a.dtype == np.float32 else np.int64
    sign = np.iinfo(ints).max

    def ordered(v: np.ndarray) -> np.ndarray:
        i = v.astype(a.dtype).view(ints).astype(np.int64)
        return np.where(i < 0, -(i & sign), i)
    with np.errstate(over="ignore"):
        return np.abs(ordered(a) - ordered(b))


def special(dtype: type) -> np.ndarray:
    info = np.finfo(dtype)
    return np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, info.smallest_subnormal,
                     -info.smallest_subnormal, info.smallest_normal, info.max, -info.max], dtype)


def samples(op: str, dtype: type, rng: np.random.Generator, n: int = 100_000) -> np.ndarray:
    """Random bit patterns (every finite binade equally) and uniform values over the interval
    where the function is not constant, plus values near 0 and the special ones."""
    ints = np.uint32 if dtype == np.float32 else np.uint64
    bits = rng.integers(0, np.iinfo(ints).max, n, dtype=ints, endpoint=True).view(dtype)
    lo, hi = INTERVALS[op][dtype == np.float64]
    dense = rng.uniform(lo, hi, n).astype(dtype)
    tiny_exponent = np.log10(np.finfo(dtype).smallest_subnormal)
    near_zero = (rng.uniform(-1, 1, n // 10) * 10.0 ** rng.uniform(tiny_exponent, 0, n // 10)).astype(dtype)
    return np.concatenate([bits[np.isfinite(bits)], dense, near_zero, special(dtype)])


def exact(op: str, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        wide = np.float64 if x.dtype == np.float32 else np.longdouble
        return EXACT[op](x.astype(wide)).astype(x.dtype)


def jax_reference(op: str, x: np.ndarray) -> np.ndarray:
    return np.asarray(JAX[op](x))


def max_error(a: np.ndarray, b: np.ndarray, where: np.ndarray) -> int:
    return int(ulp_distance(a[where], b[where]).max(initial=0))


def allowed(op: str, dtype: type) -> int:
    return MAX_ULP_F64_TANH if (op, dtype) == ("tanh", np.float64) else MAX_ULP_EXACT


def assert_same_specials(y: np.ndarray, want: np.ndarray) -> None:
    """NaN where expected, and otherwise bitwise equal at infinities and zeros (sign of zero)."""
    np.testing.assert_array_equal(np.isnan(y), np.isnan(want))
    keep = np.isinf(want) | (want == 0)
    np.testing.assert_array_equal(y[keep], want[keep])
    np.testing.assert_array_equal(np.signbit(y[keep]), np.signbit(want[keep]))


@pytest.mark.parametrize(("op", "dtype"), CASES)
def test_accuracy(op: str, dtype: type, rng: np.random.Generator) -> None:
    x = samples(op, dtype, rng)
    y = run(compiled(op, dtype), x.copy())
    want = exact(op, x)
    finite = np.isfinite(want) & np.isfinite(y)
    assert max_error(y, want, finite) <= allowed(op, dtype), f"{op}: too far from the exact result"
    assert_same_specials(y, want)
    if dtype == np.float32:  # XLA flushes subnormal inputs and results to zero: compare elsewhere
        tiny = np.finfo(dtype).smallest_normal
        normal = finite & (np.abs(x) >= tiny) & (np.abs(want) >= tiny)
        assert max_error(y, jax_reference(op, x), normal) <= MAX_ULP_JAX, f"{op}: too far from JAX"


@pytest.mark.parametrize("op", sorted(INTERVALS))
def test_special_values_match_jax(op: str) -> None:
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0], np.float32)
    assert_same_specials(run(compiled(op), x.copy()), jax_reference(op, x))


def _around(value: float, dtype: type, count: int = 64) -> np.ndarray:
    """The ``count`` floats on each side of ``value``."""
    ints = np.int32 if dtype == np.float32 else np.int64
    center = np.array(value, dtype).view(ints)
    return (center + np.arange(-count, count + 1, dtype=ints)).view(dtype)


@pytest.mark.parametrize(("op", "dtype", "edge"), [
    ("exp", np.float32, 88.72283935546875),    # largest x with a finite exp
    ("exp", np.float32, -87.33654),            # exp(x) reaches the smallest normal
    ("exp", np.float32, -103.27893),           # exp(x) reaches the smallest subnormal
    ("exp", np.float64, 709.782712893384),
    ("exp", np.float64, -708.3964185322641),
    ("exp", np.float64, -744.4400719213812),
    ("expm1", np.float32, 88.72283935546875),
    ("expm1", np.float32, -17.32868),          # expm1 rounds to -1
    ("expm1", np.float64, 709.782712893384),
    ("expm1", np.float64, -37.42994775023705),
    ("expm1", np.float32, 0.34657359), ("expm1", np.float64, 0.34657359),  # n = 0 -> 1
    ("tanh", np.float32, 9.010913),            # tanh rounds to 1
    ("tanh", np.float64, 19.061547465398498),
    ("tanh", np.float32, 0.625), ("tanh", np.float32, -0.625),
    ("erf", np.float32, 3.9192059),            # erf rounds to 1
    ("erf", np.float32, 1.0), ("erf", np.float32, -1.0),
    ("log", np.float32, 1.0), ("log", np.float32, 2.0 ** -126), ("log", np.float32, 3.4028235e38),
    ("log", np.float64, 1.0), ("log", np.float64, 2.0 ** -1022),
    ("log1p", np.float32, -1.0), ("log1p", np.float32, 1.0), ("log1p", np.float64, -1.0),
    ("exp", np.float32, 0.0), ("expm1", np.float32, 0.0), ("tanh", np.float64, 0.0),
])
def test_edges(op: str, dtype: type, edge: float) -> None:
    """The range boundaries are where the exact result puts them, subnormal results included."""
    x = _around(edge, dtype)
    y = run(compiled(op, dtype), x.copy())
    want = exact(op, x)
    assert max_error(y, want, np.isfinite(want) & np.isfinite(y)) <= allowed(op, dtype)
    assert_same_specials(y, want)


def test_f64_erf_stays_libm(rng: np.random.Generator) -> None:
    """No f64 erf approximation: the op stays for libm."""
    with get_context():
        module = ir.Module.parse(_module("erf", "f64"))
        ApproximateMath().run(module.operation)
        assert "math.erf" in str(module)
    x = rng.normal(size=100) * 3
    np.testing.assert_allclose(run(compiled("erf", np.float64), x.copy()), scipy.special.erf(x), rtol=1e-15)


VECTOR_LOWERING = LOWER_TO_LLVM.replace("finalize-memref-to-llvm",
                                        "convert-vector-to-llvm, finalize-memref-to-llvm")


@pytest.mark.parametrize(("op", "dtype"), CASES)
def test_vector_operand_matches_scalar(op: str, dtype: type, rng: np.random.Generator) -> None:
    """The same code on vector<64xT> (constants are splats) gives the scalar code's bits."""
    v, t = f"vector<64x{MLIR_NAME[dtype]}>", f"tensor<64x{MLIR_NAME[dtype]}>"
    text = f"""
func.func @f(%x: {t}) -> {t} attributes {{llvm.emit_c_interface}} {{
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : {MLIR_NAME[dtype]}
  %v = vector.transfer_read %x[%c0], %pad {{in_bounds = [true]}} : {t}, {v}
  %y = math.{op} %v : {v}
  %r = vector.transfer_write %y, %x[%c0] {{in_bounds = [true]}} : {v}, {t}
  return %r : {t}
}}
"""
    x = samples(op, dtype, rng, 64)[-64:]  # the special values and dense ones
    expected = run(compiled(op, dtype), x.copy())
    y = run(compile_module(text, VECTOR_LOWERING), x.copy())  # the result is written over the argument
    np.testing.assert_array_equal(y, expected)
    np.testing.assert_array_equal(np.signbit(y), np.signbit(expected))


# Relative tolerance against the interpreter's NumPy (about 16 f32 ulp, one f16 / bf16 ulp).
TOLERANCE = {np.float32: 2e-6, np.float64: 2e-6, np.float16: 1e-3, dtypes.bfloat16: 8e-3}
SHAPES = [(), (0, 3), (1,), (5, 7), (2, 1, 3)]


@pytest.mark.parametrize("dtype", list(TOLERANCE))
@pytest.mark.parametrize("op", ["exp", "expm1", "log", "log1p", "tanh", "erf", "exp2", "logistic"])
def test_mlax_op_lowered_then_approximated(op: str, dtype: type, rng: np.random.Generator,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """mlax ops through mlax-lower-to-linalg and this pass (f16/bf16 compute in f32) on a random
    shape, against the interpreter, with the linalg tests' harness."""
    monkeypatch.setattr(linalg_tests, "run_pipeline",
                        lambda module, pipeline: run_pipeline(module, f"{pipeline}, mlax-approximate-math"))
    shape = SHAPES[rng.integers(len(SHAPES))]
    linalg_tests.check(op, [linalg_tests._floats(rng, dtype, shape)], rtol=TOLERANCE[dtype])
