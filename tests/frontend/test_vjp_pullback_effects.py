"""The function jax.vjp returns runs the backward pass alone: the debug callbacks of the
function differentiated ran in the forward pass and do not run again when it is called (mlax's
pullback traces the function again, and so leaves them out), while a custom_vjp's rules keep
theirs. Also through a jaxpr evaluated with jax.core.eval_jaxpr (equinox's checkpointed
while_loop calls its closure-converted body so)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import mlax


def _program(lib: Any, log: list[str], through_jaxpr: bool) -> Any:
    def note(tag: str) -> Any:
        return lambda *_: log.append(tag)

    @lib.custom_vjp
    def g(x: Any) -> Any:
        return x * 2.0

    def g_fwd(x: Any) -> Any:
        lib.debug.callback(note("g_fwd"), x)
        return x * 2.0, None

    def g_bwd(_: Any, ct: Any) -> Any:
        lib.debug.callback(note("g_bwd"), ct)
        return (ct * 2.0,)

    g.defvjp(g_fwd, g_bwd)

    def f(x: Any) -> Any:
        lib.debug.callback(note("f"), x)
        return lib.numpy.sin(x)

    if through_jaxpr:
        closed = lib.make_jaxpr(f)(np.float32(0))
        evaluate = jax.core.eval_jaxpr if lib is jax else mlax.jaxpr_eval.eval_jaxpr
        body = lambda x: evaluate(closed.jaxpr, closed.consts, x)[0]  # noqa: E731
        return lambda x: lib.numpy.cos(body(x))
    return lambda x: f(g(x))


@pytest.mark.parametrize("through_jaxpr", [False, True])
@pytest.mark.parametrize("jitted", [False, True])
def test_pullback_runs_no_forward_effects(through_jaxpr: bool, jitted: bool) -> None:
    def run(lib: Any) -> tuple[list[str], Any]:
        log: list[str] = []
        h = _program(lib, log, through_jaxpr)

        def both(x: Any) -> Any:
            y, pull = lib.vjp(h, x)
            return y, pull(np.float32(1.0))

        out = (lib.jit(both) if jitted else both)(np.float32(0.7))
        jax.block_until_ready(out)
        return sorted(log), out

    (ours, out), (theirs, expected) = run(mlax), run(jax)
    assert ours == theirs
    np.testing.assert_allclose(np.asarray(out[1][0]), np.asarray(expected[1][0]), rtol=1e-6)
