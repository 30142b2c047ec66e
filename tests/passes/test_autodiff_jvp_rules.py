"""The JVP rule of every mlax op: one op applied to function arguments, its rule emitted
after it, run by the reference interpreter; tangents agree with jax.jvp of the matching lax
function (on random values, random shapes incl. rank 0 and size-0/1 dims, and at the edge
points where JAX picks a convention) and with float64 central differences; every op that
consumes a tangent is one the transpose rules handle (the contract's linearity list)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from mlir import ir
from mlir.dialects import func

from mlax.backends.interpreter import run_function
from mlax.dialect import OPS, build, dtypes, get_op, read_attributes
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes.autodiff.emit import Emitter
from mlax.passes.autodiff.jvp_rules import JVP_RULES, ZERO_DERIVATIVE, zero_rule
from tests.oracle import assert_same

F16, BF16, F32, F64 = (np.dtype(d) for d in (np.float16, dtypes.bfloat16, np.float32, np.float64))
FLOATS = [F32, F64, F16, BF16]
TOLERANCE = {F64: 1e-9, F32: 3e-5, F16: 2e-2, BF16: 8e-2}
Jax = Callable[..., Any]


# --- the local driver: one op, its rule, interpreted -------------------------------------------


def jvp_module(op_name: str, attrs: dict[str, Any], args: list[np.ndarray],
               tangent_of: list[int]) -> tuple[ir.Module, list[ir.Value]]:
    """@f(primals..., tangents of operands ``tangent_of``...) -> (outs..., out tangents...)."""
    specs = [TensorSpec(a.shape, a.dtype).to_mlir() for a in args]
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        function = func.FuncOp("f", ir.FunctionType.get(specs + [specs[i] for i in tangent_of], []))
    block = function.add_entry_block()
    primals = list(block.arguments[:len(args)])
    tangents: list[ir.Value | None] = [None] * len(args)
    for i, arg in zip(tangent_of, block.arguments[len(args):], strict=True):
        tangents[i] = arg
    with ir.InsertionPoint(block):
        outs = build(op_name, primals, attrs)
        emitter = Emitter(ir.InsertionPoint(block), ir.Location.unknown())
        out_tangents = JVP_RULES[op_name](emitter, outs[0].owner, primals, tangents, outs)
        assert len(out_tangents) == len(outs)
        for t, o in zip(out_tangents, outs, strict=True):
            assert t is None or t.type == o.type, f"tangent {t.type} for result {o.type}"
        results = outs + [emitter.materialize(t, o) for t, o in zip(out_tangents, outs, strict=True)]
        func.ReturnOp(results)
    function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        function.type.inputs, [r.type for r in results]))
    assert module.operation.verify()
    return module, list(block.arguments[len(args):])


def _is_float_type(value: ir.Value) -> bool:
    return dtypes.is_float(TensorSpec.from_mlir(value.type).dtype)


def check_linearity(module: ir.Module, tangent_args: list[ir.Value]) -> None:
    """Every op that consumes a tangent is linear in it and has a transpose rule."""
    tainted = set(tangent_args)
    for op in module.body.operations[0].regions[0].blocks[0].operations:
        op = op.operation
        hot = [v in tainted for v in op.operands]
        if not any(hot) or op.name == "func.return":
            continue
        name = op.name.removeprefix("mlax.")
        ok = {
            "add": True, "sub": True, "neg": True, "broadcast_in_dim": True, "reshape": True,
            "transpose": True, "reduce_sum": True, "slice": True, "pad": True, "concatenate": True,
            "rev": True, "cumsum": True, "reduce_window_sum": True,
            "mul": sum(hot) == 1, "dot_general": sum(hot) == 1, "conv_general_dilated": sum(hot) == 1,
            "div": hot == [True, False],
            "convert": _is_float_type(op.operands[0]) and _is_float_type(op.results[0]),
            "select": not hot[0], "dynamic_slice": not any(hot[1:]),
            "dynamic_update_slice": not any(hot[2:]),
        }.get(name, False)
        assert ok, f"{op.name} is not linear in its tangent operands {hot}"
        tainted.update(op.results)


def mlax_jvp(op_name: str, attrs: dict[str, Any], args: list[np.ndarray], tangent_of: list[int],
             tangents: list[np.ndarray]) -> np.ndarray:
    module, tangent_args = jvp_module(op_name, attrs, args, tangent_of)
    check_linearity(module, tangent_args)
    _, out_tangent = run_function(module, "f", [*args, *tangents])
    return out_tangent


def jax_jvp(fn: Jax, args: list[np.ndarray], tangent_of: list[int], tangents: list[np.ndarray]) -> np.ndarray:
    def partial(*diff: Any) -> Any:
        full = [jnp.asarray(a) for a in args]
        for i, d in zip(tangent_of, diff, strict=True):
            full[i] = d
        return fn(*full)

    primals = [jnp.asarray(args[i]) for i in tangent_of]
    pushforward = jax.jit(lambda p, t: jax.jvp(partial, p, t)[1])  # one compile, not one per op
    return np.asarray(pushforward(primals, [jnp.asarray(t) for t in tangents]))


def finite_difference(op_name: str, attrs: dict[str, Any], args: list[np.ndarray], tangent_of: list[int],
                      tangents: list[np.ndarray], h: float = 1e-6) -> np.ndarray:
    reference = get_op(op_name).reference

    def at(step: float) -> np.ndarray:
        moved = list(args)
        for i, t in zip(tangent_of, tangents, strict=True):
            moved[i] = np.asarray(args[i] + step * t)
        return np.asarray(reference(*moved, **attrs), np.float64)

    return (at(h) - at(-h)) / (2 * h)


def assert_close(actual: np.ndarray, expected: np.ndarray, dtype: np.dtype, scale: float = 1.0) -> None:
    """Same shape and dtype; per element within the dtype's relative tolerance, plus an absolute
    slack of a tenth of it (operands and tangents are O(1), so a tangent that cancels to near
    zero keeps an error of a few ulps of 1; bf16 tanh' = (1 + y)(1 - y) near |y| = 1 is one)."""
    tol = TOLERANCE[dtype] * scale
    assert_same(np.asarray(actual), np.asarray(expected), rtol=tol, atol=tol / 10)


# --- cases --------------------------------------------------------------------------------------


@dataclass
class Case:
    """One op application: attributes, operand values, the lax function, differentiable operands."""

    attrs: dict[str, Any]
    args: list[np.ndarray]
    jax_fn: Jax
    diff: list[int]


def random_shape(rng: np.random.Generator, max_rank: int = 3, min_rank: int = 0) -> tuple[int, ...]:
    rank = int(rng.integers(min_rank, max_rank + 1))
    return tuple(int(d) for d in rng.choice([0, 1, 2, 3, 4, 5], p=[0.05, 0.25, 0.2, 0.2, 0.15, 0.15],
                                            size=rank))


def uniform(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, lo: float, hi: float,
            signed: bool = False) -> np.ndarray:
    """Values with |x| in [lo, hi] (random signs if ``signed``), rounded to ``dtype``."""
    x = rng.uniform(lo, hi, size=shape)
    if signed:
        x = x * rng.choice([-1.0, 1.0], size=shape)
    return np.asarray(x).astype(dtype)


# domain (lo, hi, signed) of each unary op, away from the points where it is not smooth
UNARY_DOMAIN = {
    "neg": (0, 3, True), "abs": (0.1, 3, True), "exp": (0, 3, True), "exp2": (0, 3, True),
    "expm1": (0, 2, True), "log": (0.3, 4, False), "log1p": (0, 0.6, True), "sqrt": (0.3, 4, False),
    "rsqrt": (0.3, 4, False), "cbrt": (0.3, 4, True), "sin": (0, 4, True), "cos": (0, 4, True),
    "tan": (0, 1.2, True), "tanh": (0, 3, True), "logistic": (0, 4, True), "erf": (0, 2, True),
    "erfc": (0, 2, True), "erf_inv": (0, 0.9, True),
}


def unary_case(name: str) -> Callable[[np.random.Generator, np.dtype], Case]:
    lo, hi, signed = UNARY_DOMAIN[name]
    return lambda rng, dtype: Case({}, [uniform(rng, random_shape(rng), dtype, lo, hi, signed)],
                                   getattr(lax, name), [0])


def _apart(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> list[np.ndarray]:
    """Two operands at least 0.2 apart everywhere (max/min are smooth there)."""
    x = uniform(rng, shape, dtype, 0, 3, True)
    gap = uniform(rng, shape, dtype, 0.2, 1.5) * rng.choice([-1, 1], size=shape).astype(dtype)
    return [x, (x + gap).astype(dtype)]


def _rem_args(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> list[np.ndarray]:
    """x / y at least 0.1 away from an integer (rem jumps there)."""
    y = uniform(rng, shape, dtype, 0.5, 2, True)
    q = rng.integers(-3, 4, size=shape) + rng.uniform(0.1, 0.9, size=shape)
    return [(q * y.astype(np.float64)).astype(dtype), y]


BINARY_ARGS: dict[str, Callable[[np.random.Generator, tuple[int, ...], np.dtype], list[np.ndarray]]] = {
    "add": lambda rng, s, d: [uniform(rng, s, d, 0, 3, True) for _ in "xy"],
    "sub": lambda rng, s, d: [uniform(rng, s, d, 0, 3, True) for _ in "xy"],
    "mul": lambda rng, s, d: [uniform(rng, s, d, 0, 3, True) for _ in "xy"],
    "div": lambda rng, s, d: [uniform(rng, s, d, 0, 3, True), uniform(rng, s, d, 0.5, 3, True)],
    "rem": _rem_args,
    "pow": lambda rng, s, d: [uniform(rng, s, d, 0.5, 2), uniform(rng, s, d, 0, 2, True)],
    "max": _apart, "min": _apart,
    "atan2": lambda rng, s, d: [uniform(rng, s, d, 0.3, 3, True) for _ in "xy"],
}
LAX_BINARY = {"add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "rem": lax.rem,
              "pow": lax.pow, "max": lax.max, "min": lax.min, "atan2": lax.atan2}


def binary_case(name: str) -> Callable[[np.random.Generator, np.dtype], Case]:
    return lambda rng, dtype: Case({}, BINARY_ARGS[name](rng, random_shape(rng), dtype),
                                   LAX_BINARY[name], [0, 1])


def clamp_case(rng: np.random.Generator, dtype: np.dtype) -> Case:
    """x strictly inside, below or above [lo, hi], never within 0.2 of a bound; bounds rank 0
    or shaped (lo > hi and ties: test_clamp_edges)."""
    shape = random_shape(rng)
    bound_shapes = [() if rng.random() < 0.5 else shape for _ in "lh"]
    lo = uniform(rng, bound_shapes[0], dtype, 0, 1, True)
    hi = (lo + uniform(rng, bound_shapes[1], dtype, 0.5, 2)).astype(dtype)
    base = np.broadcast_to(lo.astype(np.float64), shape)
    x = base + rng.choice([-1.5, 0.25, 0.5, 3.5], size=shape) * rng.uniform(0.9, 1.1, size=shape)
    x = np.where(np.abs(x - np.broadcast_to(hi.astype(np.float64), shape)) < 0.2, x + 0.4, x)
    return Case({}, [lo, x.astype(dtype), hi], jax_clamp, [0, 1, 2])


def jax_clamp(lo: Any, x: Any, hi: Any) -> Any:
    """lax.clamp with the bounds broadcast first (JAX's rule cannot differentiate a rank-0
    bound of a shaped operand: its select mixes shapes)."""
    return lax.clamp(jnp.broadcast_to(lo, x.shape), x, jnp.broadcast_to(hi, x.shape))


def select_case(rng: np.random.Generator, dtype: np.dtype) -> Case:
    shape = random_shape(rng)
    pred = rng.random(() if rng.random() < 0.3 else shape) < 0.5
    cases = [uniform(rng, shape, dtype, 0, 3, True) for _ in "tf"]
    return Case({}, [pred, *cases], lax.select, [1, 2])


def convert_case(rng: np.random.Generator, dtype: np.dtype) -> Case:
    targets = [d for d in (F32, F16, BF16) if d != dtype]
    target = targets[rng.integers(len(targets))]
    x = uniform(rng, random_shape(rng), dtype, 0, 3, True)
    return Case({"new_dtype": target}, [x], lambda v: lax.convert_element_type(v, target), [0])


DOT_NUMBERS = [  # (lhs shape, rhs shape, lhs contracting, rhs contracting, lhs batch, rhs batch)
    ((3, 4), (4, 5), (1,), (0,), (), ()),
    ((2, 3, 4), (2, 4, 5), (2,), (1,), (0,), (0,)),
    ((3,), (4,), (), (), (), ()),
    ((4, 3, 2), (3, 5, 4), (0, 1), (2, 0), (), ()),
    ((2, 3, 1), (1, 3, 2), (0,), (2,), (1,), (1,)),
    ((5,), (5,), (0,), (0,), (), ()),
    ((0, 3), (3, 2), (1,), (0,), (), ()),
]


def dot_case(rng: np.random.Generator, dtype: np.dtype) -> Case:
    ls, rs, lc, rc, lb, rb = DOT_NUMBERS[rng.integers(len(DOT_NUMBERS))]
    result = F32 if dtype in (F16, BF16) else dtype
    attrs = {"lhs_contracting_dimensions": lc, "rhs_contracting_dimensions": rc, "lhs_batch_dimensions": lb,
             "rhs_batch_dimensions": rb, "result_dtype": result}
    args = [uniform(rng, s, dtype, 0, 2, True) for s in (ls, rs)]
    return Case(attrs, args, lambda a, b: lax.dot_general(a, b, ((lc, rc), (lb, rb)),
                                                          preferred_element_type=result), [0, 1])


def _some_dims(rng: np.random.Generator, rank: int) -> tuple[int, ...]:
    return tuple(int(d) for d in np.flatnonzero(rng.random(rank) < 0.5))


def reduce_case(kind: str) -> Callable[[np.random.Generator, np.dtype], Case]:
    def make(rng: np.random.Generator, dtype: np.dtype) -> Case:
        shape = random_shape(rng, 3)
        dims = _some_dims(rng, len(shape))
        x = uniform(rng, shape, dtype, 0.5, 1.5, True)
        if kind in ("max", "min"):  # distinct values: no ties (edge tests cover those)
            x = (rng.permutation(x.size).reshape(shape) * 0.25 - 1).astype(dtype)
        lax_fn = getattr(lax, f"reduce_{kind}")
        return Case({"dimensions": dims}, [x], lambda v: lax_fn(v, dims), [0])

    return make


def cumulative_case(kind: str) -> Callable[[np.random.Generator, np.dtype], Case]:
    def make(rng: np.random.Generator, dtype: np.dtype) -> Case:
        shape = list(random_shape(rng, 2, 1))
        axis = int(rng.integers(len(shape)))
        shape[axis] = int(rng.integers(1, 10))  # odd and even lengths recurse differently
        x = uniform(rng, tuple(shape), dtype, 0.5, 1.5, True)
        if kind in ("max", "min"):
            x = (rng.permutation(x.size).reshape(shape) * 0.25 - 1).astype(dtype)
        reverse = int(rng.integers(2))
        lax_fn = getattr(lax, f"cum{kind}")
        return Case({"axis": axis, "reverse": reverse}, [x], lambda v: lax_fn(v, axis, bool(reverse)), [0])

    return make


def broadcast_case(rng: np.random.Generator, dtype: np.dtype) -> Case:
    out = random_shape(rng, 4)
    dims = tuple(sorted(int(d) for d in rng.choice(len(out), size=int(rng.integers(len(out) + 1)),
                                                   replace=False)))
    x_shape = tuple(1 if rng.random() < 0.3 else out[d] for d in dims)  # size-1 dims expand
    x = uniform(rng, x_shape, dtype, 0, 2, True)
    return Case({"shape": out, "broadcast_dimensions": dims}, [x],
                lambda v: lax.broadcast_in_dim(v, out, dims), [0])


def reshape_case(rng: np.random.Generator, dtype: np.dtype) -> Case:
    shape = random_shape(rng)
    new = (int(np.prod(shape)),) if rng.random() < 0.5 else (*shape[::-1], 1)
    return Case({"shape": new}, [uniform(rng, shape, dtype, 0, 2, True)], lambda v: lax.reshape(v, new), [0])


def transpose_case(rng: np.random.Generator, dtype: np.dtype) -> Case:
    shape = random_shape(rng)
    perm = tuple(int(p) for p in rng.permutation(len(shape)))
    return Case({"permutation": perm}, [uniform(rng, shape, dtype, 0, 2, True)],
                lambda v: lax.transpose(v, perm), [0])


def rev_case(rng: np.random.Generator, dtype: np.dtype) -> Case:
    shape = random_shape(rng)
    dims = _some_dims(rng, len(shape))
    x = uniform(rng, shape, dtype, 0, 2, True)
    return Case({"dimensions": dims}, [x], lambda v: lax.rev(v, dims), [0])


def slice_case(rng: np.random.Generator, dtype: np.dtype) -> Case:
    shape = random_shape(rng)
    start = tuple(int(rng.integers(0, n + 1)) for n in shape)
    limit = tuple(int(rng.integers(s, n + 1)) for s, n in zip(start, shape, strict=True))
    strides = tuple(int(rng.integers(1, 3)) for _ in shape)
    return Case({"start_indices": start, "limit_indices": limit, "strides": strides},
                [uniform(rng, shape, dtype, 0, 2, True)], lambda v: lax.slice(v, start, limit, strides), [0])


def dynamic_slice_case(rng: np.random.Generator, dtype: np.dtype) -> Case:
    shape = random_shape(rng)
    sizes = tuple(int(rng.integers(0, n + 1)) for n in shape)
    index = [np.asarray(rng.integers(0, n + 2), np.int32) for n in shape]  # some past the end: clamped
    return Case({"slice_sizes": sizes}, [uniform(rng, shape, dtype, 0, 2, True), *index],
                lambda v, *i: lax.dynamic_slice(v, i, sizes), [0])


def dynamic_update_slice_case(rng: np.random.Generator, dtype: np.dtype) -> Case:
    shape = random_shape(rng)
    update = tuple(int(rng.integers(0, n + 1)) for n in shape)
    index = [np.asarray(rng.integers(0, n + 2), np.int32) for n in shape]
    args = [uniform(rng, shape, dtype, 0, 2, True), uniform(rng, update, dtype, 0, 2, True), *index]
    return Case({}, args, lambda v, u, *i: lax.dynamic_update_slice(v, u, i), [0, 1])


def concatenate_case(rng: np.random.Generator, dtype: np.dtype) -> Case:
    shape = list(random_shape(rng, 3, 1))
    dim = int(rng.integers(len(shape)))
    other = list(shape)
    other[dim] = int(rng.integers(0, 4))
    args = [uniform(rng, tuple(s), dtype, 0, 2, True) for s in (shape, other)]
    return Case({"dimension": dim}, args, lambda a, b: lax.concatenate([a, b], dim), [0, 1])


def pad_case(rng: np.random.Generator, dtype: np.dtype) -> Case:
    shape = random_shape(rng)
    config = [(int(rng.integers(-1, 3)), int(rng.integers(-1, 3)), int(rng.integers(0, 3))) for _ in shape]
    config = [(lo, hi, i) if lo + hi + n + max(n - 1, 0) * i >= 0 else (0, 0, i)
              for (lo, hi, i), n in zip(config, shape, strict=True)]
    lows, highs, interiors = (tuple(c[k] for c in config) for k in range(3))
    attrs = {"edge_padding_low": lows, "edge_padding_high": highs, "interior_padding": interiors}
    args = [uniform(rng, shape, dtype, 0, 2, True), uniform(rng, (), dtype, 0, 2, True)]
    return Case(attrs, args, lambda v, p: lax.pad(v, p, config), [0, 1])


ELEMENTWISE = {**{n: unary_case(n) for n in UNARY_DOMAIN}, **{n: binary_case(n) for n in BINARY_ARGS}}
OTHER = {
    "clamp": clamp_case, "select": select_case, "convert": convert_case, "dot_general": dot_case,
    **{f"reduce_{k}": reduce_case(k) for k in ("sum", "prod", "max", "min")},
    **{f"cum{k}": cumulative_case(k) for k in ("sum", "prod", "max", "min")},
    "broadcast_in_dim": broadcast_case, "reshape": reshape_case, "transpose": transpose_case,
    "rev": rev_case, "slice": slice_case, "dynamic_slice": dynamic_slice_case,
    "dynamic_update_slice": dynamic_update_slice_case, "concatenate": concatenate_case, "pad": pad_case,
}
CASES = {**ELEMENTWISE, **OTHER}


def tangent_masks(diff: list[int]) -> Iterator[list[int]]:
    """Every nonempty subset of the differentiable operands (the others get zero tangents)."""
    for k in range(len(diff), 0, -1):
        yield from (list(c) for c in itertools.combinations(diff, k))


@pytest.fixture(autouse=True)
def _mlax_context(context: ir.Context) -> None:
    """Every test builds IR in the fresh context of tests/passes/conftest.py."""


@pytest.fixture
def enable_dtype(request: pytest.FixtureRequest) -> Callable[[np.dtype], None]:
    return lambda dtype: request.getfixturevalue("x64") if dtype == F64 else None


def check_case(op_name: str, case: Case, dtype: np.dtype, rng: np.random.Generator, fd: bool) -> None:
    """All operands' tangents against jax.jvp (and float64 differences); then each operand's
    alone (the others symbolic zeros), which must add up to the same tangent."""
    tangents = [uniform(rng, case.args[i].shape, case.args[i].dtype, 0, 1, True) for i in case.diff]
    actual = mlax_jvp(op_name, case.attrs, case.args, case.diff, tangents)
    assert_close(actual, jax_jvp(case.jax_fn, case.args, case.diff, tangents), dtype)
    if fd and actual.dtype == F64:
        assert_close(actual, finite_difference(op_name, case.attrs, case.args, case.diff, tangents), F32)
    if len(case.diff) > 1:
        parts = [mlax_jvp(op_name, case.attrs, case.args, [i], [t]).astype(np.float64)
                 for i, t in zip(case.diff, tangents, strict=True)]
        assert_close(sum(parts), actual.astype(np.float64), dtype, scale=2)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("op_name", sorted(ELEMENTWISE))
def test_elementwise(op_name: str, dtype: np.dtype, rng: np.random.Generator,
                     enable_dtype: Callable[[np.dtype], None]) -> None:
    enable_dtype(dtype)
    for _ in range(2):
        check_case(op_name, ELEMENTWISE[op_name](rng, dtype), dtype, rng, fd=dtype == F64)


@pytest.mark.parametrize("dtype", [F32, F64, BF16], ids=str)
@pytest.mark.parametrize("op_name", sorted(OTHER))
def test_other_ops(op_name: str, dtype: np.dtype, rng: np.random.Generator,
                   enable_dtype: Callable[[np.dtype], None]) -> None:
    enable_dtype(dtype)
    for _ in range(3):
        check_case(op_name, OTHER[op_name](rng, dtype), dtype, rng, fd=dtype == F64)


# --- edge points: JAX's conventions --------------------------------------------------------------

NAN, INF = np.nan, np.inf


def _f32(*values: Any) -> np.ndarray:
    return np.array(values, np.float32)


EDGES: list[tuple[str, dict[str, Any], list[np.ndarray], Jax]] = [
    ("abs", {}, [_f32(0.0, -0.0, NAN, INF, -INF, -1.0)], lax.abs),  # slope +1 at +-0 (JAX: x >= 0)
    ("sqrt", {}, [_f32(0.0, -0.0, INF, NAN, -1.0)], lax.sqrt),
    ("rsqrt", {}, [_f32(0.0, -0.0, INF)], lax.rsqrt),
    ("log", {}, [_f32(0.0, -0.0, INF, -1.0)], lax.log),
    ("log1p", {}, [_f32(-1.0, INF)], lax.log1p),
    ("cbrt", {}, [_f32(0.0, -0.0, INF)], lax.cbrt),
    ("erf_inv", {}, [_f32(1.0, -1.0, 0.0)], lax.erf_inv),
    ("tanh", {}, [_f32(INF, -INF, 30.0)], lax.tanh),
    ("logistic", {}, [_f32(-INF, INF, -100.0)], lax.logistic),
    ("max", {}, [_f32(1.0, 0.0, -0.0, NAN, 2.0, INF), _f32(1.0, -0.0, 0.0, 1.0, NAN, INF)], lax.max),
    ("min", {}, [_f32(1.0, 0.0, -0.0, NAN, 2.0, -INF), _f32(1.0, -0.0, 0.0, 1.0, NAN, -INF)], lax.min),
    ("pow", {}, [_f32(0.0, 0.0, 0.0, 0.0, -0.0, 2.0, -2.0, 1.0),
                 _f32(0.0, 2.0, 0.5, -1.0, 3.0, 0.0, 2.0, NAN)], lax.pow),
    ("div", {}, [_f32(1.0, 0.0, -1.0, INF), _f32(0.0, 0.0, -0.0, 2.0)], lax.div),
    ("rem", {}, [_f32(4.0, -3.0, 1.0, 0.0), _f32(2.0, 1.5, 0.0, 1.0)], lax.rem),
    ("atan2", {}, [_f32(0.0, -0.0, 1.0, INF), _f32(0.0, 0.0, INF, 1.0)], lax.atan2),
    # ties at the bounds pass no tangent; lo > hi; NaN
    ("clamp", {}, [_f32(0.0, 0.0, 1.0, 0.0, NAN), _f32(0.0, 1.0, 0.5, NAN, 0.5),
                   _f32(1.0, 1.0, 0.0, 1.0, 1.0)], lax.clamp),
    ("reduce_max", {"dimensions": (1,)},
     [np.array([[1, 3, 3, 3], [-0.0, 0.0, -1, -2], [NAN, 1, 2, 3], [-INF, -INF, -INF, -INF]], np.float32)],
     lambda x: lax.reduce_max(x, (1,))),
    ("reduce_min", {"dimensions": (0, 1)}, [np.array([[1, 0, 2], [0, 5, 0]], np.float32)],
     lambda x: lax.reduce_min(x, (0, 1))),
    ("reduce_prod", {"dimensions": (1,)},
     [np.array([[2, 0, 3, 4, 5], [0, 1, 0, 2, 3], [1, 2, 3, 4, 5], [INF, 0, 1, 1, 1]], np.float32)],
     lambda x: lax.reduce_prod(x, (1,))),
    ("reduce_prod", {"dimensions": (0, 2)}, [np.array([[[0, 2], [3, 1]], [[2, 0], [0, 4]]], np.float32)],
     lambda x: lax.reduce_prod(x, (0, 2))),
    ("cumprod", {"axis": 1, "reverse": 0},
     [np.array([[2, 0, 3, 4, 5, 0, 2], [1, 2, 0, 3, 1, 1, 2]], np.float32)], lambda x: lax.cumprod(x, 1)),
    ("cumprod", {"axis": 0, "reverse": 1}, [_f32(0.0, 2.0, 0.0, 3.0, 4.0, -1.0)],
     lambda x: lax.cumprod(x, 0, reverse=True)),
    ("cummax", {"axis": 0, "reverse": 0}, [_f32(1.0, 1.0, 0.0, 1.0, 2.0, 2.0, NAN, 3.0)],
     lambda x: lax.cummax(x, 0)),
    ("cummin", {"axis": 1, "reverse": 1}, [np.array([[3, 1, 1, 2, 1], [0, -0.0, 0, 5, 1]], np.float32)],
     lambda x: lax.cummin(x, 1, reverse=True)),
]


@pytest.mark.parametrize(("op_name", "attrs", "args", "jax_fn"), EDGES,
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(EDGES)])
def test_edge_points_match_jax(op_name: str, attrs: dict[str, Any], args: list[np.ndarray], jax_fn: Jax,
                               rng: np.random.Generator) -> None:
    """Ties, zeros, infinities and NaN: the same tangent (incl. NaN and inf) as jax.jvp."""
    for mask in tangent_masks(list(range(len(args)))):
        tangents = [uniform(rng, args[i].shape, F32, 0.5, 2, True) for i in mask]
        actual = mlax_jvp(op_name, attrs, args, mask, tangents)
        np.testing.assert_allclose(actual, jax_jvp(jax_fn, args, mask, tangents), rtol=1e-6, atol=1e-6,
                                   equal_nan=True)


# --- zero derivatives ------------------------------------------------------------------------------


def test_every_op_has_a_rule() -> None:
    assert set(JVP_RULES) == set(OPS)
    assert {name for name, rule in JVP_RULES.items() if rule is zero_rule} == set(ZERO_DERIVATIVE)


def test_every_differentiable_elementwise_op_has_cases() -> None:
    """A new op of dialect/ops/elementwise.py with a derivative joins UNARY_DOMAIN or BINARY_ARGS
    (docs/passes.md, "Adding an op"); the zero-derivative ones are checked by ZERO_CASES."""
    family = {name for name, op in OPS.items() if op.family == "Elementwise ops" and not op.zero_derivative}
    assert sorted(family - set(CASES)) == []


ZERO_CASES: list[tuple[str, dict[str, Any], list[np.ndarray], Jax | None]] = [
    ("sign", {}, [_f32(-2.0, 0.0, 3.0)], lax.sign),
    ("floor", {}, [_f32(-2.5, 0.5)], lax.floor),
    ("ceil", {}, [_f32(-2.5, 0.5)], lax.ceil),
    ("round", {"rounding_method": "to_nearest_even"}, [_f32(-2.5, 0.7)],
     lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)),
    ("stop_gradient", {}, [_f32(1.0, 2.0)], lax.stop_gradient),
    ("nextafter", {}, [_f32(1.0, 2.0), _f32(0.0, 3.0)], None),  # JAX has no rule; zero as the contract says
    ("bitcast_convert", {"new_dtype": np.dtype(np.float32)}, [_f32(1.0, 2.0)], None),
    ("is_finite", {}, [_f32(1.0, INF)], None),
    ("compare", {"comparison_direction": "LT"}, [_f32(1.0, 2.0), _f32(2.0, 1.0)], None),
    ("argmax", {"axis": 0, "index_dtype": np.dtype(np.int32)}, [_f32(1.0, 2.0)], None),
    ("convert", {"new_dtype": np.dtype(np.int32)}, [_f32(1.5, -2.5)], None),
    ("convert", {"new_dtype": np.dtype(np.bool_)}, [_f32(1.5, 0.0)], None),
]


@pytest.mark.parametrize(("op_name", "attrs", "args", "jax_fn"), ZERO_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(ZERO_CASES)])
def test_zero_tangents(op_name: str, attrs: dict[str, Any], args: list[np.ndarray],
                       jax_fn: Jax | None) -> None:
    """Float operands with tangents, yet the rule gives None (JAX: zero or float0)."""
    module, tangent_args = jvp_module(op_name, attrs, args, list(range(len(args))))
    ops = [op.operation.name for op in module.body.operations[0].regions[0].blocks[0].operations]
    assert not any(list(arg.uses) for arg in tangent_args)
    assert ops.count(f"mlax.{op_name}") == 1  # the primal op; the tangent is a materialized zero
    tangents = [np.ones_like(a) for a in args]
    if jax_fn is not None:
        assert not np.any(jax_jvp(jax_fn, args, list(range(len(args))), tangents))
    _, out_tangent = run_function(module, "f", [*args, *tangents])
    assert not np.any(out_tangent)


def test_rules_read_attributes_of_the_original_op() -> None:
    """Rules take attributes from ``op`` (here a reduce over dims (0,)), not from defaults."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    module, _ = jvp_module("reduce_sum", {"dimensions": (0,)}, [x], [0])
    sums = [op.operation for op in module.body.operations[0].regions[0].blocks[0].operations
            if op.operation.name == "mlax.reduce_sum"]
    assert [read_attributes(op)["dimensions"] for op in sums] == [(0,), (0,)]
