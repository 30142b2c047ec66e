"""Partitioned programs on the XLA backend: hand-written per-device mlax IR (what `mlax-partition`
produces) compiled for the devices of its mesh and run on global arrays, against NumPy and jax's
shard_map of the same body; output shardings, device order, resharding of inputs, donation,
stages, and both of jax's partitioners."""

from __future__ import annotations

from collections.abc import Iterator

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P
from mlir import ir

import mlax
from mlax.array import Array
from mlax.backends.registry import get_backend
from mlax.dialect import get_context
from mlax.dialect.sharding import ShardingError
from tests.oracle import random_array

MESH = "{{axis_names = [{names}], axis_sizes = array<i64: {sizes}>, device_ids = array<i64: {ids}>}}"

# a * b + sin(a) per device; a split over x (rows) and y (columns), b only over y.
ELEMENTWISE = """
module attributes {{mlax.mesh = {mesh}}} {{
  func.func @f(%a: tensor<4x2xf32> {{mlax.sharding = [["x"], ["y"]]}},
               %b: tensor<4x2xf32> {{mlax.sharding = [[], ["y"]]}})
      -> (tensor<4x2xf32> {{mlax.sharding = [["x"], ["y"]]}}) attributes {{mlax.partitioned}} {{
    %0 = "mlax.mul"(%a, %b) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    %1 = "mlax.sin"(%a) : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %2 = "mlax.add"(%0, %1) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
    return %2 : tensor<4x2xf32>
  }}
}}
"""

# Each device's block summed into a rank-0 result per device (a replicated result stands for
# lane 0's value, so the blocks must agree: they are all-equal here by construction), a scalar
# argument, a dimension split over both axes, and a replicated result.
MIXED = """
module attributes {{mlax.mesh = {mesh}}} {{
  func.func @g(%a: tensor<2x3xf32> {{mlax.sharding = [["x", "y"], []]}}, %s: tensor<f32>,
               %c: tensor<3xf32>)
      -> (tensor<2x3xf32> {{mlax.sharding = [["x", "y"], []]}}, tensor<3xf32> {{mlax.sharding = [[]]}})
      attributes {{mlax.partitioned}} {{
    %0 = "mlax.broadcast_in_dim"(%s) {{broadcast_dimensions = array<i64>, shape = array<i64: 2, 3>}}
        : (tensor<f32>) -> tensor<2x3xf32>
    %1 = "mlax.mul"(%a, %0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %2 = "mlax.exp"(%c) : (tensor<3xf32>) -> tensor<3xf32>
    return %1, %2 : tensor<2x3xf32>, tensor<3xf32>
  }}
}}
"""


# Collectives in the per-device body, lowered with the mesh's replica groups: a sum over y, a
# gather over x, a swap over x, and each device's linear index over (x, y).
COLLECTIVES = """
module attributes {{mlax.mesh = {mesh}}} {{
  func.func @c(%a: tensor<4x2xf32> {{mlax.sharding = [["x"], ["y"]]}})
      -> (tensor<4x2xf32> {{mlax.sharding = [["x"], []]}}, tensor<8x2xf32> {{mlax.sharding = [[], ["y"]]}},
          tensor<4x2xf32> {{mlax.sharding = [["x"], ["y"]]}}, tensor<1xi32> {{mlax.sharding = [["x", "y"]]}})
      attributes {{mlax.partitioned}} {{
    %0 = "mlax.psum"(%a) {{axes = ["y"]}} : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %1 = "mlax.all_gather"(%a) {{axes = ["x"], axis_size = 2 : i64, dimension = 0 : i64}}
        : (tensor<4x2xf32>) -> tensor<8x2xf32>
    %2 = "mlax.ppermute"(%a) {{axes = ["x"], pairs = array<i64: 0, 1, 1, 0>}}
        : (tensor<4x2xf32>) -> tensor<4x2xf32>
    %3 = "mlax.axis_index"() {{axes = ["x", "y"], axis_size = 4 : i64}} : () -> tensor<i32>
    %4 = "mlax.broadcast_in_dim"(%3) {{broadcast_dimensions = array<i64>, shape = array<i64: 1>}}
        : (tensor<i32>) -> tensor<1xi32>
    return %0, %1, %2, %4 : tensor<4x2xf32>, tensor<8x2xf32>, tensor<4x2xf32>, tensor<1xi32>
  }}
}}
"""


def _mesh_attr(names: tuple[str, ...], sizes: tuple[int, ...], ids: tuple[int, ...]) -> str:
    return MESH.format(names=", ".join(f'"{n}"' for n in names), sizes=", ".join(map(str, sizes)),
                       ids=", ".join(map(str, ids)))


def _module(template: str, names: tuple[str, ...] = ("x", "y"), sizes: tuple[int, ...] = (2, 2),
            ids: tuple[int, ...] = (0, 1, 2, 3)) -> ir.Module:
    return ir.Module.parse(template.format(mesh=_mesh_attr(names, sizes, ids)), get_context())


def _jax_mesh(ids: tuple[int, ...] = (0, 1, 2, 3), sizes: tuple[int, ...] = (2, 2),
              names: tuple[str, ...] = ("x", "y")) -> Mesh:
    by_id = {d.id: d for d in jax.devices()}
    return Mesh(np.array([by_id[i] for i in ids]).reshape(sizes), names)


def _run(module: ir.Module, entry: str, *args: object, donated: tuple[int, ...] = ()) -> list[Array]:
    """Executables take buffers: an Array's own, as the front end passes them."""
    executable = get_backend("xla").compile(module, entry, donated)
    buffers = [arg._buffer if isinstance(arg, Array) else arg for arg in args]
    return [Array._wrap_device(out) for out in executable(buffers)]


@pytest.fixture(params=["shardy", "gspmd"])
def partitioner(request: pytest.FixtureRequest) -> Iterator[str]:
    """Both of jax's partitioners: each reads its own boundary annotations."""
    before = jax.config.jax_use_shardy_partitioner
    jax.config.update("jax_use_shardy_partitioner", request.param == "shardy")
    try:
        yield request.param
    finally:
        jax.config.update("jax_use_shardy_partitioner", before)


def _elementwise(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a * np.tile(b, (2, 1)) + np.sin(a)


@pytest.mark.parametrize("ids", [(0, 1, 2, 3), (3, 1, 2, 0)])
def test_elementwise_body_on_four_devices(rng: np.random.Generator, partitioner: str,
                                          ids: tuple[int, ...]) -> None:
    a, b = random_array(rng, (8, 4), np.float32), random_array(rng, (4, 4), np.float32)
    (out,) = _run(_module(ELEMENTWISE, ids=ids), "f", a, b)
    np.testing.assert_allclose(np.asarray(out), _elementwise(a, b), rtol=1e-5)
    mesh = _jax_mesh(ids)
    assert out.sharding == NamedSharding(mesh, P("x", "y")) and out.committed
    assert [s.device.id for s in out.addressable_shards] == list(ids)  # row-major over the mesh
    for shard in out.addressable_shards:
        np.testing.assert_allclose(np.asarray(shard.data), _elementwise(a, b)[shard.index], rtol=1e-5)
    body = lambda a, b: a * b + jax.numpy.sin(a)  # noqa: E731
    expected = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P("x", "y"), P(None, "y")),
                                     out_specs=P("x", "y")))(a, b)
    np.testing.assert_allclose(np.asarray(out), np.asarray(expected), rtol=1e-5)
    assert out.sharding == expected.sharding


@pytest.mark.parametrize("ids", [(0, 1, 2, 3), (2, 0, 3, 1)])
def test_collectives_agree_with_jaxs_shard_map(rng: np.random.Generator, partitioner: str,
                                               ids: tuple[int, ...]) -> None:
    a = random_array(rng, (8, 4), np.float32)
    got = _run(_module(COLLECTIVES, ids=ids), "c", a)
    mesh = _jax_mesh(ids)

    def body(a):
        index = jax.lax.axis_index(("x", "y")).astype(np.int32).reshape(1)
        return (jax.lax.psum(a, "y"), jax.lax.all_gather(a, "x", axis=0, tiled=True),
                jax.lax.ppermute(a, "x", [(0, 1), (1, 0)]), index)

    specs = (P("x", None), P(None, "y"), P("x", "y"), P(("x", "y")))
    mapped = jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=specs, check_vma=False)
    expected = jax.jit(mapped)(a)
    for mine, theirs, spec in zip(got, expected, specs, strict=True):
        np.testing.assert_allclose(np.asarray(mine), np.asarray(theirs), rtol=1e-6)
        assert mine.sharding == theirs.sharding  # the spelling of jax's inferred shardings
        assert mine.sharding.is_equivalent_to(NamedSharding(mesh, spec), 2)
    np.testing.assert_array_equal(np.asarray(got[3]), np.arange(4))  # linear mesh index, whatever the ids
    np.testing.assert_allclose(np.asarray(got[0]), a.reshape(8, 2, 2).sum(axis=1), rtol=1e-6)


def test_inputs_on_other_shardings_are_resharded(rng: np.random.Generator) -> None:
    a, b = random_array(rng, (8, 4), np.float32), random_array(rng, (4, 4), np.float32)
    mesh = _jax_mesh()
    placed_a = mlax.device_put(a, NamedSharding(mesh, P(None, "x")))  # not the program's layout
    placed_b = mlax.device_put(b, mlax.devices()[3])
    (out,) = _run(_module(ELEMENTWISE), "f", placed_a, placed_b)
    np.testing.assert_allclose(np.asarray(out), _elementwise(a, b), rtol=1e-5)
    (again,) = _run(_module(ELEMENTWISE), "f", out, Array(b))  # a result goes in as it is
    np.testing.assert_allclose(np.asarray(again), _elementwise(_elementwise(a, b), b), rtol=1e-5)


def test_mixed_specs_scalars_and_replicated_results(rng: np.random.Generator, partitioner: str) -> None:
    a, s, c = (random_array(rng, (8, 3), np.float32), np.float32(rng.normal()),
               random_array(rng, (3,), np.float32))
    out, rep = _run(_module(MIXED), "g", a, s, c)
    np.testing.assert_allclose(np.asarray(out), a * s, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(rep), np.exp(c), rtol=1e-5)
    mesh = _jax_mesh()
    assert out.sharding == NamedSharding(mesh, P(("x", "y")))  # trailing whole dimensions left out
    assert rep.is_fully_replicated and rep.sharding.is_equivalent_to(NamedSharding(mesh, P()), 1)
    assert [s.index[0] for s in out.addressable_shards] == [slice(2 * i, 2 * i + 2) for i in range(4)]


def test_one_axis_mesh_of_four(rng: np.random.Generator) -> None:
    text = ELEMENTWISE.replace('[["x"], ["y"]]', '[["x"], []]').replace('[[], ["y"]]', "[[], []]")
    text = text.replace("4x2xf32", "2x4xf32")
    a, b = random_array(rng, (8, 4), np.float32), random_array(rng, (2, 4), np.float32)
    (out,) = _run(_module(text, ("x",), (4,), (2, 3, 0, 1)), "f", a, b)
    np.testing.assert_allclose(np.asarray(out), a * np.tile(b, (4, 1)) + np.sin(a), rtol=1e-5)
    assert out.sharding == NamedSharding(_jax_mesh((2, 3, 0, 1), (4,), ("x",)), P("x"))


def test_donation_aliases_global_buffers(rng: np.random.Generator) -> None:
    a, b = random_array(rng, (8, 4), np.float32), random_array(rng, (4, 4), np.float32)
    module = _module(ELEMENTWISE)
    text = get_backend("xla").stage_text(module, "f", "stablehlo", False, (0,))
    assert "tf.aliasing_output = 0 : i32" in text and "sdy.sharding" in text
    placed = mlax.device_put(a, NamedSharding(_jax_mesh(), P("x", "y")))
    (out,) = _run(module, "f", placed, b, donated=(0,))
    np.testing.assert_allclose(np.asarray(out), _elementwise(a, b), rtol=1e-5)
    assert placed._device.is_deleted()


def test_stablehlo_and_hlo_stages_show_the_n_device_program(partitioner: str) -> None:
    module = _module(ELEMENTWISE)
    backend = get_backend("xla")
    text = backend.stage_text(module, "f", "stablehlo", False)
    assert "mhlo.num_partitions = 4 : i32" in text and "mlax_spmd_body" in text
    assert "func.func @main(%arg0: tensor<8x4xf32>" in text  # main takes the global arrays
    if partitioner == "shardy":
        assert '"sdy.manual_computation"' in text and '#sdy.mesh<["x"=2, "y"=2]>' in text
    else:
        assert "SPMDFullToShardShape" in text and "{devices=[2,2]<=[4]}" in text
        assert "{devices=[1,2,2]<=[2,2]T(1,0) last_tile_dim_replicate}" in text
    hlo = backend.stage_text(_module(ELEMENTWISE), "f", "hlo", False)
    assert "f32[4,2]" in hlo and "sine" in hlo  # XLA's per-device program


def test_a_spec_the_mesh_lacks_is_an_error() -> None:
    text = ELEMENTWISE.replace('[[], ["y"]]', '[[], ["z"]]')
    with pytest.raises(ShardingError, match="'z'"):
        get_backend("xla").compile(_module(text), "f")


def test_one_device_programs_take_sharded_arrays(rng: np.random.Generator) -> None:
    """A sharded Array given to a program for one device is gathered onto that device."""
    a = random_array(rng, (8, 4), np.float32)
    placed = mlax.device_put(a, NamedSharding(_jax_mesh(), P("x", "y")))
    module = ir.Module.parse("""
      func.func @h(%a: tensor<8x4xf32>) -> tensor<8x4xf32> {
        %0 = "mlax.add"(%a, %a) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
        return %0 : tensor<8x4xf32>
      }""", get_context())
    (out,) = _run(module, "h", placed)
    np.testing.assert_allclose(np.asarray(out), a * 2.0)
    assert out.device == mlax.devices()[0] and not out.committed
