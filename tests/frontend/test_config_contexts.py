"""jax's configuration and compilation-control names, checked against jax: disable_jit,
ensure_compile_time_eval, enable_x64, debug_nans/debug_infs, default_matmul_precision, the
promotion modes, config.read/update with jax's option names, float0 and clear_caches."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.backends import registry as runtime_backend
from tests.oracle import assert_same

RNG = np.random.default_rng(7)


def _in_thread(read: Callable[[], Any]) -> Any:
    """``read()`` evaluated in a fresh thread."""
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(read()))
    thread.start()
    thread.join()
    return out[0]


def _error(fn: Callable[[], Any]) -> BaseException:
    with pytest.raises(Exception) as info:
        fn()
    return info.value


# ---------------------------------------------------------------- disable_jit


def test_disable_jit_runs_the_python_body_on_concrete_values(capsys: pytest.CaptureFixture[str]) -> None:
    def body(module: Any, x: Any) -> Any:
        y = x * 2
        print("y is", y)
        return y + 3 if float(y.sum()) > 0 else y - 3  # Python control flow on a value

    x = RNG.uniform(0.5, 2.0, (3,)).astype(np.float32)
    mf, jf = mlax.jit(lambda v: body(mnp, v)), jax.jit(lambda v: body(jnp, v))
    with mlax.disable_jit(), jax.disable_jit():
        expected = jf(x)
        printed_jax = capsys.readouterr().out
        assert_same(mf(x), expected)
        printed = capsys.readouterr().out
    assert printed == printed_jax and printed.startswith("y is [")
    with pytest.raises(mlax.ConcretizationTypeError):
        mf(x)  # jitted again outside the context


def test_disable_jit_option_forms_and_static_args() -> None:
    f = mlax.jit(lambda x, n: x * 2 if n > 1 else x, static_argnums=1)
    assert mlax.config.jax_disable_jit is False
    mlax.config.update("jax_disable_jit", True)
    try:
        assert mlax.config.jax_disable_jit is True
        assert_same(f(mnp.asarray([1.0, 2.0]), 2), mnp.asarray([2.0, 4.0]))
    finally:
        mlax.config.update("jax_disable_jit", False)
    assert mlax.config.jax_disable_jit is False
    with mlax.disable_jit(False):
        assert mlax.config.jax_disable_jit is False


def test_disable_jit_keeps_transformations_working() -> None:
    x = RNG.normal(size=(4,)).astype(np.float32)
    with mlax.disable_jit(), jax.disable_jit():
        assert_same(mlax.grad(lambda v: (mnp.sin(v) * v).sum())(x),
                    jax.grad(lambda v: (jnp.sin(v) * v).sum())(x))
        assert_same(mlax.vmap(lambda v: v * 2)(x), jax.vmap(lambda v: v * 2)(x))
        assert_same(mlax.lax.fori_loop(0, 3, lambda i, c: c + i, x),
                    jax.lax.fori_loop(0, 3, lambda i, c: c + i, x))


def test_disable_jit_restores_on_exception_and_is_per_thread() -> None:
    with pytest.raises(ZeroDivisionError), mlax.disable_jit():
        assert _in_thread(lambda: mlax.config.jax_disable_jit) is False
        raise ZeroDivisionError
    assert mlax.config.jax_disable_jit is False


# ---------------------------------------------------------------- ensure_compile_time_eval


def test_ensure_compile_time_eval_docstring_example(backend: str) -> None:
    def make(np_: Any) -> Callable[[Any], Any]:
        def f(x: Any) -> Any:
            with (mlax if np_ is mnp else jax).ensure_compile_time_eval():
                y = np_.sin(3.0)
                z = np_.sin(y)
                z_positive = z > 0
            if z_positive:  # usable in Python control flow
                return np_.sin(x)
            return np_.cos(x)
        return f

    x = np.float32(RNG.normal())
    assert_same(mlax.jit(make(mnp))(x), jax.jit(make(jnp))(x))


def test_ensure_compile_time_eval_random_example(backend: str) -> None:
    def m(x: Any) -> Any:
        with mlax.ensure_compile_time_eval():
            y = mlax.random.randint(mlax.random.key(0), (20, 20), 0, 100)
            assert type(y) is mlax.Array
        return mnp.sum(y @ y) * x

    def j(x: Any) -> Any:
        with jax.ensure_compile_time_eval():
            y = jax.random.randint(jax.random.key(0), (20, 20), 0, 100)
        return jnp.sum(y @ y) * x

    assert_same(mlax.jit(m)(2.0), jax.jit(j)(2.0))


def test_ensure_compile_time_eval_makes_operand_free_ops_concrete() -> None:
    seen: dict[str, Any] = {}

    @mlax.jit
    def f(x: Any) -> Any:
        with mlax.ensure_compile_time_eval():
            seen["arange"] = mnp.arange(4)
            seen["traced"] = mnp.sin(x)  # an op on a traced value stays traced (as jax)
        seen["after"] = mnp.arange(4)
        return seen["traced"] + seen["arange"]

    x = RNG.normal(size=(4,)).astype(np.float32)
    assert_same(f(x), jnp.sin(x) + jnp.arange(4))
    assert type(seen["arange"]) is mlax.Array and seen["arange"].dtype == jnp.arange(4).dtype
    assert isinstance(seen["traced"], mlax.core.Tracer) and isinstance(seen["after"], mlax.core.Tracer)
    assert mlax.configuration.compile_time_eval_state.value is False


# ---------------------------------------------------------------- enable_x64


def test_enable_x64_is_jaxs_and_changes_dtypes_like_jax() -> None:
    assert mlax.enable_x64 is jax.enable_x64
    assert not hasattr(jax.experimental, "enable_x64")  # jax 0.10 has only jax.enable_x64
    values = RNG.normal(size=(3,))
    cases = [lambda n: n.arange(5), lambda n: n.asarray(1.5), lambda n: n.ones(2),
             lambda n: n.asarray(values), lambda n: n.arange(3.0) * 2, lambda n: n.zeros(2, int)]
    for enabled in (True, False):
        with mlax.enable_x64(enabled):
            assert mlax.config.x64 is enabled and mlax.config.jax_enable_x64 is enabled
            for case in cases:
                assert_same(case(mnp), case(jnp))
                assert_same(mlax.jit(lambda case=case: case(mnp))(), jax.jit(lambda case=case: case(jnp))())
    assert mnp.arange(3).dtype == np.int32


def test_enable_x64_restores_on_exception_and_is_per_thread() -> None:
    with pytest.raises(KeyError), mlax.enable_x64(True):
        assert mnp.arange(2).dtype == np.int64
        assert _in_thread(lambda: mnp.arange(2).dtype) == np.int32
        raise KeyError
    assert not mlax.config.x64 and mnp.arange(2).dtype == np.int32


# ---------------------------------------------------------------- debug_nans / debug_infs


def _message(fn: Callable[[], Any]) -> str:
    error = _error(fn)
    assert type(error) is FloatingPointError
    return str(error)


@pytest.mark.parametrize("option,case", [
    ("debug_nans", lambda n: n.log(n.asarray([1.0, -1.0]))),
    ("debug_nans", lambda n: n.asarray([0.0, 1.0]) / 0.0),
    ("debug_infs", lambda n: n.log(n.asarray([0.0]))),
    ("debug_infs", lambda n: n.exp(n.asarray(1000.0))),
])
def test_debug_checks_name_the_eager_op(option: str, case: Callable[[Any], Any]) -> None:
    with getattr(jax, option)(True):
        expected = _message(lambda: case(jnp))
    with getattr(mlax, option)(True):
        assert _message(lambda: case(mnp)) == expected


def test_debug_checks_in_jitted_functions(backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    def f(n: Any, x: Any) -> Any:
        return n.log(x) * 2

    x = np.asarray([1.0, -1.0], np.float32)
    with jax.debug_nans(True):
        expected = _message(lambda: jax.jit(lambda v: f(jnp, v))(x))
    capsys.readouterr()
    with mlax.debug_nans(True):
        got = _message(lambda: mlax.jit(lambda v: f(mnp, v))(x))
        assert got == expected == "invalid value (nan) encountered in log"
        assert "Calling the de-optimized version" in capsys.readouterr().out
        assert_same(mlax.jit(lambda v: f(mnp, v))(abs(x)), jnp.log(abs(x)) * 2)


def test_debug_nans_without_an_op_to_blame_names_the_function() -> None:
    with mlax.debug_nans(True):
        text = _message(lambda: mlax.jit(lambda x: x)(np.float32(np.nan)))
    with jax.debug_nans(True):
        jax_text = _message(lambda: jax.jit(lambda x: x)(np.float32(np.nan)))
    assert text.startswith("invalid value (nan) encountered in jit(<lambda>)")
    tail = "the de-optimized function did not produce invalid values during its execution"
    assert tail in text and tail in jax_text


def test_debug_options_forms_scope_and_kinds() -> None:
    x = mnp.asarray([0.0])
    assert_same(mnp.log(x), jnp.log(jnp.asarray([0.0])))  # off: no check
    mlax.config.update("jax_debug_infs", True)
    try:
        assert mlax.config.jax_debug_infs is True
        assert _message(lambda: mnp.log(x)) == "invalid value (inf) encountered in log"
        assert_same(mnp.log(-x - 1.0), jnp.log(jnp.asarray([-1.0])))  # a nan is not an inf
        assert _in_thread(lambda: mlax.config.jax_debug_infs) is True  # update is process-wide
    finally:
        mlax.config.update("jax_debug_infs", False)
    with pytest.raises(FloatingPointError), mlax.debug_nans():
        assert _in_thread(lambda: mlax.config.jax_debug_nans) is False  # the context is this thread's
        mnp.sqrt(mnp.asarray(-1.0))
    assert mlax.config.jax_debug_nans is False
    with mlax.debug_nans(True):  # finite computations and integer ones pass
        assert_same(mlax.jit(lambda v: mnp.tanh(v) @ v)(np.eye(3, dtype=np.float32)),
                    jnp.tanh(jnp.eye(3)) @ jnp.eye(3))
        assert_same(mnp.arange(3) // 1, jnp.arange(3) // 1)


# ---------------------------------------------------------------- matmul precision, promotion modes


# (a dot algorithm name such as "F32_F32_F32" is refused at the matmul: tests/frontend/test_precision.py)
@pytest.mark.parametrize("precision", ["highest", "bfloat16", "tensorfloat32", None])
def test_default_matmul_precision_is_accepted_and_full_precision(precision: str | None) -> None:
    a = RNG.normal(size=(8, 5)).astype(np.float32)
    b = RNG.normal(size=(5, 3)).astype(np.float32)
    with mlax.default_matmul_precision(precision), jax.default_matmul_precision(precision):
        assert mlax.config.jax_default_matmul_precision == precision
        assert jax.config.jax_default_matmul_precision == precision
        assert_same(mlax.jit(mnp.matmul)(a, b), jnp.matmul(a, b), rtol=1e-5)
    mlax.config.update("jax_default_matmul_precision", "high")
    try:
        assert mlax.config.jax_default_matmul_precision == "high"
    finally:
        mlax.config.update("jax_default_matmul_precision", None)


@pytest.mark.parametrize("name,value", [("jax_default_matmul_precision", "bogus"),
                                        ("jax_numpy_rank_promotion", "bogus"),
                                        ("jax_numpy_rank_promotion", 3)])
def test_bad_enum_values_raise_jaxs_error(name: str, value: Any) -> None:
    error = _error(lambda: mlax.config.update(name, value))
    jax_error = _error(lambda: jax.config.update(name, value))
    assert type(error) is type(jax_error) is ValueError and str(error) == str(jax_error)


def test_numpy_rank_promotion_modes_are_accepted() -> None:
    # (the checks themselves, against jax: tests/frontend/test_config_surface.py)
    with mlax.numpy_rank_promotion("allow"):
        assert mlax.config.jax_numpy_rank_promotion == "allow"
        assert_same(mnp.ones((2, 3)) + mnp.ones(3), jnp.ones((2, 3)) + jnp.ones(3))
    for mode in ("warn", "raise"):
        with mlax.numpy_rank_promotion(mode):
            assert mlax.config.jax_numpy_rank_promotion == mode
    assert mlax.config.jax_numpy_rank_promotion == "allow"


def test_numpy_dtype_promotion_strict_like_jax() -> None:
    assert mlax.numpy_dtype_promotion is jax.numpy_dtype_promotion
    add = mlax.jit(lambda a, b: a + b)
    a, b = np.ones(2, np.float16), np.ones(2, np.float32)
    assert_same(add(a, b), jnp.add(a, b))  # traced under "standard": cached
    with mlax.numpy_dtype_promotion("strict"):
        for fn in (lambda: mnp.add(a, b), lambda: add(a, b)):  # the jit cache keys on the mode
            error = _error(fn)
            assert type(error) is jax.dtypes.TypePromotionError
            assert str(error) == str(_error(lambda: jnp.add(a, b)))
        assert_same(mnp.add(b, 1.0), jnp.add(b, 1.0))
    assert_same(add(a, b), jnp.add(a, b))


# ---------------------------------------------------------------- config names and states


def test_config_reads_the_names_libraries_read() -> None:
    for name in ("jax_enable_x64", "jax_disable_jit", "jax_debug_nans", "jax_debug_infs",
                 "jax_default_matmul_precision", "jax_numpy_rank_promotion", "jax_numpy_dtype_promotion",
                 "jax_platforms"):
        assert getattr(mlax.config, name) == getattr(jax.config, name), name
    assert mlax.config.read("jax_enable_x64") is jax.config.read("jax_enable_x64") is False
    for name in ("jax_debug_nans", "jax_disable_jit", "jax_platforms"):
        error = _error(lambda name=name: mlax.config.read(name))
        jax_error = _error(lambda name=name: jax.config.read(name))
        assert type(error) is type(jax_error) is AttributeError and str(error) == str(jax_error)
    assert mlax.config.read("backend") == mlax.config.backend


def test_unknown_options_raise_jaxs_error() -> None:
    for fn in (lambda: mlax.config.update("jax_nope", 1), lambda: mlax.config.read("jax_nope")):
        error = _error(fn)
        assert isinstance(error, AttributeError) and isinstance(error, ValueError)
        assert str(error) == "Unrecognized config option: jax_nope"
    with pytest.raises(AttributeError, match="jax_nope"):
        mlax.config.jax_nope  # noqa: B018


def test_states_behave_as_jaxs() -> None:
    for mine, theirs in ((mlax.debug_nans, jax.debug_nans), (mlax.default_matmul_precision,
                                                             jax.default_matmul_precision)):
        assert mine.__name__ == theirs.__name__ and mine.value == theirs.value
        assert type(_error(lambda mine=mine: bool(mine))) is TypeError
    error = _error(lambda: mlax.default_matmul_precision())
    jax_error = _error(lambda: jax.default_matmul_precision())
    assert type(error) is type(jax_error) is TypeError and str(error) == str(jax_error)

    @mlax.debug_infs(True)
    def decorated() -> bool:
        return mlax.config.jax_debug_infs

    assert decorated() is True and mlax.config.jax_debug_infs is False
    with mlax.debug_nans(True):
        with mlax.debug_nans(False):
            assert mlax.config.jax_debug_nans is False
        assert mlax.config.jax_debug_nans is True
    assert mlax.config.jax_debug_nans is False


def test_float0_is_jaxs() -> None:
    assert mlax.float0 is jax.float0
    _, tangent = mlax.jvp(lambda x, n: x * n, (np.float32(2.0), np.int32(3)),
                          (np.float32(1.0), np.zeros((), mlax.float0)))
    assert_same(tangent, jax.jvp(lambda x, n: x * n, (np.float32(2.0), np.int32(3)),
                                 (np.float32(1.0), np.zeros((), jax.float0)))[1])


# ---------------------------------------------------------------- clear_caches


def test_clear_caches_retraces_and_recompiles(backend: str) -> None:
    traces: list[int] = []

    def f(x: Any) -> Any:
        traces.append(1)
        return mnp.sin(x) * 2

    jitted = mlax.jit(f)
    grad = mlax.grad(lambda x: f(x).sum())
    x = RNG.normal(size=(3,)).astype(np.float32)
    first, first_grad = jitted(x), grad(x)
    count = len(traces)
    jitted(x), grad(x)
    assert len(traces) == count  # cached
    mlax.clear_caches()
    assert len(runtime_backend._COMPILED) == 0
    assert_same(jitted(x), first)
    assert_same(grad(x), first_grad)
    assert len(traces) == 2 * count  # both traced again
    assert_same(first_grad, jax.grad(lambda v: (jnp.sin(v) * 2).sum())(x))


def test_jitted_clear_cache() -> None:
    traces: list[int] = []
    jitted = mlax.jit(lambda x: traces.append(1) or x + 1)
    jitted(1.0), jitted(1.0)
    assert len(traces) == 1 and jitted._cache_size() == 1
    jitted.clear_cache()
    assert jitted._cache_size() == 0
    assert_same(jitted(1.0), jax.jit(lambda x: x + 1)(1.0))
    assert len(traces) == 2
