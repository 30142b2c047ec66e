"""A custom_vjp rule traced at pass time (one that raised when traced at its call with every
input perturbed, then traced for the inputs actually differentiated) may itself differentiate
a function with a custom rule (equinox's checkpointed while_loop: its bwd takes the vjp of
the loop body, which runs the inner loop of nested loops) in the body of a loop of its own.
The vjp it declares there is resolved
before custom derivatives outside differentiation become plain calls, so the inner rule is
used, as in jax; it was resolved after, and the inner primal was differentiated instead
(here a wrong number; for equinox's inner loop, reverse mode of a while_loop refused).
Against jax on random values."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import mlax
from tests.oracle import assert_same

LIBS = (jax, mlax)


def _outer(lib: Any) -> Any:
    lnp = lib.numpy

    @lib.custom_vjp
    def inner(x: Any) -> Any:
        return lnp.sin(x)

    # a derivative unlike the primal's (twice it), so that using the rule shows
    inner.defvjp(lambda x: (lnp.sin(x), x), lambda x, g: (2.0 * g * lnp.cos(x),))

    @lib.custom_vjp
    def outer(x: Any, y: Any) -> Any:
        return inner(x) * y

    def fwd(x: Any, y: Any) -> Any:
        if y.perturbed:  # fails traced with every input perturbed, as equinox's fwd
            raise RuntimeError("y of outer cannot be differentiated")
        return outer(x.value, y.value), (x.value, y.value)

    def bwd(residuals: Any, g: Any) -> Any:
        x, y = residuals

        def step(carry: Any) -> Any:  # the vjp in a loop's body, as equinox's bwd has it
            i, total = carry
            _, pullback = lib.vjp(lambda x: inner(x) * y, x)
            return i + 1, total + pullback(g)[0]

        _, total = lib.lax.while_loop(lambda c: c[0] < 2, step, (0, lnp.zeros_like(x)))
        return total / 2.0, None

    outer.defvjp(fwd, bwd, symbolic_zeros=True)
    return outer


@pytest.mark.parametrize("how", ["grad", "jit_grad", "vmap_grad"])
def test_inner_custom_rule_in_a_rule_traced_at_pass_time(how: str) -> None:
    rng = np.random.default_rng(4)
    x, y = (rng.uniform(-2, 2, (3,)).astype(np.float32) for _ in range(2))
    got = {}
    for lib in LIBS:
        outer = _outer(lib)
        grad = lib.grad(lambda x, y, outer=outer, lib=lib: lib.numpy.sum(outer(x, y)))
        if how == "grad":
            got[lib] = grad(x, y)
        elif how == "jit_grad":
            got[lib] = lib.jit(grad)(x, y)
        else:
            got[lib] = lib.jit(lib.vmap(grad))(x[:, None], y[:, None])
    assert_same(got[mlax], got[jax], rtol=2e-6)
