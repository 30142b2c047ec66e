"""The functions mlax.vjp and mlax.linearize return are pytrees, as jax 0.10.2's (a `VJP`
object, a jax.tree_util.Partial): called, passed to and returned from jit, mapped with
tree_map; and mlax.fwd_and_bwd, against jax on random inputs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.vjp_object import VJP
from tests.oracle import assert_same, random_array


def _model(np_, calls: list | None = None):
    def f(w, x):
        if calls is not None:
            calls.append(1)
        return {"y": np_.tanh(x @ w["a"]) * w["b"], "s": np_.sum(np_.sin(x))}
    return f


def _inputs(rng: np.random.Generator):
    w = {"a": random_array(rng, (3, 2), np.float32), "b": random_array(rng, (2,), np.float32)}
    x = random_array(rng, (4, 3), np.float32)
    ct = {"y": random_array(rng, (4, 2), np.float32), "s": random_array(rng, (), np.float32)}
    return w, x, ct


def test_vjp_function_is_a_pytree(rng: np.random.Generator) -> None:
    w, x, ct = _inputs(rng)
    out, f_vjp = mlax.vjp(_model(mnp), w, x)
    jout, jf_vjp = jax.vjp(_model(jnp), w, x)
    assert type(jf_vjp).__name__ == type(f_vjp).__name__ == "VJP" and isinstance(f_vjp, VJP)
    assert not isinstance(f_vjp, jax.tree_util.Partial)  # as jax 0.10.2's
    assert_same(out, jout, rtol=1e-6)
    assert_same(f_vjp(ct), jf_vjp(ct), rtol=1e-5, atol=1e-5)
    leaves, tree = jax.tree_util.tree_flatten(f_vjp)
    assert all(isinstance(leaf, (np.ndarray, mlax.Array)) for leaf in leaves) and leaves
    rebuilt = jax.tree_util.tree_unflatten(tree, leaves)
    assert_same(rebuilt(ct), f_vjp(ct))
    # its leaves are mlax's residuals, the primals: mapping them moves the linearization point
    doubled = jax.tree_util.tree_map(lambda a: a * 2, f_vjp)
    w2, x2 = jax.tree_util.tree_map(lambda a: a * 2, (w, x))
    assert_same(doubled(ct), jax.vjp(_model(jnp), w2, x2)[1](ct), rtol=1e-5, atol=1e-5)
    assert repr(f_vjp).startswith("VJP(fun=f")


def test_vjp_function_through_jit(rng: np.random.Generator, backend) -> None:
    w, x, ct = _inputs(rng)
    calls: list = []
    f = _model(mnp, calls)
    apply = mlax.jit(lambda f_vjp, ct: f_vjp(ct))
    japply = jax.jit(lambda f_vjp, ct: f_vjp(ct))
    want = japply(jax.vjp(_model(jnp), w, x)[1], ct)
    assert_same(apply(mlax.vjp(f, w, x)[1], ct), want, rtol=1e-5, atol=1e-5)
    w2 = jax.tree_util.tree_map(lambda a: a + 1, w)  # a new vjp of the same function: no retrace
    f_vjp = mlax.vjp(f, w2, x)[1]
    calls.clear()
    assert_same(apply(f_vjp, ct), japply(jax.vjp(_model(jnp), w2, x)[1], ct), rtol=1e-5, atol=1e-5)
    assert calls == []
    # made inside jit and returned from it, then called outside
    out, f_vjp = mlax.jit(lambda w, x: mlax.vjp(f, w, x))(w, x)
    assert isinstance(f_vjp, VJP)
    assert_same(f_vjp(ct), want, rtol=1e-5, atol=1e-5)


def test_vjp_has_aux_and_errors(rng: np.random.Generator) -> None:
    w, x, ct = _inputs(rng)

    def g(np_):
        return lambda x: (np_.sum(np_.exp(x)), {"mean": np_.mean(x)})

    out, f_vjp, aux = mlax.vjp(g(mnp), x, has_aux=True)
    jout, jf_vjp, jaux = jax.vjp(g(jnp), x, has_aux=True)
    assert_same((out, aux, f_vjp(np.float32(1.5))), (jout, jaux, jf_vjp(np.float32(1.5))), rtol=1e-5)
    with pytest.raises(TypeError, match="must be called with a single argument"):
        f_vjp(np.float32(1.0), np.float32(2.0))
    with pytest.raises(ValueError, match="unexpected type"):
        f_vjp(np.ones(3, np.float32))
    # nested: a gradient through a vjp's pullback (second order), as jax
    h = lambda np_, lib: lambda x: lib.vjp(lambda v: np_.sum(np_.sin(v) ** 2), x)[1](np.float32(1.0))[0].sum()  # noqa: E731
    assert_same(mlax.grad(h(mnp, mlax))(x), jax.grad(h(jnp, jax))(x), rtol=1e-5, atol=1e-5)


def test_linearize_is_a_partial(rng: np.random.Generator, backend) -> None:
    w, x, _ = _inputs(rng)
    t = (jax.tree_util.tree_map(lambda a: random_array(rng, a.shape, a.dtype), w),
         random_array(rng, x.shape, x.dtype))
    out, f_jvp = mlax.linearize(_model(mnp), w, x)
    jout, jf_jvp = jax.linearize(_model(jnp), w, x)
    assert isinstance(f_jvp, jax.tree_util.Partial) and isinstance(jf_jvp, jax.tree_util.Partial)
    assert_same(out, jout, rtol=1e-6)
    assert_same(f_jvp(*t), jf_jvp(*t), rtol=1e-5, atol=1e-5)
    through = mlax.jit(lambda f_jvp, t: f_jvp(*t))(f_jvp, t)
    assert_same(through, jf_jvp(*t), rtol=1e-5, atol=1e-5)
    assert_same(jax.tree_util.tree_map(lambda a: a, f_jvp)(*t), jf_jvp(*t), rtol=1e-5, atol=1e-5)
    out, f_jvp, aux = mlax.linearize(lambda v: (mnp.cos(v) * 2, v.sum()), x, has_aux=True)
    jout, jf_jvp, jaux = jax.linearize(lambda v: (jnp.cos(v) * 2, v.sum()), x, has_aux=True)
    assert_same((out, aux, f_jvp(t[1])), (jout, jaux, jf_jvp(t[1])), rtol=1e-5, atol=1e-5)


def test_linearize_errors_as_jax(rng: np.random.Generator) -> None:
    x, y = random_array(rng, (2,), np.float32), random_array(rng, (2,), np.float32)
    bad = [(np.ones(3, np.float32), y), (np.ones(2, np.int32), y), (x,), ((x,),)]
    _, f_jvp = mlax.linearize(lambda a, b: mnp.sin(a) * b, x, y)
    _, jf_jvp = jax.linearize(lambda a, b: jnp.sin(a) * b, x, y)
    for tangents in bad:
        with pytest.raises((TypeError, ValueError)) as want:
            jf_jvp(*tangents)
        with pytest.raises(type(want.value)) as got:
            f_jvp(*tangents)
        assert str(want.value).splitlines()[-1] in str(got.value)


@pytest.mark.parametrize("jitted", [True, False])
def test_fwd_and_bwd(rng: np.random.Generator, jitted: bool) -> None:
    w, x, ct = _inputs(rng)
    calls: list = []
    for argnums in ((0, 1), 0, (1,)):
        fwd, bwd = mlax.fwd_and_bwd(_model(mnp, calls), argnums=argnums, jitted=jitted)
        jfwd, jbwd = jax.fwd_and_bwd(_model(jnp), argnums=argnums, jitted=jitted)
        out, res = fwd(w, x)
        jout, jres = jfwd(w, x)
        assert isinstance(res, VJP)
        assert_same(out, jout, rtol=1e-6)
        assert_same(bwd(res, ct), jbwd(jres, ct), rtol=1e-5, atol=1e-5)
    if jitted:  # the backward pass compiles once across iterations (jax's point of fwd_and_bwd)
        fwd, bwd = mlax.fwd_and_bwd(_model(mnp, calls), argnums=(0, 1))
        bwd(fwd(w, x)[1], ct)
        calls.clear()
        for step in range(3):
            w_step = jax.tree_util.tree_map(lambda a, step=step: a * (step + 2), w)
            _, res = fwd(w_step, x)
            calls.clear()
            bwd(res, ct)
            assert calls == []
    fwd, bwd = mlax.fwd_and_bwd(lambda v: (mnp.sum(v ** 2), v.mean()), argnums=0, has_aux=True)
    jfwd, jbwd = jax.fwd_and_bwd(lambda v: (jnp.sum(v ** 2), v.mean()), argnums=0, has_aux=True)
    out, res, aux = fwd(x)
    jout, jres, jaux = jfwd(x)
    assert_same((out, aux, bwd(res, np.float32(2.0))), (jout, jaux, jbwd(jres, np.float32(2.0))), rtol=1e-5)
