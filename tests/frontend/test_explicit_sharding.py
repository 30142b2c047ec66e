"""Explicit sharding (issue 36) against the real jax 0.10.2: types carrying shardings
(``jax.typeof`` prints ``float32[8@x,4]``), eager and jitted results placed as jax places them,
AxisType meshes and the mesh contexts, ``reshard``, ``out_sharding=``, ``auto_axes`` /
``explicit_axes``, jax's errors for ambiguous shardings, and shard_map's inferred in_specs.

The session has 4 CPU devices (tests/conftest.py); explicit_sharding_worker.py runs the shared
cases on 1 and 8 devices in subprocesses.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType, NamedSharding
from jax.sharding import PartitionSpec as P

import mlax
import mlax.numpy as mnp

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import explicit_sharding_cases as cases  # noqa: E402


@pytest.fixture
def emesh() -> jax.sharding.Mesh:
    """A 2x2 mesh with Explicit axes (jax.make_mesh's default in jax 0.10.2)."""
    return jax.make_mesh((2, 2), ("x", "y"))


@pytest.fixture
def amesh() -> jax.sharding.Mesh:
    return jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)


def both(fn, mesh=None):
    """``fn(ns, np_module)`` on jax and on mlax (under their set_mesh(mesh) when given)."""
    out = []
    for ns, numpy in ((jax, jnp), (mlax, mnp)):
        if mesh is None:
            out.append(fn(ns, numpy))
        else:
            with ns.set_mesh(mesh):
                out.append(fn(ns, numpy))
    return out


def assert_same(ns_results, values=True) -> None:
    (expected, got) = ns_results
    assert str(jax.typeof(expected)) == str(mlax.typeof(got))
    assert jax.typeof(expected).sharding == mlax.typeof(got).sharding
    assert expected.sharding == got.sharding, (expected.sharding, got.sharding)
    if values:
        np.testing.assert_allclose(np.asarray(expected), np.asarray(got), rtol=1e-5, atol=1e-5)


# --- the shared cases, on this session's 4 devices --------------------------------------------------


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_results_and_types_match_jax(name: str, jitted: bool, emesh) -> None:
    assert cases.compare(cases.CASES[name], emesh, jitted) == []


@pytest.mark.parametrize("name", sorted(cases.JIT_ONLY))
def test_jitted_slices_match_jax(name: str, emesh) -> None:
    assert cases.compare(cases.JIT_ONLY[name], emesh, True) == []


@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", sorted(cases.ERRORS))
def test_ambiguous_shardings_raise_jax_s_error(name: str, jitted: bool, emesh) -> None:
    assert cases.compare_error(cases.ERRORS[name], emesh, jitted) == []
    kind, _ = cases.error_of(mlax, cases.ERRORS[name], emesh, jitted)
    assert kind == "ShardingTypeError"


@pytest.mark.parametrize("count", [1, 8])
def test_the_cases_on_one_and_eight_devices(count: int) -> None:
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, str(HERE / "explicit_sharding_worker.py"), str(count)],
                          capture_output=True, text=True, timeout=900, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"on {count} device(s), 0 differences" in done.stdout


def test_the_error_is_jax_s_class(emesh) -> None:
    from jax._src.core import ShardingTypeError

    a, b, c = cases.arrays(mlax, emesh)
    with pytest.raises(ShardingTypeError, match="Contracting dimensions are sharded and it is ambiguous"):
        b @ c


# --- types and placement without a context mesh ---------------------------------------------------------


def test_typeof_prints_the_sharding_as_jax(emesh, rng) -> None:
    x = rng.standard_normal((8, 4)).astype(np.float32)
    expected, got = both(lambda ns, _: ns.device_put(x, NamedSharding(emesh, P("x"))))
    assert str(mlax.typeof(got)) == str(jax.typeof(expected)) == "float32[8@x,4]"
    assert repr(mlax.typeof(got)) == repr(jax.typeof(expected))
    assert mlax.typeof(got).sharding == jax.typeof(expected).sharding
    assert mlax.typeof(got).sharding.mesh.axis_types == (AxisType.Explicit, AxisType.Explicit)


@pytest.mark.parametrize("op", ["mul", "sum0", "sum1", "transpose", "scalar"])
def test_eager_results_keep_their_sharding_without_a_context(op, emesh, amesh, rng) -> None:
    x = rng.standard_normal((8, 4)).astype(np.float32)
    fns = {"mul": lambda a: a * 2, "sum0": lambda a: a.sum(0), "sum1": lambda a: a.sum(1),
           "transpose": lambda a: a.T, "scalar": lambda a: a + 1.0}
    for mesh in (emesh, amesh):
        assert_same(both(lambda ns, _, mesh=mesh: fns[op](ns.device_put(x, NamedSharding(mesh, P("x"))))))


@pytest.mark.parametrize("op", ["mul", "sum0", "sum1", "transpose", "dot"])
def test_jitted_results_land_on_the_inputs_mesh(op, emesh, amesh, rng) -> None:
    x = rng.standard_normal((8, 4)).astype(np.float32)
    w = rng.standard_normal((4, 6)).astype(np.float32)
    fns = {"mul": lambda a, w: a * 2, "sum0": lambda a, w: a.sum(0), "sum1": lambda a, w: a.sum(1),
           "transpose": lambda a, w: a.T, "dot": lambda a, w: a @ w}
    for mesh in (emesh, amesh):
        def run(ns, _, mesh=mesh):
            return ns.jit(fns[op])(ns.device_put(x, NamedSharding(mesh, P("x"))),
                                   ns.device_put(w, NamedSharding(mesh, P())))

        assert_same(both(run))


def test_typeof_inside_jit_matches_jax(emesh, rng) -> None:
    x = rng.standard_normal((8, 4)).astype(np.float32)
    seen: dict[str, list[str]] = {"jax": [], "mlax": []}

    def f(ns, numpy, log):
        def body(a):
            log.append(str(ns.typeof(a)))
            b = numpy.tanh(a).sum(0)
            log.append(str(ns.typeof(b)))
            log.append(str(ns.typeof(a.reshape(8, 2, 2))))
            log.append(str(ns.typeof(numpy.ones((4, 8)) @ a)))
            return b
        return ns.jit(body)(ns.device_put(x, NamedSharding(emesh, P("x"))))

    both(lambda ns, numpy: f(ns, numpy, seen[ns.__name__]))
    assert seen["mlax"] == seen["jax"] == ["float32[8@x,4]", "float32[4]", "float32[8@x,2,2]", "float32[4,4]"]


def test_jit_under_a_context_mesh_places_results_on_it(emesh, amesh) -> None:
    x = np.ones(4, np.float32)
    for mesh in (emesh, amesh):
        expected, got = both(lambda ns, numpy: ns.jit(lambda a: (a * 2, numpy.zeros(3)))(x), mesh)
        assert [o.sharding for o in expected] == [o.sharding for o in got]
    outside = mlax.jit(lambda a: a * 2)(x)
    assert outside.sharding == jax.jit(lambda a: a * 2)(x).sharding


# --- AxisType, meshes and contexts --------------------------------------------------------------------


def test_make_mesh_axis_types(emesh) -> None:
    assert mlax.make_mesh((2, 2), ("x", "y")) == emesh
    mixed = (AxisType.Explicit, AxisType.Auto)
    assert mlax.make_mesh((2, 2), ("x", "y"), axis_types=mixed).axis_types == mixed
    assert mlax.sharding.AxisType is AxisType and set(AxisType.__members__) >= {"Explicit", "Auto", "Manual"}


def test_abstract_mesh_contexts(emesh, rng) -> None:
    assert mlax.sharding.get_abstract_mesh().empty
    with mlax.set_mesh(emesh):
        assert mlax.sharding.get_abstract_mesh() == emesh.abstract_mesh
        auto = emesh.abstract_mesh.update_axis_types({"x": AxisType.Auto})
        with mlax.sharding.use_abstract_mesh(auto):
            assert mlax.sharding.get_abstract_mesh() == auto
            assert mlax.sharding.get_mesh() is emesh
        assert mlax.sharding.get_abstract_mesh() == emesh.abstract_mesh
        seen = []
        mlax.jit(lambda a: seen.append(mlax.sharding.get_abstract_mesh()) or a)(np.ones(2, np.float32))
        assert seen == [emesh.abstract_mesh]
    assert mlax.sharding.get_abstract_mesh().empty
    with pytest.raises(ValueError, match="Expected mesh of type `jax.sharding.AbstractMesh`"):
        mlax.sharding.use_abstract_mesh(emesh)
    small = jax.make_mesh((2,), ("x",)).abstract_mesh
    with mlax.set_mesh(emesh), pytest.raises(ValueError, match="cannot change the size of the mesh"):
        with mlax.sharding.use_abstract_mesh(small):
            pass


def test_use_mesh_and_set_mesh_refuse_manual_axes() -> None:
    manual = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Manual,) * 2)
    with pytest.raises(ValueError, match="contains manual axes"):
        mlax.set_mesh(manual)
    with pytest.raises(ValueError, match="contains manual axes"):
        jax.set_mesh(manual)


def test_creation_under_a_context_mesh(emesh, amesh) -> None:
    for mesh in (emesh, amesh):
        for make in (lambda numpy: numpy.ones(3), lambda numpy: numpy.arange(8),
                     lambda numpy: numpy.zeros((4, 2)) + 1):
            expected, got = both(lambda ns, numpy, make=make: make(numpy), mesh)
            assert expected.sharding == got.sharding


# --- reshard, out_sharding, auto_axes / explicit_axes ------------------------------------------------


def test_reshard_eager_and_in_jit(emesh, rng) -> None:
    x = rng.standard_normal((8, 4)).astype(np.float32)

    def f(ns, numpy):
        a = ns.device_put(x, P("x"))
        return (ns.reshard(a, P(None, "x")), ns.sharding.reshard(a, NamedSharding(emesh, P("y"))),
                ns.jit(lambda v: ns.reshard(v * 2, P(None, ("x", "y"))))(a),
                ns.reshard(a, NamedSharding(emesh.abstract_mesh, P(None, "y"))),
                ns.reshard(a, P("x", None, None)))

    for expected, got in zip(*both(f, emesh), strict=True):
        assert_same((expected, got))


def test_reshard_errors_are_jax_s(emesh, amesh, rng) -> None:
    x = rng.standard_normal((8, 4)).astype(np.float32)
    a = mlax.device_put(x, NamedSharding(emesh, P("x")))
    with pytest.raises(ValueError, match="Using PartitionSpec when you are not under a mesh context"):
        mlax.reshard(a, P("x"))
    with pytest.raises(ValueError, match="Reshard should only be used with out_shardings which are non-None"):
        mlax.reshard(a, None)
    with mlax.set_mesh(emesh), pytest.raises(ValueError, match="Resource axis: z of P\\('z',\\) is not"):
        mlax.reshard(a, P("z"))
    with mlax.set_mesh(amesh), pytest.raises(
            ValueError, match="PartitionSpec passed to reshard cannot contain axis names that are of type"):
        mlax.reshard(mlax.device_put(x, NamedSharding(amesh, P("x"))), P("x"))


@pytest.mark.parametrize("which", ["zeros", "ones", "full", "arange", "dot", "einsum", "matmul",
                                   "dot_general", "reshape", "method_reshape", "normal", "jit_dot",
                                   "jit_reshape"])
def test_out_sharding_lays_out_and_types_the_result(which, emesh, rng) -> None:
    xv = rng.standard_normal((8, 4)).astype(np.float32)
    wv = rng.standard_normal((4, 6)).astype(np.float32)

    def f(ns, numpy):
        x, w = ns.device_put(xv, P("x", "y")), ns.device_put(wv, P("y"))  # contracting dims both split
        return {
            "zeros": lambda: numpy.zeros((8, 4), out_sharding=P("x", "y")),
            "ones": lambda: numpy.ones((8,), out_sharding=P(("x", "y"))),
            "full": lambda: numpy.full((4, 4), 3.0, out_sharding=P(None, "y")),
            "arange": lambda: numpy.arange(16, out_sharding=P("x")),
            "dot": lambda: numpy.dot(x, w, out_sharding=P("x")),
            "einsum": lambda: numpy.einsum("ij,jk->ik", x, w, out_sharding=P("x", None)),
            "matmul": lambda: numpy.matmul(x, w, out_sharding=P(None, "y")),
            "dot_general": lambda: ns.lax.dot_general(x, w, (((1,), (0,)), ((), ())),
                                                      out_sharding=P("x", "y")),
            "reshape": lambda: numpy.reshape(x, (32,), out_sharding=P(("x", "y"))),
            "method_reshape": lambda: x.reshape(4, 8, out_sharding=P("x", "y")),
            "normal": lambda: ns.random.normal(ns.random.key(0), (8, 4), out_sharding=P("x")),
            "jit_dot": lambda: ns.jit(lambda a, b: numpy.dot(a, b, out_sharding=P("x", "y")))(x, w),
            "jit_reshape": lambda: ns.jit(lambda a: numpy.reshape(a, (32,), out_sharding=P(("x", "y"))))(x),
        }[which]()

    assert_same(both(f, emesh))


def test_gradients_keep_the_primal_sharding(emesh, rng) -> None:
    xv = rng.standard_normal((8, 4)).astype(np.float32)
    wv = rng.standard_normal((4, 6)).astype(np.float32)

    def f(ns, numpy):
        x, w = ns.device_put(xv, P("x", "y")), ns.device_put(wv, P("y"))

        def loss(w, x):
            return (numpy.tanh(numpy.dot(x, w, out_sharding=P("x"))) ** 2).sum()

        return ns.jit(ns.grad(loss))(w, x), ns.value_and_grad(loss)(w, x)[1]

    for expected, got in zip(*both(f, emesh), strict=True):
        assert_same((expected, got))


def test_auto_axes_and_explicit_axes(emesh, amesh, rng) -> None:
    xv = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    seen: dict[str, list[str]] = {"jax": [], "mlax": []}

    def with_auto(ns, numpy):
        log = seen[ns.__name__]

        def g(a):
            log.append(str(ns.typeof(a)))
            log.append(str(ns.sharding.get_abstract_mesh().axis_types))
            return a.reshape(4, 8) * 2  # ambiguous with explicit axes; Auto leaves it to the compiler

        x = ns.device_put(xv, P("x"))
        h = ns.sharding.auto_axes(g, out_sharding=P("x"))
        return h(x), ns.jit(h)(x)

    for expected, got in zip(*both(with_auto, emesh), strict=True):
        assert_same((expected, got))
    assert seen["mlax"] == seen["jax"]

    def with_explicit(ns, numpy):
        log = seen[ns.__name__]

        def k(a):
            log.append(str(ns.typeof(a)))
            return a * 2

        x = ns.device_put(xv, P("x"))
        f = ns.sharding.explicit_axes(k, in_sharding=P("x"))
        return f(x), ns.jit(f)(x)

    for expected, got in zip(*both(with_explicit, amesh), strict=True):
        assert_same((expected, got))
    assert seen["mlax"] == seen["jax"]
    with mlax.set_mesh(emesh), pytest.raises(TypeError, match="Missing required keyword argument"):
        mlax.sharding.auto_axes(lambda a: a)(mlax.device_put(xv, P("x")))


# --- shard_map's inferred in_specs ----------------------------------------------------------------------


def test_shard_map_infers_in_specs_from_types(emesh, rng) -> None:
    xv = rng.standard_normal((8, 4)).astype(np.float32)
    seen: dict[str, list[str]] = {"jax": [], "mlax": []}

    def f(ns, numpy):
        log = seen[ns.__name__]

        def body(a):
            log.append(str(ns.sharding.get_abstract_mesh().axis_types))
            return a * 2

        x = ns.device_put(xv, P("x"))
        mapped = ns.shard_map(body, out_specs=P("x"))

        def in_jit(a):
            b = mapped(a)
            c = ns.shard_map(lambda v: ns.lax.psum(v, "x"), out_specs=P())(a)
            log.append(str(ns.typeof(b)) + " " + str(ns.typeof(c)))
            return b, c

        return [ns.jit(mapped)(x), *ns.jit(in_jit)(x)]

    for expected, got in zip(*both(f, emesh), strict=True):
        assert_same((expected, got))
    assert seen["mlax"] == seen["jax"]


def test_shard_map_without_in_specs_on_auto_axes_is_jax_s_error(amesh, rng) -> None:
    x = mlax.device_put(rng.standard_normal((8, 4)).astype(np.float32), NamedSharding(amesh, P("x")))
    with pytest.raises(TypeError, match="shard_map in_specs argument must be a pytree of `jax.sharding"):
        mlax.shard_map(lambda a: a, mesh=amesh, out_specs=P("x"))(x)


# --- the IR ---------------------------------------------------------------------------------------------


def test_the_module_mesh_records_axis_types(emesh, amesh, rng) -> None:
    from mlir import ir

    from mlax.dialect import get_context
    from mlax.dialect import sharding as ir_sharding

    x = rng.standard_normal((8, 4)).astype(np.float32)
    text = mlax.jit(lambda a: a * 2).lower(mlax.device_put(x, NamedSharding(emesh, P("x")))).as_text("mlax")
    assert 'axis_types = ["Explicit", "Explicit"]' in text
    auto = mlax.jit(lambda a: a * 2).lower(mlax.device_put(x, NamedSharding(amesh, P("x")))).as_text("mlax")
    assert "axis_types =" not in auto  # jax's default (Auto) is left out, as before explicit sharding
    mesh = ir_sharding.Mesh(("x", "y"), (2, 2), (0, 1, 2, 3), ("Explicit", "Auto"))
    with get_context():
        assert ir_sharding.Mesh.from_attribute(mesh.attribute()) == mesh
        bad = ir.DictAttr.get({**{n.name: n.attr for n in mesh.attribute()},
                               "axis_types": ir.ArrayAttr.get([ir.StringAttr.get("Sideways")] * 2)})
        with pytest.raises(ir_sharding.ShardingError, match="axis_types"):
            ir_sharding.Mesh.from_attribute(bad)


def test_every_op_has_a_type_rule_or_a_reason() -> None:
    from mlax.dialect import OPS
    from mlax.sharding_type_rules import UNTYPED
    from mlax.sharding_types import RULES

    assert not set(RULES) & set(UNTYPED)
    assert set(RULES) | set(UNTYPED) == set(OPS), sorted(set(OPS) - set(RULES) - set(UNTYPED))
