"""jit with in_shardings / out_shardings, committed sharded inputs and with_sharding_constraint,
end to end on the session's 4 CPU devices: values and output shardings against jax's, on the
XLA backend (the default road of a program with a mesh) and on the interpreter (which simulates
the devices; its results are host arrays, so only values are compared there)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import mlax
import mlax.numpy as mnp
from tests.frontend.sharded_checks import MESH_BACKENDS, check_like_jax, floats


@pytest.fixture(params=MESH_BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


def run_both(fun, args, backend: str, **shardings):
    ours = mlax.jit(fun, backend=backend, **shardings)(*args)
    theirs = jax.jit(fun, **shardings)(*args)
    return ours, theirs


def test_elementwise_keeps_the_input_sharding(mesh, rng, backend) -> None:
    x = floats(rng, 8, 4)
    ours, theirs = run_both(lambda x: x * 2.0 + 1.0, (x,), backend,
                            in_shardings=NamedSharding(mesh, P("x", "y")))
    check_like_jax(ours, theirs, backend)


def test_matmul_with_in_and_out_shardings(mesh, rng, backend) -> None:
    x, w = floats(rng, 8, 6), floats(rng, 6, 4)
    ours = mlax.jit(lambda x, w: mnp.tanh(x @ w), backend=backend,
                    in_shardings=(NamedSharding(mesh, P("x", None)), NamedSharding(mesh, P(None, "y"))),
                    out_shardings=NamedSharding(mesh, P("x", "y")))(x, w)
    theirs = jax.jit(lambda x, w: jnp.tanh(x @ w),
                     in_shardings=(NamedSharding(mesh, P("x", None)), NamedSharding(mesh, P(None, "y"))),
                     out_shardings=NamedSharding(mesh, P("x", "y")))(x, w)
    check_like_jax(ours, theirs, backend)


def test_contracting_a_sharded_dimension(mesh, rng, backend) -> None:
    """The contracted dimension split over "y": the partitioner needs an all-reduce."""
    x, w = floats(rng, 4, 8), floats(rng, 8, 6)
    shardings = dict(in_shardings=(NamedSharding(mesh, P(None, "y")), NamedSharding(mesh, P("y", None))),
                     out_shardings=NamedSharding(mesh, P("x")))
    ours = mlax.jit(lambda x, w: x @ w, backend=backend, **shardings)(x, w)
    theirs = jax.jit(lambda x, w: x @ w, **shardings)(x, w)
    check_like_jax(ours, theirs, backend)


def test_reduction_to_a_replicated_result(mesh, rng, backend) -> None:
    x = floats(rng, 8, 4)
    shardings = dict(in_shardings=NamedSharding(mesh, P("x", "y")), out_shardings=NamedSharding(mesh, P()))
    ours = mlax.jit(lambda x: mnp.sum(mnp.exp(x), axis=0), backend=backend, **shardings)(x)
    theirs = jax.jit(lambda x: jnp.sum(jnp.exp(x), axis=0), **shardings)(x)
    check_like_jax(ours, theirs, backend)


def test_pytree_prefixes(mesh, rng, backend) -> None:
    params = {"w": floats(rng, 4, 8), "b": floats(rng, 8)}
    x = floats(rng, 6, 4)
    row = NamedSharding(mesh, P(None, "y"))

    def layer(lib):
        return lambda params, x: {"out": lib.numpy.tanh(x @ params["w"] + params["b"]), "x": x}

    shardings = dict(in_shardings=({"w": row, "b": NamedSharding(mesh, P("y"))}, None),
                     out_shardings={"out": row, "x": NamedSharding(mesh, P())})
    ours = mlax.jit(layer(mlax), backend=backend, **shardings)(params, x)
    theirs = jax.jit(layer(jax), **shardings)(params, x)
    check_like_jax(ours, theirs, backend)


def test_committed_inputs_bring_their_shardings(mesh, rng) -> None:
    x = floats(rng, 8, 4)
    sharding = NamedSharding(mesh, P(None, "y"))
    ours = mlax.jit(lambda x: x * 3.0)(mlax.device_put(x, sharding))
    theirs = jax.jit(lambda x: x * 3.0)(jax.device_put(x, sharding))
    check_like_jax(ours, theirs, "xla")
    again = mlax.jit(lambda x: x - 1.0)(ours)  # a sharded result is committed too
    check_like_jax(again, jax.jit(lambda x: x - 1.0)(theirs), "xla")


def test_committed_inputs_that_disagree_with_in_shardings(mesh, rng) -> None:
    x = floats(rng, 8, 4)
    placed = mlax.device_put(x, NamedSharding(mesh, P(None, "y")))
    with pytest.raises(ValueError, match="Sharding passed to jit does not match the sharding on the "
                                         "respective arg"):
        mlax.jit(lambda a: a.sum(0), in_shardings=NamedSharding(mesh, P("x")))(placed)


def test_committed_inputs_on_different_devices(mesh, rng) -> None:
    small = Mesh(np.array(jax.devices()[:2]), ("x",))
    a = mlax.device_put(floats(rng, 8, 4), NamedSharding(small, P("x")))
    with pytest.raises(ValueError, match="Received incompatible devices for jitted computation"):
        mlax.jit(lambda a, b: a + b, in_shardings=(NamedSharding(mesh, P("x")), None))(floats(rng, 8, 4), a)


def test_with_sharding_constraint_inside_jit(mesh, rng, backend) -> None:
    x = floats(rng, 8, 4)

    def f(lib):
        sharding = NamedSharding(mesh, P("x", "y"))
        return lambda x: lib.lax.with_sharding_constraint(lib.numpy.sin(x) * 2.0, sharding)

    ours = mlax.jit(f(mlax), backend=backend)(x)
    theirs = jax.jit(f(jax))(x)
    check_like_jax(ours, theirs, backend)


def test_with_sharding_constraint_with_a_context_mesh(mesh, rng) -> None:
    x = floats(rng, 8, 4)

    def f(lib):
        return lambda x: lib.lax.with_sharding_constraint(x + 1.0, P(None, "x"))

    with mlax.set_mesh(mesh), jax.set_mesh(mesh):
        ours, theirs = mlax.jit(f(mlax))(x), jax.jit(f(jax))(x)
    check_like_jax(ours, theirs, "xla")


def test_with_sharding_constraint_outside_jit_places_the_value(mesh, rng) -> None:
    x = floats(rng, 8, 4)
    sharding = NamedSharding(mesh, P("y"))
    ours = mlax.lax.with_sharding_constraint(x, sharding)
    check_like_jax(ours, jax.lax.with_sharding_constraint(x, sharding), "xla")


def test_traced_once_per_sharding(mesh, rng) -> None:
    x = floats(rng, 8, 4)
    f = mlax.jit(lambda x: x * 2.0)
    f(mlax.device_put(x, NamedSharding(mesh, P("x"))))
    f(mlax.device_put(x, NamedSharding(mesh, P("x"))))
    assert f._cache_size() == 1
    f(mlax.device_put(x, NamedSharding(mesh, P(None, "y"))))
    assert f._cache_size() == 2


def test_grad_of_a_sharded_program(mesh, rng, backend) -> None:
    x, w = floats(rng, 8, 4), floats(rng, 4, 2)
    shardings = dict(in_shardings=(NamedSharding(mesh, P("x")), NamedSharding(mesh, P())))

    def loss(lib):
        return lambda x, w: lib.grad(lambda w: lib.numpy.mean(lib.numpy.tanh(x @ w) ** 2))(w)

    ours = mlax.jit(loss(mlax), backend=backend, **shardings)(x, w)
    theirs = jax.jit(loss(jax), **shardings)(x, w)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-6)


# Control flow with sharded operands: branches and loop bodies run on the blocks (carries keep
# their sharding), as jax's partitioner does; values and output shardings as jax's.
CONTROL_FLOW = {
    "cond": lambda lib: lambda x, w: lib.lax.cond(x.sum() > 0, lambda v: v * 2.0, lib.numpy.sin, x),
    "fori_loop": lambda lib: lambda x, w: lib.lax.fori_loop(0, 3, lambda i, v: lib.numpy.tanh(v @ w), x),
    "scan": lambda lib: lambda x, w: lib.lax.scan(lambda c, r: (c + r, (c * r).sum()), x[0], x),
    "while_loop": lambda lib: lambda x, w: lib.lax.while_loop(lambda v: v.sum() < 100.0,
                                                              lambda v: v * 2.0 + 1.0, x),
    "switch": lambda lib: lambda x, w: lib.lax.switch(2, [lambda v: v, lambda v: -v, lambda v: v @ w], x),
}


@pytest.mark.parametrize("name", list(CONTROL_FLOW))
@pytest.mark.parametrize("spec", [P("x", None), P(None, "y"), P("x", "y")])
def test_control_flow_on_sharded_operands(name, spec, mesh, rng, backend) -> None:
    x, w = floats(rng, 8, 4), floats(rng, 4, 4) * 0.5
    shardings = {"in_shardings": (NamedSharding(mesh, spec), NamedSharding(mesh, P()))}
    ours = mlax.jit(CONTROL_FLOW[name](mlax), backend=backend, **shardings)(x, w)
    theirs = jax.jit(CONTROL_FLOW[name](jax), **shardings)(x, w)
    check_like_jax(ours, theirs, backend)
