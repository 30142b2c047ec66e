"""A custom-derivative rule that raised when traced at its call (equinox's ``nondifferentiable``,
or its checkpointed while_loop's fwd, which refuses perturbed inputs) stands in as a body-less
function, and as in jax nothing but a derivative that needs it runs it: vmap batches the
stand-in as a stand-in (mlax-batch tried to batch its body: the rule's error under a plain
vmap), make_jaxpr reads the call without it (an IndexError of the MLIR bindings), and a
derivative that needs the batched stand-in raises the rule's own error. Against jax."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import mlax

LIBS = (jax, mlax)


class Refused(RuntimeError):
    pass


def _nondifferentiable(lib: Any) -> Any:
    @lib.custom_jvp
    def nd(x: Any) -> Any:
        return x

    @nd.defjvp
    def nd_rule(primals: Any, tangents: Any) -> Any:
        raise Refused("nd cannot be differentiated")

    return lambda y: lib.numpy.sin(nd(y)) * y


def _values() -> np.ndarray:
    return np.random.default_rng(5).uniform(-2, 2, (4,)).astype(np.float32)


def test_vmap_leaves_the_rule_alone() -> None:
    ys = _values()
    got = {}
    for lib in LIBS:
        f = _nondifferentiable(lib)
        got[lib] = (lib.vmap(f)(ys), lib.jit(lib.vmap(f))(ys),
                    lib.vmap(lambda x, y, f=f, lib=lib: lib.grad(lambda x: x * f(y))(x))(ys + 1.0, ys))
    for ours, theirs in zip(got[mlax], got[jax], strict=True):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-6)


def test_make_jaxpr_reads_the_call() -> None:
    names = {lib: [e.primitive.name for e in lib.make_jaxpr(_nondifferentiable(lib))(np.float32(0.5)).eqns]
             for lib in LIBS}
    assert names[mlax] == names[jax]


@pytest.mark.parametrize("jit", [False, True])
def test_a_derivative_of_the_batched_call_raises_the_rules_error(jit: bool) -> None:
    ys = _values()
    for lib in LIBS:
        f = _nondifferentiable(lib)
        g = lib.grad(lambda y, f=f, lib=lib: lib.numpy.sum(lib.vmap(f)(y)))
        with pytest.raises(Refused, match="nd cannot be differentiated"):
            (lib.jit(g) if jit else g)(ys)
