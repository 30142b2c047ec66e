"""Mutable array references (``new_ref``, ``Ref``, ``freeze``, ``jax.ref``) against jax 0.10.2:
eagerly, under jit (passed and closed over), in scan / fori_loop / while_loop / cond / switch,
under vmap and grad: results, the refs' contents after the calls, reprs and jax's errors.

Each case is written once as ``make(L)`` for ``L`` in (mlax, jax); a case returns what it
computed and the contents of its refs (``L.freeze``), compared with assert_same.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
import pytest

import mlax
import mlax.refs
from tests.oracle import assert_same

Make = Callable[[Any], Callable[..., Any]]


def both(make: Make, *args: Any) -> None:
    """``make(mlax)(*args)`` against ``make(jax)(*args)``, values and dtypes."""
    assert_same(make(mlax)(*args), make(jax)(*args), 2e-5, 1e-6)


def raises_like(make: Make, *args: Any, message: bool = False) -> None:
    """``make(L)(*args)`` raises the same exception type with mlax as with jax (and the same
    text, with ``message``)."""
    with pytest.raises(BaseException) as theirs:
        make(jax)(*args)
    with pytest.raises(BaseException) as ours:
        make(mlax)(*args)
    assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)
    if message:
        assert str(ours.value).split("\n  argument:")[0] == str(theirs.value)


@pytest.fixture(autouse=True)
def no_refs_left() -> Any:
    """Every test's refs die with it: while a ref lives, jit and control flow take their ref-aware
    paths, which other test files should not see."""
    yield
    gc.collect()
    assert not mlax.refs.any_alive()


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20260)


def f32(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------- eager


@pytest.mark.parametrize("value", [0, 1.5, np.float32(2.0), np.arange(6, dtype=np.int32).reshape(2, 3),
                                   np.array([True, False]), np.float32([[0.25, -1.0]])])
def test_repr_and_type(value: Any) -> None:
    for L in (mlax, jax):
        assert isinstance(L.new_ref(value), L.Ref)
    ours, theirs = mlax.new_ref(value), jax.new_ref(value)
    assert repr(ours) == repr(theirs)
    assert str(ours) == str(theirs)
    for name in ("shape", "dtype", "ndim", "size"):
        assert getattr(ours, name) == getattr(theirs, name)
    assert str(ours.aval) == str(theirs.aval) == str(jax.typeof(theirs))
    assert str(mlax.typeof(ours)) == str(jax.typeof(theirs))
    assert isinstance(ours.aval, jax.ref.AbstractRef)
    assert not isinstance(ours, mlax.Array)
    assert_same(ours[...], theirs[...])
    assert_same(mlax.freeze(mlax.new_ref(value)), jax.freeze(jax.new_ref(value)))


def test_indexed_reads_and_writes(rng: np.random.Generator) -> None:
    x = f32(rng, 3, 4)
    i, j = rng.integers(0, 3, 3), rng.integers(0, 4, 3)

    def make(L: Any) -> Callable[..., Any]:
        def run(x: Any) -> Any:
            ref = L.new_ref(L.numpy.asarray(x))
            row = ref[0]
            ref[1] = row
            val = ref[1, 2]
            ref[2, 3] = val
            col = ref[:, 1]
            ref[0, :3] = col
            vals = ref[L.numpy.asarray(i), L.numpy.asarray(j)]
            ref[L.numpy.asarray(i), 0] = vals
            ref[1:, ::2] += 2.0
            ref[...] = ref[...] * 0.5
            old = L.ref.swap(ref, (0, 1), 7.0)
            L.ref.addupdate(ref, 2, L.numpy.ones(4, L.numpy.float32))
            L.ref.set(ref, (slice(None), 3), L.numpy.zeros(3, L.numpy.float32))
            ref.addupdate(L.numpy.ones((3, 4), L.numpy.float32))
            return row, val, col, vals, old, L.ref.get(ref, (1, slice(1, 3))), L.freeze(ref)
        return run

    both(make, x)


def test_weak_types_and_writes() -> None:
    def make(L: Any) -> Callable[..., Any]:
        def run() -> Any:
            a = L.new_ref(0.0)
            before = (repr(a), a[...])
            a[...] = 5.0
            b = L.new_ref(0)
            b[...] += 3
            return before, repr(a), a[...], repr(b), b[...]
        return run

    ours, theirs = make(mlax)(), make(jax)()
    assert ours[0][0] == theirs[0][0] and ours[1] == theirs[1] and ours[3] == theirs[3]
    assert_same(ours[0][1], theirs[0][1])
    assert_same(ours[2], theirs[2])
    assert_same(ours[4], theirs[4])


@pytest.mark.parametrize("case", ["int_into_float", "shape", "broadcast", "out_of_bounds", "ref_into_ref",
                                  "math", "add", "len_scalar", "at"])
def test_eager_errors(case: str) -> None:
    def make(L: Any) -> Callable[..., Any]:
        def run() -> Any:
            ref = L.new_ref(L.numpy.zeros(3, L.numpy.float32))
            if case == "int_into_float":
                ref[0] = L.numpy.int32(3)
            elif case == "shape":
                ref[...] = L.numpy.ones(4, L.numpy.float32)
            elif case == "broadcast":
                ref[...] = 1.0
            elif case == "out_of_bounds":
                return ref[5]
            elif case == "ref_into_ref":
                ref[...] = L.new_ref(L.numpy.ones(3, L.numpy.float32))
            elif case == "math":
                return L.numpy.sin(ref)
            elif case == "add":
                return ref + 1
            elif case == "len_scalar":
                return len(L.new_ref(1.0))
            elif case == "at":
                return ref.at
            return None
        return run

    raises_like(make, message=case in ("int_into_float", "shape", "broadcast", "out_of_bounds",
                                       "ref_into_ref"))


# ---------------------------------------------------------------- jit


def test_jit_closed_over_accumulates(rng: np.random.Generator) -> None:
    xs = [f32(rng, 3) for _ in range(3)]

    def make(L: Any) -> Callable[..., Any]:
        def run() -> Any:
            ref = L.new_ref(L.numpy.zeros(3))

            @L.jit
            def f(x: Any) -> Any:
                ref[1] += x[1]
                ref[...] = ref[...] + x
                return ref[...].sum()

            outs = [f(x) for x in xs]
            return outs, L.freeze(ref)
        return run

    both(make)


def test_jit_ref_arguments(rng: np.random.Generator) -> None:
    x, y, z = f32(rng, 4), f32(rng, 2, 3), f32(rng, 4)

    def make(L: Any) -> Callable[..., Any]:
        def run() -> Any:
            @L.jit
            def f(a: Any, refs: dict[str, Any], k: Any) -> Any:
                refs["p"][...] = L.numpy.sin(refs["p"][...]) + a
                refs["q"][0] *= 2.0
                return refs["p"][...] * k, refs["q"][...].sum()

            p, q = L.new_ref(L.numpy.asarray(x)), L.new_ref(L.numpy.asarray(y))
            first = f(z, {"p": p, "q": q}, 3.0)
            p2 = L.new_ref(L.numpy.asarray(z))  # same signature: the cached program, another ref
            second = f(x, {"p": p2, "q": q}, 2.0)
            return first, second, L.freeze(p), L.freeze(p2), L.freeze(q)
        return run

    both(make)


@pytest.mark.parametrize("backend", ["cpu", "xla", "interpreter"])
def test_jit_backends(rng: np.random.Generator, backend: str) -> None:
    xs = f32(rng, 4, 3)

    def make(L: Any) -> Callable[..., Any]:
        def run(xs: Any) -> Any:
            r = L.new_ref(L.numpy.zeros(3))
            q = L.new_ref(L.numpy.zeros(2))

            def g(x: Any, q: Any) -> Any:
                def body(c: Any, v: Any) -> Any:
                    r[...] += v
                    q[0] += 1.0
                    return c + q[0], v * 2
                return L.lax.scan(body, 0.0, x)

            jitted = L.jit(g, backend=backend) if L is mlax else L.jit(g)
            return jitted(xs, q), jitted(xs, q), L.freeze(r), L.freeze(q)
        return run

    both(make, xs)


def test_jit_pure_with_internal_refs_and_grad(rng: np.random.Generator) -> None:
    x = f32(rng, 5)

    def make(L: Any) -> Callable[..., Any]:
        @L.jit
        def pure(x: Any) -> Any:
            ref = L.new_ref(x)
            ref[...] = ref[...] * L.numpy.cos(ref[...])
            ref[1:] += ref[:-1]
            return L.numpy.sum(L.freeze(ref) ** 2)

        def run(x: Any) -> Any:
            return pure(x), L.grad(pure)(x), L.grad(lambda x: pure(x) * 2.0)(x)
        return run

    both(make, x)


def test_jit_does_not_read_stale_values() -> None:
    def make(L: Any) -> Callable[..., Any]:
        def run() -> Any:
            ref = L.new_ref(L.numpy.arange(3.0))
            f = L.jit(lambda: ref[...] * 2)
            first = f()
            ref[...] = L.numpy.ones(3)
            return first, f()
        return run

    both(make)


@pytest.mark.parametrize("case", ["return_arg", "return_new", "twice", "closed_and_passed"])
def test_jit_errors(case: str) -> None:
    def make(L: Any) -> Callable[..., Any]:
        x_ref = L.new_ref(0.0)

        def run() -> Any:
            if case == "return_arg":
                return L.jit(lambda r: r)(x_ref)
            if case == "return_new":
                return L.jit(lambda: L.new_ref(1.0))()
            if case == "twice":
                return L.jit(lambda a, b: None)(x_ref, x_ref)

            def err3(y_ref: Any) -> None:
                y_ref[...] = x_ref[...]
            return L.jit(err3)(x_ref)
        return run

    raises_like(make, message=case != "return_new")


# ---------------------------------------------------------------- loops and cond


@pytest.mark.parametrize("jitted", [False, True])
def test_loops_write_closed_over_refs(rng: np.random.Generator, jitted: bool) -> None:
    xs, w = f32(rng, 6, 2), f32(rng, 2)

    def make(L: Any) -> Callable[..., Any]:
        lax, jnp = L.lax, L.numpy

        def run(xs: Any, w: Any) -> Any:
            acc = L.new_ref(jnp.zeros(2))
            count = L.new_ref(0)
            hist = L.new_ref(jnp.zeros(6))

            def program(xs: Any, w: Any) -> Any:
                def body(c: Any, x: Any) -> Any:
                    acc[...] += x * w
                    count[...] += 1
                    return c + acc[0], acc[1]

                carry, ys = lax.scan(body, 0.0, xs)

                def step(i: Any, v: Any) -> Any:
                    hist[i] = v + acc[0]
                    return v * 0.5

                v = lax.fori_loop(0, 6, step, 1.0)

                def wbody(c: Any) -> Any:
                    acc[0] = acc[0] - 1.0
                    return c + 1

                n = lax.while_loop(lambda c: c < 3, wbody, 0)
                lax.cond(carry > 0, lambda: acc.__setitem__(1, 100.0), lambda: None)
                times10 = lambda: count.__setitem__(..., count[...] * 10)  # noqa: E731
                lax.switch(n - 1, [lambda: None, lambda: None, times10])
                return carry, ys, v, n

            out = (L.jit(program) if jitted else program)(xs, w)
            return out, L.freeze(acc), L.freeze(count), L.freeze(hist)
        return run

    both(make, xs, w)


def test_nested_loops_and_foreach() -> None:
    def make(L: Any) -> Callable[..., Any]:
        lax, jnp = L.lax, L.numpy

        def run() -> Any:
            r = L.new_ref(0)
            grid = L.new_ref(jnp.zeros((3, 4), jnp.int32))

            def outer(i: Any, c: Any) -> Any:
                def inner(j: Any, c: Any) -> Any:
                    grid[i, j] = i * 10 + j + r[...]
                    r[...] += 1
                    return c
                return lax.fori_loop(0, 4, inner, c)

            lax.fori_loop(0, 3, outer, 0)

            def foreach(*args: Any) -> Any:
                def decorator(body: Any) -> Any:
                    return lax.scan(lambda _, elts: (None, body(*elts)), None, args)[1]
                return decorator

            @foreach(jnp.arange(10))
            def ys(x: Any) -> Any:
                r[...] += x
                return x * 2

            return ys, L.freeze(r), L.freeze(grid), repr(r)
        return run

    ours, theirs = make(mlax)(), make(jax)()
    assert_same(ours[:3], theirs[:3])
    assert ours[3] == theirs[3]


@pytest.mark.parametrize("case", ["scan_y", "scan_carry", "while_carry", "fori_carry"])
def test_loop_body_returning_a_ref(case: str) -> None:
    def make(L: Any) -> Callable[..., Any]:
        def run() -> Any:
            z = L.new_ref(L.numpy.zeros(3))
            if case == "scan_y":
                return L.lax.scan(lambda c, x: (c, z), 0.0, L.numpy.arange(4.0))
            if case == "scan_carry":
                return L.lax.scan(lambda c, x: (c, x), z, L.numpy.arange(3))
            if case == "while_carry":
                return L.lax.while_loop(lambda q: False, lambda q: q, z)
            return L.lax.fori_loop(0, 3, lambda i, q: q, z)
        return run

    raises_like(make)


@pytest.mark.parametrize("jitted", [False, True])
def test_refs_as_cond_operands(rng: np.random.Generator, jitted: bool) -> None:
    x = f32(rng, 3)

    def make(L: Any) -> Callable[..., Any]:
        def run(x: Any) -> Any:
            r = L.new_ref(L.numpy.asarray(x))

            def program(r: Any, x: Any) -> Any:
                a = L.lax.cond(x[0] > 0, lambda q, v: q.__setitem__(0, v[1]), lambda q, v: None, r, x)
                L.lax.switch(1, [lambda q: None, lambda q: q.__setitem__(1, q[2] * 2)], r)
                return a

            (L.jit(program) if jitted else program)(r, x)
            return L.freeze(r)
        return run

    both(make, x)


# ---------------------------------------------------------------- vmap


def test_vmap_ref_arguments(rng: np.random.Generator) -> None:
    vecs = f32(rng, 3, 4)

    def make(L: Any) -> Callable[..., Any]:
        jnp = L.numpy

        def run(vecs: Any) -> Any:
            def dist(x: Any, y: Any, out_ref: Any) -> None:
                assert x.ndim == y.ndim == 1
                assert out_ref.ndim == 0
                out_ref[...] = jnp.sum((x - y) ** 2)

            out_ref = L.new_ref(jnp.zeros((3, 3)))
            L.vmap(L.vmap(dist, (0, None, 0)), (None, 0, 0))(vecs, vecs, out_ref)

            def scale(x: Any, r: Any) -> Any:
                r[...] += x
                return r[0] * 2

            cols = L.new_ref(jnp.ones((3, 4)))  # (jax 0.10.2 mixes up a ref's axes for in_axes 1)
            ys = L.vmap(scale, (0, 0))(vecs, cols)
            shared = L.new_ref(jnp.float32(3.0))
            zs = L.vmap(lambda x, r: x * r[...], (0, None))(vecs, shared)
            closed = L.vmap(lambda x: x * shared[...])(vecs)
            return L.freeze(out_ref), ys, L.freeze(cols), zs, closed
        return run

    both(make, vecs)


@pytest.mark.parametrize("case", ["closed", "unmapped_arg"])
def test_vmap_errors(case: str) -> None:
    def make(L: Any) -> Callable[..., Any]:
        x_ref = L.new_ref(0.0)

        def run() -> Any:
            if case == "closed":
                def err5(x: Any) -> None:
                    x_ref[...] = x
                return L.vmap(err5)(L.numpy.arange(3.0))
            return L.vmap(lambda x, r: r.__setitem__(..., x), (0, None))(L.numpy.arange(3.0), x_ref)
        return run

    raises_like(make, message=True)


# ---------------------------------------------------------------- grad


@pytest.mark.parametrize("case", ["closed", "argument", "jitted"])
def test_grad_refused_writes(case: str) -> None:
    def make(L: Any) -> Callable[..., Any]:
        y = L.new_ref(0.0)

        def run() -> Any:
            def clos(x: Any) -> Any:
                y[...] += x
                return x * x

            def err6(x: Any, ref: Any) -> Any:
                ref[...] += x + x
                return x

            if case == "argument":
                return L.grad(err6)(1.0, y)
            return (L.jit(L.grad(clos)) if case == "jitted" else L.grad(clos))(3.0)
        return run

    raises_like(make, message=True)


@pytest.mark.parametrize("jitted", [False, True])
def test_grad_plumbing_refs(rng: np.random.Generator, jitted: bool) -> None:
    x, v = f32(rng, 3), f32(rng, 3)

    def make(L: Any) -> Callable[..., Any]:
        lax, jnp = L.lax, L.numpy

        def run(x: Any, v: Any) -> Any:
            plumb = L.new_ref(jnp.zeros(3))
            closed = L.new_ref(jnp.asarray(v))
            count = L.new_ref(0)

            def foo(x: Any, some_plumbing_ref: Any) -> Any:
                y = jnp.sin(x) * closed[...]
                some_plumbing_ref[...] += lax.stop_gradient(y)
                closed[...] = closed[...] * 2.0
                count[...] += 1
                return jnp.sum(y * y)

            g = L.grad(foo)
            vg = L.value_and_grad(lambda x, r: (foo(x, r), x * 2), has_aux=True)
            if jitted:
                g, vg = L.jit(g), L.jit(vg)
            return g(x, plumb), vg(x, plumb), L.freeze(plumb), L.freeze(closed), L.freeze(count)
        return run

    both(make, x, v)


@pytest.mark.parametrize("case", ["closed", "argument", "jitted"])
def test_python_control_flow_on_ref_values(case: str) -> None:
    """Eager grad knows a ref's value (jax's eager refs are concrete); under jit it is traced."""
    def make(L: Any) -> Callable[..., Any]:
        r = L.new_ref(2.0)

        def run(x: Any) -> Any:
            if case == "closed":
                return L.grad(lambda x: x * 3 if r[...] > 0 else x)(x)
            if case == "argument":
                return L.grad(lambda x, q: x * 3 if q[...] > 0 else x)(x, r)
            return L.jit(lambda x: x * 3 if r[...] > 0 else x)(x)
        return run

    if case == "jitted":
        raises_like(make, 1.0)
    else:
        both(make, 1.0)


def test_closed_over_refs_trace_once_per_signature(rng: np.random.Generator) -> None:
    xs = [f32(rng, 3) for _ in range(4)]
    traces = []
    refs = [mlax.new_ref(mlax.numpy.zeros(3)) for _ in range(5)]

    @mlax.jit
    def f(x: Any) -> Any:
        traces.append(1)
        for i, r in enumerate(refs):
            r[...] += x * i
        return sum(r[0] for r in refs)

    outs = [f(x) for x in xs]
    first = len(traces)
    assert first <= 2  # one trace that finds the five refs, one that takes them as inputs
    outs += [f(x) for x in xs]
    assert len(traces) == first
    total = np.sum(xs, axis=0) * 2
    for i, r in enumerate(refs):
        np.testing.assert_allclose(np.asarray(mlax.freeze(r)), total * i, rtol=1e-5, atol=1e-5)
    assert len(outs) == 8


def test_grad_reads_closed_over_ref(rng: np.random.Generator) -> None:
    x = f32(rng, 3)

    def make(L: Any) -> Callable[..., Any]:
        def run(x: Any) -> Any:
            w = L.new_ref(L.numpy.asarray(x) + 1)
            return L.grad(lambda x: L.numpy.sum(L.numpy.sin(x) * w[...]))(x)
        return run

    both(make, x)


def test_install_as_jax_names() -> None:
    import jax.ref as real_ref

    import mlax.ref

    assert set(real_ref.__all__) <= set(dir(mlax.ref))
    for name in ("new_ref", "Ref", "freeze", "empty_ref", "free_ref"):
        assert hasattr(mlax, name)


_PAGE_EXAMPLE = """
import jax
import jax.numpy as jnp
x_ref = jax.new_ref(jnp.zeros(3))

@jax.jit
def f():
    x_ref[1] += 1.

f(); f()
print(x_ref, isinstance(x_ref, jax.Ref), jax.typeof(x_ref), type(jax.typeof(x_ref)).__name__)
r = jax.ref.new_ref(jnp.arange(5))
print(jax.ref.swap(r, 3, 10), jax.ref.get(r, 1), jax.ref.freeze(r))
"""


def test_under_install_as_jax() -> None:
    """The page's first example, with ``import jax`` giving mlax (jax.Ref, jax.ref redirected)."""
    import subprocess
    import sys

    def run(prefix: str) -> str:
        done = subprocess.run([sys.executable, "-c", prefix + _PAGE_EXAMPLE], capture_output=True, text=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    assert run("import mlax; mlax.install_as_jax()\n") == run("")


def test_eval_shape_changes_no_ref() -> None:
    def make(L: Any) -> Callable[..., Any]:
        def run() -> Any:
            z = L.new_ref(L.numpy.arange(3.0))

            def f(x: Any) -> Any:
                z[...] += x
                return z[...] * 2

            shape = L.eval_shape(f, L.numpy.ones(3))
            inside = L.jit(lambda x: L.numpy.zeros(L.eval_shape(f, x).shape))(L.numpy.ones(3))
            return (shape.shape, str(shape.dtype)), inside, L.freeze(z)
        return run

    both(make)


# ---------------------------------------------------------------- ahead-of-time stages


def test_trace_and_lower_with_refs_passed_and_closed_over(rng: np.random.Generator) -> None:
    """``jit(f).trace`` / ``.lower`` of a function writing a ref it closes over and one passed:
    the stages exist (their program takes the refs' values) and leave the refs as they were;
    compiled and called, the result is jax's."""
    init, passed, x = f32(rng, 3), f32(rng, 3), float(rng.standard_normal())

    def make(L: Any) -> Callable[..., Any]:
        def run() -> Any:
            closed = L.new_ref(init)
            arg = L.new_ref(passed)

            def f(ref: Any, v: Any) -> Any:
                closed[...] += v
                ref[...] = ref[...] * v
                return closed[...].sum() + ref[...].sum()

            jitted = L.jit(f)
            traced = jitted.trace(arg, x)
            lowered = jitted.lower(arg, x)
            assert "func" in lowered.as_text() and traced.jaxpr is not None
            shape = jitted.eval_shape(arg, x)
            assert (shape.shape, shape.dtype) == ((), np.float32)
            untouched = (L.freeze(closed), L.freeze(arg))
            return untouched, jitted(arg, x), L.freeze(closed), L.freeze(arg)
        return run

    both(make)
