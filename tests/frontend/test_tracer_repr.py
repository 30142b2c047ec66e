"""A tracer prints as jax's tracer in the same place (`mlax.tracer_text`): JitTracer under jit,
control flow, make_jaxpr and eval_shape; VmapTracer under vmap; GradTracer / JVPTracer under
differentiation, with ``~`` for a weak type. Each case runs on jax and on mlax."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp


def _printed(lib: Any, numpy: Any, run: Callable[[Any, Any, Callable[..., Any]], Any]) -> list[str]:
    """What ``run`` prints through ``show`` (the repr of what it is given), on ``lib``."""
    seen: list[str] = []

    def show(*values: Any) -> Any:
        seen.append(" ".join(repr(v) for v in values))
        return values[0]

    run(lib, numpy, show)
    return seen


CASES: dict[str, Callable[[Any, Any, Callable[..., Any]], Any]] = {
    "jit_weak_and_strong": lambda m, n, show: m.jit(lambda x, y: show(x, y, x * 2, y > 0))(
        1.0, n.ones((2, 3))),
    "jit_int_bool": lambda m, n, show: m.jit(lambda i, b: show(i, b))(np.int32(3), True),
    "jit_key": lambda m, n, show: m.jit(lambda k: [show(k), 0][1])(m.random.split(m.random.key(0), 2)),
    "jit_raw_key": lambda m, n, show: m.jit(lambda k: show(k))(m.random.split(m.random.PRNGKey(0), 2)),
    "vmap": lambda m, n, show: m.vmap(show)(n.ones((3, 2))),
    "vmap_axis_1": lambda m, n, show: m.vmap(show, in_axes=1)(n.ones((2, 3))),
    "jit_of_vmap": lambda m, n, show: m.jit(m.vmap(lambda x: show(x) * 2))(n.ones(3)),
    "jit_of_grad": lambda m, n, show: m.jit(m.grad(lambda x: show(x) * 2))(1.0),
    "jit_of_grad_int_argnum": lambda m, n, show: m.jit(m.grad(lambda x: show(x) * 2))(np.float32(1.0)),
    "jit_of_jvp": lambda m, n, show: m.jit(lambda x: m.jvp(lambda y: show(y) * 2, (x,), (x,)))(1.0),
    "scan": lambda m, n, show: m.lax.scan(lambda c, x: (show(c, x), x), 0.0, n.ones(3)),
    "cond": lambda m, n, show: m.lax.cond(True, lambda x: show(x), lambda x: x, 1.0),
    "while": lambda m, n, show: m.lax.while_loop(lambda c: show(c) < 1, lambda c: c + 1, 0),
    "make_jaxpr": lambda m, n, show: m.make_jaxpr(show)(n.ones(2, n.int32)),
    "eval_shape": lambda m, n, show: m.eval_shape(show, 1.0),
}


@pytest.mark.parametrize("name", CASES)
def test_repr_matches_jax(name: str) -> None:
    ours = _printed(mlax, mnp, CASES[name])
    theirs = _printed(jax, jnp, CASES[name])
    assert ours == theirs
    assert str(ours)  # something was printed


def test_str_and_format_are_the_repr() -> None:
    seen: list[str] = []
    mlax.jit(lambda x: seen.append(f"x = {x}") or x)(1.0)
    jax.jit(lambda x: seen.append(f"x = {x}") or x)(1.0)
    assert seen == ["x = JitTracer(~float32[])"] * 2


def test_eager_grad_shows_the_abstract_primal() -> None:
    """jax differentiates eagerly and shows the primal's value; mlax traces the function under a
    jit of its own, so the primal is a JitTracer there (the tangent's type is jax's)."""
    seen: list[str] = []
    mlax.grad(lambda x: seen.append(repr(x)) or x * 2)(1.0)
    assert seen == ["GradTracer(primal=JitTracer(~float32[]), typeof(tangent)=f32[])"]
