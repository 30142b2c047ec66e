"""A jit called inside a trace: a call of one shared private function per distinct trace, and
transformations that derive that function once (forward mode, reverse mode's primal/linear
pair and its transpose, batching), checked against jax on random values, on every backend."""

from __future__ import annotations

import re
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from mlir import ir

import mlax
import mlax.numpy as mnp
from mlax.dialect import get_context
from mlax.passes.pipeline import run_pipeline
from tests.oracle import assert_same

DEPTH = 5


def _layer(np_: Any) -> Any:
    def layer(w: Any, x: Any, scale: float = 1.0) -> Any:
        return np_.tanh(x @ w) * scale + np_.sin(x)

    return layer


M_LAYER = mlax.jit(_layer(mnp), static_argnames="scale")
J_LAYER = jax.jit(_layer(jnp), static_argnames="scale")


def _net(layer: Any, np_: Any) -> Any:
    def net(ws: Any, x: Any) -> Any:
        for i, w in enumerate(ws):
            x = layer(w, x, scale=1.0 if i % 2 else 0.5)
        return np_.sum(x ** 2)

    return net


M_NET, J_NET = _net(M_LAYER, mnp), _net(J_LAYER, jnp)


def _params(rng: np.random.Generator) -> tuple[list[np.ndarray], np.ndarray]:
    n = int(rng.integers(2, 6))
    ws = [rng.normal(0, 0.5, (n, n)).astype(np.float32) for _ in range(DEPTH)]
    return ws, rng.normal(size=(3, n)).astype(np.float32)


def _functions(text: str) -> list[str]:
    return re.findall(r"func\.func (?:private )?@(\w+)", text)


def test_one_body_per_distinct_trace(rng: np.random.Generator) -> None:
    ws, x = _params(rng)
    text = mlax.jit(M_NET).lower(ws, x).as_text("mlax")
    layers = [f for f in _functions(text) if f.startswith("layer")]
    assert len(layers) == 2, layers  # scale 0.5 and scale 1.0
    assert text.count("call @layer") == DEPTH


def test_inline_true_inlines(rng: np.random.Generator) -> None:
    ws, x = _params(rng)
    inlined = mlax.jit(_layer(mnp), inline=True)
    text = mlax.jit(_net(lambda w, x, scale: inlined(w, x, scale), mnp)).lower(ws, x).as_text("mlax")
    assert "call @" not in text


@pytest.mark.parametrize("transform", ["value", "grad", "jvp", "vmap", "hessian_vector", "vmap_grad"])
def test_transforms_of_shared_calls_match_jax(backend: str, transform: str, rng: np.random.Generator) -> None:
    ws, x = _params(rng)
    if transform == "value":
        got, want = mlax.jit(M_NET)(ws, x), J_NET(ws, x)
    elif transform == "grad":
        got, want = mlax.jit(mlax.grad(M_NET, argnums=(0, 1)))(ws, x), jax.grad(J_NET, argnums=(0, 1))(ws, x)
    elif transform == "jvp":
        t = [rng.normal(size=w.shape).astype(np.float32) for w in ws]
        got = mlax.jit(lambda ws, t: mlax.jvp(lambda p: M_NET(p, x), (ws,), (t,)))(ws, t)
        want = jax.jvp(lambda p: J_NET(p, x), (ws,), (t,))
    elif transform == "vmap":
        xs = rng.normal(size=(4, *x.shape)).astype(np.float32)
        got, want = mlax.jit(mlax.vmap(M_NET, (None, 0)))(ws, xs), jax.vmap(J_NET, (None, 0))(ws, xs)
    elif transform == "hessian_vector":
        v = rng.normal(size=x.shape).astype(np.float32)
        got = mlax.jit(lambda x, v: mlax.jvp(mlax.grad(lambda y: M_NET(ws, y)), (x,), (v,)))(x, v)
        want = jax.jvp(jax.grad(lambda y: J_NET(ws, y)), (x,), (v,))
    else:
        xs = rng.normal(size=(3, *x.shape)).astype(np.float32)
        got = mlax.jit(mlax.vmap(mlax.grad(M_NET), (None, 0)))(ws, xs)
        want = jax.vmap(jax.grad(J_NET), (None, 0))(ws, xs)
    assert_same(got, want, rtol=2e-5, atol=2e-6, check_weak_type=False)


def _derived_ir(fun: Any, *args: Any) -> str:
    """The program after the transformations resolved (mlax-expand-transforms)."""
    with get_context():
        module = ir.Module.parse(mlax.jit(fun).lower(*args).as_text("mlax"))
        run_pipeline(module, "mlax-expand-transforms")
        return str(module)


def test_reverse_mode_derives_each_callee_once(rng: np.random.Generator) -> None:
    ws, x = _params(rng)
    text = _derived_ir(mlax.grad(M_NET), ws, x)
    functions = _functions(text)
    # per distinct layer (two scales) and set of nonzero tangents (the first layer's input
    # has none): one primal, one linear and one transpose function, called at every layer
    assert len([f for f in functions if f.endswith("_transpose")]) <= 3, functions
    assert len(re.findall(r"call @layer\w*_transpose", text)) == DEPTH


def test_forward_mode_and_batching_derive_each_callee_once(rng: np.random.Generator) -> None:
    ws, x = _params(rng)
    t = [np.ones_like(w) for w in ws]
    jvp_text = _derived_ir(lambda ws, t: mlax.jvp(lambda p: M_NET(p, x), (ws,), (t,)), ws, t)
    assert len([f for f in _functions(jvp_text) if "_jvp" in f and f.startswith("layer")]) <= 3
    vmap_text = _derived_ir(mlax.vmap(M_NET, (None, 0)), ws, x[None])
    assert len([f for f in _functions(vmap_text) if f.startswith("layer") and f.endswith("vmap")]) <= 2


def test_shared_call_inside_checkpoint_and_scan(rng: np.random.Generator) -> None:
    ws, x = _params(rng)
    w = ws[0]

    def body(np_: Any, layer: Any, remat: Any, scan: Any) -> Any:
        def step(h: Any, _: Any) -> Any:
            return remat(lambda h: layer(w, h))(h), np_.sum(h)

        def f(h: Any) -> Any:
            h, sums = scan(step, h, None, length=3)
            return np_.sum(h ** 2) + np_.sum(sums)

        return f

    mf = body(mnp, M_LAYER, mlax.checkpoint, mlax.lax.scan)
    jf = body(jnp, J_LAYER, jax.checkpoint, jax.lax.scan)
    assert_same(mlax.jit(mlax.value_and_grad(mf))(x), jax.value_and_grad(jf)(x), rtol=2e-5, atol=2e-6,
                check_weak_type=False)


def test_closure_over_an_outer_tracer_is_an_operand(rng: np.random.Generator) -> None:
    ws, x = _params(rng)

    def outer(np_: Any, jit: Any) -> Any:
        def f(w: Any, x: Any) -> Any:
            shift = np_.mean(w)
            inner = jit(lambda y: np_.cos(y) + shift)
            return np_.sum(inner(x) * inner(2 * x))

        return f

    got = mlax.jit(mlax.grad(outer(mnp, mlax.jit), argnums=(0, 1)))(ws[0], x)
    want = jax.grad(outer(jnp, jax.jit), argnums=(0, 1))(ws[0], x)
    assert_same(got, want, rtol=2e-5, atol=2e-6, check_weak_type=False)


def test_make_jaxpr_shows_jit_equations(rng: np.random.Generator) -> None:
    ws, x = _params(rng)
    eqns = mlax.make_jaxpr(M_NET)(ws, x).eqns
    jit_eqns = [e for e in eqns if e.primitive.name == "jit"]
    assert len(jit_eqns) == DEPTH
    assert jit_eqns[0].params["name"] == "layer"
    assert [e.primitive.name for e in jit_eqns[0].params["jaxpr"].eqns] == \
        [e.primitive.name for e in jax.make_jaxpr(J_NET)(ws, x).eqns[0].params["jaxpr"].eqns]
