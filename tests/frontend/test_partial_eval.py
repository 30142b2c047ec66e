"""jax.interpreters.partial_eval.trace_to_jaxpr_nounits under install_as_jax is mlax's
(pyfront/partial_eval.py): which outputs are known from the known inputs, and their values,
as jax's, outside any trace and inside a jit (flax's lazy_init and nn.scan ask)."""

from __future__ import annotations

from typing import Any

import jax
import jax.api_util
import jax.numpy as jnp
import numpy as np
from jax.extend import linear_util as lu
from jax.interpreters import partial_eval as pe

import mlax
from mlax import jax_modules
from mlax.partial_eval import trace_to_jaxpr_nounits
from tests.oracle import assert_same

RNG = np.random.default_rng(353)
CLOSE = {"rtol": 2e-6, "atol": 1e-6}


def _fun(lib: Any) -> Any:
    """Outputs from the known input only (also through iota and a nested jit), from the unknown
    one, from both, and from neither."""
    def f(k, x):
        nested = lib.jit(lambda a: lib.numpy.tanh(a) * 3.0)
        return (k * 2.0, x + 1.0, lib.numpy.sum(k) + lib.numpy.arange(3.0), k @ x, nested(k),
                lib.numpy.ones(2), nested(x))
    return f


def _pvals(k: np.ndarray, x_shape: tuple[int, ...]) -> list[pe.PartialVal]:
    return [pe.PartialVal.known(k), pe.PartialVal.unknown(jax.core.ShapedArray(x_shape, np.float32))]


def _check(ours: list[pe.PartialVal], theirs: list[pe.PartialVal]) -> None:
    assert [p.is_known() for p in ours] == [p.is_known() for p in theirs]
    for a, b in zip(ours, theirs, strict=True):
        if a.is_known():
            assert_same(a.get_known(), b.get_known(), **CLOSE)
        else:
            assert a.get_aval().shape == b.get_aval().shape and a.get_aval().dtype == b.get_aval().dtype


def test_known_outputs_and_values_as_jax_outside_any_trace() -> None:
    k = RNG.normal(size=(3,)).astype(np.float32)
    _, ours, _ = trace_to_jaxpr_nounits(lambda *a: _fun(mlax)(*a), _pvals(k, (3,)))
    _, theirs, _ = pe.trace_to_jaxpr_nounits(
        lu.wrap_init(lambda *a: _fun(jax)(*a), debug_info=jax.api_util.debug_info("test", _fun, (), {})),
        _pvals(jnp.asarray(k), (3,)))
    _check(ours, theirs)
    _, huge, _ = trace_to_jaxpr_nounits(lambda k, x: (k + 1.0, x @ x.T), _pvals(k, (1 << 30, 128)))
    assert huge[0].is_known() and not huge[1].is_known()  # nothing of the unknown input is built
    assert_same(huge[0].get_known(), k + np.float32(1.0))
    _, inst, _ = trace_to_jaxpr_nounits(lambda k, x: (k, x), _pvals(k, (2,)), instantiate=True)
    assert not any(p.is_known() for p in inst)


def test_known_outputs_inside_a_jit() -> None:
    """Inside a trace the known outputs are values of that trace: the jit returns them."""
    k = RNG.normal(size=(3,)).astype(np.float32)
    flags: list[bool] = []

    def known_part(k):
        _, out, _ = trace_to_jaxpr_nounits(lambda *a: _fun(mlax)(*a), _pvals(k, (3,)))
        flags[:] = [p.is_known() for p in out]
        return [p.get_known() for p in out if p.is_known()]

    got = mlax.jit(known_part)(k)
    f = _fun(jax)
    expected = [o for o, known in zip(f(jnp.asarray(k), jnp.zeros(3)), flags, strict=True) if known]
    assert flags == [True, False, True, False, True, True, False]
    for a, b in zip(got, expected, strict=True):
        assert_same(a, b, **CLOSE)


def test_install_as_jax_serves_it() -> None:
    assert jax_modules.resolve("jax.interpreters.partial_eval", "trace_to_jaxpr_nounits", {}) \
        is trace_to_jaxpr_nounits
    assert jax_modules.resolve("jax.interpreters.partial_eval", "PartialVal", {}) is pe.PartialVal
