"""Inside a shard_map body traced with check_vma, the results of scan, while_loop and vmap vary
over the manual axes their bodies' results vary over (jax's vma types), a scanned slice over
its array's; a loop carry whose varying axes change, and branches whose outputs vary
differently, raise jax's TypeError, with its text.
On the session's 4 CPU devices, random values, against jax."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType
from jax.sharding import PartitionSpec as P

import mlax
import mlax.numpy as mnp

RNG = np.random.default_rng(11)
N = len(jax.devices())


def _types(ns, np_, x, y):
    """The types printed inside the body, and the result, of a shard_map over all devices."""
    lax = ns.lax
    mesh = ns.make_mesh((N,), ("i",), axis_types=(AxisType.Auto,))
    seen = []

    def body(x, y):
        c = lax.scan(lambda c, a: (c + a, c * a), lax.pcast(y, "i", to="varying"), x)
        s = lax.scan(lambda c, a: (c + 1.0, a * x), y, y)
        w = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, x))
        v = ns.vmap(lambda a, b: a * b, in_axes=(0, None))(x, y)
        u = ns.vmap(lambda b: b * 2)(y)
        seen.extend(str(ns.typeof(t)) for t in (*c, *s, *w, v, u))
        return c[0] + s[1][0] + w[1] + v[0] + u

    f = ns.shard_map(body, mesh=mesh, in_specs=(P("i"), P()), out_specs=P("i"))
    out = f(np_.asarray(x), np_.asarray(y))
    return seen, out


def test_loop_and_vmap_results_vary_as_their_bodies() -> None:
    x = RNG.standard_normal(2 * N).astype(np.float32)
    y = RNG.standard_normal(2).astype(np.float32)
    want, want_out = _types(jax, jnp, x, y)
    got, got_out = _types(mlax, mnp, x, y)
    assert got == want
    assert any("{V:i}" in t for t in got)
    np.testing.assert_allclose(np.asarray(got_out), np.asarray(want_out), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("loop", ["scan", "while_loop", "scan_tuple"])
def test_carry_that_becomes_varying_is_refused(loop: str) -> None:
    def run(ns, np_):
        lax = ns.lax
        mesh = ns.make_mesh((N,), ("i",), axis_types=(AxisType.Auto,))
        bodies = {
            "scan": lambda x, y: lax.scan(lambda c, a: (c + a, None), y, x)[0],
            "while_loop": lambda x, y: lax.while_loop(lambda c: c[0] < 3,
                                                      lambda c: (c[0] + 1, c[1] + x), (0, y))[1],
            "scan_tuple": lambda x, y: lax.scan(lambda carry, _: ((carry[1], carry[0]), ()), (x, y), (),
                                                length=2)[0][1],
        }
        f = ns.shard_map(bodies[loop], mesh=mesh, in_specs=(P("i"), P()), out_specs=P("i"))
        with pytest.raises(TypeError) as info:
            f(np_.asarray(RNG.standard_normal(2 * N).astype(np.float32)),
              np_.asarray(RNG.standard_normal(2).astype(np.float32)))
        return str(info.value).split("\n--------------------")[0]

    assert run(mlax, mnp) == run(jax, jnp)


@pytest.mark.parametrize("api", ["cond", "switch"])
def test_branches_that_vary_differently_are_refused(api: str) -> None:
    def run(ns, np_):
        lax = ns.lax
        mesh = ns.make_mesh((N,), ("i",), axis_types=(AxisType.Auto,))

        def body(x, y):
            if api == "cond":
                return lax.cond(True, lambda: x, lambda: y) + x
            return lax.switch(1, [lambda: y, lambda: x, lambda: y * 2]) + x

        f = ns.shard_map(body, mesh=mesh, in_specs=(P("i"), P()), out_specs=P("i"))
        with pytest.raises(TypeError) as info:
            f(np_.asarray(RNG.standard_normal(2 * N).astype(np.float32)),
              np_.asarray(RNG.standard_normal(2).astype(np.float32)))
        text = str(info.value).split("\n--------------------")[0]
        return text.replace(" at " + __file__, " at FILE")  # the branches' source lines are the same

    assert run(mlax, mnp) == run(jax, jnp)


def test_branches_that_vary_alike_pass() -> None:
    x = RNG.standard_normal(2 * N).astype(np.float32)
    y = RNG.standard_normal(2).astype(np.float32)
    outs = []
    for ns, np_ in ((jax, jnp), (mlax, mnp)):
        lax = ns.lax
        mesh = ns.make_mesh((N,), ("i",), axis_types=(AxisType.Auto,))
        body = lambda x, y, lax=lax: lax.cond(True, lambda: x * 2, lambda: lax.pcast(y, "i", to="varying"))  # noqa: E731
        f = ns.shard_map(body, mesh=mesh, in_specs=(P("i"), P()), out_specs=P("i"))
        outs.append(np.asarray(f(np_.asarray(x), np_.asarray(y))))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-6)
