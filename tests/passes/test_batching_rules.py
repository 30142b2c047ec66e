"""The batch rule of every mlax op, without the driver: @orig applies the op to one example,
@f applies its batch rule to batched (leading dim) and unbatched operands; both run in the
reference interpreter, and @f must equal @orig per example, stacked. dot_general is also
checked against jax.vmap of lax.dot_general. Shapes are random (rank 0, size-0/1 dims),
batch sizes include 1, floats include NaN/inf/-0."""

from __future__ import annotations

import itertools
import zlib
from typing import Any

import jax
import numpy as np
import pytest
from jax import lax
from mlir import ir
from mlir.dialects import func

from mlax.backends.interpreter import run_function
from mlax.dialect import OPS, build, dtypes, infer
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes.autodiff.emit import Emitter
from mlax.passes.batching.rules import BATCH_RULES

F32, F16, BF16, I8, I32, U8, BOOL = (np.dtype(d) for d in (
    np.float32, np.float16, dtypes.bfloat16, np.int8, np.int32, np.uint8, np.bool_))
Operand = tuple[tuple[int, ...], np.dtype]


# --- the local driver ---------------------------------------------------------------------------


def _function(module: ir.Module, name: str, types: list[ir.Type], body: Any) -> None:
    with ir.InsertionPoint(module.body):
        function = func.FuncOp(name, ir.FunctionType.get(types, []))
    block = function.add_entry_block()
    with ir.InsertionPoint(block):
        results = body(block)
        func.ReturnOp(results)
    function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        types, [r.type for r in results]))


def batch_module(op_name: str, attrs: dict[str, Any], operands: list[Operand], batched: list[bool],
                 size: int) -> ir.Module:
    """@orig(example operands) applies the op; @f(batched operands) applies its batch rule."""
    module = ir.Module.create()
    holder: list[ir.Operation] = []

    def original(block: ir.Block) -> list[ir.Value]:
        outs = build(op_name, list(block.arguments), attrs)
        holder.append(outs[0].owner)
        return outs

    def batched_body(block: ir.Block) -> list[ir.Value]:
        op = holder[0]
        e = Emitter(ir.InsertionPoint(block), ir.Location.unknown())
        results = BATCH_RULES[op_name](e, op, list(block.arguments), batched, size)
        assert len(results) == len(op.results)
        for r, o in zip(results, op.results, strict=True):
            want = TensorSpec.from_mlir(o.type)
            assert TensorSpec.from_mlir(r.type) == TensorSpec((size, *want.shape), want.dtype)
        return results

    _function(module, "orig", [TensorSpec(*o).to_mlir() for o in operands], original)
    _function(module, "f", [TensorSpec(((size, *s) if b else s), d).to_mlir()
                            for (s, d), b in zip(operands, batched, strict=True)], batched_body)
    assert module.operation.verify()
    return module


def random_values(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if dtypes.is_bool(dtype):
        return rng.random(shape) < 0.5
    if dtypes.is_float(dtype):
        x = rng.standard_normal(shape) * 3
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0])
        x = np.where(rng.random(shape) < 0.2, rng.choice(specials, shape), x)
        return x.astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -9), min(info.max, 9), shape, endpoint=True).astype(dtype)


def check(op_name: str, attrs: dict[str, Any], operands: list[Operand], batched: list[bool], size: int,
          rng: np.random.Generator, values: list[np.ndarray] | None = None) -> np.ndarray:
    """@f on random batched operands equals @orig per example, stacked; returns @f's result."""
    module = batch_module(op_name, attrs, operands, batched, size)
    if values is None:
        values = [random_values(rng, (size, *s) if b else s, d)
                  for (s, d), b in zip(operands, batched, strict=True)]
    (out,) = run_function(module, "f", values)
    examples = [run_function(module, "orig", [v[i] if b else v
                                              for v, b in zip(values, batched, strict=True)])[0]
                for i in range(size)]
    expected = np.stack(examples) if examples else np.zeros((0, *out.shape[1:]), out.dtype)
    assert out.shape == expected.shape and out.dtype == expected.dtype
    if dtypes.is_float(out.dtype):
        np.testing.assert_allclose(out.astype(np.float64), expected.astype(np.float64), rtol=1e-6,
                                   atol=1e-6, equal_nan=True)
    else:
        np.testing.assert_array_equal(out, expected)
    return out


def rng_for(*key: Any) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def patterns(n: int) -> list[list[bool]]:
    """Every batched/unbatched assignment of ``n`` operands with at least one batched."""
    return [list(p) for p in itertools.product([True, False], repeat=n) if any(p)]


SHAPES = [(), (1,), (5,), (2, 1, 3), (0, 2)]
SIZES = [1, 3, 4]


def test_table_covers_dialect() -> None:
    assert set(BATCH_RULES) == set(OPS)


# --- elementwise --------------------------------------------------------------------------------

# Every op with the elementwise trait whose operands can share one type (the others, convert
# and select/clamp with rank-0 operands, have cases of their own below).
ELEMENTWISE = sorted(n for n, d in OPS.items() if d.elementwise)
ATTRS: dict[str, dict[str, Any]] = {"round": {"rounding_method": "to_nearest_even"},
                                    "compare": {"comparison_direction": "LT"}}


def _accepted(op_name: str, dtype: np.dtype) -> bool:
    arity = len(OPS[op_name].operands)
    try:
        infer(op_name, [TensorSpec((), dtype)] * arity, ATTRS.get(op_name, {}))
    except (TypeError, ValueError):
        return False
    return True


ELEMENTWISE_CASES = [(n, d) for n in ELEMENTWISE for d in [d for d in (F32, BF16, I32, U8, BOOL)
                                                           if _accepted(n, d)][:2]]


@pytest.mark.parametrize(("op_name", "dtype"), ELEMENTWISE_CASES, ids=str)
def test_elementwise(context: ir.Context, op_name: str, dtype: np.dtype) -> None:
    rng = rng_for(op_name, dtype)
    arity = len(OPS[op_name].operands)
    for batched in patterns(arity):
        shape, size = SHAPES[rng.integers(len(SHAPES))], SIZES[rng.integers(len(SIZES))]
        check(op_name, ATTRS.get(op_name, {}), [(shape, dtype)] * arity, batched, size, rng)


@pytest.mark.parametrize("op_name", ["select", "clamp"])
@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_select_clamp_rank0_operands(context: ir.Context, op_name: str, shape: tuple[int, ...]) -> None:
    """select's predicate and clamp's bounds may be rank 0, batched or not."""
    rng = rng_for(op_name, shape)
    first_dtype = BOOL if op_name == "select" else F32
    may_be_scalar = [True, False, op_name == "clamp"]
    for scalar in itertools.product(*[[False, True] if m else [False] for m in may_be_scalar]):
        operands = [(() if sc else shape, dtype)
                    for sc, dtype in zip(scalar, (first_dtype, F32, F32), strict=True)]
        for batched in patterns(3):
            check(op_name, {}, operands, batched, int(rng.integers(1, 4)), rng)


@pytest.mark.parametrize(("op_name", "attrs", "operand"), [
    ("convert", {"new_dtype": I8}, ((2, 3), F32)),
    ("convert", {"new_dtype": F16}, ((), I32)),
    ("bitcast_convert", {"new_dtype": U8}, ((), F32)),
    ("bitcast_convert", {"new_dtype": I32}, ((3, 4), I8)),
    ("bitcast_convert", {"new_dtype": BF16}, ((3, 2), U8)),
    ("stop_gradient", {}, ((2, 0), F32)),
    ("stop_gradient", {}, ((), BOOL)),
], ids=str)
def test_unary_maps(context: ir.Context, op_name: str, attrs: dict[str, Any], operand: Operand) -> None:
    rng = rng_for(op_name, attrs, operand)
    for size in (1, 3):
        check(op_name, attrs, [operand], [True], size, rng)


# --- shape ops and reductions: one operand ------------------------------------------------------

ONE_OPERAND = [
    ("broadcast_in_dim", {"shape": (3, 2, 4), "broadcast_dimensions": (0, 2)}, (3, 1)),
    ("broadcast_in_dim", {"shape": (2, 5), "broadcast_dimensions": ()}, ()),
    ("reshape", {"shape": (3, 1, 2)}, (2, 3)),
    ("reshape", {"shape": ()}, (1, 1)),
    ("transpose", {"permutation": (2, 0, 1)}, (2, 3, 4)),
    ("rev", {"dimensions": (0, 2)}, (3, 1, 4)),
    ("slice", {"start_indices": (1, 0), "limit_indices": (5, 2), "strides": (2, 1)}, (5, 3)),
    ("reduce_sum", {"dimensions": (0, 2)}, (3, 2, 4)),
    ("reduce_prod", {"dimensions": (1,)}, (2, 3)),
    ("reduce_max", {"dimensions": ()}, (2,)),
    ("reduce_min", {"dimensions": (0,)}, (0, 3)),
    ("argmax", {"axis": 1, "index_dtype": I32}, (2, 5)),
    ("argmin", {"axis": 0, "index_dtype": U8}, (4,)),
    ("cumsum", {"axis": 0, "reverse": 1}, (4, 2)),
    ("cumprod", {"axis": 1, "reverse": 0}, (2, 3)),
    ("cummax", {"axis": 1, "reverse": 0}, (2, 3, 1)),
    ("cummin", {"axis": 0, "reverse": 1}, (5,)),
]


@pytest.mark.parametrize(("op_name", "attrs", "shape"), ONE_OPERAND, ids=str)
def test_one_operand(context: ir.Context, op_name: str, attrs: dict[str, Any],
                     shape: tuple[int, ...]) -> None:
    rng = rng_for(op_name, attrs, shape)
    for size in (1, 3):
        check(op_name, attrs, [(shape, F32)], [True], size, rng)


@pytest.mark.parametrize("op_name", ["reduce_and", "reduce_or"])
def test_bitwise_reductions(context: ir.Context, op_name: str) -> None:
    rng = rng_for(op_name)
    for dtype in (I32, BOOL):
        check(op_name, {"dimensions": (1,)}, [((2, 3), dtype)], [True], 4, rng)


@pytest.mark.parametrize(("shapes", "dimension"), [(((2, 3), (4, 3)), 0), (((2, 1), (2, 0)), 1)], ids=str)
def test_concatenate(context: ir.Context, shapes: tuple[tuple[int, ...], ...], dimension: int) -> None:
    rng = rng_for(shapes)
    for batched in patterns(2):
        check("concatenate", {"dimension": dimension}, [(s, I32) for s in shapes], batched, 3, rng)


PAD = {"edge_padding_low": (1, -1), "edge_padding_high": (-1, 2), "interior_padding": (0, 1)}


def test_pad(context: ir.Context) -> None:
    """A batched padding value pads with zero and selects it in (JAX's _pad_batch_rule)."""
    rng = rng_for("pad")
    for batched, size in itertools.product(patterns(2), (1, 3)):
        check("pad", PAD, [((3, 2), F32), ((), F32)], batched, size, rng)
    check("pad", {k: (2,) for k in PAD}, [((0,), I8), ((), I8)], [False, True], 2, rng)


# --- dynamic slicing ----------------------------------------------------------------------------


def _starts(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    return [np.asarray(rng.integers(-2, 6), np.int32) for _ in range(n)]


def test_dynamic_slice(context: ir.Context) -> None:
    rng = rng_for("dynamic_slice")
    for shape, sizes in (((5, 3), (2, 3)), ((4,), (0,)), ((), ())):
        operands = [(shape, F32)] + [((), I32)] * len(shape)
        batched = [True] + [False] * len(shape)
        for size in (1, 3):
            values = [random_values(rng, (size, *shape), F32), *_starts(rng, len(shape))]
            check("dynamic_slice", {"slice_sizes": sizes}, operands, batched, size, rng, values)


def test_dynamic_update_slice(context: ir.Context) -> None:
    rng = rng_for("dynamic_update_slice")
    operands = [((5, 3), F32), ((2, 2), F32), ((), I32), ((), I32)]
    for batched in patterns(2):
        values = [random_values(rng, (3, *s) if b else s, d)
                  for (s, d), b in zip(operands[:2], batched, strict=True)] + _starts(rng, 2)
        check("dynamic_update_slice", {}, operands, batched + [False, False], 3, rng, values)


@pytest.mark.parametrize("op_name", ["dynamic_slice", "dynamic_update_slice"])
def test_batched_start_indices(context: ir.Context, op_name: str) -> None:
    """Per-example start indices (clamped, possibly out of range) become a gather / scatter."""
    rng = rng_for(f"{op_name}-batched-starts")
    attrs = {"slice_sizes": (2, 3)} if op_name == "dynamic_slice" else {}
    data = [((5, 3), F32)] + ([((2, 3), F32)] if op_name == "dynamic_update_slice" else [])
    operands = [*data, ((), I32), ((), I32)]
    for batched in patterns(len(data)):
        values = [random_values(rng, (3, *s) if b else s, d) for (s, d), b in zip(data, batched, strict=True)]
        starts = [rng.integers(-2, 6, size=3).astype(np.int32), np.asarray(rng.integers(-1, 2), np.int32)]
        check(op_name, attrs, operands, [*batched, True, False], 3, rng, values + starts)


def test_operandless(context: ir.Context) -> None:
    """constant/iota are never batched by the driver; their rule still gives a batched value."""
    for op_name, attrs in (("constant", {"value": np.arange(3, dtype=np.int32)}),
                           ("iota", {"shape": (2, 3), "dtype": F32, "dimension": 1})):
        module = ir.Module.create()
        _function(module, "f", [], lambda block, op_name=op_name, attrs=attrs: BATCH_RULES[op_name](
            Emitter(ir.InsertionPoint(block), ir.Location.unknown()), build(op_name, [], attrs)[0].owner,
            [], [], 2))
        (out,) = run_function(module, "f", [])
        (one,) = [np.asarray(OPS[op_name].reference(**attrs))]
        np.testing.assert_array_equal(out, np.stack([one, one]))


# --- dot_general --------------------------------------------------------------------------------

# (lhs shape, rhs shape, lhs contracting, rhs contracting, lhs batch, rhs batch)
DOTS = [
    ((3, 4), (4, 2), (1,), (0,), (), ()),
    ((4, 3), (2, 4), (0,), (1,), (), ()),
    ((4,), (4,), (0,), (0,), (), ()),
    ((2,), (3,), (), (), (), ()),
    ((), (3, 1), (), (), (), ()),
    ((2, 3, 4), (4, 2, 5), (2,), (0,), (0,), (1,)),
    ((3, 2, 4, 1), (1, 4, 2, 3), (2, 0), (1, 3), (1,), (2,)),
    ((5, 2, 3), (3, 5, 2), (), (), (0, 1), (1, 2)),
    ((2, 0), (0, 3), (1,), (0,), (), ()),
]


def _dims(case: tuple) -> dict[str, Any]:
    return dict(zip(("lhs_contracting_dimensions", "rhs_contracting_dimensions", "lhs_batch_dimensions",
                     "rhs_batch_dimensions"), case[2:], strict=True))


@pytest.mark.parametrize("case", DOTS, ids=str)
def test_dot_general(context: ir.Context, case: tuple) -> None:
    """Batch on lhs, rhs or both; equals the per-example op and jax.vmap of lax.dot_general."""
    rng = rng_for(case)
    lhs, rhs, lc, rc, lb, rb = case
    for batched, size in itertools.product(patterns(2), (1, 3)):
        values = [(rng.standard_normal((size, *s) if b else s)).astype(np.float32)
                  for s, b in zip((lhs, rhs), batched, strict=True)]
        attrs = {**_dims(case), "result_dtype": F32}
        out = check("dot_general", attrs, [(lhs, F32), (rhs, F32)], batched, size, rng, values)
        vmapped = jax.vmap(lambda x, y: lax.dot_general(x, y, ((lc, rc), (lb, rb)),
                                                        precision=lax.Precision.HIGHEST),
                           in_axes=tuple(0 if b else None for b in batched))(*values)
        np.testing.assert_allclose(out, np.asarray(vmapped), rtol=1e-5, atol=1e-5)


def test_dot_general_integer(context: ir.Context) -> None:
    rng = rng_for("dot_int")
    attrs = {**_dims(DOTS[6]), "result_dtype": I32}
    for batched in patterns(2):
        check("dot_general", attrs, [(DOTS[6][0], I8), (DOTS[6][1], I8)], batched, 2, rng)
