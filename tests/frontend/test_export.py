"""mlax.export against jax.export, both ways: an mlax export has jax's fields and runs the same
numbers through mlax's call, jax's own ``Exported.call``, and (bytes) jax's deserializer, its
VJP under jax.grad included; jax's exports (objects and bytes) run on mlax, eagerly, under jit
and grad; the errors. The byte round trips need jax's optional ``flatbuffers``."""

from __future__ import annotations

import importlib.util
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax import export as mexport
from mlax.jax_modules import resolve
from tests.oracle import assert_same, random_array

needs_flatbuffers = pytest.mark.skipif(importlib.util.find_spec("flatbuffers") is None,
                                       reason="jax's Exported serialization needs the flatbuffers package")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(3636)


def program(np_mod: Any, x: Any, y: Any, *, scale: Any) -> Any:
    return {"prod": np_mod.sin(x) * y * scale, "sums": (np_mod.sum(x * y, axis=0), (x @ y.T).sum())}


def _args(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    shape = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
    return random_array(rng, shape, np.float32), random_array(rng, shape, np.float32)


def _exports(x: np.ndarray, y: np.ndarray) -> tuple[mexport.Exported, Any]:
    spec = jax.ShapeDtypeStruct(y.shape, y.dtype)
    ours = mexport.export(mlax.jit(lambda a, b, *, scale: program(mnp, a, b, scale=scale)))
    theirs = jax.export.export(jax.jit(lambda a, b, *, scale: program(jnp, a, b, scale=scale)))
    return ours(x, spec, scale=1.0), theirs(x, spec, scale=1.0)


def test_exported_fields_match_jax(rng: np.random.Generator) -> None:
    ours, theirs = _exports(*_args(rng))
    assert isinstance(ours, jax.export.Exported)
    for name in ("fun_name", "in_tree", "in_avals", "out_tree", "out_avals", "nr_devices", "platforms",
                 "module_kept_var_idx", "calling_convention_version", "uses_global_constants",
                 "ordered_effects", "in_shardings_hlo", "out_shardings_hlo"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert ours.has_vjp()
    text = ours.mlir_module()
    assert text.split(" attributes")[0].endswith("module @jit__lambda") and "func.func public @main" in text


def test_exported_call_matches_jax(rng: np.random.Generator) -> None:
    x, y = _args(rng)
    ours, theirs = _exports(x, y)
    expected = theirs.call(x, y, scale=2.5)
    assert_same(ours.call(x, y, scale=2.5), expected, rtol=1e-5, atol=1e-5)
    assert_same(jax.export.Exported.call(ours, x, y, scale=2.5), expected, rtol=1e-5, atol=1e-5)  # jax's call
    assert_same(mlax.jit(lambda a: ours.call(a, y, scale=2.5))(x), expected, rtol=1e-5, atol=1e-5)
    grad = mlax.grad(lambda a: ours.call(a, y, scale=2.5)["sums"][1])(x)
    assert_same(grad, jax.grad(lambda a: theirs.call(a, y, scale=2.5)["sums"][1])(x), rtol=1e-5, atol=1e-5)
    vjp = ours.vjp()
    assert isinstance(vjp, mexport.Exported) and vjp.in_avals[:3] == ours.in_avals[:2] + (vjp.in_avals[2],)


def test_jax_exported_runs_on_mlax(rng: np.random.Generator) -> None:
    x, y = _args(rng)
    _, theirs = _exports(x, y)
    ours = mexport.Exported(**{name: getattr(theirs, name) for name in theirs.__dataclass_fields__})
    expected = theirs.call(x, y, scale=0.5)
    assert_same(ours.call(x, y, scale=0.5), expected, rtol=1e-5, atol=1e-5)
    assert_same(mlax.vmap(lambda a: ours.call(a, y, scale=0.5)["prod"])(np.stack([x, x])),
                np.stack([expected["prod"]] * 2), rtol=1e-5, atol=1e-5)


@needs_flatbuffers
def test_serialized_mlax_export_runs_on_jax(rng: np.random.Generator) -> None:
    x, y = _args(rng)
    ours, theirs = _exports(x, y)
    restored = jax.export.deserialize(ours.serialize(vjp_order=1))  # jax alone reads mlax's bytes
    assert type(restored) is jax.export.Exported
    assert_same(restored.call(x, y, scale=1.5), theirs.call(x, y, scale=1.5), rtol=1e-5, atol=1e-5)
    loss = lambda exported: lambda a: exported.call(a, y, scale=1.5)["sums"][1]  # noqa: E731
    assert_same(jax.grad(loss(restored))(x), jax.grad(loss(theirs))(x), rtol=1e-5, atol=1e-5)


@needs_flatbuffers
def test_serialized_jax_export_runs_on_mlax(rng: np.random.Generator) -> None:
    x, y = _args(rng)
    ours, theirs = _exports(x, y)
    restored = mexport.deserialize(theirs.serialize())
    assert isinstance(restored, mexport.Exported)
    expected = theirs.call(x, y, scale=3.0)
    assert_same(restored.call(x, y, scale=3.0), expected, rtol=1e-5, atol=1e-5)
    assert_same(mlax.jit(lambda a: restored.call(a, y, scale=3.0))(x), expected, rtol=1e-5, atol=1e-5)
    assert_same(mexport.deserialize(ours.serialize()).call(x, y, scale=3.0), expected, rtol=1e-5, atol=1e-5)


def test_install_as_jax_gives_mlax_export() -> None:
    assert resolve("jax.export", "export", {}) is mexport.export
    assert resolve("jax.export", "deserialize", {}) is mexport.deserialize
    assert resolve("jax.export", "Exported", {}) is mexport.Exported
    assert mlax.export is mexport


def test_export_errors(rng: np.random.Generator) -> None:
    x, y = _args(rng)
    ours, theirs = _exports(x, y)

    def fun(a: Any) -> Any:
        return a

    with pytest.raises(ValueError) as expected:
        jax.export.export(fun)
    with pytest.raises(ValueError) as error:
        mexport.export(fun)
    assert str(error.value).startswith(str(expected.value))
    with pytest.raises(ValueError, match="distinct"):
        mexport.export(mlax.jit(fun), platforms=("cpu", "cpu"))
    with pytest.raises(TypeError, match="bytes"):
        mexport.deserialize("not bytes")
    wider = np.zeros((x.shape[0], x.shape[1] + 1), np.float32)
    for bad in [(wider, y), (x, y.astype(np.int32)), (x[None], y)]:
        with pytest.raises(ValueError) as expected:
            theirs.call(*bad, scale=1.0)
        with pytest.raises(ValueError) as error:
            ours.call(*bad, scale=1.0)
        assert str(error.value).startswith(str(expected.value).splitlines()[0])
    with pytest.raises(ValueError, match="same pytree structure"):
        ours.call(x, y)


def _both(fun_of: Any, *specs: Any, **options: Any) -> tuple[mexport.Exported, Any]:
    """``fun_of(lib)`` exported by mlax and by jax for ``specs``."""
    ours = mexport.export(fun_of(mlax), **options)(*specs)
    return ours, jax.export.export(fun_of(jax), **options)(*specs)


def _main_line(exported: Any) -> str:
    return next(line for line in exported.mlir_module().splitlines() if "@main(" in line).strip()


@needs_flatbuffers
def test_several_platforms_take_jax_s_platform_index(rng: np.random.Generator) -> None:
    x = random_array(rng, (3, int(rng.integers(2, 5))), np.float32)
    platforms = ("tpu", "cpu", "cuda")
    ours, theirs = _both(lambda lib: lib.jit(lambda a: lib.numpy.tanh(a) * 2.0), x, platforms=platforms)
    for name in ("platforms", "uses_global_constants", "module_kept_var_idx", "in_avals", "out_avals"):
        assert getattr(ours, name) == getattr(theirs, name), name
    assert _main_line(ours).split(", %")[0] == _main_line(theirs).split(", %")[0]  # the index argument
    expected = theirs.call(x)
    assert_same(ours.call(x), expected, rtol=1e-6, atol=1e-6)
    assert_same(mlax.jit(ours.call)(x), expected, rtol=1e-6, atol=1e-6)
    restored = jax.export.deserialize(ours.serialize())  # jax alone runs mlax's bytes
    assert_same(restored.call(x), expected, rtol=1e-6, atol=1e-6)
    assert_same(mexport.deserialize(theirs.serialize()).call(x), expected, rtol=1e-6, atol=1e-6)


def test_the_platform_check_and_its_opt_out(rng: np.random.Generator) -> None:
    value = float(rng.standard_normal())
    ours, theirs = _both(lambda lib: lib.jit(lib.lax.cos), value, platforms=["tpu"])
    with pytest.raises(ValueError) as expected:
        theirs.call(value)
    with pytest.raises(ValueError) as error:
        ours.call(value)
    assert str(error.value).startswith(str(expected.value))
    unchecked = [jax.export.DisabledSafetyCheck.platform()]
    ours, theirs = _both(lambda lib: lib.jit(lib.lax.cos), value, platforms=["tpu"],
                         disabled_checks=unchecked)
    assert_same(ours.call(value), theirs.call(value), rtol=1e-6, atol=1e-6)  # weak_type=True on both


def test_library_functions_export_as_jax_s_jitted_ones(rng: np.random.Generator) -> None:
    x = random_array(rng, (int(rng.integers(1, 6)),), np.float32)
    ours, theirs = _both(lambda lib: lib.numpy.cos, x)
    assert ours.fun_name == theirs.fun_name == "cos"
    assert_same(ours.call(x), theirs.call(x), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        mexport.export(lambda a: mnp.cos(a))


def test_main_s_arguments_are_named_as_jax_names_them(rng: np.random.Generator) -> None:
    x = random_array(rng, (2, 3), np.float32)
    ours, theirs = _both(lambda lib: lib.jit(lambda first, second: first * second), x, x)
    assert _main_line(ours) == _main_line(theirs)


def _shards(array: Any) -> list[tuple[str, Any]]:
    return [(str(s.device), s.index) for s in array.addressable_shards]


def test_an_export_for_an_abstract_mesh_runs_where_its_arguments_are(rng: np.random.Generator) -> None:
    """An export over an AbstractMesh of 4 devices: jax's recorded shardings, and calls on two
    placements of the session's devices (jax runs it on the argument's devices)."""
    from jax.sharding import AbstractMesh, Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    n = 8 * int(rng.integers(1, 4))
    abstract = AbstractMesh((4,), ("a",))
    spec = jax.ShapeDtypeStruct((n,), np.int32, sharding=NamedSharding(abstract, P("a")))
    ours, theirs = _both(lambda lib: lib.jit(lambda v: (v * 3).T), spec)
    assert ours.nr_devices == theirs.nr_devices == 4
    for name in ("in_shardings_jax", "out_shardings_jax"):
        assert getattr(ours, name)(abstract) == getattr(theirs, name)(abstract), name
    x = rng.integers(-100, 100, n).astype(np.int32)
    devices = jax.devices()[:4]
    line = Mesh(np.array(devices), ("a",))
    square = Mesh(np.array(devices[::-1]).reshape(2, 2), ("b", "c"))
    for sharding in (NamedSharding(line, P("a")), NamedSharding(square, P("b"))):
        expected = theirs.call(jax.device_put(x, sharding))
        got = ours.call(mlax.device_put(x, sharding))
        assert isinstance(got, mlax.Array)
        assert_same(got, expected)
        assert _shards(got) == _shards(expected)
