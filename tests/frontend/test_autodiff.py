"""mlax.grad / value_and_grad / jvp / vjp / jacfwd / jacrev / hessian against jax: values,
pytrees, nesting to third order, closures inside jit, both backends, errors."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same, random_array


def test_third_derivative_matches_jax(backend) -> None:
    f, jf = (lambda x: mnp.sin(x) * x ** 2), (lambda x: jnp.sin(x) * x ** 2)
    expected = jax.grad(jax.grad(jax.grad(jf)))(1.3)
    assert_same(mlax.grad(mlax.grad(mlax.grad(f)))(1.3), expected, rtol=1e-5)
    assert_same(mlax.jit(mlax.grad(mlax.grad(mlax.grad(f))))(1.3), expected, rtol=1e-5)


def test_value_and_grad_on_pytrees(rng: np.random.Generator, backend) -> None:
    params = {"w": random_array(rng, (3, 2), np.float32), "b": random_array(rng, (2,), np.float32)}
    x = random_array(rng, (4, 3), np.float32)

    def loss(np_, p, x):
        return np_.sum(np_.tanh(x @ p["w"] + p["b"]) ** 2)

    got = mlax.value_and_grad(lambda p, x: loss(mnp, p, x))(params, x)
    want = jax.value_and_grad(lambda p, x: loss(jnp, p, x))(params, x)
    assert_same(got, want, rtol=1e-4, atol=1e-5)  # float32 sums in a different order
    both = mlax.grad(lambda p, x: loss(mnp, p, x), argnums=(0, 1))(params, x)
    assert_same(both, jax.grad(lambda p, x: loss(jnp, p, x), argnums=(0, 1))(params, x), rtol=1e-4, atol=1e-5)


def test_has_aux(rng: np.random.Generator) -> None:
    x = random_array(rng, (5,), np.float32)
    got = mlax.grad(lambda x: (mnp.sum(mnp.exp(x)), x * 2), has_aux=True)(x)
    want = jax.grad(lambda x: (jnp.sum(jnp.exp(x)), x * 2), has_aux=True)(x)
    assert_same(got, want, rtol=1e-6)


def test_jvp_and_vjp(rng: np.random.Generator, backend) -> None:
    x, t = random_array(rng, (3, 4), np.float32), random_array(rng, (3, 4), np.float32)
    f, jf = (lambda x: mnp.exp(x) * mnp.sin(x)), (lambda x: jnp.exp(x) * jnp.sin(x))
    assert_same(mlax.jvp(f, (x,), (t,)), jax.jvp(jf, (x,), (t,)), rtol=1e-5)
    out, pull = mlax.vjp(f, x)
    jout, jpull = jax.vjp(jf, x)
    assert_same(out, jout, rtol=1e-6)
    assert_same(pull(t), jpull(t), rtol=1e-5)


def test_linearize(rng: np.random.Generator) -> None:
    x, t = random_array(rng, (4,), np.float32), random_array(rng, (4,), np.float32)
    out, f_jvp = mlax.linearize(lambda x: mnp.tanh(x) * x, x)
    jout, jf_jvp = jax.linearize(lambda x: jnp.tanh(x) * x, x)
    assert_same(out, jout, rtol=1e-6)
    assert_same(f_jvp(t), jf_jvp(t), rtol=1e-5)


def test_jacobians_and_hessian(rng: np.random.Generator) -> None:
    x = random_array(rng, (3,), np.float32)
    f, jf = (lambda x: mnp.sin(x) * mnp.sum(x ** 2)), (lambda x: jnp.sin(x) * jnp.sum(x ** 2))
    assert_same(mlax.jacfwd(f)(x), jax.jacfwd(jf)(x), rtol=1e-5)
    assert_same(mlax.jacrev(f)(x), jax.jacrev(jf)(x), rtol=1e-5)
    g, jg = (lambda x: mnp.sum(mnp.exp(x) * x)), (lambda x: jnp.sum(jnp.exp(x) * x))
    assert_same(mlax.hessian(g)(x), jax.hessian(jg)(x), rtol=1e-5)


@pytest.mark.parametrize("name", ["jacfwd", "jacrev"])
def test_jacobians_of_pytrees(rng: np.random.Generator, name: str) -> None:
    p = {"u": random_array(rng, (3,), np.float32), "v": np.float32(1.5)}
    y = random_array(rng, (1, 2), np.float32)
    f = lambda p, y: {"a": mnp.sin(p["u"]) * mnp.sum(y), "b": p["v"] * y}  # noqa: E731
    jf = lambda p, y: {"a": jnp.sin(p["u"]) * jnp.sum(y), "b": p["v"] * y}  # noqa: E731
    assert_same(getattr(mlax, name)(f, argnums=(0, 1))(p, y), getattr(jax, name)(jf, argnums=(0, 1))(p, y),
                rtol=1e-5)
    assert_same(getattr(mlax, name)(f)(p, y), getattr(jax, name)(jf)(p, y), rtol=1e-5)


def test_jacrev_is_one_batched_program(rng: np.random.Generator) -> None:
    x = random_array(rng, (4,), np.float32)
    text = mlax.jit(mlax.jacrev(lambda x: mnp.sin(x) * x)).lower(x).as_text("mlax", debug_info=False)
    assert "mlax.vmap = {" in text and "mlax.vjp = {" in text


def test_closure_over_traced_values(rng: np.random.Generator) -> None:
    """A function differentiated inside jit may use the enclosing function's values."""
    w, x = np.float32(0.7), random_array(rng, (5,), np.float32)
    got = mlax.jit(lambda w, x: mlax.grad(lambda w: mnp.sum(mnp.sin(w * x)))(w))(w, x)
    want = jax.jit(lambda w, x: jax.grad(lambda w: jnp.sum(jnp.sin(w * x)))(w))(w, x)
    assert_same(got, want, rtol=1e-5)


def test_finite_differences_float64(rng: np.random.Generator, x64) -> None:
    x = random_array(rng, (4,), np.float64)
    f = lambda x: mnp.sum(mnp.tanh(x) * mnp.exp(-x * x))  # noqa: E731
    g = np.asarray(mlax.grad(f)(x))
    eps = 1e-6
    fd = [(float(f(x + eps * e)) - float(f(x - eps * e))) / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_mlp_training_loss_curve_matches_jax(rng: np.random.Generator) -> None:
    params = [random_array(rng, (8, 16), np.float32) * 0.3, np.zeros(16, np.float32),
              random_array(rng, (16, 1), np.float32) * 0.3, np.zeros(1, np.float32)]
    x, y = random_array(rng, (32, 8), np.float32), random_array(rng, (32, 1), np.float32)

    def loss(np_, p, x, y):
        h = np_.tanh(x @ p[0] + p[1])
        return np_.mean((h @ p[2] + p[3] - y) ** 2)

    def train(grad, jit, np_, steps=20):
        step = jit(grad(lambda p, x, y: loss(np_, p, x, y)))
        value = jit(lambda p, x, y: loss(np_, p, x, y))
        p, curve = list(params), []
        for _ in range(steps):
            curve.append(float(value(p, x, y)))
            p = [a - 0.1 * g for a, g in zip(p, step(p, x, y), strict=True)]
        return curve

    ours = train(mlax.grad, mlax.jit, mnp)
    theirs = train(jax.grad, jax.jit, jnp)
    np.testing.assert_allclose(ours, theirs, rtol=2e-5)
    assert ours[-1] < ours[0]


def test_integer_argument_is_an_error() -> None:
    with pytest.raises(TypeError, match=r"argument n of <lambda>|argument n of lambda.*int32"):
        mlax.grad(lambda x, n: x * n, argnums=1)(1.0, np.int32(3))


def test_non_scalar_output_is_an_error() -> None:
    with pytest.raises(TypeError, match=r"Gradient only defined for scalar-output functions.*\(3,\)"):
        mlax.grad(lambda x: x * 2)(np.ones(3, np.float32))


def test_grad_ir_declares_a_vjp() -> None:
    text = mlax.jit(mlax.grad(lambda x: mnp.sin(x) * x)).lower(1.3).as_text("mlax", debug_info=False)
    assert "mlax.vjp = {argnums = array<i64: 0>, callee = @lambda" in text
    assert "call @lambda" in text


def _softplus_pair():
    @mlax.custom_jvp
    def f(x):
        return mnp.log1p(mnp.exp(x))

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), t * (1 / (1 + mnp.exp(-x)))

    @jax.custom_jvp
    def jf(x):
        return jnp.log1p(jnp.exp(x))

    @jf.defjvp
    def jf_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return jf(x), t * (1 / (1 + jnp.exp(-x)))

    return f, jf


def test_custom_jvp(rng: np.random.Generator, backend) -> None:
    f, jf = _softplus_pair()
    x = random_array(rng, (5,), np.float32)
    assert_same(f(x), jf(x), rtol=1e-6)
    assert_same(mlax.jit(f)(x), jax.jit(jf)(x), rtol=1e-6)
    assert_same(mlax.grad(lambda x: mnp.sum(f(x) * x))(x), jax.grad(lambda x: jnp.sum(jf(x) * x))(x),
                rtol=1e-5)
    ones = np.ones(5, np.float32)
    assert_same(mlax.jvp(f, (x,), (ones,)), jax.jvp(jf, (x,), (ones,)), rtol=1e-5)


def test_custom_jvp_rule_is_used() -> None:
    """The rule, not the function's own derivative, gives the tangent."""
    @mlax.custom_jvp
    def clipped(x):
        return mnp.minimum(x, 1.0)

    @clipped.defjvp
    def clipped_jvp(primals, tangents):
        return clipped(primals[0]), tangents[0] * 3.0

    assert float(mlax.grad(clipped)(5.0)) == 3.0
    text = mlax.jit(mlax.grad(clipped)).lower(5.0).as_text("mlax", debug_info=False)
    assert "mlax.custom_jvp_call = {callee = @clipped_" in text and "jvp = @clipped_rule" in text


def test_custom_vjp(rng: np.random.Generator, backend) -> None:
    """bwd, not the function's own derivative, gives the cotangents (here deliberately 2x)."""
    def pair(np_, custom):
        @custom
        def f(x, y):
            return np_.sin(x) * y

        def fwd(x, y):
            return f(x, y), (np_.cos(x), np_.sin(x), y)

        def bwd(res, g):
            cos_x, sin_x, y = res
            return cos_x * g * y * 2.0, sin_x * g

        f.defvjp(fwd, bwd)
        return f

    f, jf = pair(mnp, mlax.custom_vjp), pair(jnp, jax.custom_vjp)
    x, y = random_array(rng, (3,), np.float32), random_array(rng, (3,), np.float32)
    assert_same(f(x, y), jf(x, y), rtol=1e-6)
    assert_same(mlax.grad(lambda x, y: mnp.sum(f(x, y) ** 2), argnums=(0, 1))(x, y),
                jax.grad(lambda x, y: jnp.sum(jf(x, y) ** 2), argnums=(0, 1))(x, y), rtol=1e-5)
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        mlax.jvp(lambda x: f(x, y), (x,), (x,))


def test_custom_jvp_nondiff_argnums(rng: np.random.Generator) -> None:
    """A non-differentiated (static) argument goes to the rule first, as in jax."""
    @mlax.custom_jvp
    def scaled(power, x):
        return x ** power

    @scaled.defjvp
    def scaled_jvp(power, primals, tangents):
        (x,), (t,) = primals, tangents
        return scaled(power, x), power * x ** (power - 1) * t

    scaled = mlax.custom_jvp(scaled.fun, nondiff_argnums=(0,))
    scaled.defjvp(scaled_jvp)
    x = random_array(rng, (4,), np.float32, 0.5, 2.0)
    assert_same(mlax.grad(lambda x: mnp.sum(scaled(3, x)))(x), 3 * x ** 2, rtol=1e-5)


def test_unsupported_grad_options() -> None:
    with pytest.raises(NotImplementedError, match="allow_int"):
        mlax.grad(lambda x: x, allow_int=True)


def test_checkpoint(rng: np.random.Generator) -> None:
    x = random_array(rng, (4,), np.float32)
    f = mlax.checkpoint(lambda x: mnp.sin(mnp.sin(x)))
    jf = jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
    assert_same(mlax.jit(f)(x), jax.jit(jf)(x), rtol=1e-6)
    assert_same(mlax.grad(lambda x: mnp.sum(f(x) * x))(x), jax.grad(lambda x: jnp.sum(jf(x) * x))(x),
                rtol=1e-5)
    assert "mlax.checkpoint = {callee = @" in mlax.jit(f).lower(x).as_text("mlax", debug_info=False)


@pytest.mark.parametrize("name", ["jacfwd", "jacrev", "hessian"])
def test_jacobians_with_aux_as_jax(name: str) -> None:
    x = np.array([0.5, 1.0, 2.0], np.float32)

    def fun(np_mod: Any) -> Any:
        return lambda v, w: (np_mod.sin(v).sum() * w if name == "hessian" else np_mod.sin(v) * w,
                             {"total": v.sum(), "count": 3})

    for wrap in (lambda f: f, mlax.jit):
        jac, aux = wrap(getattr(mlax, name)(fun(mnp), argnums=(0, 1), has_aux=True))(x, np.float32(2.0))
        jax_jac, jax_aux = getattr(jax, name)(fun(jnp), argnums=(0, 1), has_aux=True)(x, np.float32(2.0))
        jax.tree.map(assert_same, jac, jax_jac)
        assert_same(aux["total"], jax_aux["total"])
        assert int(aux["count"]) == 3
    with pytest.raises(TypeError, match="must return a pair"):
        getattr(mlax, name)(lambda v: mnp.sin(v).sum(), has_aux=True)(x)
