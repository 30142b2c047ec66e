"""make_jaxpr's equations that apply functions, bound on mlax values: one table, name -> rule.

Beside jax's lax primitives (pyfront/lax_primitives.py), mlax's jaxprs have an equation per
declaration (cond, while, scan, custom_jvp_call, custom_vjp_call, checkpoint, jvp, vmap) and
per nested jit or call, whose params name the functions they apply as ClosedJaxprs
(pyfront/jaxpr.py). Libraries that rebuild a jaxpr (equinox's finalisation) rebind these
equations with params whose jaxprs they transformed: each rule here applies the construct its
name says to those jaxprs, evaluated as functions (`mlax.jaxpr_eval.jaxpr_as_fun`), so the
construct stays what it was (a loop stays a loop, a custom rule a custom rule).

They are mlax's objects, not jax's ``cond_p`` or ``custom_jvp_call_p``: jax's take jax's params
(a cond's index operand, a custom_jvp_call's traced functions) and libraries key their own
handling of jax's call primitives by jax's objects. Left out: ``vjp`` (its pullback's varying
specs), ``shard_map`` and callbacks, whose params are not the functions alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax.extend.core as jex

from mlax import lax
from mlax.ad_checkpoint import checkpoint, checkpoint_policies
from mlax.autodiff import jvp
from mlax.batching import vmap
from mlax.custom_derivatives import custom_jvp, custom_vjp
from mlax.jaxpr_eval import jaxpr_as_fun
from mlax.lax_primitives import RulePrimitive


def _outputs(closed: jex.ClosedJaxpr) -> int:
    return len(closed.jaxpr.outvars)


def _call(*args: Any, jaxpr: jex.ClosedJaxpr, name: str | None = None) -> list[Any]:
    """A nested jit (its name is the program's, not the values'), applied in place."""
    del name
    return jaxpr_as_fun(jaxpr)(*args)


def _closed_call(*args: Any, call_jaxpr: jex.ClosedJaxpr) -> list[Any]:
    return jaxpr_as_fun(call_jaxpr)(*args)


def _cond(index: Any, *operands: Any, branches: Sequence[jex.ClosedJaxpr]) -> list[Any]:
    return list(lax.switch(index, [jaxpr_as_fun(b) for b in branches], *operands))


def _while(*carry: Any, cond_jaxpr: jex.ClosedJaxpr, body_jaxpr: jex.ClosedJaxpr) -> list[Any]:
    cond, body = jaxpr_as_fun(cond_jaxpr), jaxpr_as_fun(body_jaxpr)
    return list(lax.while_loop(lambda c: cond(*c)[0], lambda c: tuple(body(*c)), tuple(carry)))


def _scan(*args: Any, jaxpr: jex.ClosedJaxpr, length: int, reverse: bool, num_carry: int,
          num_consts: int) -> list[Any]:
    """The body takes the consts, the carry and one slice of each scanned input."""
    body = jaxpr_as_fun(jaxpr)
    consts, carry, xs = args[:num_consts], args[num_consts:][:num_carry], args[num_consts + num_carry:]

    def step(c: tuple[Any, ...], x: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        out = body(*consts, *c, *x)
        return tuple(out[:num_carry]), tuple(out[num_carry:])

    final, ys = lax.scan(step, tuple(carry), tuple(xs), length=length, reverse=reverse)
    return [*final, *ys]


def _split(out: Sequence[Any], n: int) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    return tuple(out[:n]), tuple(out[n:])


def _rule(closed: jex.ClosedJaxpr | None, what: str) -> Callable[..., list[Any]]:
    """A custom rule's jaxpr as a function; where the equation has none (the rule failed when
    traced at the call, and mlax keeps a stand-in that raises if the rule is used), a rule
    failing in the same way when traced."""
    if closed is not None:
        return jaxpr_as_fun(closed)

    def failed(*args: Any) -> list[Any]:
        raise NotImplementedError(f"the {what} of this equation failed when traced at its call; "
                                  "rebinding the equation keeps it so")

    return failed


def _custom_jvp_call(*args: Any, call_jaxpr: jex.ClosedJaxpr, jvp_jaxpr: jex.ClosedJaxpr | None = None
                     ) -> list[Any]:
    """The function with its JVP rule (primals and tangents in, outputs and their tangents out)."""
    n = _outputs(call_jaxpr)
    call, rule = jaxpr_as_fun(call_jaxpr), _rule(jvp_jaxpr, "custom_jvp rule")
    fun = custom_jvp(lambda *xs: tuple(call(*xs)))
    fun.defjvp(lambda primals, tangents: _split(rule(*primals, *tangents), n))
    return list(fun(*args))


def _custom_vjp_call(*args: Any, call_jaxpr: jex.ClosedJaxpr, fwd_jaxpr: jex.ClosedJaxpr | None = None,
                     bwd_jaxpr: jex.ClosedJaxpr | None = None) -> list[Any]:
    """The function with its VJP rule: fwd gives the outputs and then the residuals, bwd the
    inputs' cotangents from the residuals and the outputs' cotangents."""
    n = _outputs(call_jaxpr)
    call, fwd, bwd = jaxpr_as_fun(call_jaxpr), _rule(fwd_jaxpr, "custom_vjp fwd"), _rule(bwd_jaxpr,
                                                                                          "custom_vjp bwd")
    fun = custom_vjp(lambda *xs: tuple(call(*xs)))
    fun.defvjp(lambda *xs: _split(fwd(*xs), n),
               lambda residuals, cts: tuple(bwd(*residuals, *cts)))
    return list(fun(*args))


def _checkpoint(*args: Any, jaxpr: jex.ClosedJaxpr, policy: str = "nothing_saveable",
                prevent_cse: bool = True) -> list[Any]:
    """The function under checkpoint, its policy found by jax's name for it."""
    chosen = getattr(checkpoint_policies, policy, None)
    if chosen is None or policy.startswith(("save_", "offload_")):  # policies made from arguments
        raise NotImplementedError(f"binding a checkpoint equation of policy {policy!r}: mlax finds "
                                  "jax's named policies only")
    fun = jaxpr_as_fun(jaxpr)
    return list(checkpoint(lambda *xs: tuple(fun(*xs)), policy=chosen, prevent_cse=prevent_cse)(*args))


def _jvp(*args: Any, jaxpr: jex.ClosedJaxpr) -> list[Any]:
    """The function's JVP: the primals, then as many tangents, in; the outputs, then theirs, out."""
    n = len(args) // 2
    fun = jaxpr_as_fun(jaxpr)
    out, tangents = jvp(lambda *xs: tuple(fun(*xs)), tuple(args[:n]), tuple(args[n:]))
    return [*out, *tangents]


def _vmap(*args: Any, jaxpr: jex.ClosedJaxpr, in_axes: Sequence[int], out_axes: Sequence[int],
          axis_size: int, axis_name: str | None = None) -> list[Any]:
    """The function mapped (an axis of -1: the argument or result is not mapped)."""
    fun = jaxpr_as_fun(jaxpr)

    def axes(values: Sequence[int]) -> tuple[int | None, ...]:
        return tuple(None if a == -1 else a for a in values)

    return list(vmap(lambda *xs: tuple(fun(*xs)), in_axes=axes(in_axes), out_axes=axes(out_axes),
                     axis_size=axis_size, axis_name=axis_name)(*args))


_RULES: dict[str, Callable[..., list[Any]]] = {
    "jit": _call, "closed_call": _closed_call, "cond": _cond, "while": _while, "scan": _scan,
    "custom_jvp_call": _custom_jvp_call, "custom_vjp_call": _custom_vjp_call, "checkpoint": _checkpoint,
    "jvp": _jvp, "vmap": _vmap,
}
BY_NAME: dict[str, RulePrimitive] = {name: RulePrimitive(name, rule, True) for name, rule in _RULES.items()}
