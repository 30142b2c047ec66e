"""Python control flow on concrete values under grad and co. called outside jit (concrete
mode, pyfront/staging.py): values and derivatives against jax, both branches of one function,
int()/item()/range, value-dependent shapes, nesting, and that jit keeps JAX's error."""

from __future__ import annotations

import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same, random_array


def _piecewise(np_):
    def f(x):
        if x < 0.5:
            return np_.sin(x) * x ** 2
        return np_.exp(-x) * 3.0
    return f


def test_both_branches_values_and_gradients(rng: np.random.Generator, backend) -> None:
    f, jf = _piecewise(mnp), _piecewise(jnp)
    for x in (np.float32(rng.uniform(-2.0, 0.0)), np.float32(rng.uniform(1.0, 2.0)),
              np.float32(rng.uniform(-2.0, 0.0))):
        assert_same(mlax.value_and_grad(f)(x), jax.value_and_grad(jf)(x), rtol=1e-5)
        step = 1e-3  # and against finite differences, away from the kink
        finite = (float(f(np.float64(x) + step)) - float(f(np.float64(x) - step))) / (2 * step)
        np.testing.assert_allclose(float(mlax.grad(f)(x)), finite, rtol=2e-3)


def test_int_item_and_range_loops(rng: np.random.Generator, backend) -> None:
    x = random_array(rng, (4,), np.float32, 1.0, 3.0)
    n = np.int32(3)

    def f(np_, x, n):
        total = x[0] * 0.0
        for i in range(int(n)):
            total = total + np_.sin(x[i % 4]) * (i + 1)
        return total * x[int(x[0].item()) % 4] + x.sum() * int(x[1])

    got = mlax.grad(lambda x, n: f(mnp, x, n))(x, n)
    assert_same(got, jax.grad(lambda x, n: f(jnp, x, n))(x, n), rtol=1e-5)
    index = mlax.grad(lambda x, k: x[k] * x.sum())(x, np.int32(2))  # __index__ of a concrete int
    assert_same(index, jax.grad(lambda x, k: x[k] * x.sum())(x, np.int32(2)), rtol=1e-6)


def test_value_dependent_shapes(rng: np.random.Generator) -> None:
    x = random_array(rng, (6,), np.float32)
    for count in (np.float32(2.0), np.float32(5.0)):
        def f(np_, x, count):
            head = x[: int(count)]
            return np_.sum(head ** 2) + np_.zeros(int(count)).sum() * x[0]
        got = mlax.grad(lambda x, c: f(mnp, x, c))(x, count)
        assert_same(got, jax.grad(lambda x, c: f(jnp, x, c))(x, count), rtol=1e-6)
    sizes = mlax.grad(lambda v: (v[mnp.nonzero(v > 0.0)] ** 3).sum())(x)  # a nonzero without size=
    assert_same(sizes, jax.grad(lambda v: (v[jnp.nonzero(v > 0.0)] ** 3).sum())(x), rtol=1e-6)


def _sign_switch(np_):
    def f(v):
        scale = 2.0 if v[0] > 0 else -1.5
        return np_.sum(np_.tanh(v) * v) * scale
    return f


def test_other_transformations(rng: np.random.Generator, backend) -> None:
    f, jf = _sign_switch(mnp), _sign_switch(jnp)
    for sign in (1.0, -1.0):
        v = random_array(rng, (3,), np.float32, 0.2, 2.0) * np.float32(sign)
        t = random_array(rng, (3,), np.float32)
        assert_same(mlax.hessian(f)(v), jax.hessian(jf)(v), rtol=1e-4, atol=1e-6)
        vector, jvector = (lambda v: f(v) * v), (lambda v: jf(v) * v)
        assert_same(mlax.jacfwd(vector)(v), jax.jacfwd(jvector)(v), rtol=1e-5, atol=1e-6)
        assert_same(mlax.jacrev(vector)(v), jax.jacrev(jvector)(v), rtol=1e-5, atol=1e-6)
        assert_same(mlax.jvp(vector, (v,), (t,)), jax.jvp(jvector, (v,), (t,)), rtol=1e-5, atol=1e-6)
        out, pull = mlax.vjp(vector, v)
        jout, jpull = jax.vjp(jvector, v)
        assert_same(out, jout, rtol=1e-6)
        assert_same(pull(t), jpull(t), rtol=1e-5, atol=1e-6)
        out, f_jvp = mlax.linearize(f, v)
        assert_same((out, f_jvp(t)), (jf(v), jax.jvp(jf, (v,), (t,))[1]), rtol=1e-5)
        aux = mlax.value_and_grad(lambda v: (f(v), v * int(v[0] > 0)), has_aux=True)(v)
        assert_same(aux, jax.value_and_grad(lambda v: (jf(v), v * int(v[0] > 0)), has_aux=True)(v), rtol=1e-5)


def test_nested_grad() -> None:
    def f(x):
        return x ** 3 if x > 0 else -(x ** 2)

    for x in (np.float32(1.7), np.float32(-0.8)):
        assert_same(mlax.grad(mlax.grad(f))(x), jax.grad(jax.grad(f))(x), rtol=1e-6)
        assert_same(mlax.grad(mlax.grad(mlax.grad(f)))(x), jax.grad(jax.grad(jax.grad(f)))(x), rtol=1e-6)
    # a nested transformation's value used by Python: computed by running it when asked for
    g = lambda x: x if mlax.grad(lambda y: y ** 2)(x) > 1 else -x  # noqa: E731
    jg = lambda x: x if jax.grad(lambda y: y ** 2)(x) > 1 else -x  # noqa: E731
    for x in (np.float32(2.0), np.float32(0.1)):
        assert_same(mlax.grad(g)(x), jax.grad(jg)(x))

    def k(t, np_, v):  # results of several shapes and dtypes (a value, a gradient, top_k's pair)
        value, g = t.value_and_grad(lambda w: np_.sum(w ** 2))(v)
        top, where = t.lax.top_k(v, 2)
        return np_.sum(v) * (2.0 if g[0] > 0 and value > 0 else 3.0) * float(where[0] + 1) + top[1]

    v = np.array([0.5, -2.0, 1.5], np.float32)
    for w in (v, -v):
        assert_same(mlax.grad(lambda w: k(mlax, mnp, w))(w), jax.grad(lambda w: k(jax, jnp, w))(w))


def test_python_while_loop_until_convergence(rng: np.random.Generator, backend) -> None:
    """Newton's method for sqrt(a), run until the step is small: d sqrt(a)/da = 1 / (2 sqrt(a))."""
    def newton(a):
        y = a * 0.5 + 0.5
        step = y
        while abs(step) > 1e-6:
            step = (y * y - a) / (2 * y)
            y = y - step
        return y

    a = np.float32(rng.uniform(1.5, 4.0))
    assert_same(mlax.grad(newton)(a), jax.grad(newton)(a), rtol=1e-5)
    np.testing.assert_allclose(float(mlax.grad(newton)(a)), 0.5 / np.sqrt(a), rtol=1e-5)


def test_under_jit_the_error_stays() -> None:
    f = _piecewise(mnp)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(jax.grad(_piecewise(jnp)))(np.float32(1.0))
    with pytest.raises(jax.errors.TracerBoolConversionError, match=r"Attempted boolean conversion of traced"):
        mlax.jit(mlax.grad(f))(np.float32(1.0))
    with pytest.raises(mlax.ConcretizationTypeError):  # a constant inside jit stays abstract too, as jax
        mlax.jit(lambda y: y * mlax.grad(f)(2.0))(np.float32(1.0))


def test_nested_jit_traces_abstractly() -> None:
    """A jit inside the differentiated function sees abstract values, closed-over ones too (as
    jax): its error is not retried; its results are concrete outside it."""
    calls = []

    def inner(y):
        calls.append(1)
        return y if y > 1 else -y

    with pytest.raises(mlax.ConcretizationTypeError):
        mlax.grad(lambda x: mlax.jit(inner)(x))(np.float32(2.0))
    assert len(calls) == 1  # traced once: no concrete retrace for an error inside a user's jit
    with pytest.raises(mlax.ConcretizationTypeError):
        mlax.grad(lambda x: mlax.jit(lambda y: y * (2.0 if x > 1 else 3.0))(x))(np.float32(2.0))
    out = mlax.grad(lambda x: x * 3 if mlax.jit(lambda y: y * 2)(x) > 1 else -x)(np.float32(2.0))
    assert_same(out, jax.grad(lambda x: x * 3 if jax.jit(lambda y: y * 2)(x) > 1 else -x)(np.float32(2.0)))


def test_conversions_that_drop_derivatives_are_refused(rng: np.random.Generator) -> None:
    """float(), complex(), .tolist() and np.asarray of a value depending on a differentiated
    input raise, as jax's; of other values (not differentiated, integer, stop_gradient) they work."""
    x = np.float32(rng.uniform(1.0, 2.0))
    for bad in (lambda x: x * float(x), lambda x: x * float(x * 0 + 1), lambda x: x * x.tolist(),
                lambda x: x * np.asarray(x), lambda x: x * complex(x).real):
        expected = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError)
        with pytest.raises(expected) as jax_error:
            jax.grad(bad)(x)
        with pytest.raises(jax_error.type):  # jax's class: TracerArrayConversionError for np.asarray
            mlax.grad(bad)(x)
    for good, jgood in ((lambda x, n: x * float(n), None), (lambda x, n: x * np.asarray(n), None),
                        (lambda x, n: x * float(mlax.lax.stop_gradient(x)), lambda x, n: x * float(
                            jax.lax.stop_gradient(x))),
                        (lambda x, n: x * float(mnp.floor(x)), lambda x, n: x * float(jnp.floor(x))),
                        (lambda x, n: x * np.asarray(x.astype(int)), None)):
        n = np.float32(rng.uniform(1.0, 2.0))
        assert_same(mlax.grad(good)(x, n), jax.grad(jgood or good)(x, n), rtol=1e-6)


def test_vmap_unmapped_arguments_are_concrete(rng: np.random.Generator) -> None:
    v = random_array(rng, (4,), np.float32)
    for n in (1.5, -1.5):
        got = mlax.vmap(lambda v, n: v * (2.0 if n > 0 else float(n)), in_axes=(0, None))(v, n)
        assert_same(got, jax.vmap(lambda v, n: v * (2.0 if n > 0 else float(n)), in_axes=(0, None))(v, n))
    with pytest.raises(mlax.ConcretizationTypeError):  # a mapped value has no single value
        mlax.vmap(lambda v: v * (2.0 if v > 0 else 3.0))(v)
    with pytest.raises(mlax.ConcretizationTypeError):
        mlax.vmap(mlax.grad(lambda x: x * x if x > 1 else -x))(v)
    out = mlax.grad(lambda x: mlax.vmap(lambda w: w * (2.0 if x > 0 else 3.0))(v).sum() * x)(np.float32(-1.0))
    assert_same(out, jax.grad(lambda x: jax.vmap(lambda w: w * (2.0 if x > 0 else 3.0))(v).sum() * x)(
        np.float32(-1.0)), rtol=1e-6)


def test_concrete_traces_are_per_call(monkeypatch: pytest.MonkeyPatch, backend) -> None:
    """Each call of a function that needs values is traced for its own inputs (another input
    takes the other branch); a function that needs none is traced once. Both run on the
    configured backend."""
    import mlax.aot

    backends, real = [], mlax.aot.compile_cached
    monkeypatch.setattr(mlax.aot, "compile_cached", lambda name, *a: backends.append(name) or real(name, *a))
    traces = []

    def f(x):
        traces.append(1)
        return x * x if x > 1 else x * 3.0

    inputs = [np.float32(x) for x in (2.0, 0.5, 2.0, 0.5)]
    expected = [jax.grad(f)(x) for x in inputs]
    traces.clear()
    grad = mlax.grad(f)
    for x, want in zip(inputs, expected, strict=True):
        assert_same(grad(x), want)
    # the first call: the abstract attempt and the concrete trace; later calls of the same
    # signature skip the attempt that failed (pyfront/staging.py `Staged`)
    assert len(traces) == 5
    plain = mlax.grad(lambda x: traces.append(1) or x * x)
    traces.clear()
    for x in (2.0, 0.5, 3.0):
        plain(np.float32(x))
    assert len(traces) == 1
    assert backends and set(backends) == {backend}


def test_threads_keep_their_own_mode() -> None:
    f, jf = _piecewise(mnp), _piecewise(jnp)
    inputs = [np.float32(v) for v in np.linspace(-1.5, 1.5, 8)]
    results: dict[int, object] = {}

    def work(i: int) -> None:
        results[i] = mlax.grad(f)(inputs[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for i, x in enumerate(inputs):
        assert_same(results[i], jax.grad(jf)(x), rtol=1e-6)


def test_boolean_masks_and_arange_of_concrete_values(rng: np.random.Generator, backend) -> None:
    def masked(np_):
        def f(x, n):
            kept = x[x > 0.0]  # a shape that depends on the values
            return np_.sum(kept ** 2) + np_.sum(np_.arange(n) * x[0])
        return f

    x = random_array(rng, (6,), np.float32, -1.0, 1.0)
    n = np.int32(rng.integers(2, 6))
    assert_same(mlax.grad(masked(mnp))(x, n), jax.grad(masked(jnp))(x, n), rtol=1e-6)
    with pytest.raises(IndexError, match="boolean indices must be concrete"):
        mlax.jit(mlax.grad(masked(mnp)))(x, n)


def test_control_flow_results_are_concrete(rng: np.random.Generator, backend) -> None:
    def branchy(np_, lax):
        def f(x):
            y = lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: -v, x)
            z = lax.fori_loop(0, 3, lambda i, v: v * 1.5, y)
            carry, _ = lax.scan(lambda c, v: (c + v, c), 0.0, z)
            if carry > 1.0:  # a value that comes out of cond, a loop and scan
                return np_.sum(z ** 2)
            return np_.sum(np_.sin(z))
        return f

    x = random_array(rng, (3,), np.float32, 0.1, 1.0)
    for value in (x, -x):
        assert_same(mlax.grad(branchy(mnp, mlax.lax))(value), jax.grad(branchy(jnp, jax.lax))(value),
                    rtol=1e-6)
