"""mlax-lower-to-linalg: each rule's lowering runs (mlir-opt's pipeline to LLVM, then the
ExecutionEngine) and must agree with the interpreter on the un-lowered op."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from mlir import ir
from mlir.execution_engine import ExecutionEngine
from mlir.runtime import get_ranked_memref_descriptor, make_nd_memref_descriptor, ranked_memref_to_numpy

from mlax.backends.interpreter import run_function
from mlax.dialect import dtypes, get_context
from mlax.dialect.registry import OPS
from mlax.passes import pipeline as pipelines
from mlax.passes.lower_to_linalg import RULES
from mlax.passes.pipeline import PipelineError, run_pipeline

LOWER_TO_LLVM = (
    "builtin.module(linalg-fuse-elementwise-ops, one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map}, convert-linalg-to-loops, "
    "expand-strided-metadata, lower-affine, convert-scf-to-cf, convert-math-to-llvm, "
    "convert-math-to-libm, arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}, "
    "mlax-expand-bf16, finalize-memref-to-llvm, convert-arith-to-llvm, convert-cf-to-llvm, "
    "convert-func-to-llvm, reconcile-unrealized-casts)")


def _tensor(shape: tuple[int, ...], dtype: np.dtype) -> str:
    return f"tensor<{''.join(f'{d}x' for d in shape)}{dtypes.mlir_name(np.dtype(dtype))}>"


def _module(op: str, args: list[np.ndarray], shape: tuple[int, ...], dtype: np.dtype, attrs: str = "") -> str:
    """@f applying one mlax op. Boolean tensors cross the function boundary as i8 (memrefs of i1
    do not lower to LLVM), converted inside; elementwise fusion removes the i1 buffers."""
    types = [_tensor(a.shape, a.dtype) for a in args]
    outer = [_tensor(a.shape, np.int8 if a.dtype == np.bool_ else a.dtype) for a in args]
    lines, operands = [], []
    for i, (inner, boundary) in enumerate(zip(types, outer, strict=True)):
        if inner != boundary:
            lines.append(f'%b{i} = "mlax.convert"(%a{i}) {{new_dtype = i1}} : ({boundary}) -> {inner}')
        operands.append(f"%b{i}" if inner != boundary else f"%a{i}")
    result = _tensor(shape, dtype)
    lines.append(f'%r = "mlax.{op}"({", ".join(operands)}) {attrs} : ({", ".join(types)}) -> {result}')
    boundary = result.replace("i1>", "i8>")
    if boundary != result:
        lines.append(f'%r8 = "mlax.convert"(%r) {{new_dtype = i8}} : ({result}) -> {boundary}')
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(outer))
    body = "".join(f"  {line}\n" for line in lines)
    return (f"func.func @f({params}) -> {boundary} attributes {{llvm.emit_c_interface}} {{\n{body}"
            f"  return {'%r8' if boundary != result else '%r'} : {boundary}\n}}\n")


# ctypes has no f16/bf16: pass their bits as int16 (the compiled code only sees pointers).
_C_TYPES = {np.dtype(np.bool_): np.dtype(np.int8), np.dtype(np.float16): np.dtype(np.int16),
            dtypes.bfloat16: np.dtype(np.int16)}


def _as_boundary(array: np.ndarray) -> np.ndarray:
    return np.array(array.astype(np.int8) if array.dtype == np.bool_ else array, order="C", copy=True)


def execute_lowered(text: str, args: list[np.ndarray], shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Lower ``text`` with mlax-lower-to-linalg, compile it to LLVM and run @f on ``args``."""
    with get_context():
        module = ir.Module.parse(text)
        run_pipeline(module, "mlax-lower-to-linalg")
        pipelines.run_pipeline(module, LOWER_TO_LLVM)  # not run_pipeline: tests patch that name
        engine = ExecutionEngine(module, opt_level=0)
    out_dtype = _C_TYPES.get(dtype, dtype)
    result = make_nd_memref_descriptor(len(shape), np.ctypeslib.as_ctypes_type(out_dtype))()
    pointers = [ctypes.pointer(ctypes.pointer(result))]
    keep = [_as_boundary(a) for a in args]
    keep = [a.view(_C_TYPES.get(a.dtype, a.dtype)) for a in keep]
    pointers += [ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(a))) for a in keep]
    engine.invoke("f", *pointers)
    out = ranked_memref_to_numpy([result]).reshape(shape).copy()  # may point into the engine (constants)
    return out.astype(dtype) if dtype == np.bool_ else out.view(dtype)


def check(op: str, args: list[np.ndarray], attrs: str = "", result: tuple | None = None,
          rtol: float = 0.0, nan_bits: bool = False) -> None:
    """The lowered op and the interpreter agree on ``args`` (bitwise unless ``rtol``; NaN where
    the interpreter has NaN, with the same bits if ``nan_bits``). ``result`` is (shape, dtype),
    by default that of ``args[0]``."""
    shape, dtype = result or (args[0].shape, args[0].dtype)
    text = _module(op, args, shape, np.dtype(dtype), attrs)
    with get_context():
        (expected,) = run_function(ir.Module.parse(text), "f", [_as_boundary(a) for a in args])
    expected = expected.astype(bool) if dtype == np.bool_ else expected
    actual = execute_lowered(text, args, shape, np.dtype(dtype))
    assert actual.dtype == expected.dtype
    if rtol:
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol, equal_nan=True)
    else:
        flat = [np.ascontiguousarray(a).reshape(-1) for a in (actual, expected)]
        is_float = np.dtype(dtype).kind == "f" or np.dtype(dtype) == dtypes.bfloat16
        if is_float and not nan_bits:  # NaN sign and payload are free
            with np.errstate(invalid="ignore"):  # signalling NaNs
                nan = [np.isnan(a.astype(np.float64)) for a in flat]
            np.testing.assert_array_equal(*nan)
            flat = [a[~nan[1]] for a in flat]
        np.testing.assert_array_equal(*(a.view(np.uint8) for a in flat))


SHAPE = (3, 4)
FLOATS = [np.float32, np.float64, np.float16, dtypes.bfloat16]
INTS = [np.int32, np.int8]
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 2.5, -2.5, 1.0, -1.0, 3e9])


def _floats(rng: np.random.Generator, dtype: type, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    """Random values with the special ones mixed in."""
    x = rng.normal(scale=3.0, size=shape)
    flat = x.reshape(-1)
    flat[:len(SPECIAL)] = SPECIAL[:flat.size]
    with np.errstate(over="ignore"):  # 3e9 is inf in f16
        return rng.permutation(flat).reshape(shape).astype(dtype)


def _ints(rng: np.random.Generator, dtype: type, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    """Small values of either sign (unsigned: near 0 and near the maximum, above the signed
    maximum) and the bit patterns 0, all ones, 100...0 and 011...1 (INT_MIN and INT_MAX)."""
    signed = np.dtype(f"i{np.dtype(dtype).itemsize}")
    x = rng.integers(-9, 10, size=shape).astype(signed).view(dtype)
    special = np.array([0, -1, np.iinfo(signed).min, np.iinfo(signed).max], signed).view(dtype)
    x.reshape(-1)[:4] = special[:x.size]
    return rng.permutation(x.reshape(-1)).reshape(shape)


EXACT_FLOAT_UNARY = ["neg", "abs", "sign", "floor", "ceil", "sqrt"]
APPROX_FLOAT_UNARY = ["exp", "expm1", "log", "log1p", "rsqrt", "cbrt", "sin", "cos", "tan", "tanh",
                      "erf", "erfc", "exp2", "logistic"]
INT_UNARY = ["neg", "abs", "sign", "not", "population_count"]
EXACT_FLOAT_BINARY = ["add", "sub", "mul", "div", "rem", "max", "min"]
INT_BINARY = ["add", "sub", "mul", "div", "rem", "max", "min", "and", "or", "xor", "shift_left",
              "shift_right_logical", "shift_right_arithmetic"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", EXACT_FLOAT_UNARY + APPROX_FLOAT_UNARY)
def test_float_unary(op: str, dtype: type, rng: np.random.Generator) -> None:
    check(op, [_floats(rng, dtype)], rtol=0.0 if op in EXACT_FLOAT_UNARY else 2e-6)


@pytest.mark.parametrize("dtype", FLOATS)
def test_is_finite(dtype: type, rng: np.random.Generator) -> None:
    check("is_finite", [_floats(rng, dtype)], result=(SHAPE, np.bool_))


@pytest.mark.parametrize("method", ["away_from_zero", "to_nearest_even"])
def test_round(method: str, rng: np.random.Generator) -> None:
    check("round", [_floats(rng, np.float32)], attrs=f'{{rounding_method = "{method}"}}')


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", INT_UNARY)
def test_int_unary(op: str, dtype: type, rng: np.random.Generator) -> None:
    check(op, [_ints(rng, dtype)])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", EXACT_FLOAT_BINARY + ["atan2", "pow"])
def test_float_binary(op: str, dtype: type, rng: np.random.Generator) -> None:
    x, y = _floats(rng, dtype), _floats(rng, dtype)
    x.reshape(-1)[:3] = y.reshape(-1)[:3]  # ties: max/min of equal values, x % x
    check(op, [x, y], rtol=0.0 if op in EXACT_FLOAT_BINARY else 2e-6)


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", INT_BINARY)
def test_int_binary(op: str, dtype: type, rng: np.random.Generator) -> None:
    x, y = _ints(rng, dtype), _ints(rng, dtype)
    if op.startswith("shift"):
        y = rng.integers(-2, 2 + 8 * np.dtype(dtype).itemsize, size=SHAPE).astype(dtype)
    check(op, [x, y])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["max", "min", "clamp"])
def test_max_min_signed_zeros(op: str, dtype: type) -> None:
    """max(-0, +0) = +0 and min(-0, +0) = -0 in either order; NaN in either operand is NaN."""
    pairs = [(-0.0, 0.0), (0.0, -0.0), (-0.0, -0.0), (0.0, 0.0), (np.nan, 0.0), (1.0, np.nan),
             (-np.inf, np.inf), (2.0, -3.0), (-0.0, 1.0), (0.0, -1.0)]
    x, y = (np.array(v, dtype) for v in zip(*pairs, strict=True))
    args = [x, y, np.full_like(x, -0.0)] if op == "clamp" else [x, y]  # clamp(x, y, -0)
    check(op, args)


@pytest.mark.parametrize("op", ["add", "mul", "max", "min", "and", "or", "xor", "not"])
def test_bool(op: str, rng: np.random.Generator) -> None:
    args = [rng.integers(0, 2, size=SHAPE).astype(bool) for _ in range(1 if op == "not" else 2)]
    check(op, args)


@pytest.mark.parametrize("direction", ["EQ", "NE", "LT", "LE", "GT", "GE"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_compare(direction: str, dtype: type, rng: np.random.Generator) -> None:
    if dtype == np.bool_:
        x, y = (rng.integers(0, 2, size=SHAPE).astype(bool) for _ in range(2))
    else:
        make = _floats if dtype == np.float32 else _ints
        x, y = make(rng, dtype), make(rng, dtype)
        x.reshape(-1)[:3] = y.reshape(-1)[:3]
    check("compare", [x, y], attrs=f'{{comparison_direction = "{direction}"}}', result=(SHAPE, np.bool_))


@pytest.mark.parametrize("pred_shape", [SHAPE, ()])
def test_select(pred_shape: tuple[int, ...], rng: np.random.Generator) -> None:
    pred = np.asarray(rng.integers(0, 2, size=pred_shape).astype(bool))
    x, y = _floats(rng, np.float32), _floats(rng, np.float32)
    check("select", [pred, x, y], result=(SHAPE, np.float32))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("bounds_shape", [SHAPE, ()])
def test_clamp(dtype: type, bounds_shape: tuple[int, ...], rng: np.random.Generator) -> None:
    make = _floats if dtype == np.float32 else _ints
    lo, hi = make(rng, dtype, bounds_shape), make(rng, dtype, bounds_shape)
    check("clamp", [lo, make(rng, dtype), hi], result=(SHAPE, dtype))


CONVERSIONS = [(np.float32, np.int32), (np.float64, np.int8), (np.float32, np.int64), (np.int32, np.float32),
               (np.int8, np.float64), (np.int32, np.int8), (np.int8, np.int64), (np.float64, np.float32),
               (np.float32, np.float64), (np.float32, np.bool_), (np.int32, np.bool_), (np.bool_, np.float32),
               (np.bool_, np.int32), (np.float32, np.float16)]


@pytest.mark.parametrize(("source", "target"), CONVERSIONS)
def test_convert(source: type, target: type, rng: np.random.Generator) -> None:
    if source == np.bool_:
        x = rng.integers(0, 2, size=SHAPE).astype(bool)
    elif np.dtype(source).kind == "f":
        x = _floats(rng, source) * np.asarray(1e3, source)
        x.reshape(-1)[:2] = [2.0 ** 31, -(2.0 ** 31) - 1e3]
    else:
        x = _ints(rng, source)
    check("convert", [x], attrs=f"{{new_dtype = {dtypes.mlir_name(np.dtype(target))}}}",
          result=(SHAPE, target))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8])
def test_iota(dtype: type) -> None:
    name = dtypes.mlir_name(np.dtype(dtype))
    attrs = f"{{shape = array<i64: 3, 300>, dtype = {name}, dimension = 1 : i64}}"
    check("iota", [], attrs=attrs, result=((3, 300), dtype))


def _i64s(values: tuple[int, ...]) -> str:
    return f"array<i64: {', '.join(map(str, values))}>" if values else "array<i64>"


@pytest.mark.parametrize(("in_shape", "shape", "dims"), [
    ((4,), (3, 4), (1,)), ((3, 1), (3, 5), (0, 1)), ((), (2, 3), ()), ((1, 4), (2, 1, 4), (1, 2))])
def test_broadcast_in_dim(in_shape: tuple, shape: tuple, dims: tuple, rng: np.random.Generator) -> None:
    attrs = f"{{shape = {_i64s(shape)}, broadcast_dimensions = {_i64s(dims)}}}"
    check("broadcast_in_dim", [_floats(rng, np.float32, in_shape)], attrs=attrs, result=(shape, np.float32))


def test_constant_and_stop_gradient(rng: np.random.Generator) -> None:
    check("stop_gradient", [_ints(rng, np.int32)])
    value = "{value = dense<[[1, -2], [3, 4]]> : tensor<2x2xi32>}"
    check("constant", [], attrs=value, result=((2, 2), np.int32))


def test_every_op_has_a_rule() -> None:
    assert set(OPS) <= set(RULES)


def test_missing_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """An op without a rule fails the pass with an error at the op, not a traceback (every op
    has one now, so one is taken away)."""
    monkeypatch.delitem(RULES, "add")
    t = "tensor<2xf32>"
    text = (f"func.func @f(%x: {t}) -> {t} {{\n"
            f'  %0 = "mlax.add"(%x, %x) : ({t}, {t}) -> {t} loc("here":3:4)\n'
            f"  return %0 : {t}\n}}\n")
    with get_context():
        module = ir.Module.parse(text)
        message = "here:3:4: error: mlax-lower-to-linalg: no lowering for mlax.add yet"
        with pytest.raises(PipelineError, match=message):
            run_pipeline(module, "mlax-lower-to-linalg")


@pytest.mark.parametrize("shape", [(), (1,), (0, 3), (2, 1, 3)])
@pytest.mark.parametrize("op", ["add", "max", "div"])
def test_shapes(op: str, shape: tuple[int, ...], rng: np.random.Generator) -> None:
    check(op, [_ints(rng, np.int32, shape), _ints(rng, np.int32, shape)])
    check(op, [_floats(rng, np.float32, shape), _floats(rng, np.float32, shape)])
