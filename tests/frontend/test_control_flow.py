"""mlax.lax.cond / switch / while_loop / fori_loop / scan / map against jax.lax: values eagerly
and under jit on both backends, the errors, jvp / grad / vjp through them, and vmap of them.

Each case is written once as ``make(L)`` for ``L`` in (mlax, jax), using ``L.lax`` and
``L.numpy``. Known front-end bugs carry one xfail marker each (below, with a minimal repro):
remove a marker once its bug is fixed. The compositions (grad of grad, vmap of grad...) run on
the default (cpu) backend only, to keep the file fast.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same, random_array, random_shape

Make = Callable[[Any], Callable[..., Any]]  # L (mlax or jax) -> the function written with L



def check(make: Make, *cases: tuple[Any, ...], rtol: float = 2e-5, atol: float = 1e-6) -> None:
    """``make(mlax)``, eagerly and jitted, against ``jax.jit(make(jax))`` on each argument tuple of
    ``cases`` (no cases: no arguments); one jit per side, so one compile per signature."""
    ours, theirs = make(mlax), jax.jit(make(jax))
    jitted = mlax.jit(ours)
    for args in cases or [()]:
        expected = theirs(*args)
        assert_same(ours(*args), expected, rtol, atol)
        assert_same(jitted(*args), expected, rtol, atol)


def f32(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return random_array(rng, shape, np.float32)


# ---- values: cond and switch -------------------------------------------------------------------


def test_cond_values(rng: np.random.Generator, backend) -> None:
    shape = random_shape(rng)
    x, y, w = f32(rng, *shape), f32(rng, 2), f32(rng, *shape)

    def pytree(L):
        np_ = L.numpy
        return lambda p, ops: L.lax.cond(
            p, lambda o: {"s": np_.sin(o["a"]), "t": (o["b"][0] * 2, o["b"][1])},
            lambda o: {"s": o["a"] - 1, "t": (o["b"][0], o["b"][1] + o["b"][0].sum())}, ops)

    operands = {"a": x, "b": (y, y * 3)}
    preds = (True, False, np.bool_(True), np.int32(0), np.int32(-3), np.uint8(7), 2.5, np.float32(np.nan),
             np.float32(-0.0))  # a float predicate is `pred != 0`: NaN is true, -0.0 false
    empty = {"a": f32(rng, 0, 3), "b": (y[:1], y[:1])}  # size-0 and size-1 operands
    check(pytree, *[(p, operands) for p in preds], (True, empty), (False, empty))
    # A predicate computed from the data, several operands, closures over enclosing traced values
    # (one branch captures w, the other a different value; one operand-less cond).
    def closure(L):
        np_ = L.numpy

        def f(x, w):
            u = np_.cos(w)
            a = L.lax.cond(np_.sum(x) > 0, lambda x, y: x * w + y, lambda x, y: x - u, x, 2.0)
            b = L.lax.cond(np_.max(w) > np_.max(x), lambda: np_.sum(w), lambda: np_.sum(u))
            return a, b
        return f

    check(closure, (x, w), (-np.abs(x), w))


def test_cond_python_scalar_branches(backend) -> None:
    preds = [(True,), (np.int32(0),)]
    check(lambda L: lambda p: L.lax.cond(p, lambda: 1.0, lambda: 2.0), *preds)
    check(lambda L: lambda p: L.lax.cond(p, lambda: 1, lambda: -4), *preds)
    check(lambda L: lambda p: L.lax.cond(p, lambda x: x + 1, lambda x: x * 3, 5), *preds)


def test_cond_older_forms(rng: np.random.Generator, backend) -> None:
    """``operand=x`` and ``cond(pred, x_true, f_true, x_false, f_false)``, which jax still takes."""
    x, y = f32(rng, 3), f32(rng, 2)
    check(lambda L: lambda p, x: L.lax.cond(p, L.numpy.sin, L.numpy.cos, operand=x), (True, x), (False, x))
    check(lambda L: lambda p, x, y: L.lax.cond(p, x, L.numpy.sum, y, L.numpy.prod),
          (True, x, y), (False, x, y))
    for L in (mlax, jax):
        with pytest.raises(TypeError, match="if 'operand' keyword is passed"):
            L.lax.cond(True, L.numpy.sin, L.numpy.cos, x, operand=x)


@pytest.mark.parametrize("make, pattern", [
    (lambda L: L.lax.cond(False, lambda x: (x, x), lambda x: x, 1.0),
     "cond branch outputs must have the same pytree structure"),
    (lambda L: L.lax.switch(0, [lambda x: [x], lambda x: x], 1.0),
     "switch branch outputs must have the same pytree structure"),
    (lambda L: L.lax.cond(False, lambda x: x, lambda x: x[:1], np.ones(2, np.float32)),
     "cond branches must have equal output types"),
    (lambda L: L.lax.switch(1, [lambda x: x, lambda x: x.astype(np.int32)], np.ones(2, np.float32)),
     "switch branches must have equal output types"),
], ids=["cond tree", "switch tree", "cond type", "switch type"])
def test_branch_mismatch_errors_lead_with_jax_words(make: Make, pattern: str) -> None:
    """Libraries match the start of jax's message (haiku's stateful tests)."""
    for L in (jax, mlax):
        with pytest.raises(TypeError, match=pattern):
            make(L)


def test_switch_traces_a_repeated_branch_once(rng: np.random.Generator) -> None:
    """A function given as several branches is traced once (as jax's); values, grad and vmap."""
    calls = []

    def make(L):
        def f(x):
            calls.append("f")
            return L.numpy.sin(x) * 2

        def g(x):
            calls.append("g")
            return x ** 3

        return lambda i, x: L.lax.switch(i, [f, g, f, g, f], x)

    for L in (jax, mlax):
        calls.clear()
        L.jit(make(L))(1, np.float32(0.5))
        assert sorted(calls) == ["f", "g"], L
    x = f32(rng, 4)
    for i in (np.int32(0), np.int32(3), np.int32(4)):
        check(make, (i, x))
        grads = [L.grad(lambda v, i=i, L=L: make(L)(i, v).sum())(x) for L in (mlax, jax)]
        assert_same(*grads, rtol=2e-5)
    idx = np.array([0, 1, 4, 3], np.int32)
    assert_same(mlax.vmap(make(mlax))(idx, x), jax.vmap(make(jax))(idx, x), rtol=2e-5)


def test_cond_branches_differing_only_in_weak_type(backend) -> None:
    check(lambda L: lambda p: L.lax.cond(p, lambda: np.float32(1), lambda: 2.0), (True,), (False,))
    check(lambda L: lambda p: L.lax.cond(p, lambda: 2.0, lambda: np.float32(1)), (True,), (False,))


def _branch(L: Any, k: int) -> Callable[..., Any]:
    return lambda x, y: (L.numpy.sin(x) * (k + 1) - k, y + k)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_switch_values(rng: np.random.Generator, backend, n: int) -> None:
    x, y = f32(rng, *random_shape(rng)), np.int32(rng.integers(-50, 50))
    make = lambda L: lambda i, x, y: L.lax.switch(i, [_branch(L, k) for k in range(n)], x, y)  # noqa: E731
    indices = [np.int32(i) for i in (-7, -1, 0, n // 2, n - 1, n, n + 4)] + [np.uint8(200), 2]
    check(make, *[(i, x, y) for i in indices])  # 2: a Python int


def test_switch_int64_index(rng: np.random.Generator, backend, x64) -> None:
    x = random_array(rng, (3,), np.float64)
    make = lambda L: lambda i, x: L.lax.switch(i, [lambda x: x + 1, lambda x: x * 2, lambda x: x - 3], x)  # noqa: E731
    # Within int32: JAX converts the index to int32 before clamping (2**40 becomes branch 0),
    # mlax clamps in int64 (2**40 becomes the last branch).
    check(make, *[(np.int64(i), x) for i in (-(2 ** 31), -1, 1, 2 ** 31 - 1)])


# ---- values: loops ----------------------------------------------------------------------------


def _collatz(L: Any) -> Callable[..., Any]:
    """A data-dependent trip count, a pytree carry, and closures (cond and body capture)."""
    np_ = L.numpy

    def f(n, x, limit):
        scale = np_.float32(0.5) * np_.tanh(x)

        def body(c):
            n, (steps, acc) = c["n"], c["rest"]
            return {"n": np_.where(n % 2 == 0, n // 2, 3 * n + 1), "rest": (steps + 1, acc * scale + 1)}

        return L.lax.while_loop(lambda c: (c["n"] != 1) & (c["rest"][0] < limit), body,
                                {"n": n, "rest": (np.int32(0), x)})
    return f


def test_while_loop_values(rng: np.random.Generator, backend) -> None:
    x = np.concatenate([f32(rng, int(rng.integers(0, 4))), np.float32([np.nan, np.inf, -0.0])])
    starts = (1, 2, 7, int(rng.integers(3, 60)))  # 1: zero trips
    check(_collatz, *[(np.int32(s), x, np.int32(1000)) for s in starts],
          (np.int32(27), x, np.int32(5)))  # stopped by the captured limit
    check(lambda L: lambda x: L.lax.while_loop(lambda c: c < 100, lambda c: c * 3, x), (np.int32(2),))
    check(lambda L: lambda: L.lax.while_loop(lambda c: c < 100, lambda c: c * 3, 1))  # weak carry


@pytest.mark.parametrize("lower,upper", [(2, 7), (0, 0), (5, 2), (-3, 1)])
def test_fori_loop_values(rng: np.random.Generator, backend, lower: int, upper: int) -> None:
    x = f32(rng, *random_shape(rng))

    def body(L):
        np_ = L.numpy
        return lambda i, c: {"x": c["x"] * 0.5 + np_.sin(i * c["w"]), "w": c["w"], "i": c["i"] + i}

    init = lambda x: {"x": x, "w": 0.3, "i": np.int32(0)}  # noqa: E731
    check(lambda L: lambda x: L.lax.fori_loop(lower, upper, body(L), init(x)), (x,))
    # Traced bounds under jit (a while loop); eagerly the bounds are concrete again (a scan).
    check(lambda L: lambda lo, hi, x: L.lax.fori_loop(lo, hi, body(L), init(x)), (lower, upper, x))
    check(lambda L: lambda hi, x: L.lax.fori_loop(lower, hi, body(L), init(x)), (upper, x))


def test_fori_loop_is_a_scan_with_static_bounds_and_a_while_loop_otherwise() -> None:
    body = lambda i, c: c + i  # noqa: E731
    static = mlax.make_mlir(lambda x: mlax.lax.fori_loop(0, 3, body, x))(np.float32(1))
    traced = mlax.make_mlir(lambda n, x: mlax.lax.fori_loop(0, n, body, x))(3, np.float32(1))
    assert "mlax.scan = {" in static and "mlax.while" not in static
    assert "mlax.while = {" in traced and "mlax.scan" not in traced


def _rnn_like(L: Any, reverse: bool = False, unroll: int = 1) -> Callable[..., Any]:
    """Pytrees of carry, xs and ys, and a closure over an enclosing value."""
    np_ = L.numpy

    def f(h, xs, b, w):
        def step(c, x):
            h = np_.tanh(c["h"] @ w + x[0] + x[1]["b"])
            return {"h": h, "n": c["n"] + 1}, [h * 2, np_.sum(h), c["n"]]

        return L.lax.scan(step, {"h": h, "n": np.int32(0)}, (xs, {"b": b}), reverse=reverse, unroll=unroll)
    return f


def test_scan_values(rng: np.random.Generator, backend) -> None:
    t, k = int(rng.integers(1, 7)), int(rng.integers(1, 5))
    h, xs, b, w = f32(rng, k), f32(rng, t, k), f32(rng, t, k), f32(rng, k, k) * 0.5
    check(_rnn_like, (h, xs, b, w), (h, xs[:0], b[:0], w))  # length 0: carry passes through, ys empty
    check(lambda L: _rnn_like(L, reverse=True), (h, xs, b, w))
    check(lambda L: _rnn_like(L, unroll=3), (h, xs, b, w))
    # xs=None with a length, ys None, both lengths 0 and not.
    for n in (0, t):
        check(lambda L, n=n: lambda c: L.lax.scan(lambda c, _: (c * 1.5 + 1, c), c, None, length=n), (h,))
        check(lambda L, n=n: lambda c, xs: L.lax.scan(lambda c, x: (c + x, None), c, xs, length=n),
              (h, xs[:n]))
        check(lambda L, n=n: lambda c: L.lax.scan(lambda c, _: (c, None), c, None, length=n), (h,))


def test_scan_carries_of_every_kind_of_dtype(rng: np.random.Generator, backend) -> None:
    dtypes = (np.float16, ml_dtypes.bfloat16, np.uint8, np.int8, np.bool_)
    xs = tuple(random_array(rng, (5, 2), d) for d in dtypes)
    init = tuple(random_array(rng, (2,), d) for d in dtypes)

    def make(L):
        def step(c, x):
            new = tuple(a ^ b if a.dtype == np.bool_ else a * b + a for a, b in zip(c, x, strict=True))
            return new, tuple(a < b for a, b in zip(c, x, strict=True))
        return lambda init, xs: L.lax.scan(step, init, xs)

    # XLA keeps a fused f16/bf16 multiply-add in f32 (excess precision) and rounds once; mlax
    # rounds each op, as the interpreter: five steps apart by up to an ulp each, of intermediate
    # values up to ~40 (f16's ulp there is 0.03), which can cancel to near 0.
    check(make, (init, xs), rtol=2e-2, atol=0.1)


def test_map_values(rng: np.random.Generator, backend) -> None:
    xs = {"a": f32(rng, 4, 3), "b": f32(rng, 4)}
    check(lambda L: lambda xs: L.lax.map(lambda r: (L.numpy.sum(r["a"]) * r["b"], r["a"] * 2), xs), (xs,))
    check(lambda L: lambda xs: L.lax.map(lambda r: r["b"] + 1, xs), ({"a": xs["a"][:0], "b": xs["b"][:0]},))
    for batch_size in (0, 1, 3, 4, 9):  # a scan of vmaps, the remainder vmapped and concatenated
        check(lambda L, n=batch_size: lambda xs: L.lax.map(
            lambda r: (L.numpy.sum(r["a"]) * r["b"], r["a"] * 2), xs, batch_size=n), (xs,))


def test_weak_typed_initial_carry_takes_the_body_dtype(rng: np.random.Generator) -> None:
    x = f32(rng, 3)
    check(lambda L: lambda x: L.lax.scan(lambda c, v: (c + v, c), 0, x), (x,))
    check(lambda L: lambda x: L.lax.fori_loop(0, 3, lambda i, c: c + L.numpy.asarray(x)[i], 0), (x,))
    check(lambda L: lambda: L.lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, 0))
    check(lambda L: lambda: L.lax.fori_loop(0, 3, lambda i, c: c + i, 0))


def test_nothing_passed_is_modified(rng: np.random.Generator) -> None:
    x = f32(rng, 3)
    init = {"a": x, "l": [x * 2, np.int32(1)]}
    xs = [f32(rng, 4, 3)]
    kept = copy.deepcopy((init, xs))
    lax = mlax.lax

    def f(init, xs):
        step = lambda c, x: ({"a": c["a"] + x[0], "l": [c["l"][0], c["l"][1] + 1]}, x[0])  # noqa: E731
        return (lax.scan(step, init, xs),
                lax.while_loop(lambda c: c["l"][1] < 4, lambda c: {**c, "l": [c["l"][0] * 2, c["l"][1] + 1]},
                               init),
                lax.cond(True, lambda c: c, lambda c: c, init),
                lax.fori_loop(0, 2, lambda i, c: c, init))

    for run in (f, mlax.jit(f, backend="interpreter")):
        run(init, xs)
        assert_same((init, xs), kept)
        assert type(init["l"]) is list and init["a"] is x


# ---- errors ------------------------------------------------------------------------------------


ONES = np.ones(3, np.float32)


def _carry_grows(L):
    return L.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, L.numpy.concatenate([c[1], c[1]])),
                            (0, ONES))


MUST_BE_BOOL = r"cond_fun must return a boolean scalar, but got output type\(s\) "
ERRORS = {  # name: (make(L) raising, exception type (JAX's), regex for mlax's message)
    "while carry shape": (_carry_grows, TypeError,
                          r"carry init_val\[1\] enters as float32\[3\] but leaves as float32\[6\]"),
    "while carry dtype": (
        lambda L: L.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1].astype(np.int32)),
                                   (0, ONES)),
        TypeError, r"body_fun output and input must have identical types.*carry init_val\[1\].*int32\[3\]"),
    "scan carry dtype": (
        lambda L: L.lax.scan(lambda c, x: (c.astype(np.int32), x), np.float32(0), ONES),
        TypeError, r"scan body function carry.*the carry init enters as float32\[\] but leaves as int32"),
    "scan carry shape": (lambda L: L.lax.scan(lambda c, x: (c[:1], x), ONES[:2], ONES),
                         TypeError, r"the carry init enters as float32\[2\] but leaves as float32\[1\]"),
    "fori carry": (lambda L: L.lax.fori_loop(0, 3, lambda i, c: {"a": c["a"].astype(np.int32)}, {"a": ONES}),
                   TypeError, r"carry .*\['a'\] enters as float32\[3\] but leaves as int32\[3\]"),
    "fori traced carry": (lambda L: L.jit(lambda n: L.lax.fori_loop(0, n, lambda i, c: c[:1], ONES))(3),
                          TypeError, r"carry .* enters as float32\[3\] but leaves as float32\[1\]"),
    "cond dtypes": (lambda L: L.lax.cond(True, lambda x: x, lambda x: x.astype(np.int32), ONES), TypeError,
                    r"(?s)false_fun and true_fun output must have identical types.*"
                    r"false_fun: .*int32\[3\].*true_fun: .*float32\[3\]"),
    "cond shapes": (lambda L: L.lax.cond(True, lambda x: x, lambda x: x[:2], ONES),
                    TypeError, r"(?s)false_fun: .*float32\[2\].*true_fun: .*float32\[3\]"),
    "cond trees": (lambda L: L.lax.cond(True, lambda x: (x, x), lambda x: [x, x], ONES),
                   TypeError, r"(?s)false_fun: PyTreeDef\(\[\*, \*\]\).*true_fun: PyTreeDef\(\(\*, \*\)\)"),
    "switch dtypes": (lambda L: L.lax.switch(1, [lambda x: x, lambda x: x, lambda x: x.astype(int)], ONES),
                      TypeError, r"branches\[0\] and branches\[2\] output must have identical types"),
    "non-scalar pred": (lambda L: L.lax.cond(np.array([True, False]), lambda: 1, lambda: 2),
                        TypeError, r"Pred must be a scalar, got .*shape \(2,\)"),
    "float index": (lambda L: L.lax.switch(1.0, [lambda: 1, lambda: 2]),
                    TypeError, r"integer type, got float32"),
    "empty switch": (lambda L: L.lax.switch(0, []), ValueError, r"Empty branch sequence"),
    "int cond_fun": (lambda L: L.lax.while_loop(lambda c: c, lambda c: c - 1, 3),
                     TypeError, MUST_BE_BOOL + r".*int32\[\]"),
    "vector cond_fun": (lambda L: L.lax.while_loop(lambda c: c < 3, lambda c: c - 1, ONES),
                        TypeError, MUST_BE_BOOL + r".*bool\[3\]"),
    "scan sizes": (lambda L: L.lax.scan(lambda c, x: (c, x[0] + x[1]), 0.0, (ONES, np.ones(4))),
                   ValueError, r"scan got values with different leading axis sizes: .*3.*4"),
    "scan length": (lambda L: L.lax.scan(lambda c, x: (c, x), 0.0, ONES, length=4),
                    ValueError, r"leading axis sizes.*3.*length=4"),
    "scan nothing": (lambda L: L.lax.scan(lambda c, x: (c, x), 0.0, None),
                     ValueError, r"scan got no values to scan over and `length` not provided"),
    "scan non-pair": (lambda L: L.lax.scan(lambda c, x: c, 0.0, ONES), TypeError, r"must return a pair"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_jax(name: str) -> None:
    make, error, pattern = ERRORS[name]
    with pytest.raises(error):
        make(jax)
    with pytest.raises(error, match=pattern):
        make(mlax)
    with pytest.raises(error, match=pattern):  # the same error while tracing an enclosing jit
        mlax.jit(lambda: make(mlax), backend="interpreter")()


def test_python_if_on_a_traced_value_points_to_cond() -> None:
    pattern = r"(?s)Attempted boolean conversion of traced array.*mlax.lax.cond.*mlax.lax.while_loop"
    with pytest.raises(jax.errors.TracerBoolConversionError, match=pattern):
        mlax.jit(lambda x: x if x.sum() > 0 else -x)(np.ones(3, np.float32))


# ---- autodiff ----------------------------------------------------------------------------------


def _cond_fn(L):
    np_ = L.numpy
    return lambda x, y: L.lax.cond(np_.sum(x) > 0, lambda x, y: np_.sin(x) * y, lambda x, y: x * x - y, x, y)


def _switch_fn(L):
    np_ = L.numpy
    branches = [lambda x, y: np_.sin(x) * y, lambda x, y: x * x - y, lambda x, y: np_.exp(x) + y * y]
    return lambda x, y: L.lax.switch(np_.argmax(y) % 4, branches, x, y)


def _scan_fn(L):
    np_ = L.numpy

    def f(x, y):
        step = lambda c, v: (np_.tanh(c * v + y), np_.sin(c) * v)  # noqa: E731
        carry, ys = L.lax.scan(step, x, np_.stack([y, x, y * 2]))
        return carry + np_.sum(ys, axis=0)
    return f


def _fori_fn(L):
    return lambda x, y: L.lax.fori_loop(1, 4, lambda i, c: L.numpy.sin(c) * y + i, x)


def _while_fn(L):
    np_ = L.numpy
    body = lambda y: lambda c: (c[0] + 1, np_.sin(c[1]) * y)  # noqa: E731
    return lambda x, y: L.lax.while_loop(lambda c: c[0] < 3, body(y), (0, x))[1]


def _map_fn(L):
    np_ = L.numpy
    return lambda x, y: L.lax.map(lambda r: np_.cos(r[0]) * r[1], np_.stack([x, y], axis=1))


def _traced_fori_fn(L):
    loop = lambda n, x, y: L.lax.fori_loop(0, n, lambda i, c: L.numpy.sin(c) * y, x)  # noqa: E731
    return lambda x, y: L.jit(loop)(3, x, y)


JVP_CASES = [_cond_fn, _switch_fn, _scan_fn, _fori_fn, _while_fn, _map_fn, _traced_fori_fn]
GRAD_CASES = [_cond_fn, _switch_fn, _scan_fn, _fori_fn, _map_fn]


@pytest.mark.parametrize("make", JVP_CASES, ids=lambda m: m.__name__.strip("_"))
def test_jvp(rng: np.random.Generator, backend, make: Make) -> None:
    primals = (f32(rng, 4), f32(rng, 4))
    tangents = (f32(rng, 4), f32(rng, 4))
    for x in (primals[0], -primals[0]):  # both sides of the data-dependent branches
        got = mlax.jvp(make(mlax), (x, primals[1]), tangents)
        want = jax.jit(lambda p, t: jax.jvp(make(jax), p, t))((x, primals[1]), tangents)
        assert_same(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("make", GRAD_CASES, ids=lambda m: m.__name__.strip("_"))
def test_grad_and_vjp(rng: np.random.Generator, backend, make: Make) -> None:
    x, y, ct = f32(rng, 4), f32(rng, 4), f32(rng, 4)
    loss = lambda L: lambda x, y: L.numpy.sum(make(L)(x, y) ** 2)  # noqa: E731
    ours = mlax.jit(mlax.grad(loss(mlax), argnums=(0, 1)))
    theirs = jax.jit(jax.grad(loss(jax), argnums=(0, 1)))
    for sign in (1, -1):
        assert_same(ours(sign * x, y), theirs(sign * x, y), rtol=1e-4, atol=1e-5)
    out, pull = mlax.vjp(make(mlax), x, y)
    jout, jct = jax.jit(lambda x, y, ct: (lambda o, p: (o, p(ct)))(*jax.vjp(make(jax), x, y)))(x, y, ct)
    assert_same(out, jout, rtol=2e-5, atol=1e-6)
    assert_same(pull(ct), jct, rtol=1e-4, atol=1e-5)


def test_grad_of_scan_of_cond_and_grad_of_grad(rng: np.random.Generator) -> None:
    xs, w = f32(rng, 5), np.float32(0.7)

    def scan_of_cond(L):
        np_ = L.numpy

        def loss(w, xs):
            step = lambda c, x: (L.lax.cond(x > 0, lambda c: np_.sin(c * w) + x, lambda c: c * x - w, c), c)  # noqa: E731
            c, ys = L.lax.scan(step, w, xs)
            return c + np_.sum(ys * ys)
        return loss

    want = jax.jit(jax.grad(scan_of_cond(jax), argnums=(0, 1)))(w, xs)
    assert_same(mlax.grad(scan_of_cond(mlax), argnums=(0, 1))(w, xs), want, rtol=1e-4, atol=1e-5)
    g2 = lambda L: L.jit(L.grad(L.grad(scan_of_cond(L))))  # noqa: E731
    assert_same(g2(mlax)(w, xs), g2(jax)(w, xs), rtol=1e-4, atol=1e-5)


def test_hessian_through_reverse_scan_cond_and_fori(rng: np.random.Generator) -> None:
    """jacfwd of jacrev: forward mode over the transposed (reverse) scan and cond."""
    x, w = f32(rng, 4, 3), f32(rng, 3)

    def make(L):
        np_ = L.numpy

        def loss(w, x):
            def step(c, xi):
                c2 = L.lax.cond(xi.sum() > 0, lambda a: np_.sin(a * w), lambda a: np_.cos(a) + w, c + xi)
                return c2, L.lax.fori_loop(0, 3, lambda i, v: v * w.sum() + i, c2.sum())
            c, ys = L.lax.scan(step, np_.ones(3, np.float32), x, reverse=True)
            return np_.sum(ys) + np_.sum(c * c)
        return L.jit(L.hessian(loss))

    assert_same(make(mlax)(w, x), make(jax)(w, x), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("backend", ["cpu", "interpreter"], indirect=True)
def test_grad_of_switch_in_scan(backend) -> None:
    x, w, steps = np.float32([0.5, -1.0]), np.float32([1.5, 0.3]), np.int32([0, 1, 2, 1, 1, 0])

    def loss(L):
        np_ = L.numpy

        def f(x, w):
            branches = [lambda v: np_.sin(v) + w, lambda v: v * w, lambda v: v - 1.0]
            c, _ = L.lax.scan(lambda c, i: (L.lax.switch(i, branches, c), None), x, steps)
            return np_.sum(c)
        return L.jit(L.grad(f, argnums=(0, 1)))

    assert_same(loss(mlax)(x, w), loss(jax)(x, w), rtol=1e-4, atol=1e-5)


def test_grad_of_scan_matches_finite_differences(rng: np.random.Generator, x64) -> None:
    x, xs = random_array(rng, (3,), np.float64), random_array(rng, (6, 3), np.float64)
    w = random_array(rng, (3, 3), np.float64) * 0.5

    def f(x):
        c, ys = mlax.lax.scan(lambda c, v: (mnp.tanh(c @ w + v), mnp.sin(c) * v), x, xs, reverse=True)
        return mnp.sum(c) + mnp.sum(ys ** 2)

    g = np.asarray(mlax.grad(f)(x))
    assert g.dtype == np.float64
    eps = 1e-6
    fd = [(float(f(x + eps * e)) - float(f(x - eps * e))) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_grad_of_while_loop_is_an_error() -> None:
    pattern = r"Reverse-mode differentiation does not work for .*while_loop.*fori_loop.*scan"
    for L in (jax, mlax):
        loop = lambda x, L=L: L.lax.while_loop(lambda c: c < 3, lambda c: c * 2, x)  # noqa: E731
        with pytest.raises(ValueError, match=pattern):
            L.grad(loop)(1.0)
        fori = lambda x, n, L=L: L.lax.fori_loop(0, n, lambda i, c: c * 2, x)  # noqa: E731
        with pytest.raises(ValueError, match=pattern):
            L.jit(lambda x, n, L=L, fori=fori: L.grad(fori)(x, n))(1.0, 3)


# ---- batching ----------------------------------------------------------------------------------


def test_vmap(rng: np.random.Generator) -> None:
    x, y = f32(rng, 5, 4), f32(rng, 5, 4)
    for make in (_cond_fn, _switch_fn, _while_fn, _traced_fori_fn):
        assert_same(mlax.vmap(make(mlax))(x, y), jax.vmap(make(jax))(x, y), rtol=2e-5, atol=1e-6)
    axes = (0, None)
    assert_same(mlax.vmap(_scan_fn(mlax), axes)(x, y[0]), jax.vmap(_scan_fn(jax), axes)(x, y[0]),
                rtol=2e-5, atol=1e-6)
    # Per-example trip counts: the batched loop runs until every example is done.
    starts = np.array([1, 2, 7, 27, 9], np.int32)
    assert_same(mlax.vmap(_collatz(mlax), (0, 0, None))(starts, x, np.int32(1000)),
                jax.vmap(_collatz(jax), (0, 0, None))(starts, x, np.int32(1000)), rtol=2e-5, atol=1e-6)


def test_scan_inside_cond_inside_vmap(rng: np.random.Generator) -> None:
    x, xs = f32(rng, 6, 3), f32(rng, 4, 3)

    def make(L):
        np_ = L.numpy
        scan = lambda c: L.lax.scan(lambda c, v: (np_.tanh(c + v), c * v), c, xs)  # noqa: E731
        return lambda x: L.lax.cond(np_.sum(x) > 0, scan, lambda c: (c * 2, np_.zeros_like(xs)), x)

    assert_same(mlax.vmap(make(mlax))(x), jax.vmap(make(jax))(x), rtol=2e-5, atol=1e-6)


def test_jit_of_vmap_of_grad_of_scan(rng: np.random.Generator) -> None:
    w, xs = f32(rng, 3, 3) * 0.5, f32(rng, 8, 5, 3)  # 8 examples of 5 steps

    def make(L):
        np_ = L.numpy

        def loss(w, xs):
            h, _ = L.lax.scan(lambda h, x: (np_.tanh(h @ w + x), None), np_.zeros(3, np.float32), xs)
            return np_.sum(h ** 2)
        return L.jit(L.vmap(L.grad(loss), in_axes=(None, 0)))

    assert_same(make(mlax)(w, xs), make(jax)(w, xs), rtol=1e-4, atol=1e-5)
