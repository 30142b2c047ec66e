"""jax.debug.visualize_array_sharding, visualize_sharding and inspect_array_sharding on mlax
values: the text printed is jax's table for the same sharding (1-D and 2-D, split, replicated,
one device), eager and, where the type gives the sharding, inside jit."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import mlax
import mlax.numpy as mnp


def printed(capsys: pytest.CaptureFixture[str], fn) -> str:
    capsys.readouterr()
    fn()
    return capsys.readouterr().out


@pytest.fixture(params=["explicit", "auto"])
def mesh(request: pytest.FixtureRequest) -> jax.sharding.Mesh:
    kind = AxisType.Explicit if request.param == "explicit" else AxisType.Auto
    return jax.make_mesh((2, 2), ("x", "y"), axis_types=(kind, kind))


@pytest.mark.parametrize("shape, spec", [((8, 4), P("x", "y")), ((8, 4), P("x")), ((8, 4), P(None, "y")),
                                          ((8, 4), P(("x", "y"))), ((8, 4), P()), ((16,), P("x")),
                                          ((16,), P(("x", "y"))), ((16,), P())])
def test_the_table_is_jax_s(shape, spec, mesh, capsys, rng) -> None:
    value = rng.standard_normal(shape).astype(np.float32)
    sharding = NamedSharding(mesh, spec)
    expected = printed(capsys, lambda: jax.debug.visualize_array_sharding(jax.device_put(value, sharding)))
    got = printed(capsys, lambda: mlax.debug.visualize_array_sharding(mlax.device_put(value, sharding)))
    assert got == expected and "CPU" in got


def test_one_device_and_host_arrays(capsys) -> None:
    expected = printed(capsys, lambda: jax.debug.visualize_array_sharding(jnp.ones(8)))
    assert printed(capsys, lambda: mlax.debug.visualize_array_sharding(mnp.ones(8))) == expected
    expected = printed(capsys, lambda: jax.debug.visualize_array_sharding(jnp.ones((4, 4))))
    assert printed(capsys, lambda: mlax.debug.visualize_array_sharding(mnp.ones((4, 4)))) == expected


def test_visualize_sharding_and_its_options(mesh, capsys) -> None:
    sharding = NamedSharding(mesh, P("y", "x"))
    for options in ({}, {"use_color": False}, {"scale": 2.0}, {"min_width": 4, "max_width": 40}):
        expected = printed(capsys, lambda o=options: jax.debug.visualize_sharding((8, 8), sharding, **o))
        got = printed(capsys, lambda o=options: mlax.debug.visualize_sharding((8, 8), sharding, **o))
        assert got == expected


def test_inside_jit_the_type_gives_the_sharding(capsys, rng) -> None:
    mesh = jax.make_mesh((2, 2), ("x", "y"))
    value = rng.standard_normal((8, 4)).astype(np.float32)
    expected = printed(capsys, lambda: jax.jit(jax.debug.visualize_array_sharding)(
        jax.device_put(value, NamedSharding(mesh, P("x", "y")))))
    got = printed(capsys, lambda: mlax.jit(mlax.debug.visualize_array_sharding)(
        mlax.device_put(value, NamedSharding(mesh, P("x", "y")))))
    assert got == expected
    seen = []

    def f(a):
        mlax.debug.inspect_array_sharding((a, a.sum(1)), callback=seen.append)
        return a

    mlax.jit(f)(mlax.device_put(value, NamedSharding(mesh, P("x", "y"))))
    assert [s.spec for s in seen] == [P("x", "y"), P("x")] and all(s.mesh == mesh for s in seen)


def test_inspect_array_sharding_eager_and_on_one_device(rng) -> None:
    seen = []
    mlax.debug.inspect_array_sharding({"a": mnp.ones(3)}, callback=seen.append)
    traced = mlax.jit(lambda a: mlax.debug.inspect_array_sharding(a, callback=seen.append) or a)
    traced(np.ones(3, np.float32))
    assert seen == [jax.jit(lambda: jnp.ones(3))().sharding] * 2


def test_untyped_values_inside_a_sharded_jit_say_why(rng) -> None:
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    x = mlax.device_put(rng.standard_normal((8, 4)).astype(np.float32), NamedSharding(mesh, P("x")))
    with pytest.raises(NotImplementedError, match="chosen by mlax-partition later"):
        mlax.jit(lambda a: mlax.debug.visualize_array_sharding(a) or a)(x)
