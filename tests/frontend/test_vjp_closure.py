"""The function ``vjp`` returns sees the values its function closed over at the vjp call, as
jax's residuals do, even where the caller rebinds them before calling it (mlax runs the
forward pass again: pyfront/vjp_object.py `_snapshot`). Random values, compared with jax."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import mlax
import mlax.numpy as mnp

RNG = np.random.default_rng(7)


def _rebinding(ns, np_, w, x, scale):
    """vjp of a function closing over ``factor``, which is rebound before the VJP is called."""
    factor = scale

    def f(w, x):
        return np_.sin(np_.dot(w, x)) * factor

    y, f_vjp = ns.vjp(f, w, x)
    factor = "rebound: not a number"  # noqa: F841 (read by f if the VJP ran it with the new value)
    return y, f_vjp(np_.ones_like(y))


def test_rebound_closure_variable() -> None:
    w = RNG.standard_normal((3, 4)).astype(np.float32)
    x = RNG.standard_normal(4).astype(np.float32)
    scale = float(RNG.uniform(0.5, 2))
    want = _rebinding(jax, jnp, w, x, scale)
    got = _rebinding(mlax, mnp, w, x, scale)
    for e, g in zip(jax.tree.leaves(want), jax.tree.leaves(got), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5, atol=1e-6)


def test_flattened_vjp_rebuilt_after_rebinding() -> None:
    """The pattern of jax's gradient-checkpointing guide: the VJP flattened, its treedef stored
    in the variable the differentiated function reads, rebuilt and called under make_jaxpr."""
    args = [RNG.standard_normal((3, 3)).astype(np.float32), RNG.standard_normal(3).astype(np.float32)]
    outs = []
    for ns, np_ in ((jax, jnp), (mlax, mnp)):
        leaves, in_tree = ns.tree_util.tree_flatten((tuple(args), {}))

        def f_(*flat, np_=np_, ns=ns):
            (w, x), _ = ns.tree_util.tree_unflatten(in_tree, flat)  # noqa: B023 (read late on purpose)
            return np_.tanh(w @ x)

        y, f_vjp = ns.vjp(f_, *leaves)
        res, in_tree = ns.tree_util.tree_flatten(f_vjp)

        def g_(*flat, ns=ns):
            *res_, ct = flat
            return ns.tree_util.tree_unflatten(in_tree, res_)(ct)  # noqa: B023

        ns.make_jaxpr(g_)(*res, y)  # traces without reading the rebound in_tree
        outs.append(g_(*res, y))
    for e, g in zip(jax.tree.leaves(outs[0]), jax.tree.leaves(outs[1]), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5, atol=1e-6)


def test_vjp_of_one_function_jitted_once() -> None:
    """Snapshots of one function holding the same objects are one function to jit's cache."""
    w = mnp.asarray(RNG.standard_normal(3).astype(np.float32))
    traces = []

    def f(x):
        return mnp.sum(mnp.sin(x * w))

    @mlax.jit
    def pull(f_vjp):
        traces.append(1)
        return f_vjp(mnp.float32(1.0))

    for _ in range(2):
        x = mnp.asarray(RNG.standard_normal(3).astype(np.float32))
        _, f_vjp = mlax.vjp(f, x)
        want = jax.vjp(lambda x: jnp.sum(jnp.sin(x * np.asarray(w))), np.asarray(x))[1](np.float32(1.0))
        np.testing.assert_allclose(np.asarray(pull(f_vjp)[0]), np.asarray(want[0]), rtol=1e-5, atol=1e-6)
    assert len(traces) == 1
