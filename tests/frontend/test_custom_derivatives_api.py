"""custom_jvp / custom_vjp options (symbolic_zeros, defjvps, nondiff_argnums objects),
custom_gradient, closure_convert, linear_transpose, jacobian, mlax.test_util and the
mlax.custom_derivatives module, each against jax on random values: eager, under jit, grad
(first and second order) and vmap; errors of jax's types."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same

LIBS = ((jax, jnp), (mlax, mnp))
RTOL = 2e-5


def _rand(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(np.float32)


def _check(build: Callable[[Any, Any], Callable[..., Any]], *args: Any, second: bool = True,
           batched: bool = True) -> None:
    """``build(lib, np)`` makes the same function from jax and mlax: compare it eagerly, under
    jit, its gradient (and that gradient's gradient) and vmap over a leading axis."""
    f_jax, f_mlax = (build(lib, np_) for lib, np_ in LIBS)
    assert_same(f_mlax(*args), f_jax(*args), rtol=RTOL, check_weak_type=False)
    assert_same(mlax.jit(f_mlax)(*args), jax.jit(f_jax)(*args), rtol=RTOL, check_weak_type=False)

    def scalar(lib: Any, f: Callable[..., Any]) -> Callable[..., Any]:
        return lambda *a: lib.numpy.sum(f(*a) ** 2)

    g_jax, g_mlax = jax.grad(scalar(jax, f_jax)), mlax.grad(scalar(mlax, f_mlax))
    assert_same(g_mlax(*args), g_jax(*args), rtol=1e-4, check_weak_type=False)
    assert_same(mlax.jit(g_mlax)(*args), jax.jit(g_jax)(*args), rtol=1e-4, check_weak_type=False)
    if second:
        gg_jax = jax.grad(lambda *a: jnp.sum(g_jax(*a)))
        gg_mlax = mlax.grad(lambda *a: mnp.sum(g_mlax(*a)))
        assert_same(gg_mlax(*args), gg_jax(*args), rtol=1e-4, atol=1e-5, check_weak_type=False)
    if batched:
        stacked = [np.stack([a, a * 0.5 + 0.25]) for a in args]
        assert_same(mlax.vmap(g_mlax)(*stacked), jax.vmap(g_jax)(*stacked), rtol=1e-4, check_weak_type=False)


# symbolic zeros --------------------------------------------------------------------------------

def _product_jvp(lib: Any, log: list | None = None) -> Any:
    zero = jax.custom_derivatives.SymbolicZero

    @lib.custom_jvp
    def f(x, y):
        return x * y

    def rule(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        if log is not None:
            log.append(tuple(isinstance(t, zero) for t in tangents))
        out = x * y
        terms = ([] if isinstance(tx, zero) else [tx * y]) + ([] if isinstance(ty, zero) else [x * ty])
        if not terms:
            return out, lib.custom_derivatives.zero_from_primal(out, symbolic_zeros=True)
        return out, sum(terms[1:], terms[0])

    f.defjvp(rule, symbolic_zeros=True)
    return f


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_custom_jvp_symbolic_zeros_patterns(argnums: Any) -> None:
    x, y = _rand(0, 3), _rand(1, 3)
    seen = {}
    for lib, _ in LIBS:
        log: list = []
        f = _product_jvp(lib, log)
        grad = lib.grad(lambda a, b, f=f, lib=lib: lib.numpy.sum(f(a, b)), argnums)
        out = grad(x, y)
        seen[lib.__name__] = (out, log[-1])
    assert_same(seen["mlax"][0], seen["jax"][0], rtol=RTOL, check_weak_type=False)
    assert seen["mlax"][1] == seen["jax"][1]  # the pattern of SymbolicZero tangents the rule saw


def test_custom_jvp_symbolic_zeros_constant_and_traced_inputs() -> None:
    x = _rand(2, 4)
    for build in (lambda lib, np_: (lambda a: _product_jvp(lib)(a, np_.float32(3.0))),
                  lambda lib, np_: (lambda a: _product_jvp(lib)(a, np_.sin(a)))):
        _check(build, x)


def test_custom_jvp_symbolic_zeros_jvp_and_returned_zero() -> None:
    x, y = _rand(3, 3), _rand(4, 3)
    outs = [lib.jvp(_product_jvp(lib), (x, y), (y, np.zeros(3, np.float32))) for lib, _ in LIBS]
    assert_same(outs[1], outs[0], rtol=RTOL, check_weak_type=False)

    def build(lib: Any, np_: Any) -> Any:
        @lib.custom_jvp
        def f(x):
            return np_.sin(x)

        f.defjvp(lambda p, t: (np_.sin(p[0]), jax.custom_derivatives.SymbolicZero(
            jax.core.ShapedArray(p[0].shape, p[0].dtype))), symbolic_zeros=True)
        return lambda x: f(x) + x

    _check(build, x)


def test_custom_vjp_symbolic_zeros() -> None:
    x, y = _rand(5, 3), _rand(6, 3)
    zero = jax.custom_derivatives.SymbolicZero
    results = {}
    for lib, np_ in LIBS:
        log: list = []

        @lib.custom_vjp
        def f(x, y):
            return x * y, x + y

        def fwd(x, y, log=log, f=f):
            assert type(x) is jax.custom_derivatives.CustomVJPPrimal
            log.append(("fwd", x.perturbed, y.perturbed))
            return f(x.value, y.value), (x.value, y.value)

        def bwd(res, cts, log=log):
            (a, b), (x, y) = cts, res
            log.append(("bwd", isinstance(a, zero), isinstance(b, zero)))
            a = 0.0 if isinstance(a, zero) else a
            b = 0.0 if isinstance(b, zero) else b
            return a * y + b, a * x + b

        f.defvjp(fwd, bwd, symbolic_zeros=True)
        first = lib.grad(lambda a, b, f=f, np_=np_: np_.sum(f(a, b)[0]))(x, y)
        # mlax also traces the rules once with everything perturbed, at the call: the last
        # fwd and bwd are those of the pattern the derivative needs
        pattern_first = tuple([e for e in log if e[0] == kind][-1] for kind in ("fwd", "bwd"))
        both = lib.grad(lambda a, b, f=f, np_=np_: np_.sum(f(a, b)[0] * f(a, b)[1]), (0, 1))(x, y)
        results[lib.__name__] = (first, both, pattern_first)
    assert_same(results["mlax"][:2], results["jax"][:2], rtol=RTOL, check_weak_type=False)
    assert results["mlax"][2] == results["jax"][2] == (("fwd", True, False), ("bwd", False, True))


def test_custom_vjp_symbolic_zeros_bwd_that_refuses_nonzero_cotangents() -> None:
    """A bwd that asserts the zero cotangents it is promised (equinox's filter_custom_vjp tests
    do): mlax's trace of it with every cotangent present, at the call, fails; the pass then
    traces it for the cotangents of the use, and the gradient is jax's."""
    x, y = _rand(4, 3), _rand(7, 3)
    zero = jax.custom_derivatives.SymbolicZero
    results = {}
    for lib, np_ in LIBS:
        @lib.custom_vjp
        def f(x, y):
            return x * y, x, y

        def fwd(x, y, f=f):
            return f(x.value, y.value), (x.value, y.value)

        def bwd(res, cts):
            (a, b, c), (x, y) = cts, res
            assert not isinstance(a, zero) and isinstance(b, zero) and not isinstance(c, zero)
            return a * y, a * x + c

        f.defvjp(fwd, bwd, symbolic_zeros=True)
        def loss(a, b, f=f, np_=np_):
            out = f(a, b)
            return np_.sum(out[0] * 2.0 + np_.sin(out[2]))

        results[lib.__name__] = lib.grad(loss, (0, 1))(x, y)
    assert_same(results["mlax"], results["jax"], rtol=RTOL, check_weak_type=False)


def test_custom_vjp_primal_tree_values() -> None:
    record = jax.custom_derivatives.CustomVJPPrimal(1.0, True)
    assert mlax.custom_derivatives.custom_vjp_primal_tree_values({"a": record}) == {"a": 1.0}
    with pytest.raises(TypeError):
        mlax.custom_derivatives.custom_vjp_primal_tree_values(1.0)


# defjvps ----------------------------------------------------------------------------------------

def test_defjvps() -> None:
    def build(lib: Any, np_: Any) -> Any:
        @lib.custom_jvp
        def f(x, y):
            return np_.sin(x) * y

        f.defjvps(lambda xd, out, x, y: np_.cos(x) * xd * y, lambda yd, out, x, y: np_.sin(x) * yd)
        return f

    _check(build, _rand(7, 4), _rand(8, 4))


def test_defjvps_with_none() -> None:
    def build(lib: Any, np_: Any) -> Any:
        @lib.custom_jvp
        def f(x, y):
            return np_.exp(x) * y

        f.defjvps(None, lambda yd, out, x, y: np_.exp(x) * yd)  # no dependence on x
        return f

    _check(build, _rand(9, 3), _rand(10, 3))


def test_defjvps_rejects_nondiff_argnums() -> None:
    for lib, _ in LIBS:
        f = lib.custom_jvp(lambda x, y: x * y, nondiff_argnums=(1,))
        with pytest.raises(TypeError, match="defjvps"):
            f.defjvps(None)


# nondiff_argnums objects --------------------------------------------------------------------------

def test_custom_jvp_nondiff_function_string_tuple() -> None:
    def build(lib: Any, np_: Any) -> Any:
        @partial(lib.custom_jvp, nondiff_argnums=(0, 2, 3))
        def apply(fn, x, mode, axes):
            return fn(x) * (2.0 if mode == "double" else 1.0) + len(axes)

        @apply.defjvp
        def rule(fn, mode, axes, primals, tangents):
            (x,), (t,) = primals, tangents
            return apply(fn, x, mode, axes), 3.0 * t

        return lambda x: apply(np_.sin, x, "double", (0, 1))

    # not second order: in mlax a custom_jvp function is its plain self inside its own rule
    _check(build, _rand(11, 3), second=False)


def test_custom_vjp_nondiff_function_and_module() -> None:
    def build(lib: Any, np_: Any) -> Any:
        @partial(lib.custom_vjp, nondiff_argnums=(0, 1))
        def apply(mod, fn, x):
            return getattr(mod, fn)(x)

        def fwd(mod, fn, x):
            return apply(mod, fn, x), x

        def bwd(mod, fn, x, ct):
            return (ct * mod.cos(x),)

        apply.defvjp(fwd, bwd)
        return lambda x: apply(np_, "sin", x)

    _check(build, _rand(12, 3))


def test_custom_jvp_traced_nondiff_value_gets_no_derivative() -> None:
    x, s = _rand(13, 3), _rand(14, 3)

    def build(lib: Any, np_: Any) -> Any:
        @partial(lib.custom_jvp, nondiff_argnums=(1,))
        def f(x, s):
            return x * s

        @f.defjvp
        def rule(s, primals, tangents):
            return f(primals[0], s), tangents[0] * s * 10.0

        return f

    f_jax, f_mlax = build(jax, jnp), build(mlax, mnp)
    for argnums in (0, 1):
        assert_same(mlax.grad(lambda a, b: mnp.sum(f_mlax(a, b)), argnums)(x, s),
                    jax.grad(lambda a, b: jnp.sum(f_jax(a, b)), argnums)(x, s), rtol=RTOL,
                    check_weak_type=False)
    assert_same(mlax.jit(f_mlax)(x, s), jax.jit(f_jax)(x, s), rtol=RTOL)


def test_custom_vjp_traced_nondiff_value() -> None:
    def build(lib: Any, np_: Any) -> Any:
        @partial(lib.custom_vjp, nondiff_argnums=(1,))
        def f(x, s):
            return x * s

        f.defvjp(lambda x, s: (f(x, s), None), lambda s, _, ct: (ct * s,))
        return f

    x, s = _rand(15, 3), _rand(16, 3)
    # eager grad with argnums=0: jax sees a concrete s; mlax stages it and passes it through
    assert_same(mlax.grad(lambda a: mnp.sum(build(mlax, mnp)(a, s)))(x),
                jax.grad(lambda a: jnp.sum(build(jax, jnp)(a, s)))(x), rtol=RTOL, check_weak_type=False)


def test_nondiff_argnums_errors() -> None:
    for lib, _ in LIBS:
        f = lib.custom_jvp(lambda x, y: x * y, nondiff_argnums=(5,))
        f.defjvp(lambda p, t: (p[0], t[0]))
        with pytest.raises(IndexError):
            lib.jit(f)(1.0, 2.0)
        w = lib.custom_vjp(lambda fn, x: fn(x))
        w.defvjp(lambda fn, x: (fn(x), None), lambda r, c: (None, c))
        with pytest.raises(TypeError, match="not a valid"):
            lib.grad(lambda x, w=w, lib=lib: w(lib.numpy.sin, x))(1.0)


# custom_gradient ----------------------------------------------------------------------------------

def test_custom_gradient_single_argument() -> None:
    def build(lib: Any, np_: Any) -> Any:
        @lib.custom_gradient
        def f(x):
            y = np_.sin(x)
            return y, lambda g: g * 3.0 * np_.cos(x)

        return f

    _check(build, _rand(17, 3))


def test_custom_gradient_two_arguments_and_pytree_output() -> None:
    def build(lib: Any, np_: Any) -> Any:
        @lib.custom_gradient
        def f(x, y):
            out = {"p": x * y, "s": x + y}
            return out, lambda g: (g["p"] * y + 2.0 * g["s"], g["p"] * x + g["s"])

        return lambda x, y: f(x, y)["p"] + f(x, y)["s"]

    _check(build, _rand(18, 3), _rand(19, 3), second=False)


# closure_convert ----------------------------------------------------------------------------------

def test_closure_convert_consts_and_values() -> None:
    x, y = _rand(20, 3), _rand(21, 3)

    def build(lib: Any, np_: Any) -> Any:
        def outer(x, y):
            fn = lambda z: np_.sin(z) * y + x  # noqa: E731
            converted, consts = lib.closure_convert(fn, x)
            return converted(x * 2.0, *consts)

        return outer

    _check(build, x, y)
    for lib, np_ in LIBS:  # traced, both closed-over values are hoisted
        count = lib.jit(lambda a, b, lib=lib, np_=np_: len(lib.closure_convert(
            lambda z: np_.sin(z) * b + a, a)[1]))(x, y)
        assert count == 2


def test_closure_convert_with_custom_vjp() -> None:
    """The use jax documents: a closure's traced values passed explicitly to a custom_vjp."""
    def build(lib: Any, np_: Any) -> Any:
        @partial(lib.custom_vjp, nondiff_argnums=(0,))
        def call(fn, x, *consts):
            return fn(x, *consts)

        def fwd(fn, x, *consts):
            return fn(x, *consts), (x, consts)

        def bwd(fn, res, ct):
            x, consts = res
            _, pull = lib.vjp(fn, x, *consts)
            return pull(ct)

        call.defvjp(fwd, bwd)

        def outer(x, y):
            converted, consts = lib.closure_convert(lambda z: np_.tanh(z * y), x)
            return call(converted, x, *consts)

        return outer

    _check(build, _rand(22, 3), _rand(23, 3), second=False)


def test_closure_convert_eager_and_int_closure() -> None:
    x = _rand(24, 3)
    for lib, np_ in LIBS:
        converted, consts = lib.closure_convert(lambda z, np_=np_: z * 2.0 + np_.asarray(x), x)
        assert consts == []
        np.testing.assert_allclose(np.asarray(converted(x)), x * 3.0, rtol=RTOL)
        count = lib.jit(lambda a, n, lib=lib: len(lib.closure_convert(lambda z: z * n, a)[1]))(x, 2)
        assert count == 0  # integer values are never hoisted (they carry no derivative)


def test_closure_convert_tree_mismatch_is_type_error() -> None:
    for lib, _ in LIBS:
        converted, _ = lib.closure_convert(lambda z: z * 2.0, 1.0)
        with pytest.raises(TypeError, match="same Pytree structure"):
            converted((1.0, 2.0))


# linear_transpose ---------------------------------------------------------------------------------

def test_linear_transpose_values_and_dtypes() -> None:
    x, y = _rand(25, 3), _rand(26, 2, 3)
    outs = []
    for lib, np_ in LIBS:
        f = lambda a, b, np_=np_: (2.0 * a + b.sum(0), np_.dot(b, x) - 1.0)  # noqa: E731
        t = lib.linear_transpose(f, x, y)
        ct = (_rand(27, 3), _rand(28, 2))
        outs.append((t(ct), lib.jit(t)(ct)))
    assert_same(outs[1], outs[0], rtol=RTOL, check_weak_type=False)


def test_linear_transpose_shape_dtype_struct_and_grad() -> None:
    spec = jax.ShapeDtypeStruct((3,), np.float32)
    w = _rand(29, 3)
    got = mlax.linear_transpose(lambda a: a * w, spec)(w)
    want = jax.linear_transpose(lambda a: a * w, spec)(w)
    assert_same(got, want, rtol=RTOL)
    # the transpose is itself differentiable (it is linear in the cotangent)
    g = mlax.grad(lambda c: mnp.sum(mlax.linear_transpose(lambda a: a * w, spec)(c)[0] ** 2))(w)
    g_jax = jax.grad(lambda c: jnp.sum(jax.linear_transpose(lambda a: a * w, spec)(c)[0] ** 2))(w)
    assert_same(g, g_jax, rtol=RTOL)


@pytest.mark.parametrize("fun,error", [
    (lambda np_: (lambda x: x * x), AssertionError),
    (lambda np_: (lambda x: np_.sin(x)), NotImplementedError),
    (lambda np_: (lambda x: x.astype(np_.int32)), TypeError),
])
def test_linear_transpose_errors(fun: Any, error: type) -> None:
    for lib, np_ in LIBS:
        with pytest.raises(error):
            lib.linear_transpose(fun(np_), 1.0)(1.0)


def test_linear_transpose_cotangent_errors() -> None:
    for lib, np_ in LIBS:
        t = lib.linear_transpose(lambda x, y: (2 * x + y.sum(), x - 1.0), 1.0, np_.ones(3))
        with pytest.raises(TypeError, match="cotangent tree does not match"):
            t(1.0)
        with pytest.raises(TypeError, match="cotangent type does not match"):
            t((1.0, np_.ones(2)))
        with pytest.raises(NotImplementedError):
            lib.linear_transpose(lambda x: x, 1.0, reduce_axes=("i",))


# jacobian, test_util, module ----------------------------------------------------------------------

def test_jacobian_is_jacrev() -> None:
    x = _rand(30, 3)
    assert mlax.jacobian is mlax.jacrev
    assert_same(mlax.jacobian(lambda a: mnp.sin(a) * a[0])(x), jax.jacobian(lambda a: jnp.sin(a) * a[0])(x),
                rtol=RTOL)


def test_check_grads_passes_and_fails_like_jax() -> None:
    from mlax.test_util import check_grads

    x, y = _rand(31, 3), _rand(32, 3)
    check_grads(lambda a: mnp.sin(a) * a, (x,), 2)
    check_grads(lambda a, b: mnp.sum(mnp.tanh(a) * b), (x, y), 2, modes=("rev",))
    check_grads(mnp.exp, (x,), 1, modes=("lin",), atol=1e-2, rtol=1e-2, eps=1e-3)
    for lib, np_ in LIBS:
        wrong = lib.custom_jvp(np_.sin)
        wrong.defjvp(lambda p, t, np_=np_: (np_.sin(p[0]), 2.0 * t[0]))
        with pytest.raises(AssertionError):
            lib.test_util.check_grads(wrong, (x,), 1)
        wrong_vjp = lib.custom_vjp(np_.sin)
        wrong_vjp.defvjp(lambda a, np_=np_: (np_.sin(a), a), lambda a, ct: (2.0 * ct,))
        with pytest.raises(AssertionError):
            lib.test_util.check_grads(wrong_vjp, (x,), 1, modes=("rev",))


def test_custom_derivatives_module() -> None:
    cd = mlax.custom_derivatives
    assert cd.SymbolicZero is jax.custom_derivatives.SymbolicZero
    assert cd.CustomVJPPrimal is jax.custom_derivatives.CustomVJPPrimal
    for name in ("custom_jvp", "custom_vjp", "zero_from_primal", "closure_convert", "custom_gradient"):
        assert callable(getattr(cd, name))
    with pytest.raises(AttributeError):
        cd.linear_call  # noqa: B018 (not provided)
    x = _rand(33, 2)
    zeros = cd.zero_from_primal({"a": x, "n": np.int32(3)})
    want = jax.custom_derivatives.zero_from_primal({"a": x, "n": np.int32(3)})
    assert np.asarray(zeros["a"]).dtype == want["a"].dtype and not np.asarray(zeros["a"]).any()
    assert zeros["n"].dtype == want["n"].dtype
    symbolic = cd.zero_from_primal(x, symbolic_zeros=True)
    assert isinstance(symbolic, jax.custom_derivatives.SymbolicZero) and symbolic.shape == (2,)


def test_symbolic_zeros_on_every_backend(backend: str) -> None:
    """The pass-time rule variants exist in the module each backend compiles (the interpreter
    and XLA roads differentiate a parsed copy)."""
    x, y = _rand(34, 3), _rand(35, 3)
    f_jax, f_mlax = _product_jvp(jax), _product_jvp(mlax)
    assert_same(mlax.grad(lambda a, b: mnp.sum(f_mlax(a, b) ** 2))(x, y),
                jax.grad(lambda a, b: jnp.sum(f_jax(a, b) ** 2))(x, y), rtol=RTOL, check_weak_type=False)

    @mlax.custom_gradient
    def g(a):
        return mnp.sin(a), lambda ct: ct * mnp.cos(a)

    np.testing.assert_allclose(np.asarray(mlax.grad(lambda a: mnp.sum(g(a)))(x)), np.cos(x), rtol=RTOL)


def test_rules_traced_in_threads() -> None:
    """Tracing a custom_jvp function's rule in one thread leaves it custom in another."""
    import threading

    @mlax.custom_jvp
    def f(x):
        return mnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), 5.0 * t[0]), symbolic_zeros=True)
    xs = [_rand(40 + k, 3) for k in range(4)]
    results: dict[int, Any] = {}

    def work(k: int) -> None:
        results[k] = mlax.grad(lambda a: mnp.sum(f(a) * (k + 1.0)))(xs[k])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        np.testing.assert_allclose(np.asarray(results[k]), np.full(3, 5.0 * (k + 1)), rtol=RTOL)


def test_symbolic_zeros_rule_failing_on_zero_tangents() -> None:
    """jax raises the rule's TypeError; in mlax the rule meets its SymbolicZeros in the pass,
    whose error (a ValueError) names the rule and carries the rule's message."""
    for lib, error in ((jax, TypeError), (mlax, ValueError)):
        @lib.custom_jvp
        def f(x, y):
            return x * y

        f.defjvp(lambda p, t: (p[0] * p[1], t[0] * p[1] + p[0] * t[1]), symbolic_zeros=True)
        with pytest.raises(error, match="SymbolicZero"):
            lib.grad(f)(2.0, 3.0)
