"""Devices and sharded Arrays against jax on the test session's 4 CPU devices: the device
queries, device_put/device_get, shardings and shards, typeof, make_array_from_*, and the
options that make host devices (in fresh processes)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, SingleDeviceSharding
from jax.sharding import PartitionSpec as P

import mlax
import mlax.numpy as mnp
from mlax.array import Array, committed_sharding
from tests.oracle import random_array


@pytest.fixture
def mesh() -> Mesh:
    return Mesh(np.array(jax.devices()).reshape(2, 2), ("x", "y"))


def _shards(x: object) -> list[tuple[int, object, int, np.ndarray]]:
    return [(s.device.id, s.index, s.replica_id, np.asarray(s.data)) for s in x.addressable_shards]


def _same_shards(got: Array, expected: jax.Array) -> None:
    for (gd, gi, gr, gv), (ed, ei, er, ev) in zip(_shards(got), _shards(expected), strict=True):
        assert (gd, gi, gr) == (ed, ei, er)
        np.testing.assert_array_equal(gv, ev)


def test_device_queries_are_jaxs() -> None:
    assert mlax.devices() == jax.devices() and len(mlax.devices()) == 4
    assert mlax.devices("cpu") == jax.devices("cpu") and mlax.devices("xla") == jax.devices()
    assert mlax.local_devices() == jax.local_devices()
    assert mlax.local_devices(process_index=0) == jax.local_devices(0)
    assert (mlax.device_count(), mlax.local_device_count()) == (jax.device_count(), jax.local_device_count())
    assert (mlax.process_index(), mlax.process_count()) == (0, 1)
    assert mlax.default_backend() == jax.default_backend() == "cpu"
    assert mlax.Device is jax.Device and all(isinstance(d, mlax.Device) for d in mlax.devices())


def test_host_arrays_are_one_shard_on_the_first_device(rng: np.random.Generator) -> None:
    x = mnp.asarray(random_array(rng, (3, 2), np.float32))
    assert x.device == mlax.devices()[0] and x.devices() == {mlax.devices()[0]}
    assert x.sharding == SingleDeviceSharding(mlax.devices()[0])
    assert x.is_fully_replicated and x.is_fully_addressable and not x.committed
    (shard,) = x.addressable_shards
    assert shard.data is x and shard.index == (slice(None), slice(None)) and shard.replica_id == 0
    assert committed_sharding(x) is None


@pytest.mark.parametrize("spec", [P("x"), P(None, "y"), P(("x", "y")), P("y", "x"), P()])
def test_device_put_to_a_sharding_agrees_with_jax(rng: np.random.Generator, mesh: Mesh, spec: P) -> None:
    a = random_array(rng, (8, 4), np.float32)
    sharding = NamedSharding(mesh, spec)
    got, expected = mlax.device_put(a, sharding), jax.device_put(a, sharding)
    assert type(got) is Array and got.committed and committed_sharding(got) == sharding
    assert got.sharding == expected.sharding and got.devices() == expected.devices()
    assert got.is_fully_replicated == expected.is_fully_replicated and got.is_fully_addressable
    _same_shards(got, expected)
    assert len(got.global_shards) == 4 and all(type(s.data) is Array for s in got.addressable_shards)
    np.testing.assert_array_equal(np.asarray(got), a)  # NumPy conversion gathers
    np.testing.assert_array_equal(mlax.device_get(got), a)
    assert got.device == expected.device  # the sharding, for several devices (jax's)


def test_device_put_to_a_device(rng: np.random.Generator) -> None:
    a = random_array(rng, (5,), np.float32)
    device = mlax.devices()[2]
    got = mlax.device_put(a, device)
    assert got.device == device and got.committed and got.sharding == SingleDeviceSharding(device)
    np.testing.assert_array_equal(np.asarray(got), a)
    assert np.asarray(mlax.device_put(got, mlax.devices()[1]) * 2.0).tolist() == (a * 2.0).tolist()
    uncommitted = mlax.device_put(a)
    assert not uncommitted.committed and uncommitted.device == jax.device_put(a).device


def test_device_put_pytrees_keep_weak_types(rng: np.random.Generator, mesh: Mesh) -> None:
    tree = {"w": random_array(rng, (4, 4), np.float32), "s": 2.0, "v": mnp.asarray(3.0)}
    shardings = {"w": NamedSharding(mesh, P("x", "y")), "s": mlax.devices()[1], "v": None}
    got = mlax.device_put(tree, shardings)
    expected = jax.device_put({"w": tree["w"], "s": 2.0, "v": np.float32(3.0)}, shardings)
    assert got["w"].sharding == expected["w"].sharding and got["s"].device == mlax.devices()[1]
    assert got["s"].weak_type and got["v"].weak_type == tree["v"].weak_type
    assert mlax.typeof(got["s"]) == jax.typeof(expected["s"])
    prefix = mlax.device_put([tree["w"], tree["w"]], NamedSharding(mesh, P("y")))  # one sharding for all
    assert all(x.sharding == NamedSharding(mesh, P("y")) for x in prefix)


def test_device_put_errors_are_jaxs(mesh: Mesh) -> None:
    bad = np.ones((3, 4), np.float32)
    with pytest.raises(ValueError) as expected:
        jax.device_put(bad, NamedSharding(mesh, P("x")))
    with pytest.raises(type(expected.value), match="partitioned 2 times, but the dimension size is 3"):
        mlax.device_put(bad, NamedSharding(mesh, P("x")))
    pair = (np.ones(4, np.float32), np.ones(4, np.float32))
    with pytest.raises(ValueError) as expected:
        jax.device_put(pair, (mlax.devices()[0],) * 3)
    with pytest.raises(ValueError, match="tree prefix"):
        mlax.device_put(pair, (mlax.devices()[0],) * 3)


def test_partition_specs_read_the_context_mesh(rng: np.random.Generator, mesh: Mesh) -> None:
    a = random_array(rng, (8, 2), np.float32)
    with mlax.set_mesh(mesh):
        got = mlax.device_put(a, P("x"))
    assert got.sharding == NamedSharding(mesh, P("x"))


def test_eager_ops_and_pickling_of_sharded_arrays(rng: np.random.Generator, mesh: Mesh) -> None:
    a = random_array(rng, (8, 4), np.float32)
    x = mlax.device_put(a, NamedSharding(mesh, P("x", "y")))
    np.testing.assert_allclose(np.asarray(mnp.sum(x * 2.0, axis=0)), np.sum(a * 2.0, axis=0), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(pickle.loads(pickle.dumps(x))), a)
    assert x.block_until_ready() is x


def test_typeof_shows_the_sharding_as_jax() -> None:
    from jax.sharding import AxisType

    explicit = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    a = np.arange(32, dtype=np.float32).reshape(8, 4)
    for mesh in (explicit, Mesh(np.array(jax.devices()).reshape(2, 2), ("x", "y"))):
        sharding = NamedSharding(mesh, P("x"))
        got, expected = mlax.typeof(mlax.device_put(a, sharding)), jax.typeof(jax.device_put(a, sharding))
        assert got == expected and str(got) == str(expected) and got.sharding == expected.sharding
    assert str(mlax.typeof(mlax.device_put(a, NamedSharding(explicit, P("x"))))) == "float32[8@x,4]"
    assert mlax.typeof(mnp.asarray(a)) == jax.typeof(a)


def test_make_array_from_callback(rng: np.random.Generator, mesh: Mesh) -> None:
    a = random_array(rng, (8, 4), np.float32)
    sharding = NamedSharding(mesh, P("x", "y"))
    got = mlax.make_array_from_callback(a.shape, sharding, lambda index: mnp.asarray(a[index]))
    expected = jax.make_array_from_callback(a.shape, sharding, lambda index: a[index])
    assert got.committed and got.sharding == expected.sharding
    _same_shards(got, expected)


def test_make_array_from_single_device_arrays(rng: np.random.Generator, mesh: Mesh) -> None:
    a = random_array(rng, (8, 4), np.float32)
    sharding = NamedSharding(mesh, P("x"))
    pieces = [mlax.device_put(a[index], device)
              for device, index in sharding.devices_indices_map(a.shape).items()]
    got = mlax.make_array_from_single_device_arrays(a.shape, sharding, pieces)
    assert got.sharding == sharding
    np.testing.assert_array_equal(np.asarray(got), a)


def test_make_array_from_process_local_data(rng: np.random.Generator, mesh: Mesh) -> None:
    a = random_array(rng, (8, 4), np.float32)
    sharding = NamedSharding(mesh, P("x"))
    got = mlax.make_array_from_process_local_data(sharding, mnp.asarray(a))
    expected = jax.make_array_from_process_local_data(sharding, a)
    assert got.sharding == expected.sharding
    _same_shards(got, expected)


def test_the_device_count_option_is_jaxs_before_first_use() -> None:
    with pytest.raises(RuntimeError, match="should be updated before backends are initialized"):
        mlax.devices()
        mlax.config.update("jax_num_cpu_devices", 2)
    code = ("import mlax; mlax.config.update('jax_num_cpu_devices', 2); "
            "print(len(mlax.devices()), mlax.config.jax_num_cpu_devices)")
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True).stdout.split() == ["2", "2"]
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=3"
    assert subprocess.run([sys.executable, "-c", "import mlax; print(mlax.device_count())"], env=env,
                          capture_output=True, text=True, check=True).stdout.strip() == "3"
