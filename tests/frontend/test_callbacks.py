"""Host callbacks (mlax.pure_callback, mlax.debug.callback / print / breakpoint) on every backend,
against jax running the same programs: values, call counts and arguments, order, errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import io_callback as jax_io_callback

import mlax
import mlax.numpy as mnp
from mlax.backends.native.host_callbacks import CallbackError
from tests.oracle import random_array


def _rounded(value):
    """A callback argument as a list, floats to 4 decimals (the backends round differently)."""
    array = np.asarray(value)
    return (np.round(array.astype(np.float64), 4) if array.dtype.kind == "f" else array).tolist()


def _recorder(calls: list, tag: str):
    def record(*args, **kwargs):
        calls.append(
            (
                tag,
                tuple(_rounded(a) for a in args),
                tuple(sorted((k, _rounded(v)) for k, v in kwargs.items())),
            )
        )

    return record


def _both(build, *args, multiset: bool = False, **kwargs):
    """Run ``build(lib, calls)`` with jax and with mlax (under the current default backend);
    returns both (result, calls) pairs."""
    out = []
    for lib in (jax, mlax):
        calls: list = []
        result = build(lib, calls)(*args, **kwargs)
        out.append((result, sorted(calls) if multiset else calls))
    return out


def _program(lib, calls):
    """Debug callbacks in straight-line code, a scan, a cond and a while loop."""

    def f(x):
        lib.debug.callback(_recorder(calls, "a"), x)
        lib.debug.callback(_recorder(calls, "b"), x * 2, k=x[0])

        def body(c, xi):
            lib.debug.callback(_recorder(calls, "s"), c, xi)
            return c + xi * xi, c

        c, _ = lib.lax.scan(body, 0.0, x)
        lib.lax.cond(
            c > 1,
            lambda v: lib.debug.callback(_recorder(calls, "t"), v),
            lambda v: lib.debug.callback(_recorder(calls, "f"), v),
            c,
        )
        lib.lax.while_loop(
            lambda i: i < 2, lambda i: (lib.debug.callback(_recorder(calls, "w"), i), i + 1)[1], 0
        )
        return c

    return f


def test_debug_callback_eager_runs_now() -> None:
    calls: list = []
    x = random_array(np.random.default_rng(1), (3,), np.float32)
    assert mlax.debug.callback(_recorder(calls, "e"), x, k=2) is None
    assert calls == [("e", (_rounded(x),), (("k", 2),))]


def test_debug_callbacks_jit_values_and_order(backend: str) -> None:
    x = random_array(np.random.default_rng(2), (4,), np.float32)
    (j_out, j_calls), (m_out, m_calls) = _both(lambda lib, calls: lib.jit(_program(lib, calls)), x)
    np.testing.assert_allclose(m_out, j_out, rtol=1e-6)
    # jax's unordered callbacks may run out of program order (XLA reorders them); mlax runs them in
    # program order on the interpreter and CPU.
    assert sorted(m_calls) == sorted(j_calls)
    if backend != "xla":
        tags = [c[0] for c in m_calls]
        assert tags == ["a", "b", "s", "s", "s", "s", "t" if j_out > 1 else "f", "w", "w"]


def test_debug_callbacks_several_in_program_order(backend: str) -> None:
    x = random_array(np.random.default_rng(3), (2, 3), np.float32)

    def build(lib, calls):
        def f(x):
            for i in range(6):
                lib.debug.callback(_recorder(calls, str(i)), x * i, ordered=True)
            return x

        return lib.jit(f)

    (_, j_calls), (_, m_calls) = _both(build, x)
    assert m_calls == j_calls


def test_debug_callbacks_under_grad(backend: str) -> None:
    x = random_array(np.random.default_rng(4), (4,), np.float32)
    (j_g, j_calls), (m_g, m_calls) = _both(lambda lib, calls: lib.jit(lib.grad(_program(lib, calls))), x)
    np.testing.assert_allclose(m_g, j_g, rtol=1e-5)
    assert sorted(m_calls) == sorted(j_calls)  # once each, with the primal values


def test_debug_callbacks_under_jvp(backend: str) -> None:
    x, t = (
        random_array(np.random.default_rng(5), (3,), np.float32),
        random_array(np.random.default_rng(6), (3,), np.float32),
    )

    def build(lib, calls):
        def f(x):
            lib.debug.callback(_recorder(calls, "p"), x)
            return lib.numpy.sin(x)

        return lambda x, t: lib.jvp(f, (x,), (t,))

    (j_out, j_calls), (m_out, m_calls) = _both(build, x, t)
    np.testing.assert_allclose(m_out[1], j_out[1], rtol=1e-5)
    assert m_calls == j_calls


def test_debug_callbacks_under_vmap(backend: str) -> None:
    xs = random_array(np.random.default_rng(7), (2, 3), np.float32)
    (j_out, j_calls), (m_out, m_calls) = _both(lambda lib, calls: lib.jit(lib.vmap(_program(lib, calls))), xs)
    np.testing.assert_allclose(m_out, j_out, rtol=1e-6)
    assert sorted(m_calls) == sorted(j_calls)  # once per batch element


def test_debug_callback_under_vmap_unbatched_operand_called_once(backend: str) -> None:
    xs, y = (
        random_array(np.random.default_rng(8), (3, 2), np.float32),
        random_array(np.random.default_rng(9), (2,), np.float32),
    )

    def build(lib, calls):
        def f(x, y):
            lib.debug.callback(_recorder(calls, "u"), y)
            lib.debug.callback(_recorder(calls, "m"), x, y)
            return x + y

        return lib.jit(lib.vmap(f, in_axes=(0, None)))

    (_, j_calls), (_, m_calls) = _both(build, xs, y)
    assert m_calls == j_calls


def _pure(lib, shape, dtype, method=None):
    def f(x, y):
        out = lib.ShapeDtypeStruct(shape, dtype)
        return lib.pure_callback(
            lambda a, b: (np.sin(np.asarray(a)) * np.asarray(b)).astype(dtype), out, x, y, vmap_method=method
        )

    return f


def test_pure_callback_values(backend: str) -> None:
    x, y = (
        random_array(np.random.default_rng(10), (2, 3), np.float32),
        random_array(np.random.default_rng(11), (2, 3), np.float32),
    )
    want = jax.jit(_pure(jax, (2, 3), np.float32))(x, y)
    got = mlax.jit(_pure(mlax, (2, 3), np.float32))(x, y)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(_pure(mlax, (2, 3), np.float32)(x, y), want, rtol=1e-6)  # eager


def test_pure_callback_pytrees_kwargs_and_dtypes(backend: str) -> None:
    x = random_array(np.random.default_rng(12), (3,), np.float32)
    n = random_array(np.random.default_rng(13), (2,), np.int32)

    def build(lib):
        def f(x, n):
            spec = {"b": lib.ShapeDtypeStruct((3,), np.bool_), "i": lib.ShapeDtypeStruct((2,), np.int32)}
            return lib.pure_callback(
                lambda t, k: {"b": np.asarray(t["x"]) > k, "i": np.asarray(t["n"]) * 2},
                spec,
                {"x": x, "n": n},
                k=0.0,
            )

        return lib.jit(f)

    want, got = build(jax)(x, n), build(mlax)(x, n)
    for key in ("b", "i"):
        assert got[key].dtype == want[key].dtype
        np.testing.assert_array_equal(got[key], want[key])


def test_pure_callback_gets_arrays(backend: str) -> None:
    seen = []

    def f(x):
        return mlax.pure_callback(
            lambda a: (seen.append(type(a)), a)[1], mlax.ShapeDtypeStruct((2,), np.float32), x
        )

    mlax.jit(f)(np.ones(2, np.float32))
    assert seen == [mlax.Array]


def test_unused_pure_callback_is_dropped(backend: str) -> None:
    def build(lib, calls):
        def f(x):
            lib.pure_callback(lambda a: (calls.append(1), a)[1], lib.ShapeDtypeStruct((2,), np.float32), x)
            return x * 2

        return lib.jit(f)

    (_, j_calls), (_, m_calls) = _both(build, np.ones(2, np.float32))
    assert m_calls == j_calls == []


def test_unused_pure_callback_in_a_cond_in_a_nested_jit_is_dropped(backend: str) -> None:
    """jax's DCE drops a cond (in a nested jit) whose unused result only a pure callback
    computes, and keeps one whose branch prints (a debug callback is an effect)."""
    def build(lib, calls):
        def checked(x, p):
            return lib.lax.cond(p, lambda a: lib.pure_callback(lambda v: (calls.append("pure"), v)[1],
                                                             lib.ShapeDtypeStruct((2,), np.float32), a),
                                lambda a: a, x)

        def printed(x, p):
            return lib.lax.cond(p, lambda a: (lib.debug.callback(lambda v: calls.append("debug"), a), a)[1],
                                lambda a: a, x)

        def f(x, p):
            lib.jit(checked)(x, p)
            lib.jit(printed)(x, p)
            return x * 2

        return lib.jit(f)

    (_, j_calls), (_, m_calls) = _both(build, np.ones(2, np.float32), np.bool_(True))
    assert m_calls == j_calls == ["debug"]


@pytest.mark.parametrize(
    "method", ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized"]
)
def test_pure_callback_vmap_methods(backend: str, method: str) -> None:
    xs, y = (
        random_array(np.random.default_rng(14), (4, 3), np.float32),
        random_array(np.random.default_rng(15), (3,), np.float32),
    )

    def build(lib, calls):
        def cb(a, b):
            calls.append((np.shape(a), np.shape(b)))
            return np.asarray(a) + np.asarray(b)

        def f(a, b):
            return lib.pure_callback(cb, lib.ShapeDtypeStruct(a.shape, a.dtype), a, b, vmap_method=method)

        return lib.jit(lib.vmap(f, in_axes=(0, None)))

    (want, j_calls), (got, m_calls) = _both(build, xs, y)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert m_calls == j_calls


def test_pure_callback_vmap_without_method_is_an_error(backend: str) -> None:
    f = mlax.jit(mlax.vmap(_pure(mlax, (), np.float32)))
    x = random_array(np.random.default_rng(16), (3,), np.float32)
    with pytest.raises(NotImplementedError, match="vmap_method"):
        jax.jit(jax.vmap(_pure(jax, (), np.float32)))(x, x)
    # mlax batches in a compiler pass, so the error comes when the program is compiled, as the
    # ValueError of a failed pass.
    with pytest.raises(ValueError, match="Got vmap_method=None"):
        f(x, x)


def test_pure_callback_under_grad_is_an_error(backend: str) -> None:
    x = random_array(np.random.default_rng(17), (3,), np.float32)
    for lib in (jax, mlax):
        with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
            lib.jit(lib.grad(lambda x, lib=lib: _pure(lib, (3,), np.float32)(x, x).sum()))(x)


def test_a_callback_s_grad_error_comes_before_the_output_check() -> None:
    """jax differentiates before it checks grad's output: a callback on the differentiated input
    of a function with a non-scalar output is the callback's error; one on another argument
    leaves the output's TypeError."""
    rng = np.random.default_rng(19)
    x = random_array(rng, (int(rng.integers(2, 6)),), np.float32)
    for lib, io_callback in ((jax, jax_io_callback), (mlax, mlax.experimental.io_callback)):
        pure = _pure(lib, x.shape, np.float32)

        def io(v, lib=lib, io_callback=io_callback):
            return io_callback(lambda a: a, lib.ShapeDtypeStruct(v.shape, v.dtype), v)

        with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
            lib.grad(lambda v, pure=pure: pure(v, v))(x)
        with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
            lib.grad(io)(x)
        with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions"):
            lib.grad(lambda v, w, pure=pure: pure(w, w) * v)(x, x)


def test_pure_callback_inside_custom_jvp_is_differentiable(backend: str) -> None:
    x = random_array(np.random.default_rng(18), (3,), np.float32)

    def build(lib):
        @lib.custom_jvp
        def f(x):
            return lib.pure_callback(
                lambda a: np.sin(np.asarray(a)), lib.ShapeDtypeStruct((3,), np.float32), x
            )

        @f.defjvp
        def f_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return f(x), lib.numpy.cos(x) * t

        return lib.jit(lib.grad(lambda x: f(x).sum()))

    np.testing.assert_allclose(build(mlax)(x), build(jax)(x), rtol=1e-6)


def test_pure_callback_inside_custom_vjp_is_differentiable(backend: str) -> None:
    x = random_array(np.random.default_rng(19), (3,), np.float32)

    def build(lib):
        @lib.custom_vjp
        def f(x):
            return lib.pure_callback(
                lambda a: np.exp(np.asarray(a)), lib.ShapeDtypeStruct((3,), np.float32), x
            )

        f.defvjp(lambda x: (f(x), f(x)), lambda e, g: (e * g,))
        return lib.jit(lib.grad(lambda x: f(x).sum()))

    np.testing.assert_allclose(build(mlax)(x), build(jax)(x), rtol=1e-6)


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (
            np.zeros(4, np.float32),
            r"Incorrect output shape for return value #0: Expected: \(3,\), Actual: \(4,\)",
        ),
        (
            np.zeros(3, np.int32),
            "Incorrect output dtype for return value #0: Expected: float32, Actual: int32",
        ),
        (
            (np.zeros(3, np.float32),) * 2,
            r"Mismatched number of outputs from callback\. Expected: 1, Actual: 2",
        ),
    ],
)
def test_pure_callback_wrong_result(backend: str, result, message: str) -> None:
    x = random_array(np.random.default_rng(20), (3,), np.float32)
    spec = jax.ShapeDtypeStruct((3,), jnp.float32)
    with pytest.raises(RuntimeError, match=message.split(":")[0]):
        jax.jit(lambda x: jax.pure_callback(lambda _: result, spec, x))(x).block_until_ready()
    with pytest.raises(CallbackError, match=message):
        mlax.jit(lambda x: mlax.pure_callback(lambda _: result, spec, x))(x)
    with pytest.raises(CallbackError, match=message):
        mlax.pure_callback(lambda _: result, spec, x)


@pytest.mark.parametrize("api", ["pure", "debug"])
def test_callback_exception_reaches_the_caller(backend: str, api: str) -> None:
    def boom(x):
        raise KeyError("boom")

    def f(x):
        if api == "pure":
            return mlax.pure_callback(boom, mlax.ShapeDtypeStruct((2,), np.float32), x)
        mlax.debug.callback(boom, x)
        return x

    with pytest.raises(RuntimeError, match="the callback boom raised KeyError: 'boom'") as info:
        mlax.jit(f)(np.ones(2, np.float32))
    assert isinstance(info.value.__cause__, KeyError)
    np.testing.assert_array_equal(mlax.jit(lambda x: x + 1)(np.ones(2, np.float32)), [2, 2])  # still usable


def test_callback_argument_errors() -> None:
    with pytest.raises(TypeError, match="must be callable"):
        mlax.pure_callback(3, mlax.ShapeDtypeStruct((), np.float32))
    with pytest.raises(ValueError, match="vmap_method must be on of the allowed methods"):
        mlax.pure_callback(lambda: 1, mlax.ShapeDtypeStruct((), np.float32), vmap_method="bad")
    with pytest.raises(ValueError, match="64-bit"):
        mlax.pure_callback(lambda: 1, mlax.ShapeDtypeStruct((), np.float64))
    with pytest.raises(ValueError, match="Unused positional arguments"):
        mlax.debug.print("{}", 1, 2)


PRINTS = [
    ("x={} y={y:.3f}", lambda x: ((x,), {"y": x[0]})),
    ("{a} and {b}", lambda x: ((), {"a": x, "b": {"q": x[1]}})),
    ("{}", lambda x: ((x > 0,), {})),
    ("{} {}", lambda x: ((x.astype(np.int32), "static"), {})),
    ("no placeholders", lambda x: ((x,), {"skip_format_check": True})),
    ("plain", lambda x: ((), {})),
]


@pytest.mark.parametrize(("fmt", "arguments"), PRINTS, ids=[p[0] for p in PRINTS])
def test_debug_print_matches_jax(backend: str, capsys: pytest.CaptureFixture, fmt: str, arguments) -> None:
    x = random_array(np.random.default_rng(21), (3,), np.float32)
    outputs = []

    def program(lib):
        def f(x):
            args, kwargs = arguments(x)
            lib.debug.print(fmt, *args, **kwargs)
            return x

        return f

    for lib in (jax, mlax):
        f = program(lib)
        lib.jit(f)(x)
        if lib is jax:
            jax.effects_barrier()
        f(lib.numpy.asarray(x))  # eager
        outputs.append(capsys.readouterr().out)
    assert outputs[1] == outputs[0]


def test_debug_print_uses_numpy_print_options(backend: str, capsys: pytest.CaptureFixture) -> None:
    x = random_array(np.random.default_rng(22), (3,), np.float32)
    with np.printoptions(precision=2):
        mlax.jit(lambda x: mlax.debug.print("{}", x))(x)
    assert capsys.readouterr().out == np.array2string(x, precision=2) + "\n"


def test_debug_breakpoint_calls_the_hook(backend: str) -> None:
    frames = []
    mlax.debug.set_breakpoint_hook(frames.append)
    try:

        def f(x):
            y = mnp.sin(x)
            label = "here"  # noqa: F841  (the hook sees it)
            mlax.debug.breakpoint()
            return y * 2

        x = random_array(np.random.default_rng(23), (3,), np.float32)
        np.testing.assert_allclose(mlax.jit(f)(x), np.sin(x) * 2, rtol=1e-6)
    finally:
        mlax.debug.set_breakpoint_hook(None)
    (frame,) = frames
    assert frame.function_name == "f" and frame.locals["label"] == "here"
    np.testing.assert_allclose(frame.locals["y"], np.sin(x), rtol=1e-6)
    assert type(frame.locals["x"]) is mlax.Array


def test_callbacks_in_a_scan_under_vmap_and_grad(backend: str) -> None:
    xs = random_array(np.random.default_rng(24), (2, 3), np.float32)

    def build(lib, calls):
        def f(x):
            def body(c, xi):
                lib.debug.callback(_recorder(calls, "s"), xi)
                y = lib.pure_callback(
                    lambda a: np.cos(np.asarray(a)),
                    lib.ShapeDtypeStruct((), np.float32),
                    lib.lax.stop_gradient(xi),
                    vmap_method="sequential",
                )
                return c + y * xi, y

            return lib.lax.scan(body, 0.0, x)[0]

        return lib.jit(lib.vmap(lib.grad(f)))

    (want, j_calls), (got, m_calls) = _both(build, xs)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert sorted(m_calls) == sorted(j_calls)
