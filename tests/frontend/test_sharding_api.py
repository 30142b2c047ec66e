"""mlax.sharding: jax's classes re-exported, mlax's context mesh, and shardings as mlax IR (the
module's mesh, the entry's argument/result specs), with jax's errors naming the argument."""

from __future__ import annotations

import threading

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import mlax
from mlax.dialect import sharding as ir_sharding
from mlax.sharding import ir_mesh, pspec_to_spec, spec_to_pspec

HERE = __file__


def jax_error(fun, *args) -> str:
    with pytest.raises(Exception) as info:
        fun(*args)
    return str(info.value)


def test_jax_classes_are_reexported() -> None:
    import jax.sharding as js

    for name in ("Mesh", "NamedSharding", "PartitionSpec", "SingleDeviceSharding", "Sharding", "AxisType",
                 "AbstractMesh"):
        assert getattr(mlax.sharding, name) is getattr(js, name)
    assert mlax.sharding.P is js.PartitionSpec is mlax.P
    assert mlax.NamedSharding is js.NamedSharding


def test_make_mesh_is_jax_s() -> None:
    mesh = mlax.make_mesh((2, 2), ("a", "b"))
    expected = jax.make_mesh((2, 2), ("a", "b"))
    assert mesh == expected
    assert mesh.axis_types == expected.axis_types


def test_set_mesh_as_setter_and_as_context(mesh: Mesh) -> None:
    assert mlax.sharding.get_abstract_mesh().empty
    with mlax.set_mesh(mesh):
        assert mlax.sharding.get_mesh() is mesh
        assert mlax.sharding.get_abstract_mesh() == mesh.abstract_mesh
        other = Mesh(np.array(jax.devices()[:2]), ("z",))
        with mlax.sharding.use_mesh(other):  # jax 0.6's name, for older code
            assert mlax.sharding.get_mesh() is other
        assert mlax.sharding.get_mesh() is mesh
    assert mlax.sharding.get_abstract_mesh().empty
    mlax.set_mesh(mesh)  # a global setter, as jax's
    try:
        assert mlax.sharding.get_mesh() is mesh
        assert jax.sharding.get_abstract_mesh().empty  # jax's own context is not touched
    finally:
        mlax.set_mesh(None)
    assert mlax.sharding.get_mesh().empty


def test_the_context_mesh_is_per_thread(mesh: Mesh) -> None:
    seen = []
    with mlax.set_mesh(mesh):
        thread = threading.Thread(target=lambda: seen.append(mlax.sharding.get_abstract_mesh().empty))
        thread.start()
        thread.join()
    assert seen == [True]


def test_set_mesh_errors_are_jax_s(mesh: Mesh) -> None:
    with pytest.raises(ValueError, match="Expected mesh of type `jax.sharding.Mesh`"):
        mlax.set_mesh("x")

    def inside(x):
        mlax.set_mesh(mesh)
        return x

    with pytest.raises(ValueError, match="can only be used outside of `jax.jit`"):
        mlax.jit(inside)(np.ones(2, np.float32))


def test_mesh_as_ir_is_row_major() -> None:
    devices = jax.devices()[:4]
    order = [devices[i] for i in (2, 0, 3, 1)]
    mesh = Mesh(np.array(order).reshape(2, 2), ("x", "y"))
    converted = ir_mesh(mesh)
    assert converted == ir_sharding.Mesh(("x", "y"), (2, 2), tuple(d.id for d in order))
    assert converted.axis_size(("x", "y")) == 4


def test_partition_specs_as_ir() -> None:
    assert pspec_to_spec(P("x", None), 3) == (("x",), (), ())
    assert pspec_to_spec(P(("x", "y")), 1) == (("x", "y"),)
    assert pspec_to_spec(P(), 0) == ()
    assert spec_to_pspec((("x",), (), ())) == P("x")
    assert spec_to_pspec(((), ("y", "x"))) == P(None, ("y", "x"))


def test_jit_shardings_are_argument_and_result_attributes(mesh: Mesh, rng: np.random.Generator) -> None:
    x = rng.standard_normal((8, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    f = mlax.jit(lambda x, b: (x + b, b * 2), in_shardings=(NamedSharding(mesh, P("x")), None),
                 out_shardings=(NamedSharding(mesh, P(None, ("x", "y"))), NamedSharding(mesh, P())))
    text = f.lower(x, b).as_text("mlax", debug_info=False)
    assert ('module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, '
            'device_ids = array<i64: 0, 1, 2, 3>}}') in text
    assert ('(%arg0: tensor<8x4xf32> {mlax.sharding = [["x"], []]}, %arg1: tensor<4xf32>) -> '
            '(tensor<8x4xf32> {mlax.sharding = [[], ["x", "y"]]}, '
            'tensor<4xf32> {mlax.sharding = [[]]})') in text
    assert "mlax.mesh_source" not in text


def test_partition_specs_read_against_the_context_mesh(mesh: Mesh, rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 8)).astype(np.float32)
    f = mlax.jit(lambda x: x * 2, in_shardings=P(None, "y"), out_shardings=P("x"))
    with mlax.set_mesh(mesh):
        text = f.lower(x).as_text("mlax", debug_info=False)
    assert '%arg0: tensor<4x8xf32> {mlax.sharding = [[], ["y"]]}' in text
    assert '-> (tensor<4x8xf32> {mlax.sharding = [["x"], []]})' in text
    with pytest.raises(RuntimeError, match="non-empty mesh in context"):
        f.lower(x)


def test_the_cache_key_holds_the_shardings(mesh: Mesh, rng: np.random.Generator) -> None:
    x = rng.standard_normal((4, 8)).astype(np.float32)
    f = mlax.jit(lambda x: x * 2, in_shardings=P("x"))
    with mlax.set_mesh(mesh):
        first = f.lower(x).as_text("mlax")
    with mlax.set_mesh(Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("y", "x"))):
        second = f.lower(x).as_text("mlax")
    assert first != second and f._cache_size() == 2


def test_one_device_shardings_are_the_one_device_program(rng: np.random.Generator) -> None:
    one = Mesh(np.array(jax.devices()[:1]), ("x",))
    x = rng.standard_normal(4).astype(np.float32)
    f = mlax.jit(lambda x: x + 1, in_shardings=NamedSharding(one, P("x")))
    assert "mlax.mesh" not in f.lower(x).as_text("mlax")


def test_spec_longer_than_the_rank_names_the_argument(mesh: Mesh) -> None:
    x = np.ones((8, 4), np.float32)
    sharding = NamedSharding(mesh, P("x", "y", None))

    def f(a):
        return a

    expected = jax_error(jax.jit(f, in_shardings=sharding), x)
    with pytest.raises(ValueError) as info:
        mlax.jit(f, in_shardings=sharding)(x)
    message = str(info.value)
    assert message.startswith(expected), message
    assert "in_shardings of mlax.jit (for argument a)" in message and HERE in message


def test_output_spec_longer_than_the_rank(mesh: Mesh) -> None:
    x = np.ones((8,), np.float32)
    sharding = NamedSharding(mesh, P("x", "y"))
    expected = jax_error(jax.jit(lambda a: a, out_shardings=sharding), x)
    with pytest.raises(ValueError) as info:
        mlax.jit(lambda a: a, out_shardings=sharding)(x)
    assert str(info.value).startswith(expected)


def test_axis_not_in_the_mesh(mesh: Mesh) -> None:
    def f(a):
        return a

    with mlax.set_mesh(mesh), jax.set_mesh(mesh):
        expected = jax_error(jax.jit(f, in_shardings=P("z")), np.ones(4, np.float32))
        with pytest.raises(ValueError) as info:
            mlax.jit(f, in_shardings=P("z"))(np.ones(4, np.float32))
    assert expected in str(info.value) and "argument a" in str(info.value) and HERE in str(info.value)


def test_dimension_the_axes_do_not_divide(mesh: Mesh) -> None:
    x = np.ones((6, 3), np.float32)
    sharding = NamedSharding(mesh, P(None, "x"))

    def f(a):
        return a

    expected = jax_error(jax.jit(f, in_shardings=sharding), x)
    with pytest.raises(ValueError) as info:
        mlax.jit(f, in_shardings=sharding)(x)
    assert str(info.value).startswith(expected)
    assert "argument a" in str(info.value) and HERE in str(info.value)


def test_in_shardings_must_be_a_prefix_of_the_arguments(mesh: Mesh) -> None:
    x = np.ones(4, np.float32)
    sharding = (NamedSharding(mesh, P("x")),)
    expected = jax_error(jax.jit(lambda a, b: a, in_shardings=sharding), x, x)
    with pytest.raises(ValueError) as info:
        mlax.jit(lambda a, b: a, in_shardings=sharding)(x, x)
    assert str(info.value).startswith(expected)
    with pytest.raises(ValueError, match="pjit does not support kwargs when in_shardings is specified"):
        mlax.jit(lambda a, b: a, in_shardings=sharding[0])(x, b=x)
    # None specifies nothing: keyword arguments are fine, as in jax (flax.nnx's jit passes None)
    y = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(mlax.jit(lambda a, b: a * b, in_shardings=None)(x, b=y),
                                  jax.jit(lambda a, b: a * b, in_shardings=None)(x, b=y))


def test_shardings_on_different_devices(mesh: Mesh) -> None:
    small = Mesh(np.array(jax.devices()[:2]), ("x",))
    x = np.ones((8, 4), np.float32)
    shardings = (NamedSharding(mesh, P("x")), NamedSharding(small, P("x")))
    expected = jax_error(jax.jit(lambda a, b: a + b, in_shardings=shardings), x, x)
    assert expected.startswith("Received incompatible devices for jitted computation")
    with pytest.raises(ValueError, match="Received incompatible devices for jitted computation"):
        mlax.jit(lambda a, b: a + b, in_shardings=shardings)(x, x)
    same_devices = Mesh(np.array(jax.devices()[:4]), ("x",))  # jax accepts it; mlax needs one mesh
    with pytest.raises(ValueError, match="one mesh"):
        mlax.jit(lambda a, b: a + b, in_shardings=(shardings[0], NamedSharding(same_devices, P("x"))))(x, x)


def test_a_mesh_program_cannot_run_on_the_cpu_backend(mesh: Mesh) -> None:
    f = mlax.jit(lambda a: a, in_shardings=NamedSharding(mesh, P("x")), backend="cpu")
    with pytest.raises(ValueError, match="backend='xla'"):
        f(np.ones(4, np.float32))


def test_a_mesh_program_picks_the_xla_backend(mesh: Mesh) -> None:
    f = mlax.jit(lambda a: a, in_shardings=NamedSharding(mesh, P("x")))
    assert "stablehlo" in f.lower(np.ones(4, np.float32)).STAGES
    simulated = mlax.jit(lambda a: a, in_shardings=NamedSharding(mesh, P("x")), backend="interpreter")
    assert simulated.lower(np.ones(4, np.float32)).STAGES == ("mlax", "expanded")  # the interpreter's


def test_with_sharding_constraint_is_an_op(mesh: Mesh) -> None:
    def f(x):
        y = mlax.lax.with_sharding_constraint(x * 2, NamedSharding(mesh, P("x", "y")))
        return mlax.lax.with_sharding_constraint({"a": y, "b": y + 1}, {"a": None, "b": P(None, "x")})

    with mlax.set_mesh(mesh):
        text = mlax.jit(f).lower(np.ones((4, 4), np.float32)).as_text("mlax", debug_info=False)
    assert text.count('"mlax.sharding_constraint"') == 2
    assert '{sharding = [["x"], ["y"]]}' in text and '{sharding = [[], ["x"]]}' in text
    assert "mlax.mesh = {axis_names" in text


def test_with_sharding_constraint_errors(mesh: Mesh) -> None:
    def f(x):
        return mlax.lax.with_sharding_constraint(x, P("x", None))

    with pytest.raises(RuntimeError, match="with_sharding_constraint requires a non-empty mesh in context"):
        mlax.jit(f)(np.ones(8, np.float32))
    with mlax.set_mesh(mesh):
        with pytest.raises(ValueError, match="is only valid for values of rank at least 2") as info:
            mlax.jit(f)(np.ones(8, np.float32))
    assert HERE in str(info.value)


def test_install_as_jax_redirects_the_names_mlax_owns() -> None:
    import mlax.experimental.shard_map
    from mlax import jax_modules

    assert jax_modules.resolve("jax.sharding", "set_mesh", {}) is mlax.sharding.set_mesh
    assert jax_modules.resolve("jax.sharding", "get_abstract_mesh", {}) is mlax.sharding.get_abstract_mesh
    assert jax_modules.resolve("jax.sharding", "NamedSharding", {}) is jax.sharding.NamedSharding
    assert jax_modules.resolve("jax.sharding", "AbstractDevice", {}) is jax.sharding.AbstractDevice
    assert jax_modules.resolve("jax", "shard_map", {}) is mlax.shard_map
    assert jax_modules.resolve("jax", "pmap", {}) is mlax.pmap
    assert (jax_modules.resolve("jax.experimental.shard_map", "shard_map", {})
            is mlax.experimental.shard_map.shard_map)
    assert jax_modules.status("jax.sharding", "reshard") == "mlax"  # sharding in types (issue 36)
