"""Eager grad (issue 36): grad, value_and_grad, jvp, vjp, jacfwd, jacrev called outside jit see
concrete values, as jax's op-by-op evaluation does: Python control flow, int(), float(), .item(),
bool() on values, with jax's numbers and jax's refusals; values of constructs that close over
traced values (cond, scan, while, custom_jvp/vjp, checkpoint, nested grad/vmap/jit,
pure_callback) are known too; inside jit, vmap of a traced function and make_jaxpr the values
stay abstract (ConcretizationTypeError). See also test_concrete_grad.py."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same, random_array

LIBS = ((mlax, mnp), (jax, jnp))


def _both(build, *args, rtol: float = 1e-5, atol: float = 1e-6):
    """``build(lib, np_)(*args)`` on mlax and on jax, checked equal; mlax's result."""
    (got, want) = [build(lib, np_)(*args) for lib, np_ in LIBS]
    assert_same(got, want, rtol=rtol, atol=atol)
    return got


def test_the_issue_example(rng: np.random.Generator) -> None:
    for point in (1.0, -1.0, float(rng.uniform(-3, 3))):
        _both(lambda lib, np_: lib.grad(lambda x: x if x > 0 else -x), point)
    for point in (np.float32(rng.uniform(0.1, 3)), np.float32(-rng.uniform(0.1, 3))):
        _both(lambda lib, np_: lib.value_and_grad(lambda x: x ** 3 if x > 0 else np_.sin(x)), point)


def _conversions(np_):
    def f(x, n):
        k = int(n)                              # an integer argument: no derivative
        scale = float(n) + x[0].astype(int).item() + int(bool(x[1] > 0))
        total = x[0] * 0.0
        for i in range(k):                      # a Python loop of a value-dependent length
            total = total + np_.cos(x[i % x.shape[0]]) * scale
        return total * int(x.sum() > 1) + x[: int(n)].sum()
    return f


def test_int_float_item_bool_on_values(rng: np.random.Generator, backend) -> None:
    x = random_array(rng, (4,), np.float32, 0.5, 2.0)
    def jvp(lib, np_):
        return lambda x, n: lib.jvp(lambda v: _conversions(np_)(v, n), (x,), (x * 2,))

    def vjp(lib, np_):
        return lambda x, n: lib.vjp(lambda v: _conversions(np_)(v, n), x)[1](np.float32(1.5))

    for count in (np.int32(2), np.int32(3)):
        _both(lambda lib, np_: lib.grad(_conversions(np_)), x, count)
        _both(lambda lib, np_: lib.jacfwd(lambda v, n: _conversions(np_)(v, n) * v), x, count)
        _both(lambda lib, np_: lib.jacrev(lambda v, n: _conversions(np_)(v, n) * v), x, count)
        _both(jvp, x, count)
        _both(vjp, x, count)


def test_float_of_a_differentiated_value_is_refused_as_jax(rng: np.random.Generator) -> None:
    x = np.float32(rng.uniform(0.5, 2.0))
    for lib, _ in LIBS:
        error = jax.errors.ConcretizationTypeError if lib is jax else mlax.ConcretizationTypeError
        with pytest.raises(error):
            lib.grad(lambda x: x * float(x))(x)
        with pytest.raises(Exception, match="(?i)numpy|__array__"):  # jax: TracerArrayConversionError
            lib.grad(lambda x: x * np.asarray(x))(x)
    # not differentiated, or through stop_gradient: given, as jax gives them
    _both(lambda lib, np_: lib.grad(lambda x, y: x * float(y)), x, np.float32(3.0))
    _both(lambda lib, np_: lib.grad(lambda x: x * float(lib.lax.stop_gradient(x))), x)


def _closures(lib, np_):
    """Values of constructs that close over the differentiated value, used by Python."""
    lax = lib.lax

    @lib.custom_jvp
    def softsign(v):
        return v / (1 + np_.abs(v))

    softsign.defjvp(lambda p, t: (softsign(p[0]), t[0] / (1 + np_.abs(p[0])) ** 2))

    @lib.custom_vjp
    def cube(v):
        return v ** 3

    cube.defvjp(lambda v: (cube(v), v), lambda v, g: (3 * v ** 2 * g,))

    def f(x):
        a = lax.cond(x > 0, lambda: x * 2, lambda: -x)           # closure in both branches
        b = lax.scan(lambda c, _: (c + x, None), 0.0, None, length=3)[0]
        c = lax.while_loop(lambda v: v < 5 * np_.abs(x), lambda v: v + np_.abs(x), np_.abs(x))
        d = lib.grad(lambda y: y * x * x)(1.0)                    # a nested grad closing over x
        e = lib.vmap(lambda y: y * x)(np_.arange(3.0)).sum()
        g = lib.jit(lambda y: y * x)(2.0)                         # a nested jit: abstract inside
        h = lib.checkpoint(lambda y: y * x)(1.0)
        k = softsign(x) + cube(x)
        flags = [bool(v > 1) for v in (a, b, c, d, e, g, h, k)]
        return sum((i + 1) * x ** (i % 3 + 1) if flag else -x for i, flag in enumerate(flags))
    return f


def test_constructs_closing_over_values(rng: np.random.Generator) -> None:
    for x in (np.float32(rng.uniform(0.6, 1.5)), np.float32(rng.uniform(-1.5, -0.6)),
              np.float32(rng.uniform(0.1, 0.3))):
        _both(lambda lib, np_: lib.grad(_closures(lib, np_)), x)


def test_pure_callback_value(rng: np.random.Generator) -> None:
    calls: list = []

    def f(lib, np_):
        def host(v):
            calls.append(1)
            return np.asarray(np.abs(v) + 1, np.float32)

        def g(x):
            k = lib.pure_callback(host, jax.ShapeDtypeStruct((), np.float32), lib.lax.stop_gradient(x))
            return x ** 2 if k > 2 else np_.sin(x)
        return lib.grad(g)

    for x in (np.float32(rng.uniform(1.5, 2.0)), np.float32(rng.uniform(0.1, 0.5))):
        _both(f, x)


def test_nested_hessian_eagerly(rng: np.random.Generator) -> None:
    def f(np_):
        def g(v):
            return np_.sum(v ** 3) if v[0] > 0 else np_.sum(np_.sin(v) * v)
        return g

    for sign in (1.0, -1.0):
        point = random_array(rng, (3,), np.float32, 0.2, 1.5) * np.float32(sign)
        _both(lambda lib, np_: lib.hessian(f(np_)), point, rtol=1e-4, atol=1e-5)
        _both(lambda lib, np_: lib.grad(lambda v: lib.grad(f(np_))(v).sum()), point, rtol=1e-4, atol=1e-5)


def test_closure_over_concrete_arrays(rng: np.random.Generator) -> None:
    table = random_array(rng, (5,), np.float32)
    index = np.int32(rng.integers(0, 5))

    def f(np_):
        def g(x):
            i = int(index) if table[index] > 0 else 0
            return np_.sum(table * x) * table[i] if x.sum() > 0 else np_.sum(table) * x[0]
        return g

    for sign in (1.0, -1.0):
        x = random_array(rng, (5,), np.float32, 0.1, 1.0) * np.float32(sign)
        _both(lambda lib, np_: lib.grad(f(np_)), x)


def test_abstract_where_jax_is(rng: np.random.Generator) -> None:
    """Inside jit, under vmap of the traced function and in make_jaxpr, values stay abstract:
    jax's error (not retried), also for a value a nested jit closes over."""
    f = lambda x: x if x > 0 else -x  # noqa: E731
    xs = random_array(rng, (3,), np.float32)
    one = np.float32(1.0)
    for lib in (jax, mlax):
        error = jax.errors.ConcretizationTypeError if lib is jax else mlax.ConcretizationTypeError
        nested = lib.grad(lambda x, lib=lib: lib.jit(lambda y: y * x if x > 0 else y)(2.0))
        calls = ((lib.jit(lib.grad(f)), one), (lib.vmap(lib.grad(f)), xs), (lib.make_jaxpr(lib.grad(f)), one),
                 (nested, one))
        for call, argument in calls:
            with pytest.raises(error):
                call(argument)


def test_control_flow_calls_are_traced_once_each(rng: np.random.Generator) -> None:
    """A function that needs values: its first call tries the cached abstract trace, later calls
    of the same signature go straight to the concrete trace (one trace each), and every input
    still takes its own branch."""
    traces: list = []

    def f(x):
        traces.append(1)
        return x ** 2 if x.sum() > 0 else mnp.sin(x).sum()

    grad = mlax.grad(lambda x: f(x).sum())
    inputs = [random_array(rng, (3,), np.float32) * s for s in (1, -1, 1, -1)]
    for x in inputs:
        jf = lambda v: (v ** 2 if v.sum() > 0 else jnp.sin(v).sum()).sum()  # noqa: E731
        assert_same(grad(x), jax.grad(jf)(x), rtol=1e-6)
    assert len(traces) == 2 + 3
