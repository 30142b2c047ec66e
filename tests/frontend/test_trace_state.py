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
    assert jax_modules.resolve("jax.extend.core", "Primitive", {}) is jex.Primitive
    assert jax_modules.status("jax.extend.core", "Primitive") == "jax"
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
