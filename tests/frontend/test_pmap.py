"""mlax.pmap against jax.pmap on the session's 4 CPU devices: values, the results' shardings,
collectives over axis_name, in_axes/out_axes, static and donated arguments, jax's errors."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import mlax

HERE = __file__


def floats(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def assert_like_jax(ours, theirs) -> None:
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)
        assert a.shape == b.shape and a.dtype == b.dtype
        assert a.sharding.is_equivalent_to(b.sharding, b.ndim), (a.sharding, b.sharding)


def both(make, *args, **options):
    return [lib.pmap(make(lib), **options)(*args) for lib in (mlax, jax)]


def test_the_name_is_no_longer_a_placeholder() -> None:
    assert not getattr(mlax.pmap, "mlax_not_yet", False)


def test_map_over_the_devices(rng) -> None:
    assert_like_jax(*both(lambda lib: lambda x: lib.numpy.sin(x) * 2.0, floats(rng, 4, 3)))


def test_fewer_slices_than_devices_use_the_first_devices(rng) -> None:
    assert_like_jax(*both(lambda lib: lambda x: x + 1.0, floats(rng, 3, 2)))


def test_collectives_over_axis_name(rng) -> None:
    x = floats(rng, 4, 5)
    assert_like_jax(*both(lambda lib: lambda x: x / lib.lax.psum(x, "i") + lib.lax.axis_index("i"), x,
                          axis_name="i"))
    assert_like_jax(*both(lambda lib: lambda x: lib.lax.pmean(x, "i"), x, axis_name="i", out_axes=None))


def test_in_axes_and_out_axes(rng) -> None:
    x, y = floats(rng, 3, 4), floats(rng, 3)
    assert_like_jax(*both(lambda lib: lambda x, y: (x * y, x), x, y, in_axes=(1, None), out_axes=(1, 0)))


def test_pytrees_and_keyword_arguments(rng) -> None:
    tree = {"a": floats(rng, 4, 2), "b": (floats(rng, 4), floats(rng, 4, 3))}

    def make(lib):
        return lambda t, scale: {"sum": t["a"].sum() + t["b"][0] * scale, "c": t["b"][1]}

    scale = floats(rng, 4)
    ours, theirs = (lib.pmap(make(lib))(tree, scale=scale) for lib in (mlax, jax))
    assert_like_jax(ours, theirs)


def test_static_broadcasted_argnums(rng) -> None:
    x = floats(rng, 4, 2)

    def make(lib):
        return lambda x, power: x ** power

    for power in (2, 3):
        assert_like_jax(*both(make, x, power, static_broadcasted_argnums=(1,)))


def test_devices_and_donation(rng) -> None:
    devices = jax.devices()[2:4]
    x = floats(rng, 2, 3)
    ours = mlax.pmap(lambda x: x * 2.0, devices=devices, donate_argnums=0)(x)
    assert {d.id for d in ours.sharding.device_set} == {d.id for d in devices}
    np.testing.assert_allclose(np.asarray(ours), x * 2.0, rtol=1e-6)


def test_inside_jit(rng) -> None:
    x = floats(rng, 4, 3)

    def program(lib):
        return lib.jit(lambda x: lib.pmap(lambda v: lib.lax.psum(v, "i"), axis_name="i")(x) * 2.0)

    np.testing.assert_allclose(np.asarray(program(mlax)(x)), np.asarray(program(jax)(x)), rtol=1e-5)


def test_results_feed_the_next_pmap(rng) -> None:
    x = floats(rng, 4, 3)
    f = mlax.pmap(lambda v: v + 1.0)
    twice = f(f(x))
    np.testing.assert_allclose(np.asarray(twice), x + 2.0, rtol=1e-6)


def test_a_size_the_devices_do_not_divide(rng) -> None:
    x = floats(rng, 5, 2)
    with pytest.raises(ValueError) as theirs:
        jax.pmap(lambda v: v)(x)
    with pytest.raises(ValueError) as ours:
        mlax.pmap(lambda v: v)(x)
    expected = "implies that array axis 0 is partitioned 4 times, but the dimension size is 5"
    assert expected in str(theirs.value) and expected in str(ours.value)
    assert HERE in str(ours.value)


def test_errors_as_jax_s(rng) -> None:
    x = floats(rng, 4, 2)
    with pytest.raises(ValueError, match="pmap requires at least one argument with a mapped axis"):
        mlax.pmap(lambda v: v, in_axes=None)(x)
    with pytest.raises(ValueError, match="Specified axis_size 3 doesn't match received axis_size 4"):
        mlax.pmap(lambda v: v, axis_size=3)(x)
    with pytest.raises(TypeError, match="pmap in_axes must be an int, None, or"):
        mlax.pmap(lambda v: v, in_axes="a")
    with pytest.raises(ValueError, match="static_broadcasted_argnums=\\(1,\\) but was called with only 1"):
        mlax.pmap(lambda v, n: v, static_broadcasted_argnums=1)(x)
    with pytest.raises(ValueError, match="'devices' argument to pmap must be non-empty"):
        mlax.pmap(lambda v: v, devices=[])


def test_the_program_is_a_shard_map_over_a_line_of_devices() -> None:
    x, y = np.ones((3, 4), np.float32), np.ones(3, np.float32)
    mapped = mlax.pmap(lambda x, y: (x * y, mlax.lax.psum(x, "i")), axis_name="i", in_axes=(1, None),
                       out_axes=(1, None))
    text = mapped.lower(x, y).as_text("mlax", debug_info=False)
    assert ('mlax.mesh = {axis_names = ["i"], axis_sizes = array<i64: 4>, device_ids = array<i64: 0, 1, 2, '
            '3>}') in text
    assert ('%arg0: tensor<3x4xf32> {mlax.sharding = [[], ["i"]]}, %arg1: tensor<3xf32> {mlax.sharding = '
            '[[]]}') in text
    assert 'in_specs = [[[], ["i"]], [[]]], out_specs = [[[], ["i"]], [[]]]' in text
    assert "(%arg0: tensor<3x1xf32>, %arg1: tensor<3xf32>) -> (tensor<3x1xf32>, tensor<3xf32>)" in text
