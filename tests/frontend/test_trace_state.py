"""jax.extend.core.get_opaque_trace_state under install_as_jax is mlax's (pyfront/trace_state.py):
equal within one trace, different across traces, as jax's (flax.nnx and dm-haiku compare it to
refuse state used outside the trace it belongs to)."""

from __future__ import annotations

import jax
import jax.extend.core as jex
import numpy as np

import mlax
from mlax import jax_modules
from mlax.trace_state import get_opaque_trace_state

RNG = np.random.default_rng(35)


def _pattern(lib, state) -> list[bool]:
    """Which comparisons of trace states hold: eager vs eager, eager vs jit, within a jit, within
    a vmap in the jit, jit vs a grad inside it."""
    outside = state()
    seen: dict[str, object] = {}

    def inner(x):
        seen["vmap"] = state()
        return x * 2.0

    def f(x):
        seen["jit"] = state()
        seen["jit_again"] = state()
        y = lib.vmap(inner)(x)
        lib.grad(lambda v: (seen.__setitem__("grad", state()), v.sum())[1])(x)
        return y

    lib.jit(f)(np.ones(3, np.float32))
    return [outside == state(), outside == seen["jit"], seen["jit"] == seen["jit_again"],
            seen["jit"] == seen["vmap"], seen["jit"] == seen["grad"]]


def test_trace_states_compare_as_jax_s() -> None:
    assert _pattern(mlax, get_opaque_trace_state) == _pattern(jax, jex.get_opaque_trace_state)


def test_install_as_jax_serves_it_and_passes_the_rest_through() -> None:
    assert jax_modules.resolve("jax.extend.core", "get_opaque_trace_state", {}) is get_opaque_trace_state
    assert jax_modules.status("jax.extend.core", "get_opaque_trace_state") == "mlax"
    assert jax_modules.resolve("jax.extend.core", "ClosedJaxpr", {}) is jex.ClosedJaxpr
    assert jax_modules.status("jax.extend.core", "ClosedJaxpr") == "jax"
    assert jax_modules.status("jax.extend", "linear_util") == "jax"


def test_valid_jaxtype_knows_mlax_arrays() -> None:
    """Array data as jax tells it, mlax's arrays, tracers and keys included (distrax keeps only
    data as pytree leaves: a wrong answer left its distributions unmapped under vmap)."""
    from mlax.trace_state import valid_jaxtype

    samples = [1.0, 3, True, np.ones(2), np.float32(1), "a", None, object(), np.array(["a"]), (1.0,)]
    assert [valid_jaxtype(x) for x in samples] == [jex.valid_jaxtype(x) for x in samples]
    assert valid_jaxtype(mlax.numpy.ones(2)) and valid_jaxtype(mlax.random.key(0))
    seen = []
    mlax.jit(lambda x: seen.append(valid_jaxtype(x)) or x)(np.ones(2, np.float32))
    assert seen == [True]
    assert jax_modules.resolve("jax.extend.core", "valid_jaxtype", {}) is valid_jaxtype


def test_checkpoint_traces_its_function_outside_any_trace_too() -> None:
    """jax.checkpoint called eagerly still traces ``fun`` (dm-haiku refuses hk.get_parameter in a
    checkpoint of an untransformed function by comparing trace states): its Python sees a trace
    of its own, and its values are jax's, with static and keyword arguments as well."""
    x = RNG.normal(size=(3,)).astype(np.float32)
    for lib, state in ((mlax, get_opaque_trace_state), (jax, jex.get_opaque_trace_state)):
        outside, seen = state(), []

        def f(x, n=2.0, seen=seen, state=state, lib=lib):
            seen.append(state())
            return lib.numpy.sin(x) * n

        got = [lib.checkpoint(f)(x), lib.checkpoint(f, static_argnums=(1,))(x, 3.0),
               lib.checkpoint(f)(x, n=np.float32(0.5)),
               lib.grad(lambda v, f=f, lib=lib: lib.checkpoint(f)(v).sum())(x)]
        assert [s == outside for s in seen] == [False] * len(seen)
        if lib is mlax:
            mine = got
        else:
            for a, b in zip(mine, got, strict=True):
                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6)


def _jvp_pattern(lib, jvp_tracer, top) -> list[bool]:
    """Which values inside a jvp (itself inside a jit) are forward-mode tracers of the jvp's own
    trace: computed from its input (also through a nested jit), from a value the jit closes
    over, from a constant, and from the input through a call of a jitted function of both."""
    seen: list[bool] = []
    c = np.float32(RNG.normal())

    def outer(x, y):
        inner_jit = lib.jit(lambda a, b: (a * 2.0, b + 1.0))

        def f(v):
            main = top(()).main
            values = [v * 2.0, y * 3.0, lib.numpy.ones(2) * c, *inner_jit(v, y), lib.jit(lambda a: a + y)(v)]
            seen.extend(isinstance(t, jvp_tracer) and t._trace.main is main for t in values)
            return v

        return lib.jvp(f, (x,), (x,))[1]

    lib.jit(outer)(np.float32(1.5), np.float32(0.5))
    return seen


def test_jvp_tracers_and_top_trace_as_jax() -> None:
    """jax.interpreters.ad.JVPTracer and jax.extend.core.find_top_trace under install_as_jax are
    mlax's (trace_state.py): a value is a forward-mode tracer of the jvp's trace exactly where
    jax's is one (equinox's filter_jvp keeps those outputs differentiated, the others as they are)."""
    from jax.interpreters import ad

    from mlax.trace_state import JVPTracer, find_top_trace

    ours = _jvp_pattern(mlax, JVPTracer, find_top_trace)
    assert ours == _jvp_pattern(jax, ad.JVPTracer, jex.find_top_trace)
    assert jax_modules.resolve("jax.interpreters.ad", "JVPTracer", {}) is JVPTracer
    assert jax_modules.resolve("jax.extend.core", "find_top_trace", {}) is find_top_trace
    assert jax_modules.resolve("jax.interpreters.ad", "primitive_jvps", {}) is ad.primitive_jvps
    assert find_top_trace(()) is None and not isinstance(mlax.numpy.ones(2), JVPTracer)
