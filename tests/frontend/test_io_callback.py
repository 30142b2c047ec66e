"""mlax.experimental.io_callback and mlax.effects_barrier against jax's: values, how often and
in which order the callback runs (eager, under jit on every backend, in scan / cond /
while_loop, unused results), vmap (sequential; ordered is jax's error), grad (jax's error with a
tangent, a plain call without), result checks, and `jax.experimental` under install_as_jax."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import io_callback as jax_io_callback

import mlax
import mlax.numpy as mnp
from mlax.experimental import io_callback
from tests.oracle import assert_same, random_array

LIBS = {"jax": (jax, jax_io_callback), "mlax": (mlax, io_callback)}


def _logger(log: list):
    """An impure callback: records its (rounded) argument, returns a value computed from it."""
    def record(x):
        array = np.asarray(x)
        log.append(np.round(array.astype(np.float64), 4).tolist())
        return (array * 2 + 1).astype(array.dtype)
    return record


def _both(build, *args):
    """``build(lib, io_callback, log)(*args)`` on jax and on mlax: [(result, log)] for each."""
    out = []
    for lib, io in LIBS.values():
        log: list = []
        out.append((build(lib, io, log)(*args), log))
    return out


def _spec(x):
    return jax.ShapeDtypeStruct(np.shape(x), x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype)


def test_outside_jit_runs_now(rng: np.random.Generator) -> None:
    x = random_array(rng, (3,), np.float32)

    def build(lib, io, log):
        def f(x):
            first = io(_logger(log), _spec(x), x, ordered=True)
            pair = io(lambda d, k: {"a": _logger(log)(d["v"]), "b": np.float32(k)},
                      {"a": _spec(x), "b": jax.ShapeDtypeStruct((), np.float32)}, {"v": x}, k=2.5)
            return first, pair
        return f

    (want, want_log), (got, got_log) = _both(build, x)
    assert_same(got, want)
    assert got_log == want_log and len(got_log) == 2


def _effects_program(lib, io, log, ordered):
    """Calls in straight-line code (one result unused, one repeated), a scan, a cond, a while."""
    def call(x):
        return io(_logger(log), _spec(x), x, ordered=ordered)

    def f(x):
        a = call(x)
        call(x + 1)  # unused: still called (an effect)
        call(x + 1)  # the same call again: not merged
        c, ys = lib.lax.scan(lambda c, xi: (call(c + xi), c), x[0], x)
        c = lib.lax.cond(c > 0, call, lambda c: -c, c)
        w = lib.lax.while_loop(lambda v: v < 20, call, lib.numpy.abs(c) + 1)
        return a, ys, c, w
    return f


@pytest.mark.parametrize("ordered", [True, False])
def test_under_jit_in_program_order(rng: np.random.Generator, backend, ordered: bool) -> None:
    x = random_array(rng, (4,), np.float32, 0.1, 1.0)
    (want, want_log), (got, got_log) = _both(
        lambda lib, io, log: lib.jit(_effects_program(lib, io, log, ordered)), x)
    assert_same(got, want, rtol=1e-5)
    if ordered:
        assert got_log == want_log
    else:  # unordered calls may come in any order, but each comes once
        assert sorted(map(str, got_log)) == sorted(map(str, want_log))


def test_vmap_unordered_is_sequential(rng: np.random.Generator, backend) -> None:
    xs = random_array(rng, (3, 2), np.float32)
    y = random_array(rng, (2,), np.float32)

    def build(lib, io, log):
        def f(x, y):
            return io(lambda a, b: _logger(log)(a) + b, _spec(y), x, y) * 2
        return lib.vmap(f, in_axes=(0, None))

    (want, want_log), (got, got_log) = _both(build, xs, y)
    assert_same(got, want, rtol=1e-6)
    assert got_log == want_log and len(got_log) == 3


def _vmap_ordered(lib, io, xs):
    log: list = []
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
        lib.vmap(lambda x: io(_logger(log), _spec(x), x, ordered=True))(xs)
    assert log == []
    # not batched (its operand is not mapped): called once, as jax
    out = lib.vmap(lambda x, y: x + io(_logger(log), _spec(y), y, ordered=True), in_axes=(0, None))(xs, xs[0])
    assert len(log) == 1
    assert_same(out, xs + xs[0] * 2 + 1, rtol=1e-6, check_weak_type=False)


def test_vmap_ordered_is_jax_error(rng: np.random.Generator) -> None:
    xs = random_array(rng, (3, 2), np.float32)
    for lib, io in LIBS.values():
        _vmap_ordered(lib, io, xs)


def _refuses_tangents(lib, io, ordered: bool, x) -> None:
    def f(x):
        return io(_logger([]), _spec(x), x, ordered=ordered)

    for transform in (lib.grad(f), lib.jit(lib.grad(f)), lambda x: lib.jvp(f, (x,), (np.float32(1.0),))):
        with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
            transform(x)


def test_grad_is_jax_error_with_a_tangent(rng: np.random.Generator) -> None:
    x = np.float32(rng.uniform(0.5, 2.0))
    for lib, io in LIBS.values():
        for ordered in (False, True):
            _refuses_tangents(lib, io, ordered, x)


def test_grad_without_a_tangent_calls_once(rng: np.random.Generator, backend) -> None:
    x = random_array(rng, (3,), np.float32)
    c = random_array(rng, (3,), np.float32)

    def build(lib, io, log):
        def f(x):
            k = io(_logger(log), _spec(c), c, ordered=True)  # no tangent reaches it
            s = io(_logger(log), _spec(x), lib.lax.stop_gradient(x))
            return lib.numpy.sum(lib.numpy.sin(x) * k * s)
        return lib.value_and_grad(f)

    (want, want_log), (got, got_log) = _both(build, x)
    assert_same(got, want, rtol=1e-5)
    assert got_log == want_log and len(got_log) == 2


def test_result_checks_and_errors() -> None:
    x = np.arange(3, dtype=np.float32)
    with pytest.raises(RuntimeError, match=r"Incorrect output shape for return value #0: Expected: \(2,\), "
                                           r"Actual: \(3,\)"):
        mlax.jit(lambda x: io_callback(lambda v: v, jax.ShapeDtypeStruct((2,), np.float32), x))(x)
    with pytest.raises(ValueError, match="cannot specify 64-bit types"):
        io_callback(lambda v: v, jax.ShapeDtypeStruct((3,), np.float64), x)
    with pytest.raises(RuntimeError, match="ZeroDivisionError") as caught:
        mlax.jit(lambda x: io_callback(lambda v: 1 // 0, None, x))(x)
    assert isinstance(caught.value.__cause__, ZeroDivisionError)
    with pytest.raises(TypeError, match="must be callable"):
        io_callback(3, None, x)
    # no results: None, as jax's
    log: list = []
    assert mlax.jit(lambda x: io_callback(lambda v: log.append(1), None, x, ordered=True))(x) is None
    assert log == [1]


def test_effects_barrier() -> None:
    log: list = []
    mlax.jit(lambda x: io_callback(_logger(log), _spec(x), x))(np.float32(2.0))
    assert mlax.effects_barrier() is None and jax.effects_barrier() is None
    assert log == [2.0]


def test_jax_experimental_under_install_as_jax() -> None:
    """`jax.experimental.io_callback` is mlax's after install_as_jax; jax.experimental's other
    names and submodules are still the real ones (as when the module was passed through)."""
    import importlib

    from mlax import jax_modules
    from mlax.callbacks import io_callback as mlax_io

    real = jax_modules.real_module("jax.experimental")
    assert jax_modules.resolve("jax.experimental", "io_callback", {}) is mlax_io
    assert jax_modules.status("jax.experimental", "io_callback") == "mlax"
    assert jax_modules.resolve("jax.experimental", "primal_tangent_dtype", {}) is real.primal_tangent_dtype
    assert (jax_modules.resolve("jax.experimental", "mesh_utils", {})
            is importlib.import_module("jax.experimental.mesh_utils"))
    assert jax_modules.resolve("jax.experimental", "enable_x64", {}) is jax_modules.MISSING


def test_on_mlax_values_under_concrete_grad(rng: np.random.Generator) -> None:
    """Outside jit, grad runs its program with the callback in it once (concrete mode too)."""
    x = np.float32(rng.uniform(0.5, 2.0))
    for lib, io in LIBS.values():
        log: list = []

        def f(x, lib=lib, io=io, log=log):
            k = io(_logger(log), jax.ShapeDtypeStruct((), np.float32), np.float32(3.0))
            return x * x * k if x > 1 else x * k
        got = lib.grad(f)(x)
        np.testing.assert_allclose(float(got), 14.0 * x if x > 1 else 7.0, rtol=1e-6)
        assert log == [3.0]


def test_pure_array_inputs(rng: np.random.Generator) -> None:
    """The callback gets concrete arrays (mlax.Array on mlax) it can compute with."""
    x = random_array(rng, (2, 3), np.float32)
    seen = []

    def cb(v):
        seen.append(type(v))
        return np.asarray(mnp.sum(v) if isinstance(v, mlax.Array) else jnp.sum(v), np.float32)

    out = mlax.jit(lambda x: io_callback(cb, jax.ShapeDtypeStruct((), np.float32), x))(x)
    np.testing.assert_allclose(float(out), float(x.sum()), rtol=1e-6)
    assert seen == [mlax.Array]
