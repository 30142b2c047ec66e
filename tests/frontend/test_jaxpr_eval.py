"""jax.core.eval_jaxpr and jax.extend.core.jaxpr_as_fun on the jaxprs mlax.make_jaxpr gives
(pyfront/jaxpr_eval.py): the same values as jax's on the same program, eagerly, inside a jit,
under grad and vmap, with control flow, and with consts given for an enclosing trace's values
(equinox's filter_closure_convert evaluates its jaxpr so)."""

from __future__ import annotations

from typing import Any

import jax
import jax.extend.core as jex
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.jaxpr_eval import eval_jaxpr, jaxpr_as_fun
from tests.oracle import assert_same

RNG = np.random.default_rng(3535)
CLOSE = {"rtol": 2e-6, "atol": 2e-6}


def _program(lib: Any, loop: bool = True) -> Any:
    """Consts, cond and (where not differentiated: jax cannot either) a while_loop."""
    def f(x, y):
        table = lib.numpy.asarray(np.array([0.5, -1.0, 2.0], np.float32))  # a non-splat const
        z = lib.numpy.sin(x) * y + table
        z = lib.lax.cond(z.sum() > 0, lambda a: a * 2.0, lambda a: a - 1.0, z)
        if loop:
            _, z = lib.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 1.5 + y), (0, z))
        return z, lib.numpy.exp(y)
    return f


def _both(run: Any) -> tuple[Any, Any]:
    """``run(lib, evaluate)`` on mlax with mlax's eval_jaxpr and on jax with jax's."""
    return run(mlax, eval_jaxpr), run(jax, jax.core.eval_jaxpr)


@pytest.mark.parametrize("how", ["eager", "jit", "grad", "vmap"])
def test_eval_jaxpr_as_jax(how: str) -> None:
    x = RNG.normal(size=(3,)).astype(np.float32)
    y = np.float32(RNG.normal())

    def run(lib: Any, evaluate: Any) -> Any:
        closed = lib.make_jaxpr(_program(lib, loop=how != "grad"))(x, y)

        def f(a: Any, b: Any) -> Any:
            return evaluate(closed.jaxpr, closed.consts, a, b)

        if how == "eager":
            return f(x, y)
        if how == "jit":
            return lib.jit(f)(x, y)
        if how == "grad":
            return lib.grad(lambda a, b: f(a, b)[0].sum(), argnums=(0, 1))(x, y)
        return lib.vmap(f, in_axes=(0, None))(np.stack([x, -x, 2 * x]), y)

    ours, theirs = _both(run)
    assert_same(ours, theirs, **CLOSE)


def test_consts_of_an_enclosing_trace_are_the_ones_given() -> None:
    """A jaxpr made inside a jit closes over the jit's tracer (a const of the ClosedJaxpr);
    evaluated with another value for that const, the result uses the value given."""
    x = RNG.normal(size=(4,)).astype(np.float32)

    def run(lib: Any, evaluate: Any) -> Any:
        def outer(z: Any) -> Any:
            closed = lib.make_jaxpr(lambda a: a * z + 1.0)(z)
            other = [c * 3.0 for c in closed.consts]
            return evaluate(closed.jaxpr, other, z - 1.0)[0], evaluate(closed.jaxpr, closed.consts, z)[0]

        return lib.jit(outer)(x)

    ours, theirs = _both(run)
    assert_same(ours, theirs, **CLOSE)


def test_jaxpr_as_fun_and_outputs_as_jax() -> None:
    x = RNG.normal(size=(2, 3)).astype(np.float32)
    y = np.float32(RNG.normal())
    ours = jaxpr_as_fun(mlax.make_jaxpr(_program(mlax))(x, y))(x, y)
    theirs = jex.jaxpr_as_fun(jax.make_jaxpr(_program(jax))(x, y))(x, y)
    assert isinstance(ours, list) and len(ours) == len(theirs)
    assert_same(ours, theirs, **CLOSE)


def test_arguments_of_another_dtype_are_converted() -> None:
    closed = mlax.make_jaxpr(lambda a: a * 2.0)(np.zeros(3, np.float32))
    (out,) = eval_jaxpr(closed.jaxpr, closed.consts, np.arange(3))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), [0.0, 2.0, 4.0])


def test_errors() -> None:
    closed = mlax.make_jaxpr(lambda a: mnp.cos(a))(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="takes 0 consts and 1 arguments"):
        eval_jaxpr(closed.jaxpr, closed.consts)
    with pytest.raises(TypeError, match="shape"):
        eval_jaxpr(closed.jaxpr, closed.consts, np.zeros(4, np.float32))
    # a jaxpr not read from an mlax trace: there is no function to call
    built = jex.Jaxpr([], [], [], [], debug_info=jex.DebugInfo("test", "built", None, None))
    with pytest.raises(NotImplementedError, match="not read from an mlax trace"):
        eval_jaxpr(built, [])


def test_install_as_jax_gives_them() -> None:
    from mlax import jax_modules

    assert ("eval_jaxpr", "mlax.jaxpr_eval:eval_jaxpr") in jax_modules.REDIRECTS["jax.core"].extras
    assert ("jaxpr_as_fun", "mlax.jaxpr_eval:jaxpr_as_fun") in jax_modules.REDIRECTS["jax.extend.core"].extras
