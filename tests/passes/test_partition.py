"""`mlax-partition` on random programs of each rule family: the per-device program, run on
simulated devices (tests/passes/test_partition_harness.py) and by the xla backend on the 4
XLA CPU devices of the test session, gives the unpartitioned program's numbers, for random
shapes, values and argument shardings.

Programs are traced by mlax's front end (global shapes), then given the module's mesh and
random partition specs on their arguments (and sometimes results), as `jit(in_shardings=)`
would; the reference is the same global program on the interpreter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from mlir import ir

import mlax
import mlax.lax as lax
import mlax.numpy as jnp
from mlax.backends.interpreter import Interpreter
from mlax.backends.registry import get_backend
from mlax.dialect import make_context
from mlax.dialect.attrs import Spec
from mlax.dialect.sharding import (
    Mesh,
    is_partitioned,
    result_spec,
    set_arg_spec,
    set_module_mesh,
    set_result_spec,
)
from mlax.passes.pipeline import run_pipeline
from tests.passes.test_partition_harness import run_partitioned

MESHES = (Mesh(("x", "y"), (2, 2), (0, 1, 2, 3)), Mesh(("x",), (4,), (0, 1, 2, 3)),
          Mesh(("a", "b"), (4, 1), (0, 1, 2, 3)))


def random_spec(rng: np.random.Generator, shape: Sequence[int], mesh: Mesh) -> Spec:
    """A valid random spec: each dimension split over a random run of unused axes that
    divides it (often none)."""
    free = list(mesh.axis_names)
    spec = []
    for n in shape:
        axes: list[str] = []
        order = list(rng.permutation(free))
        while order and rng.random() < 0.6:
            axis = order.pop()
            if n % (mesh.axis_size([*axes, axis])) == 0:
                axes.append(axis)
                free.remove(axis)
        spec.append(tuple(axes))
    return tuple(spec)


def trace(fun: Callable, args: Sequence[np.ndarray]) -> ir.Module:
    text = mlax.jit(fun).lower(*args).as_text("mlax")
    with make_context(allow_unregistered_dialects=True):  # the xla backend lowers it to stablehlo
        return ir.Module.parse(text)


def _entry(module: ir.Module) -> ir.Operation:
    return next(op.operation for op in module.body.operations if op.operation.name == "func.func"
                and "sym_visibility" not in op.operation.attributes)


def check(fun: Callable, args: Sequence[np.ndarray], rng: np.random.Generator, *, mesh: Mesh | None = None,
          specs: Sequence[Spec | None] | None = None, out_specs: Sequence[Spec | None] | None = None,
          rtol: float = 2e-5) -> ir.Module:
    """Partition ``fun`` traced on ``args`` with ``specs`` (random when None) and compare the
    simulated devices' numbers with the global program's."""
    module = trace(fun, args)
    mesh = mesh or MESHES[int(rng.integers(len(MESHES)))]
    entry = _entry(module)
    name = ir.StringAttr(entry.attributes["sym_name"]).value
    with module.context:
        set_module_mesh(module, mesh)
        for i, a in enumerate(args):
            spec = specs[i] if specs is not None else random_spec(rng, np.shape(a), mesh)
            if spec is not None:
                set_arg_spec(entry, i, spec)
        for i, spec in enumerate(out_specs or ()):
            if spec is not None:
                set_result_spec(entry, i, spec)
        expected = Interpreter(module).run(name, args)
        on_xla = get_backend("xla").compile(module, name)(list(args))
        run_pipeline(module, "mlax-expand-transforms, mlax-cleanup, mlax-partition")
    entry = _entry(module)
    assert is_partitioned(entry)
    for i, spec in enumerate(out_specs or ()):
        if spec is not None:
            assert result_spec(entry, i) == spec
    simulated = run_partitioned(module, name, args)
    for got in (simulated, [np.asarray(r) for r in on_xla]):
        for g, x in zip(got, expected, strict=True):
            assert g.dtype == x.dtype and g.shape == x.shape
            np.testing.assert_allclose(g, x, rtol=rtol, atol=1e-5)
    return module


def normal(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


SEEDS = range(6)


@pytest.mark.parametrize("seed", SEEDS)
def test_elementwise(seed: int, rng: np.random.Generator) -> None:
    x, y = normal(rng, 4, 8), normal(rng, 4, 8)

    def f(x, y):
        z = jnp.where(x > y, jnp.tanh(x) * y, jnp.exp(-y)) + 1.5
        return jnp.clip(z, -1.0, 2.0), (z > 0).astype(jnp.int32), x - y
    check(f, [x, y], rng)


@pytest.mark.parametrize("seed", SEEDS)
def test_broadcast_in_dim(seed: int, rng: np.random.Generator) -> None:
    x, b, c = normal(rng, 8, 4), normal(rng, 4), normal(rng, 8, 1)
    check(lambda x, b, c: x * b + c + jnp.broadcast_to(b, (2, 8, 4)).sum(0), [x, b, c], rng)


@pytest.mark.parametrize("seed", SEEDS)
def test_reshape(seed: int, rng: np.random.Generator) -> None:
    x, y, z = normal(rng, 8, 4), normal(rng, 32), normal(rng, 4, 6)

    def f(x, y, z):
        return x.reshape(32) + y, y.reshape(4, 2, 4) * 2, z.reshape(6, 4), x.reshape(2, 4, 4).reshape(8, 4)
    check(f, [x, y, z], rng)


@pytest.mark.parametrize("seed", SEEDS)
def test_transpose(seed: int, rng: np.random.Generator) -> None:
    x = normal(rng, 4, 2, 8)
    check(lambda x: (jnp.transpose(x, (2, 0, 1)), x.T + 1), [x], rng)


@pytest.mark.parametrize("seed", SEEDS)
def test_reductions(seed: int, rng: np.random.Generator) -> None:
    x = normal(rng, 8, 4, 4)

    def f(x):
        return (x.sum(axis=(0, 2)), x.max(axis=0), x.min(), jnp.prod(x[:2], axis=1), (x > 0).all(axis=1),
                (x > 1).any(axis=(0, 1)), jnp.argmax(x, axis=0))
    check(f, [x], rng, rtol=1e-4)


@pytest.mark.parametrize("seed", SEEDS)
def test_dot_general(seed: int, rng: np.random.Generator) -> None:
    a, b, c, d = normal(rng, 8, 4), normal(rng, 4, 8), normal(rng, 4, 2, 8), normal(rng, 4, 8, 4)

    def f(a, b, c, d):
        return a @ b, jnp.einsum("bij,bjk->bik", c, d), jnp.tanh(a @ b) @ a
    check(f, [a, b, c, d], rng, rtol=1e-4)


@pytest.mark.parametrize("seed", SEEDS)
def test_dimension_wise(seed: int, rng: np.random.Generator) -> None:
    x, y, u = normal(rng, 8, 4), normal(rng, 8, 4), normal(rng, 2, 4)

    def f(x, y, u, i):
        return (x[2:6], x[:, ::2], jnp.concatenate([x, y], axis=0), jnp.concatenate([x, y], axis=1),
                jnp.pad(x, ((1, 2), (0, 0))), x[::-1], lax.dynamic_slice(x, (i, 0), (3, 4)),
                lax.dynamic_update_slice(x, u, (i, 0)))
    check(f, [x, y, u, np.int32(rng.integers(0, 6))], rng)


@pytest.mark.parametrize("seed", SEEDS)
def test_cumulative_and_windows(seed: int, rng: np.random.Generator) -> None:
    x = normal(rng, 8, 4)

    def f(x):
        return (jnp.cumsum(x, axis=0), lax.cummax(x, axis=1), jnp.sort(x, axis=0),
                lax.top_k(x, 2)[0], lax.reduce_window(x, 0.0, lax.add, (2, 1), (1, 1), "VALID"))
    check(f, [x], rng, rtol=1e-4)


@pytest.mark.parametrize("seed", SEEDS)
def test_iota_and_constants(seed: int, rng: np.random.Generator) -> None:
    x = normal(rng, 8, 4)
    table = rng.standard_normal((8, 4)).astype(np.float32)
    check(lambda x: (x + jnp.arange(4.0), x * lax.broadcasted_iota(jnp.float32, (8, 4), 0), x + table),
          [x], rng)


@pytest.mark.parametrize("seed", SEEDS)
def test_fallback_ops(seed: int, rng: np.random.Generator) -> None:
    x, k = normal(rng, 8, 4), normal(rng, 2, 4, 3, 3)
    idx = rng.integers(0, 8, 5).astype(np.int32)

    def f(x, idx, k):
        img = jnp.broadcast_to(x[None, None], (2, 4, 8, 4))
        conv = lax.conv_general_dilated(img, k, (1, 1), "SAME")
        return x[idx], x.at[idx].add(1.0), conv
    check(f, [x, idx, k], rng, rtol=1e-4)


@pytest.mark.parametrize("seed", SEEDS)
def test_control_flow(seed: int, rng: np.random.Generator) -> None:
    x, w = normal(rng, 8, 4), normal(rng, 4, 4)

    def f(x, w):
        y = lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: v - 1, x)
        z = lax.fori_loop(0, 3, lambda i, v: jnp.tanh(v @ w), y)
        c, ys = lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(4), x)
        return z, c, ys
    check(f, [x, w], rng, rtol=1e-4)


@pytest.mark.parametrize("seed", SEEDS)
def test_result_specs(seed: int, rng: np.random.Generator) -> None:
    """Results asked for another sharding than propagation gives get resharded (all_to_all,
    all_gather, slices), and unspecified results record the propagated spec."""
    x = normal(rng, 8, 8)
    mesh = MESHES[0]
    outs = [random_spec(rng, (8, 8), mesh) for _ in range(3)]
    check(lambda x: (x * 2, x + 1, x.T), [x], rng, mesh=mesh, specs=[random_spec(rng, (8, 8), mesh)],
          out_specs=outs)


def test_unspecified_result_gets_the_propagated_spec(rng: np.random.Generator) -> None:
    x = normal(rng, 8, 4)
    module = check(lambda x: jnp.sin(x) * 2, [x], rng, mesh=MESHES[0], specs=[(("x",), ("y",))])
    assert result_spec(_entry(module), 0) == (("x",), ("y",))
    text = str(module)
    assert "all_gather" not in text and "dynamic_slice" not in text


def test_contracting_sharded_gives_a_psum(rng: np.random.Generator) -> None:
    a, b = normal(rng, 8, 4), normal(rng, 4, 8)
    module = check(lambda a, b: a @ b, [a, b], rng, mesh=MESHES[0], specs=[((), ("x",)), (("x",), ())])
    assert '"mlax.psum"' in str(module) and "all_gather" not in str(module)


def test_no_mesh_is_a_no_op(rng: np.random.Generator) -> None:
    module = trace(lambda x: jnp.sin(x) @ x.T, [normal(rng, 4, 4)])
    before = str(module)
    with module.context:
        run_pipeline(module, "mlax-partition")
    assert str(module) == before


SHARD_MAP_MODULE = """
module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>,
                                device_ids = array<i64: 0, 1, 2, 3>}} {
  func.func private @body(%x: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
    %0 = "mlax.broadcast_in_dim"(%b) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 4, 4>} : (tensor<4xf32>) -> tensor<4x4xf32>
    %1 = "mlax.add"(%x, %0) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %2 = "mlax.psum"(%1) {axes = ["x"]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    return %2 : tensor<4x4xf32>
  }
  func.func private @f_shard_map(tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32> attributes {mlax.shard_map = {
      callee = @body, axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>,
      in_specs = [[["y"], []], [[]]], out_specs = [[["y"], []]]}}
  func.func @f(%a: tensor<8x4xf32> {mlax.sharding = [[], ["y"]]}, %b: tensor<4xf32>) -> tensor<8x4xf32> {
    %0 = func.call @f_shard_map(%a, %b) : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
    %1 = "mlax.neg"(%0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
}
"""  # noqa: E501  (IR lines as mlax-opt prints them)


def test_shard_map_call_becomes_a_call_of_its_body(rng: np.random.Generator) -> None:
    """Operands are resharded to the in_specs (here an all_to_all), the per-device body is
    called, its result has the out_specs and the ops after it run on those blocks."""
    from mlax.dialect.transforms import KINDS

    if "shard_map" not in KINDS:
        pytest.skip("the mlax.shard_map declaration kind is not registered yet")
    with make_context():
        module = ir.Module.parse(SHARD_MAP_MODULE)
        run_pipeline(module, "mlax-partition")
    text = str(module)
    assert "mlax.shard_map" not in text and "call @body" in text and '"mlax.all_to_all"' in text
    assert result_spec(_entry(module), 0) == (("y",), ())
    a, b = normal(rng, 8, 4), normal(rng, 4)
    (got,) = run_partitioned(module, "f", [a, b])
    np.testing.assert_allclose(got, -2 * (a + b), rtol=1e-6)
