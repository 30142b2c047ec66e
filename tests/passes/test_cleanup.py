"""mlax-cleanup: each rule and the case where it must not fire, bit-exact numerics before and
after (through the reference interpreter), folding limits and locations, options."""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest
from mlir import ir
from mlir.dialects import func

from mlax.backends.interpreter import run_function
from mlax.dialect import OPS, build, dtypes
from mlax.dialect.attrs import dense_to_numpy
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes import cleanup
from mlax.passes.pipeline import run_pipeline
from mlax.passes.walk import nested_ops

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(d) for d in (np.float32, np.float64, np.float16, BF16)]
INTS = [np.dtype(d) for d in (np.int8, np.int32, np.uint8, np.uint32)]
BOOL = np.dtype(np.bool_)


def spec_text(shape: tuple[int, ...], dtype: np.dtype) -> str:
    return str(TensorSpec(shape, dtype))


def mlax_ops(module: ir.Module) -> list[str]:
    return [op.name for op in nested_ops(module.operation) if op.name.startswith("mlax.")]


def special_inputs(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """Random values with the edge cases of the type mixed in: -0.0, NaN, inf; integer extremes."""
    size = int(np.prod(shape))
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtypes.is_float(dtype):
        pool = np.array([-0.0, 0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 1e-30], np.float64)
        values = rng.standard_normal(size) * 4
        picks = rng.random(size) < 0.4
        values[picks] = rng.choice(pool, picks.sum())
        return values.astype(dtype).reshape(shape)
    info = np.iinfo(dtype)
    values = rng.integers(info.min, info.max, size=size, endpoint=True, dtype=np.int64)
    values[: min(2, size)] = [info.min, info.max][: min(2, size)]
    return values.astype(dtype).reshape(shape)


def bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(np.uint8)


def assert_bitwise_equal(actual: list[np.ndarray], expected: list[np.ndarray]) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        assert (a.shape, a.dtype) == (e.shape, e.dtype)
        np.testing.assert_array_equal(bits(a), bits(e))


@pytest.fixture
def clean(context: ir.Context) -> Callable[..., tuple[ir.Module, ir.Module]]:
    """Parse a program, run mlax-cleanup (with options) on a copy: (before, after)."""

    def run(text: str, options: str = "") -> tuple[ir.Module, ir.Module]:
        before, after = ir.Module.parse(text), ir.Module.parse(text)
        run_pipeline(after, f"mlax-cleanup{{{options}}}" if options else "mlax-cleanup")
        return before, after

    return run


def check_numbers(before: ir.Module, after: ir.Module, rng: np.random.Generator, samples: int = 3) -> None:
    """Both modules compute bit-identical results for @f on edge-case-rich random inputs."""
    fn = ir.SymbolTable(before.operation)["f"]
    specs = [TensorSpec.from_mlir(t) for t in fn.type.inputs]
    for _ in range(samples):
        args = [special_inputs(rng, s.shape, s.dtype) for s in specs]
        assert_bitwise_equal(run_function(after, "f", args), run_function(before, "f", args))


def literal(value: float, dtype: np.dtype) -> str:
    if dtype == BOOL:
        return "true" if value else "false"
    if dtypes.is_float(dtype):
        return repr(float(value))
    return str(int(value))


def binary_program(op: str, dtype: np.dtype, value: float, side: int) -> str:
    t = spec_text((2, 3), dtype)
    operands = ["%x", "%c"] if side == 1 else ["%c", "%x"]
    return f"""
func.func @f(%x: {t}) -> {t} {{
  %c = "mlax.constant"() {{value = dense<{literal(value, dtype)}> : {t}}} : () -> {t}
  %0 = "mlax.{op}"({operands[0]}, {operands[1]}) : ({t}, {t}) -> {t}
  return %0 : {t}
}}"""


# (op, constant, sides, dtypes, whether x op c simplifies to x)
IDENTITY_CASES = [
    ("add", 0, (0, 1), INTS, True),
    ("add", 0, (0, 1), [BOOL], True),  # x or false
    ("add", -0.0, (0, 1), FLOATS, True),
    ("add", 0.0, (0, 1), FLOATS, False),  # -0.0 + 0.0 is +0.0
    ("add", 1, (1,), INTS + FLOATS, False),
    ("sub", 0, (1,), INTS, True),
    ("sub", 0.0, (1,), FLOATS, True),
    ("sub", -0.0, (1,), FLOATS, False),  # -0.0 - -0.0 is +0.0
    ("sub", 0, (0,), INTS + FLOATS, False),  # 0 - x is -x
    ("mul", 1, (0, 1), INTS + FLOATS, True),
    ("mul", 1, (0, 1), [BOOL], True),  # x and true
    ("mul", 2, (1,), INTS + FLOATS, False),
    ("mul", -1, (0,), FLOATS, False),
]


@pytest.mark.parametrize(("op", "value", "side", "dtype", "simplifies"), [
    pytest.param(op, value, side, dtype, simplifies, id=f"{op}-{value}-side{side}-{dtype.name}")
    for op, value, sides, dtype_list, simplifies in IDENTITY_CASES for side in sides for dtype in dtype_list
])
def test_identity_elements(clean: Callable, rng: np.random.Generator, op: str, value: float, side: int,
                           dtype: np.dtype, simplifies: bool) -> None:
    before, after = clean(binary_program(op, dtype, value, side))
    assert mlax_ops(after) == ([] if simplifies else ["mlax.constant", f"mlax.{op}"])
    check_numbers(before, after, rng)


def test_non_splat_constant_is_not_an_identity(clean: Callable) -> None:
    _, after = clean("""
func.func @f(%x: tensor<3xi32>) -> tensor<3xi32> {
  %c = "mlax.constant"() {value = dense<[1, 2, 1]> : tensor<3xi32>} : () -> tensor<3xi32>
  %0 = "mlax.mul"(%x, %c) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}""")
    assert "mlax.mul" in mlax_ops(after)


def chain_program(arg: str, steps: list[tuple[str, str, str]]) -> str:
    """``@f(%x: arg)`` applying unary ops in turn; each step is (op, attributes, result type)."""
    lines, value, value_type = [], "%x", arg
    for i, (op, attrs, result) in enumerate(steps):
        attrs = f" {{{attrs}}}" if attrs else ""
        lines.append(f'  %{i} = "mlax.{op}"({value}){attrs} : ({value_type}) -> {result}')
        value, value_type = f"%{i}", result
    body = "\n".join(lines)
    return f"func.func @f(%x: {arg}) -> {value_type} {{\n{body}\n  return {value} : {value_type}\n}}"


BCAST = "shape = array<i64: {}>, broadcast_dimensions = array<i64: 0, 1>"
# (name, argument type, steps, whether the chain simplifies to the argument)
UNARY_CASES = [
    ("neg_neg_int", "tensor<6xi32>", [("neg", "", "tensor<6xi32>")] * 2, True),
    ("neg_neg_float", "tensor<6xf16>", [("neg", "", "tensor<6xf16>")] * 2, True),
    ("no_neg_single", "tensor<6xf32>", [("neg", "", "tensor<6xf32>")], False),
    ("not_not_bool", "tensor<5xi1>", [("not", "", "tensor<5xi1>")] * 2, True),
    ("not_not_int", "tensor<5xui16>", [("not", "", "tensor<5xui16>")] * 2, True),
    ("no_not_neg", "tensor<5xi8>", [("not", "", "tensor<5xi8>"), ("neg", "", "tensor<5xi8>")], False),
    ("no_neg_exp_neg", "tensor<6xf32>", [("neg", "", "tensor<6xf32>"), ("exp", "", "tensor<6xf32>"),
                                         ("neg", "", "tensor<6xf32>")], False),
    ("convert_same", "tensor<2x2xui8>", [("convert", "new_dtype = ui8", "tensor<2x2xui8>")], True),
    ("no_convert_other", "tensor<2x2xui8>", [("convert", "new_dtype = i8", "tensor<2x2xi8>")], False),
    ("reshape_same", "tensor<f32>", [("reshape", "shape = array<i64>", "tensor<f32>")], True),
    ("no_reshape_other", "tensor<4x1xf32>",
     [("reshape", "shape = array<i64: 1, 4>", "tensor<1x4xf32>")], False),
    ("transpose_identity", "tensor<0x3xi32>",
     [("transpose", "permutation = array<i64: 0, 1>", "tensor<0x3xi32>")], True),
    ("no_transpose_square", "tensor<2x2xi32>",
     [("transpose", "permutation = array<i64: 1, 0>", "tensor<2x2xi32>")], False),
    ("broadcast_same", "tensor<1x3xi1>",
     [("broadcast_in_dim", BCAST.format("1, 3"), "tensor<1x3xi1>")], True),
    ("no_broadcast_size1", "tensor<1x3xi1>",
     [("broadcast_in_dim", BCAST.format("2, 3"), "tensor<2x3xi1>")], False),
    ("no_stop_gradient", "tensor<3xf32>", [("stop_gradient", "", "tensor<3xf32>")], False),
]

# (name, argument type, steps, the mlax ops left): broadcast chains that compose into one.
COMPOSE_CASES = [
    ("keepdims", "tensor<5xf32>", [("reshape", "shape = array<i64: 5, 1>", "tensor<5x1xf32>"),
                                   ("broadcast_in_dim", BCAST.format("5, 4"), "tensor<5x4xf32>")],
     ["mlax.broadcast_in_dim"]),
    ("unit_dims_both_sides", "tensor<1x3xi8>",
     [("reshape", "shape = array<i64: 1, 1, 3, 1>", "tensor<1x1x3x1xi8>"),
      ("broadcast_in_dim", "shape = array<i64: 2, 1, 3, 4>, broadcast_dimensions = array<i64: 0, 1, 2, 3>",
       "tensor<2x1x3x4xi8>")], ["mlax.broadcast_in_dim"]),
    ("broadcast_twice", "tensor<4xi32>",
     [("broadcast_in_dim", "shape = array<i64: 3, 4>, broadcast_dimensions = array<i64: 1>",
       "tensor<3x4xi32>"),
      ("broadcast_in_dim", "shape = array<i64: 2, 3, 4>, broadcast_dimensions = array<i64: 1, 2>",
       "tensor<2x3x4xi32>")], ["mlax.broadcast_in_dim"]),
    ("no_real_reshape", "tensor<6xf32>",
     [("reshape", "shape = array<i64: 2, 3>", "tensor<2x3xf32>"),
      ("broadcast_in_dim", "shape = array<i64: 4, 2, 3>, broadcast_dimensions = array<i64: 1, 2>",
       "tensor<4x2x3xf32>")], ["mlax.reshape", "mlax.broadcast_in_dim"]),
]


@pytest.mark.parametrize(("name", "arg", "steps", "remaining"), COMPOSE_CASES,
                         ids=[c[0] for c in COMPOSE_CASES])
def test_broadcast_chains_compose(clean: Callable, rng: np.random.Generator, name: str, arg: str,
                                  steps: list[tuple[str, str, str]], remaining: list[str]) -> None:
    before, after = clean(chain_program(arg, steps))
    assert mlax_ops(after) == remaining, str(after)
    check_numbers(before, after, rng)


@pytest.mark.parametrize(("name", "arg", "steps", "simplifies"), UNARY_CASES, ids=[c[0] for c in UNARY_CASES])
def test_unary_rules(clean: Callable, rng: np.random.Generator, name: str, arg: str,
                     steps: list[tuple[str, str, str]], simplifies: bool) -> None:
    before, after = clean(chain_program(arg, steps))
    assert (mlax_ops(after) == []) == simplifies, str(after)
    check_numbers(before, after, rng)


def test_simplification_rules_name_real_ops() -> None:
    for name, rule in cleanup.RULES.items():
        if rule.simplify is not None:
            assert name in OPS, f"cleanup rule for unknown op mlax.{name}"
        else:
            assert not rule.fold, f"an entry for mlax.{name} without simplification must disable folding"


# --- constant folding -----------------------------------------------------------------


def constant_program(op: str, operands: list[np.ndarray], attrs: dict, loc: ir.Location) -> ir.Module:
    """``@f() { return op(constant...) }`` built with the dialect's builders."""
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        specs = [TensorSpec(a.shape, a.dtype) for a in operands]
        from mlax.dialect import infer

        results = [s.to_mlir() for s in infer(op, specs, attrs)]
        fn = func.FuncOp("f", ir.FunctionType.get([], results))
        with ir.InsertionPoint(fn.add_entry_block()):
            values = [build("constant", [], {"value": a})[0] for a in operands]
            func.ReturnOp(build(op, values, attrs, loc=loc))
    return module


FOLD_CASES = [
    ("exp", [np.float32], {}),
    ("tanh", [BF16], {}),
    ("neg", [np.int8], {}),
    ("add", [np.uint32, np.uint32], {}),
    ("mul", [np.float16, np.float16], {}),
    ("sub", [np.int32, np.int32], {}),
    ("convert", [np.float32], {"new_dtype": np.dtype(np.int16)}),
    ("transpose", [np.float64], {"permutation": (1, 0)}),
    ("reshape", [np.int32], {"shape": (3, 2)}),
    ("broadcast_in_dim", [np.bool_], {"shape": (4, 2, 3), "broadcast_dimensions": (1, 2)}),
]


@pytest.mark.parametrize(("op", "kinds", "attrs"), FOLD_CASES, ids=[c[0] for c in FOLD_CASES])
def test_fold_matches_reference(context: ir.Context, rng: np.random.Generator, op: str, kinds: list,
                                attrs: dict) -> None:
    operands = [special_inputs(rng, (2, 3), np.dtype(k)) for k in kinds]
    loc = ir.Location.file("prog.py", 12, 5)
    module = constant_program(op, operands, attrs, loc)
    expected = run_function(module, "f", [])
    run_pipeline(module, "mlax-cleanup")
    ops = [o for o in nested_ops(module.operation) if o.name.startswith("mlax.")]
    assert [o.name for o in ops] == ["mlax.constant"]
    assert str(ops[0].location) == str(loc), "the constant keeps the folded op's location"
    assert_bitwise_equal([dense_to_numpy(ops[0].attributes["value"])], expected)


def test_fold_rank0(context: ir.Context) -> None:
    module = constant_program("add", [np.array(2.5, np.float32)] * 2, {}, ir.Location.unknown())
    run_pipeline(module, "mlax-cleanup")
    assert mlax_ops(module) == ["mlax.constant"]
    assert run_function(module, "f", []) == [np.array(5.0, np.float32)]


def test_no_fold_over_limit(clean: Callable) -> None:
    """2**30 elements: folding would materialise 4 GiB; over the limit it is not tried."""
    t = "tensor<1073741824xf32>"
    program = f"""
func.func @f() -> {t} {{
  %c = "mlax.constant"() {{value = dense<1.5> : {t}}} : () -> {t}
  %0 = "mlax.add"(%c, %c) : ({t}, {t}) -> {t}
  return %0 : {t}
}}"""
    _, after = clean(program)
    assert mlax_ops(after) == ["mlax.constant", "mlax.add"]


def test_fold_limit_option(clean: Callable) -> None:
    program = binary_program("add", np.dtype(np.int32), 3, 1).replace("%x: tensor<2x3xi32>", "")
    program = program.replace('"mlax.add"(%x, %c)', '"mlax.add"(%c, %c)')
    assert mlax_ops(clean(program, "fold-limit=5")[1]) == ["mlax.constant", "mlax.add"]
    assert mlax_ops(clean(program, "fold-limit=6")[1]) == ["mlax.constant"]


def test_reference_that_raises_is_not_folded(clean: Callable, monkeypatch: pytest.MonkeyPatch) -> None:
    class Refuses:
        def reference(self, *args: object, **kwargs: object) -> None:
            raise ValueError("not for these values")

    monkeypatch.setattr(cleanup, "get_op", lambda name: Refuses())
    program = binary_program("add", np.dtype(np.int32), 3, 1).replace("%x: tensor<2x3xi32>", "")
    _, after = clean(program.replace('"mlax.add"(%x, %c)', '"mlax.add"(%c, %c)'))
    assert mlax_ops(after) == ["mlax.constant", "mlax.add"]


def test_collectives_never_fold() -> None:
    for name in ("psum", "pmean", "all_gather", "axis_index"):
        assert not cleanup.RULES[name].fold


# --- CSE, DCE and options -----------------------------------------------------------------

DUPLICATES = """
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %two = "mlax.constant"() {value = dense<2.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %a = "mlax.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "mlax.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %c = "mlax.sub"(%a, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = "mlax.sub"(%y, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = "mlax.mul"(%c, %one) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %f = "mlax.add"(%two, %two) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g = "mlax.mul"(%d, %f) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %dead = "mlax.tanh"(%g) : (tensor<4xf32>) -> tensor<4xf32>
  return %e, %g : tensor<4xf32>, tensor<4xf32>
}
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = "mlax.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
"""


@pytest.mark.parametrize(("options", "remaining"), [
    ("", ["exp", "sub", "sub", "constant", "mul", "exp"]),
    ("cse=false", ["exp", "exp", "sub", "sub", "constant", "mul", "exp"]),
    ("dce=false", ["constant", "constant", "exp", "sub", "sub", "constant", "mul", "tanh", "exp"]),
    ("fold=false", ["constant", "exp", "sub", "sub", "add", "mul", "exp"]),
    ("simplify=false", ["constant", "exp", "sub", "sub", "mul", "constant", "mul", "exp"]),
])
def test_each_step_and_its_option(clean: Callable, rng: np.random.Generator, options: str,
                                  remaining: list[str]) -> None:
    before, after = clean(DUPLICATES, options)
    assert mlax_ops(after) == [f"mlax.{name}" for name in remaining]
    check_numbers(before, after, rng)


# --- random programs ----------------------------------------------------------------------

FLOAT_OPS = ["add", "sub", "mul", "max", "min", "neg", "exp", "tanh"]
INT_OPS = ["add", "sub", "mul", "max", "min", "neg"]


def random_program(rng: np.random.Generator, dtype: np.dtype, size: int) -> ir.Module:
    """A function of two arguments: random ops over arguments, earlier results and constants
    (identities, splats, random tensors), with repeated subexpressions and dead values."""
    shape = (3,)
    t = TensorSpec(shape, dtype).to_mlir()
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        fn = func.FuncOp("f", ir.FunctionType.get([t, t], [t, t]))
        with ir.InsertionPoint(fn.add_entry_block()):
            identities = [-0.0, 0.0, 1.0] if dtypes.is_float(dtype) else [0, 1, -1]
            values = list(fn.arguments)
            for _ in range(size):
                kind = rng.random()
                if kind < 0.25:
                    if rng.random() < 0.6:
                        array = np.full(shape, rng.choice(identities), dtype)
                    else:
                        array = special_inputs(rng, shape, dtype)
                    values += build("constant", [], {"value": array})
                    continue
                ops = FLOAT_OPS if dtypes.is_float(dtype) else INT_OPS
                op = ops[rng.integers(len(ops))]
                arity = 1 if op in ("neg", "exp", "tanh") else 2
                operands = [values[i] for i in rng.integers(len(values), size=arity)]
                values += build(op, operands)
                if kind > 0.85:  # the same op again: a common subexpression
                    values += build(op, operands)
            func.ReturnOp([values[-1], values[int(rng.integers(2, len(values)))]])
    return module


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), BF16, np.dtype(np.int16), np.dtype(np.uint8)],
                         ids=lambda d: d.name)
@pytest.mark.parametrize("seed", range(6))
def test_random_programs_compute_the_same_bits(context: ir.Context, dtype: np.dtype, seed: int) -> None:
    rng = np.random.default_rng(seed)
    before = random_program(rng, dtype, size=25)
    after = ir.Module.parse(str(before))
    run_pipeline(after, "mlax-cleanup")
    assert len(mlax_ops(after)) <= len(mlax_ops(before))
    check_numbers(before, after, rng, samples=4)


def test_ops_inside_other_region_ops(clean: Callable) -> None:
    """Inside a non-mlax region op, mlax ops are cleaned up too, but CSE starts a fresh scope
    there (the pass cannot tell whether the op is isolated from above)."""
    t = "tensor<4xf32>"
    _, after = clean(f"""
func.func @f(%x: {t}) -> ({t}, {t}) {{
  %a = "mlax.exp"(%x) : ({t}) -> {t}
  %r = scf.execute_region -> {t} {{
    %b = "mlax.exp"(%x) : ({t}) -> {t}
    %c = "mlax.exp"(%x) : ({t}) -> {t}
    %dead = "mlax.tanh"(%c) : ({t}) -> {t}
    %s = "mlax.add"(%b, %c) : ({t}, {t}) -> {t}
    scf.yield %s : {t}
  }}
  return %a, %r : {t}, {t}
}}""")
    assert mlax_ops(after) == ["mlax.exp", "mlax.exp", "mlax.add"]
