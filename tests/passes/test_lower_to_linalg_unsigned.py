"""mlax-lower-to-linalg on unsigned integers: the rules pick unsigned semantics, the lowered
module has no unsigned type left, and executed it agrees with the interpreter (values above
the signed maximum included)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from mlir import ir

from mlax.dialect import dtypes, get_context
from mlax.passes.pipeline import run_pipeline
from tests.passes.test_lower_to_linalg import SHAPE, _floats, _i64s, _ints, _module, check

UNSIGNED = [np.uint8, np.uint16, np.uint32, np.uint64]
UNARY = ["neg", "sign", "not", "population_count"]
BINARY = ["add", "sub", "mul", "div", "rem", "max", "min", "and", "or", "xor", "pow", "shift_left",
          "shift_right_logical", "shift_right_arithmetic"]


def _uints(rng: np.random.Generator, dtype: type, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    """Half `_ints` (near 0, near the maximum, the bit-pattern corners), half uniform bits."""
    x = _ints(rng, dtype, shape)
    uniform = rng.integers(0, np.iinfo(dtype).max, size=shape, dtype=dtype, endpoint=True)
    return np.where(rng.integers(0, 2, size=shape).astype(bool), uniform, x)


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("op", UNARY)
def test_unary(op: str, dtype: type, rng: np.random.Generator) -> None:
    check(op, [_uints(rng, dtype)])


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("op", BINARY)
def test_binary(op: str, dtype: type, rng: np.random.Generator) -> None:
    x, y = _uints(rng, dtype), _uints(rng, dtype)
    if op.startswith("shift"):
        y = rng.integers(0, 2 + 8 * np.dtype(dtype).itemsize, size=SHAPE).astype(dtype)
    elif op == "pow":
        y.reshape(-1)[:6] = rng.integers(0, 5, size=6)
    y.reshape(-1)[6] = 0  # x / 0, x % 0
    check(op, [x, y])


@pytest.mark.parametrize("shape", [(), (0, 3), (1,), (2, 5, 3)])
def test_shapes(shape: tuple[int, ...], rng: np.random.Generator) -> None:
    check("div", [_uints(rng, np.uint32, shape), _uints(rng, np.uint32, shape)])


@pytest.mark.parametrize("dtype", [np.uint8, np.uint64])
@pytest.mark.parametrize("direction", ["EQ", "NE", "LT", "LE", "GT", "GE"])
def test_compare(direction: str, dtype: type, rng: np.random.Generator) -> None:
    x, y = _uints(rng, dtype), _uints(rng, dtype)
    x.reshape(-1)[:3] = y.reshape(-1)[:3]
    check("compare", [x, y], attrs=f'{{comparison_direction = "{direction}"}}', result=(SHAPE, np.bool_))


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_clamp_select(dtype: type, rng: np.random.Generator) -> None:
    bounds = [_uints(rng, dtype, ()), _uints(rng, dtype, ())]
    check("clamp", [bounds[0], _uints(rng, dtype), bounds[1]], result=(SHAPE, dtype))
    check("select", [rng.integers(0, 2, size=SHAPE).astype(bool), _uints(rng, dtype), _uints(rng, dtype)],
          result=(SHAPE, dtype))


OTHERS = [np.int8, np.int32, np.int64, np.float32, np.float64, np.float16, dtypes.bfloat16, np.bool_]


def _values(rng: np.random.Generator, dtype: type) -> np.ndarray:
    """Values of ``dtype`` that reach every conversion's edges (floats: beyond 2^64, negative,
    NaN, inf; integers: the bit-pattern corners)."""
    if dtype == np.bool_:
        return rng.integers(0, 2, size=SHAPE).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return _uints(rng, dtype) if np.dtype(dtype).kind == "u" else _ints(rng, dtype)
    x = _floats(rng, np.float64) * 1e3
    x.reshape(-1)[:5] = [2.0 ** 64, 2.0 ** 32 - 1, 255.75, -0.75, 4e9]
    with np.errstate(over="ignore"):
        return x.astype(dtype)


@pytest.mark.parametrize(("source", "target"), [
    *((u, t) for u in UNSIGNED for t in [*UNSIGNED, *OTHERS] if u != t),
    *((t, u) for u in UNSIGNED for t in OTHERS)])
def test_convert(source: type, target: type, rng: np.random.Generator) -> None:
    check("convert", [_values(rng, source)], attrs=f"{{new_dtype = {dtypes.mlir_name(np.dtype(target))}}}",
          result=(SHAPE, target))


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_iota_and_constant(dtype: type) -> None:
    name = dtypes.mlir_name(np.dtype(dtype))
    check("iota", [], attrs=f"{{shape = array<i64: 3, 300>, dtype = {name}, dimension = 1 : i64}}",
          result=((3, 300), dtype))
    top = np.iinfo(dtype).max
    value = f"dense<[[1, {top}], [{top // 2 + 1}, {top // 2}]]> : tensor<2x2x{name}>"
    check("constant", [], attrs=f"{{value = {value}}}", result=((2, 2), dtype))
    check("constant", [], attrs=f"{{value = dense<{top}> : tensor<3x{name}>}}", result=((3,), dtype))


@pytest.mark.parametrize("dtype", UNSIGNED)
@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min", "and", "or"])
@pytest.mark.parametrize(("shape", "dims"), [((3, 5), (1,)), ((2, 3, 4), (0, 2)), ((0, 3), (0,))])
def test_reduce(kind: str, dtype: type, shape: tuple, dims: tuple, rng: np.random.Generator) -> None:
    out = tuple(n for d, n in enumerate(shape) if d not in dims)
    check(f"reduce_{kind}", [_uints(rng, dtype, shape)], attrs=f"{{dimensions = {_i64s(dims)}}}",
          result=(out, dtype))


def test_shape_ops(rng: np.random.Generator) -> None:
    x = _uints(rng, np.uint64, (2, 3))
    check("transpose", [x], attrs="{permutation = array<i64: 1, 0>}", result=((3, 2), np.uint64))
    check("reshape", [x], attrs="{shape = array<i64: 6>}", result=((6,), np.uint64))
    broadcast = "{shape = array<i64: 4, 2, 3>, broadcast_dimensions = array<i64: 1, 2>}"
    check("broadcast_in_dim", [x], attrs=broadcast, result=((4, 2, 3), np.uint64))
    attrs = ("{edge_padding_low = array<i64: 1, 0>, edge_padding_high = array<i64: 0, 2>, "
             "interior_padding = array<i64: 1, 0>}")
    check("pad", [x, np.asarray(np.iinfo(np.uint64).max, np.uint64)], attrs=attrs, result=((4, 5), np.uint64))
    check("concatenate", [x, x], attrs="{dimension = 0 : i64}", result=((4, 3), np.uint64))


def test_nothing_unsigned_remains(rng: np.random.Generator) -> None:
    """Signatures, block arguments and constants all become signless; no cast is left."""
    x = _uints(rng, np.uint32)
    text = _module("div", [x, x], SHAPE, np.dtype(np.uint32)).replace(
        '%r = "mlax.div"(%a0, %a1)',
        '%c = "mlax.constant"() {value = dense<4294967295> : tensor<3x4xui32>} : () -> tensor<3x4xui32>\n'
        '  %r = "mlax.div"(%a0, %c)')
    with get_context():
        module = ir.Module.parse(text)
        run_pipeline(module, "mlax-lower-to-linalg")
        lowered = str(module)
    assert "arith.divui" in lowered and "dense<-1> : tensor<3x4xi32>" in lowered
    assert not re.search(r"\bui\d", lowered) and "unrealized_conversion_cast" not in lowered
