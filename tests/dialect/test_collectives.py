"""The collective ops of the dialect (dialect/ops/collectives.py): type inference of each
(all_gather multiplies its dimension by axis_size, psum_scatter divides it, all_to_all does
both), ops built with the dialect's builders verifying and reparsing, the verifier's errors
for bad attributes (IRDL's and the inference rules'), and the checks mlax-batch adds once a
vmap binds the axes (pairs and axis_size against the vmap's size)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from mlir import ir
from mlir.dialects import func

from mlax.dialect import TensorSpec, build, infer, make_context
from mlax.dialect.ops.collectives import COLLECTIVES, pairs_of
from mlax.passes.pipeline import PipelineError, run_pipeline
from mlax.passes.verify import verify_module

DTYPES = [np.float32, np.int32]


@pytest.fixture
def context() -> Iterator[ir.Context]:
    with make_context() as ctx, ir.Location.unknown():
        yield ctx


def random_shape(rng: np.random.Generator, rank: int, factor: int = 1, at: int = 0) -> tuple[int, ...]:
    """A random shape of ``rank``, dimension ``at`` a multiple of ``factor``."""
    shape = [int(d) for d in rng.integers(1, 5, size=rank)]
    if rank:
        shape[at] *= factor
    return tuple(shape)


# --- type inference ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["psum", "pmax", "pmin"])
def test_all_reduce_keeps_the_type(name, dtype, rng) -> None:
    shape = random_shape(rng, int(rng.integers(0, 4)))
    (out,) = infer(name, [TensorSpec(shape, dtype)], {"axes": ("x", "y")})
    assert out == TensorSpec(shape, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rank", [1, 2, 3])
def test_all_gather_multiplies_its_dimension(rank, dtype, rng) -> None:
    dimension = int(rng.integers(0, rank))
    size = int(rng.integers(1, 6))
    shape = random_shape(rng, rank)
    (out,) = infer("all_gather", [TensorSpec(shape, dtype)], {"axes": ("x",), "dimension": dimension,
                                                              "axis_size": size})
    expected = list(shape)
    expected[dimension] *= size
    assert out == TensorSpec(tuple(expected), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rank", [1, 2, 3])
def test_psum_scatter_divides_its_dimension(rank, dtype, rng) -> None:
    dimension = int(rng.integers(0, rank))
    size = int(rng.integers(1, 6))
    shape = random_shape(rng, rank, size, dimension)
    (out,) = infer("psum_scatter", [TensorSpec(shape, dtype)], {"axes": ("y", "x"), "dimension": dimension,
                                                                "axis_size": size})
    expected = list(shape)
    expected[dimension] //= size
    assert out == TensorSpec(tuple(expected), dtype)


@pytest.mark.parametrize(("split", "concat"), [(0, 1), (1, 0), (0, 0), (2, 1)])
def test_all_to_all_divides_split_and_multiplies_concat(split, concat, rng) -> None:
    size = int(rng.integers(2, 5))
    shape = random_shape(rng, 3, size, split)
    (out,) = infer("all_to_all", [TensorSpec(shape, np.float32)],
                   {"axes": ("x",), "split_dimension": split, "concat_dimension": concat, "axis_size": size})
    expected = list(shape)
    expected[split] //= size
    expected[concat] *= size
    assert out == TensorSpec(tuple(expected), np.float32)
    if split == concat:
        assert out.shape == shape


def test_ppermute_keeps_the_type_and_axis_index_is_an_i32_scalar(rng) -> None:
    shape = random_shape(rng, 2)
    spec = TensorSpec(shape, np.int32)
    assert infer("ppermute", [spec], {"axes": ("x",), "pairs": (0, 1, 1, 2, 2, 0)}) == (spec,)
    assert infer("ppermute", [spec], {"axes": ("x",), "pairs": ()}) == (spec,)
    assert infer("axis_index", [], {"axes": ("x", "y"), "axis_size": 6}) == (TensorSpec((), np.int32),)
    assert pairs_of((0, 1, 1, 2, 2, 0)) == [(0, 1), (1, 2), (2, 0)]


BAD_INFERENCE = [
    ("psum", TensorSpec((4,), np.bool_), {"axes": ("x",)}, "must have numeric element type, got bool"),
    ("psum", TensorSpec((4,), np.float32), {"axes": ()}, "axes must name at least one axis"),
    ("pmin", TensorSpec((4,), np.float32), {"axes": ("x", "y", "x")}, "name axis 'x' more than once"),
    ("all_gather", TensorSpec((4,), np.float32), {"axes": ("x",), "dimension": 1, "axis_size": 2},
     "dimension 1 out of range for operand rank 1"),
    ("all_gather", TensorSpec((4, 2), np.float32), {"axes": ("x",), "dimension": -1, "axis_size": 2},
     "dimension -1 out of range for operand rank 2"),
    ("all_gather", TensorSpec((), np.float32), {"axes": ("x",), "dimension": 0, "axis_size": 2},
     "dimension 0 out of range for operand rank 0"),
    ("all_gather", TensorSpec((4,), np.float32), {"axes": ("x",), "dimension": 0, "axis_size": 0},
     "axis_size must be at least 1, got 0"),
    ("psum_scatter", TensorSpec((4,), np.float32), {"axes": ("x",), "dimension": 0, "axis_size": -3},
     "axis_size must be at least 1, got -3"),
    ("psum_scatter", TensorSpec((6, 5), np.float32), {"axes": ("x",), "dimension": 1, "axis_size": 2},
     "dimension 1 of operand shape (6, 5) has size 5, which axis_size 2 does not divide"),
    ("psum_scatter", TensorSpec((4,), np.bool_), {"axes": ("x",), "dimension": 0, "axis_size": 2},
     "operand must have numeric element type, got bool"),
    ("all_to_all", TensorSpec((4, 3), np.float32),
     {"axes": ("x",), "split_dimension": 1, "concat_dimension": 0, "axis_size": 2},
     "split_dimension 1 of operand shape (4, 3) has size 3, which axis_size 2 does not divide"),
    ("all_to_all", TensorSpec((4, 3), np.float32),
     {"axes": ("x",), "split_dimension": 0, "concat_dimension": 2, "axis_size": 2},
     "concat_dimension 2 out of range for operand rank 2"),
    ("all_to_all", TensorSpec((4, 3), np.float32),
     {"axes": ("x",), "split_dimension": 0, "concat_dimension": 0, "axis_size": 0},
     "axis_size must be at least 1, got 0"),
    ("ppermute", TensorSpec((4,), np.float32), {"axes": ("x",), "pairs": (0, 1, 2)},
     "pairs must be flattened (source, destination) pairs, got 3 values"),
    ("ppermute", TensorSpec((4,), np.float32), {"axes": ("x",), "pairs": (0, -1)},
     "pairs [(0, -1)] have a negative index"),
    ("ppermute", TensorSpec((4,), np.float32), {"axes": ("x",), "pairs": (0, 1, 0, 2)},
     "ppermute sources must be unique, got pairs [(0, 1), (0, 2)]"),
    ("ppermute", TensorSpec((4,), np.float32), {"axes": ("x",), "pairs": (0, 2, 1, 2)},
     "ppermute destinations must be unique, got pairs [(0, 2), (1, 2)]"),
    ("axis_index", None, {"axes": ("x",), "axis_size": -1}, "axis_size must be at least 1, got -1"),
]


@pytest.mark.parametrize(("name", "spec", "attrs", "message"), BAD_INFERENCE,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(BAD_INFERENCE)])
def test_inference_rejects_bad_operands_and_attributes(name, spec, attrs, message) -> None:
    expected = TypeError if "element type" in message else ValueError  # a dtype problem is a TypeError
    with pytest.raises(expected) as info:
        infer(name, [] if spec is None else [spec], attrs)
    assert str(info.value).startswith(f"mlax.{name}: ") and message in str(info.value)


def test_inference_names_missing_and_unknown_attributes() -> None:
    with pytest.raises(TypeError, match="missing attribute"):
        infer("all_gather", [TensorSpec((4,), np.float32)], {"axes": ("x",), "dimension": 0})
    with pytest.raises(TypeError, match="unknown attribute"):
        infer("psum", [TensorSpec((4,), np.float32)], {"axes": ("x",), "dimension": 0})


# --- building, verifying, reparsing ---------------------------------------------------------------


def build_module(name: str, shape: tuple[int, ...], dtype, attrs: dict) -> ir.Module:
    """``@f(x) { return name(x) }`` built with the dialect's builders (no operand for axis_index)."""
    module = ir.Module.create()
    operands = [] if name == "axis_index" else [TensorSpec(shape, dtype)]
    results = [s.to_mlir() for s in infer(name, operands, attrs)]
    with ir.InsertionPoint(module.body):
        fn = func.FuncOp("f", ir.FunctionType.get([s.to_mlir() for s in operands], results))
        with ir.InsertionPoint(fn.add_entry_block()):
            func.ReturnOp(build(name, list(fn.arguments), attrs))
    return module


BUILT = {
    "psum": ((3, 2), {"axes": ("x", "y")}, "(tensor<3x2x{t}>) -> tensor<3x2x{t}>"),
    "pmax": ((5,), {"axes": ("y",)}, "(tensor<5x{t}>) -> tensor<5x{t}>"),
    "pmin": ((2, 2), {"axes": ("x",)}, "(tensor<2x2x{t}>) -> tensor<2x2x{t}>"),
    "all_gather": ((2, 3), {"axes": ("y", "x"), "dimension": 1, "axis_size": 4},
                   "(tensor<2x3x{t}>) -> tensor<2x12x{t}>"),
    "psum_scatter": ((6, 3), {"axes": ("x",), "dimension": 0, "axis_size": 3},
                     "(tensor<6x3x{t}>) -> tensor<2x3x{t}>"),
    "all_to_all": ((4, 3), {"axes": ("x",), "split_dimension": 0, "concat_dimension": 1, "axis_size": 2},
                   "(tensor<4x3x{t}>) -> tensor<2x6x{t}>"),
    "ppermute": ((3,), {"axes": ("x",), "pairs": (0, 3, 3, 0)}, "(tensor<3x{t}>) -> tensor<3x{t}>"),
    "axis_index": ((), {"axes": ("x", "y"), "axis_size": 4}, "() -> tensor<i32>"),
}


def test_every_collective_is_covered() -> None:
    assert set(BUILT) == set(COLLECTIVES)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", BUILT)
def test_built_ops_verify_and_reparse(name, dtype, context) -> None:
    shape, attrs, signature = BUILT[name]
    module = build_module(name, shape, dtype, attrs)
    assert verify_module(module.operation) == []
    text = str(module)
    t = "f32" if dtype == np.float32 else "i32"
    assert f'"mlax.{name}"' in text and signature.format(t=t) in text
    assert 'axes = ["' + '", "'.join(attrs["axes"]) + '"]' in text
    reparsed = ir.Module.parse(text)
    assert verify_module(reparsed.operation) == []
    assert str(reparsed) == text


# --- the verifier on textual IR ---------------------------------------------------------------------


def problems(text: str) -> list[str]:
    """The verifier's messages for ``text`` (IRDL's, at parse time, or mlax's inference checks)."""
    try:
        module = ir.Module.parse(text)
    except ir.MLIRError as error:
        return [str(error)]
    return [d.message for d in verify_module(module.operation)]


def one_op(op: str, operand: str | None, result: str) -> str:
    argument = f"%x: {operand}" if operand else ""
    return f"func.func @f({argument}) -> {result} {{\n  %0 = {op}\n  return %0 : {result}\n}}\n"


def op_text(name: str, attrs: str, operand: str | None, result: str) -> str:
    """``"mlax.name"(%x) {attrs} : (operand) -> result`` (no operand: axis_index)."""
    return f'"mlax.{name}"({"%x" if operand else ""}) {{{attrs}}} : ({operand or ""}) -> {result}'


X, F4 = 'axes = ["x"]', "tensor<4xf32>"
# name: (op, attributes, operand type, result type, expected message)
VERIFIER_ERRORS = {
    "empty_axes": ("psum", "axes = []", F4, F4, "'mlax.psum' op axes must name at least one axis"),
    "repeated_axes": ("all_gather", 'axes = ["x", "x"], dimension = 0 : i64, axis_size = 4 : i64', F4,
                      "tensor<16xf32>", "'mlax.all_gather' op axes ['x', 'x'] name axis 'x' more than once"),
    "axes_not_strings": ("pmax", "axes = [1]", F4, F4, "'mlax.pmax' op"),
    "axes_a_string": ("pmax", 'axes = "x"', F4, F4, "expected base attribute 'builtin.array'"),
    "psum_of_bool": ("psum", X, "tensor<4xi1>", "tensor<4xi1>",
                     "'mlax.psum' op operand must have numeric element type, got bool"),
    "gather_dimension": ("all_gather", f"{X}, dimension = 2 : i64, axis_size = 2 : i64", "tensor<4x3xf32>",
                         "tensor<4x6xf32>", "op dimension 2 out of range for operand rank 2"),
    "gather_negative_dimension": ("all_gather", f"{X}, dimension = -1 : i64, axis_size = 2 : i64",
                                  "tensor<4x3xf32>", "tensor<4x6xf32>",
                                  "'mlax.all_gather' op dimension -1 out of range for operand rank 2"),
    "gather_missing_axis_size": ("all_gather", f"{X}, dimension = 0 : i64", F4, "tensor<8xf32>",
                                 'attribute "axis_size" is expected but not provided'),
    "gather_zero_size": ("all_gather", f"{X}, dimension = 0 : i64, axis_size = 0 : i64", F4, "tensor<0xf32>",
                         "'mlax.all_gather' op axis_size must be at least 1, got 0"),
    "gather_wrong_result": ("all_gather", f"{X}, dimension = 1 : i64, axis_size = 3 : i64", "tensor<4x2xf32>",
                            "tensor<12x2xf32>",
                            "result type(s) tensor<12x2xf32> differ from the inferred tensor<4x6xf32>"),
    "scatter_negative_size": ("psum_scatter", f"{X}, dimension = 0 : i64, axis_size = -2 : i64", F4,
                              "tensor<2xf32>", "'mlax.psum_scatter' op axis_size must be at least 1, got -2"),
    "scatter_does_not_divide": ("psum_scatter", f"{X}, dimension = 1 : i64, axis_size = 4 : i64",
                                "tensor<2x6xf32>", "tensor<2x1xf32>",
                                "shape (2, 6) has size 6, which axis_size 4 does not divide"),
    "scatter_wrong_result": ("psum_scatter", f"{X}, dimension = 0 : i64, axis_size = 2 : i64", F4, F4,
                             "result type(s) tensor<4xf32> differ from the inferred tensor<2xf32>"),
    "all_to_all_concat": ("all_to_all", f"{X}, split_dimension = 0 : i64, concat_dimension = 1 : i64, "
                          "axis_size = 2 : i64", F4, F4, "op concat_dimension 1 out of range"),
    "all_to_all_zero_size": ("all_to_all", f"{X}, split_dimension = 0 : i64, concat_dimension = 0 : i64, "
                             "axis_size = 0 : i64", F4, F4,
                             "'mlax.all_to_all' op axis_size must be at least 1, got 0"),
    "ppermute_odd": ("ppermute", f"{X}, pairs = array<i64: 1, 0, 2>", F4, F4,
                     "'mlax.ppermute' op pairs must be flattened (source, destination) pairs, got 3 values"),
    "ppermute_negative": ("ppermute", f"{X}, pairs = array<i64: -1, 0>", F4, F4,
                          "'mlax.ppermute' op pairs [(-1, 0)] have a negative index"),
    "ppermute_repeated_source": ("ppermute", f"{X}, pairs = array<i64: 2, 0, 2, 1>", F4, F4,
                                 "op ppermute sources must be unique, got pairs [(2, 0), (2, 1)]"),
    "ppermute_repeated_destination": ("ppermute", f"{X}, pairs = array<i64: 0, 1, 1, 1>", F4, F4,
                                      "destinations must be unique, got pairs [(0, 1), (1, 1)]"),
    "ppermute_result_type": ("ppermute", f"{X}, pairs = array<i64: 0, 1>", F4, "tensor<4xi32>",
                             "expected 'tensor<4xf32>'"),
    "axis_index_zero_size": ("axis_index", f"{X}, axis_size = 0 : i64", None, "tensor<i32>",
                             "'mlax.axis_index' op axis_size must be at least 1, got 0"),
    "axis_index_result_type": ("axis_index", f"{X}, axis_size = 2 : i64", None, "tensor<i64>",
                               "result type(s) tensor<i64> differ from the inferred tensor<i32>"),
}


@pytest.mark.parametrize("case", VERIFIER_ERRORS)
def test_verifier_errors(case, context) -> None:
    name, attrs, operand, result, message = VERIFIER_ERRORS[case]
    found = problems(one_op(op_text(name, attrs, operand, result), operand, result))
    assert len(found) == 1 and message in found[0], found


def test_the_verifier_accepts_the_good_forms(context) -> None:
    goods = [("all_to_all", 'axes = ["x", "y"], split_dimension = 1 : i64, concat_dimension = 0 : i64, '
              "axis_size = 4 : i64", "tensor<2x8xi32>", "tensor<8x2xi32>"),
             ("pmax", X, "tensor<3xi1>", "tensor<3xi1>"),
             ("ppermute", f"{X}, pairs = array<i64>", "tensor<3xf32>", "tensor<3xf32>")]
    text = "".join(one_op(op_text(*good), good[2], good[3]).replace("@f", f"@f{i}")
                   for i, good in enumerate(goods))
    assert problems(text) == []


# --- checks once a vmap binds the axes (mlax-batch) -------------------------------------------------


def under_vmap(op: str, operand: str, result: str, size: int = 3) -> str:
    """``@main`` calling a vmap (axis_name "i", ``size`` lanes) of a body holding ``op``."""
    outer_in, outer_out = f"tensor<{size}x{operand[7:]}", f"tensor<{size}x{result[7:]}"
    return (f"func.func @main(%x: {outer_in}) -> {outer_out} {{\n"
            f"  %0 = call @f_vmap(%x) : ({outer_in}) -> {outer_out}\n  return %0 : {outer_out}\n}}\n"
            + one_op(op, operand, result).replace("func.func @f", "func.func private @f")
            + f"func.func private @f_vmap({outer_in}) -> {outer_out} attributes {{mlax.vmap = {{"
            "callee = @f, in_axes = array<i64: 0>, out_axes = array<i64: 0>, "
            f'axis_size = {size} : i64, axis_name = "i"}}}}\n')


def batch_error(text: str) -> str:
    module = ir.Module.parse(text)
    assert verify_module(module.operation) == []  # fine as IR: only the vmap's size makes it wrong
    with pytest.raises(PipelineError) as info:
        run_pipeline(module, "mlax-batch")
    return str(info.value)


F2 = "tensor<2xf32>"
BATCH_ERRORS = {
    "ppermute_pair_out_of_range": ("ppermute", 'axes = ["i"], pairs = array<i64: 0, 1, 1, 5>', F2, F2,
                                   "pairs [(0, 1), (1, 5)] name a lane outside the vmap of size 3"),
    "all_gather_size": ("all_gather", 'axes = ["i"], dimension = 0 : i64, axis_size = 4 : i64', F2,
                        "tensor<8xf32>",
                        "mlax.all_gather over axes ['i'] has axis_size 4, but the vmap over 'i' has size 3"),
    "psum_scatter_size": ("psum_scatter", 'axes = ["i"], dimension = 0 : i64, axis_size = 2 : i64',
                          F2, "tensor<1xf32>",
                          "psum_scatter over axes ['i'] has axis_size 2, but the vmap over 'i' has size 3"),
    "axis_index_size": ("axis_index", 'axes = ["i"], axis_size = 5 : i64', None, "tensor<i32>",
                        "axis_index over axes ['i'] has axis_size 5, but the vmap over 'i' has size 3"),
}


@pytest.mark.parametrize("case", BATCH_ERRORS)
def test_mlax_batch_checks_the_attributes_against_the_vmap(case, context) -> None:
    name, attrs, operand, result, message = BATCH_ERRORS[case]
    assert message in batch_error(under_vmap(op_text(name, attrs, operand, result), "tensor<2xf32>", result))


def test_an_axis_size_a_multiple_of_the_vmap_size_over_one_axis(context) -> None:
    op = op_text("all_gather", 'axes = ["i"], dimension = 0 : i64, axis_size = 6 : i64', "tensor<2xf32>",
                 "tensor<12xf32>")
    assert "axis_size 6" in batch_error(under_vmap(op, "tensor<2xf32>", "tensor<12xf32>"))


def test_mlax_batch_resolves_a_collective_into_ordinary_ops(context) -> None:
    op = op_text("all_gather", 'axes = ["i"], dimension = 1 : i64, axis_size = 3 : i64', "tensor<2x2xf32>",
                 "tensor<2x6xf32>")
    module = ir.Module.parse(under_vmap(op, "tensor<2x2xf32>", "tensor<2x6xf32>"))
    run_pipeline(module, "mlax-batch")
    assert verify_module(module.operation) == []
    batched = next(o for o in module.body.operations if "f_vmap" in str(o.attributes["sym_name"]))
    assert "mlax.all_gather" not in str(batched) and "tensor<3x2x6xf32>" in str(batched)
