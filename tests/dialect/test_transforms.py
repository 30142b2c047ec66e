"""Transformation declarations (dialect/transforms.py) and the stop_gradient op."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import jax
import mlir
import numpy as np
import pytest
from mlir import ir

import mlax
from mlax.dialect import get_op, make_context
from mlax.dialect.irdl_gen import IRDL_PATH
from mlax.dialect.tensor_spec import TensorSpec
from mlax.dialect.transforms import (
    KINDS,
    DeclarationError,
    declare_transform,
    read_kind,
    read_transform,
    transform_declarations,
    verify_transforms,
)
from mlax.passes.diagnostics import FileLoc, capture
from tests.oracle import ALL_DTYPES, check_against_jax, random_array, random_shape

MLIR_OPT = Path(mlir.__path__[0]) / "bin" / "mlir-opt"

CALLEES = """
func.func @f(%x: tensor<3xf32>, %y: tensor<2x2xi32>) -> (tensor<f32>, tensor<2xi32>) {
  %0 = "mlax.reduce_sum"(%x) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  %1 = "mlax.reduce_max"(%y) {dimensions = array<i64: 0>} : (tensor<2x2xi32>) -> tensor<2xi32>
  return %0, %1 : tensor<f32>, tensor<2xi32>
}
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "mlax.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @g_jvp(%x: tensor<4xf32>, %t: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = "mlax.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %t : tensor<4xf32>, tensor<4xf32>
}
func.func @g_fwd(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<i1>) {
  %0 = "mlax.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %c = "mlax.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  return %0, %0, %c : tensor<4xf32>, tensor<4xf32>, tensor<i1>
}
func.func @g_bwd(%r: tensor<4xf32>, %c: tensor<i1>, %ct: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "mlax.mul"(%r, %ct) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @step(%c: tensor<f32>, %x: tensor<3xf32>, %w: tensor<4xf32>) -> (tensor<f32>, tensor<3xf32>) {
  return %c, %x : tensor<f32>, tensor<3xf32>
}
func.func @keep_going(%c: tensor<f32>, %w: tensor<4xf32>) -> tensor<i1> {
  %t = "mlax.constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>
  return %t : tensor<i1>
}
func.func @loop_body(%c: tensor<f32>, %w: tensor<4xf32>) -> tensor<f32> {
  return %c : tensor<f32>
}
func.func private @external(tensor<4xf32>) -> tensor<4xf32>
"""

F_IN = ["tensor<3xf32>", "tensor<2x2xi32>"]
F_OUT = ["tensor<f32>", "tensor<2xi32>"]


def fn_type(ins: list[str], outs: list[str]) -> str:
    return f"({', '.join(ins)}) -> " + (outs[0] if len(outs) == 1 else f"({', '.join(outs)})")


# kind, fields, expected declared type
DECLARATIONS = [
    ("jvp", {"callee": "f"}, fn_type(F_IN * 2, F_OUT * 2)),
    ("vjp", {"callee": "f", "argnums": (1, 0)}, fn_type(F_IN + F_OUT, F_OUT + F_IN[::-1])),
    ("vjp", {"callee": "f", "argnums": ()}, fn_type(F_IN + F_OUT, F_OUT)),
    ("vmap", {"callee": "f", "in_axes": (1, -1), "out_axes": (0, 1), "axis_size": 5, "axis_name": "i"},
     fn_type(["tensor<3x5xf32>", "tensor<2x2xi32>"], ["tensor<5xf32>", "tensor<2x5xi32>"])),
    ("vmap", {"callee": "g", "in_axes": (0,), "out_axes": (-1,), "axis_size": 0},
     fn_type(["tensor<0x4xf32>"], ["tensor<4xf32>"])),
    ("custom_jvp_call", {"callee": "g", "jvp": "g_jvp"}, fn_type(["tensor<4xf32>"], ["tensor<4xf32>"])),
    ("custom_vjp_call", {"callee": "g", "fwd": "g_fwd", "bwd": "g_bwd"},
     fn_type(["tensor<4xf32>"], ["tensor<4xf32>"])),
    ("checkpoint", {"callee": "f"}, fn_type(F_IN, F_OUT)),
    ("cond", {"branches": ("g", "g")}, fn_type(["tensor<i1>", "tensor<4xf32>"], ["tensor<4xf32>"])),
    ("cond", {"branches": ("g", "g", "g")}, fn_type(["tensor<i32>", "tensor<4xf32>"], ["tensor<4xf32>"])),
    ("while", {"cond": "keep_going", "body": "loop_body"},
     fn_type(["tensor<f32>", "tensor<4xf32>"], ["tensor<f32>"])),
    ("scan", {"body": "step", "length": 5, "reverse": True, "num_carry": 1, "num_consts": 1},
     fn_type(["tensor<f32>", "tensor<5x3xf32>", "tensor<4xf32>"], ["tensor<f32>", "tensor<5x3xf32>"])),
    # @g on 2 x 3 devices: its operand split over both axes, its result over "y" only
    ("shard_map", {"callee": "g", "axis_names": ("x", "y"), "axis_sizes": (2, 3),
                   "in_specs": ((("x", "y"),),), "out_specs": ((("y",),),), "check_vma": True},
     fn_type(["tensor<24xf32>"], ["tensor<12xf32>"])),
]


@pytest.fixture
def module() -> Iterator[ir.Module]:
    with make_context(), ir.Location.unknown():
        yield ir.Module.parse(CALLEES)


def test_every_kind_is_covered() -> None:
    # mlax.callback and mlax.user_primitive declarations have their own type, not one derived
    # from a callee: tests/dialect/test_callbacks.py and test_user_primitives.py cover them.
    assert {kind for kind, _, _ in DECLARATIONS} | {"callback", "user_primitive"} == set(KINDS)


@pytest.mark.parametrize(("kind", "fields", "expected"), DECLARATIONS,
                         ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(DECLARATIONS)])
def test_declare_read_verify_roundtrip(module: ir.Module, kind: str, fields: dict, expected: str) -> None:
    op = declare_transform(module, kind, "decl", loc=ir.Location.file("user.py", 3, 1), **fields)
    assert str(op.type) == expected
    assert str(op.location) == 'loc("user.py":3:1)'
    transform = read_transform(op)
    assert (transform.name, transform.kind) == ("decl", kind)
    assert transform.fields == {f.name: fields.get(f.name) for f in KINDS[kind].fields}
    first = KINDS[kind].fields[0].name
    assert transform.fields[first] == fields[first]
    assert verify_transforms(module) == []
    assert [t for _, t in transform_declarations(module)] == [transform]
    reparsed = ir.Module.parse(str(module))  # the printed form reads back the same
    assert [t for _, t in transform_declarations(reparsed)] == [transform]
    # read_kind: the declaration when its kind is one asked for, else None (None reads as none).
    assert read_kind(op, kind) == read_kind(op, "no_such_kind", kind) == transform
    assert read_kind(op, *(k for k in KINDS if k != kind)) is None
    assert read_kind(None, kind) is None


def test_upstream_mlir_opt_reads_declarations(module: ir.Module) -> None:
    for i, (kind, fields, _) in enumerate(DECLARATIONS):
        declare_transform(module, kind, f"decl{i}", **fields)
    result = subprocess.run([str(MLIR_OPT), f"--irdl-file={IRDL_PATH}"], input=str(module),
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("mlax.") == str(module).count("mlax.")


def test_plain_functions_are_not_declarations(module: ir.Module) -> None:
    assert [read_transform(op) for op in module.body.operations] == [None] * 9
    with ir.InsertionPoint(module.body):
        const = ir.Operation.create("mlax.constant", results=[ir.RankedTensorType.get([], ir.F32Type.get())],
                                    attributes={"value": ir.DenseElementsAttr.get(np.array([1], np.float32))})
    assert read_transform(const) is None


@pytest.mark.parametrize(("kind", "fields", "message"), [
    ("grad", {"callee": "f"}, "unknown transformation kind 'mlax.grad' (known: jvp, vjp, vmap,"),
    ("jvp", {}, "mlax.jvp declaration @d: unknown field(s) [], missing field(s) ['callee']"),
    ("jvp", {"callee": "f", "argnums": (0,)}, "unknown field(s) ['argnums']"),
    ("jvp", {"callee": "nope"}, "mlax.jvp declaration @d: callee @nope is not a function of this module"),
    ("jvp", {"callee": "external"}, "callee @external is an external function without a body"),
    ("vjp", {"callee": "f", "argnums": (2,)}, "argnums [2] must be distinct indices of the callee's 2"),
    ("vjp", {"callee": "f", "argnums": (0, 0)}, "argnums [0, 0] must be distinct"),
    ("vjp", {"callee": "f", "argnums": (-1,)}, "argnums [-1] must be distinct"),
    ("vmap", {"callee": "f", "in_axes": (0,), "out_axes": (0, 0), "axis_size": 2},
     "in_axes has length 1 but the callee has 2 arguments"),
    ("vmap", {"callee": "f", "in_axes": (2, 0), "out_axes": (0, 0), "axis_size": 2},
     "in_axes[0] = 2 is out of range for tensor<3xf32> (a batch axis must be in [0, 1], or -1"),
    ("vmap", {"callee": "f", "in_axes": (0, 0), "out_axes": (0, -2), "axis_size": 2},
     "out_axes[1] = -2 is out of range"),
    ("vmap", {"callee": "f", "in_axes": (0, 0), "out_axes": (0, 0), "axis_size": -1},
     "axis_size must be >= 0, got -1"),
    ("custom_vjp_call", {"callee": "g", "fwd": "nope", "bwd": "g_bwd"}, "fwd @nope is not a function"),
])
def test_declare_rejects_bad_fields(module: ir.Module, kind: str, fields: dict, message: str) -> None:
    with pytest.raises(DeclarationError, match=re.escape(message)):
        declare_transform(module, kind, "d", **fields)


F_TYPE = fn_type(F_IN, F_OUT)
G_TYPE = "(tensor<4xf32>) -> tensor<4xf32>"
VMAP_G = "mlax.vmap = {callee = @g, out_axes = array<i64: 0>, "
VMAP_TYPE = "(tensor<2x4xf32>) -> tensor<2x4xf32>"
BAD = [
    ("mlax.jvp = {callee = @f}", F_TYPE,
     f"mlax.jvp declaration @d: the declaration has type {F_TYPE} but callee @f requires "
     f"{fn_type(F_IN * 2, F_OUT * 2)}"),
    ("mlax.jvp = 1 : i64", F_TYPE, "mlax.jvp declaration @d: the attribute must be a dictionary"),
    ('mlax.jvp = {callee = "f"}', F_TYPE, "field 'callee' must be a symbol reference (@f)"),
    (VMAP_G + "in_axes = array<i64: 0>, axis_size = 2.0}", VMAP_TYPE,
     "field 'axis_size' must be an integer, got 2.0"),
    (VMAP_G + "in_axes = [0], axis_size = 2}", VMAP_TYPE, "field 'in_axes' must be array<i64: ...>"),
    (VMAP_G + "in_axes = array<i64: 0>, axis_size = 2, axis_name = 3}", VMAP_TYPE,
     "field 'axis_name' must be a string"),
    ("mlax.grad = {callee = @f}", F_TYPE, "declaration @d: unknown transformation kind 'mlax.grad'"),
    ("mlax.checkpoint = {callee = @g}, mlax.jvp = {callee = @g}", G_TYPE,
     "declaration @d has several transformation attributes: mlax.checkpoint, mlax.jvp"),
    ("mlax.custom_jvp_call = {callee = @g, jvp = @g}", G_TYPE,
     f"jvp function @g has type {G_TYPE} but callee @g requires "
     "(tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)"),
    ("mlax.custom_vjp_call = {callee = @g, fwd = @g_jvp, bwd = @g_bwd}", G_TYPE,
     "fwd function @g_jvp has type"),
    ("mlax.checkpoint = {callee = @d}", G_TYPE, "refers to itself through its callees"),
]


@pytest.mark.parametrize(("attribute", "type_", "message"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_verify_reports_at_the_declaration(attribute: str, type_: str, message: str) -> None:
    ins, outs = type_.split(" -> ")
    text = CALLEES + f'func.func private @d{ins} -> {outs} attributes {{{attribute}}} loc("m.mlir":40:1)\n'
    with make_context() as context, ir.Location.unknown():
        module = ir.Module.parse(text)
        with capture(context) as diagnostics:
            messages = verify_transforms(module)
    assert any(message in m for m in messages), messages
    assert [d.message for d in diagnostics] == messages
    assert all(d.loc == FileLoc("m.mlir", 40, 1) and d.severity == "error" for d in diagnostics)


def test_transform_declarations_raises_on_malformed() -> None:
    with make_context():
        module = ir.Module.parse(CALLEES + "func.func private @d() attributes {mlax.jvp = {}}")
    with pytest.raises(DeclarationError, match="missing field 'callee'"):
        list(transform_declarations(module))


# --- stop_gradient ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: np.dtype(d).name)
def test_stop_gradient_against_jax(rng: np.random.Generator, dtype: object) -> None:
    for shape in [(), (0, 3), (1,), random_shape(rng)]:
        x = random_array(rng, shape, dtype)
        check_against_jax(mlax.lax.stop_gradient, jax.lax.stop_gradient, x)


def test_stop_gradient_keeps_nan_inf_and_weak_type() -> None:
    x = np.array([np.nan, np.inf, -np.inf, -0.0], np.float32)
    check_against_jax(mlax.lax.stop_gradient, jax.lax.stop_gradient, x)
    # Eager jax returns a Python scalar unchanged (a TypedFloat); jitted, a weak f32 array, as mlax.
    check_against_jax(lambda v: mlax.lax.stop_gradient(v) * 2,
                      jax.jit(lambda v: jax.lax.stop_gradient(v) * 2), 1.5)


def test_stop_gradient_definition() -> None:
    op = get_op("stop_gradient")
    spec = TensorSpec((2, 0, 3), np.dtype(np.uint32))
    assert op.infer(spec) == spec
    x = np.arange(6, dtype=np.int16).reshape(2, 3)
    out = op.reference(x)
    np.testing.assert_array_equal(out, x)
    assert out is not x and out.dtype == x.dtype
