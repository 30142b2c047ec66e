"""How a tracer prints and what its errors say, in jax's words.

jax's tracer reprs name the transformation that traces the value (``JitTracer(~float32[])``,
``VmapTracer(aval=float32[], batched=float32[3])``, ``GradTracer(primal=1.0,
typeof(tangent)=f32[])``), and its concretization errors end with where the value came from
(``_origin_msg``). mlax traces every transformation into a function of its own, so the trace
(`mlax.core.Trace`) records what it traces for, and this module prints a tracer as jax prints
its counterpart there. Kept apart from `mlax.core`, which only calls in.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax.core import ShapedArray
from mlir import ir

from mlax.array import Array
from mlax.sharding_types import jax_type
from mlax.source_info import where
from mlax.trace_stack import concrete_mode

# jax's tracer class for each transformation mlax traces for; every other trace (jit, control
# flow bodies, make_jaxpr, eval_shape...) stages out a jaxpr in jax: a JitTracer.
_GRAD = frozenset({"grad", "value_and_grad", "vjp", "linearize"})
_WALK_LIMIT = 10_000  # values looked at to find the arguments a value depends on


def jax_aval(aval: Any) -> ShapedArray:
    """mlax's abstract value as jax's ``ShapedArray`` (whose printer gives jax's exact text:
    ``~float32[3]`` for a weak type, ``float32[4@X]`` under explicit sharding, ``float32[3]{V:i}``
    varying over a shard_map's axis)."""
    return jax_type(aval)


def describe(tracer: Any, aval_text: str | None = None) -> str:
    """jax's ``repr`` of the tracer's counterpart in the same place; ``aval_text`` overrides the
    text of the aval (a key array's ``key<fry>[2]``)."""
    trace = tracer.trace
    show = getattr(trace, "show", None)
    if show is not None:  # the body of a shard_map outside jit: its blocks (mlax.shard_mapping)
        return show(tracer)
    text = aval_text if aval_text is not None else str(jax_aval(tracer.aval))
    if trace.batch is not None:
        batched = _batched_text(tracer, aval_text)
        if batched is None:  # an argument vmap does not map: jax leaves it as it was
            return _outer(tracer, text)
        return f"VmapTracer(aval={text}, batched={batched})"
    if trace.traced_for in _GRAD:
        tangent = ShapedArray(tracer.aval.shape, _tangent_dtype(tracer.aval.dtype)).str_short(True)
        return f"GradTracer(primal={_outer(tracer, text)}, typeof(tangent)={tangent})"
    if trace.traced_for == "jvp":
        tangent = str(ShapedArray(tracer.aval.shape, _tangent_dtype(tracer.aval.dtype),
                                  weak_type=tracer.aval.weak_type))
        return f"JVPTracer(primal={_outer(tracer, text)}, tangent=JitTracer({tangent}))"
    return f"JitTracer({text})"


def _tangent_dtype(dtype: np.dtype) -> np.dtype:
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(jax.dtypes.float0)


def _outer(tracer: Any, text: str) -> str:
    """What the value is outside the transformation: its value where mlax knows it (jax, run
    eagerly, holds concrete arrays there), else a value traced by the jit around it."""
    if tracer.known is not None and concrete_mode() == "concrete":
        try:
            return str(Array._wrap(tracer.known.value(), tracer.aval.weak_type))
        except Exception:  # noqa: BLE001 - printing must not fail: fall back to the abstract text
            pass
    return f"JitTracer({text})"


def _batched_text(tracer: Any, aval_text: str | None) -> str | None:
    """The type of the batched value behind a tracer of a vmapped function: an argument's mapped
    axis is known; a value computed inside is shown batched along its first axis (jax's batch
    axis may move). None for an argument vmap does not map."""
    size, axes = tracer.trace.batch
    axis = 0
    value = tracer.value
    if isinstance(value, ir.BlockArgument) and value.owner == tracer.trace.block \
            and value.arg_number < len(axes):
        axis = axes[value.arg_number]
        if axis < 0:
            return None
    aval = tracer.aval
    shape = (*aval.shape[:axis], size, *aval.shape[axis:])
    batched = str(ShapedArray(shape, aval.dtype, weak_type=aval.weak_type))
    if aval_text is not None:  # a key array: its key type, with the batched shape
        return aval_text.split("[")[0] + batched[batched.index("["):]
    return batched


def error_repr(tracer: Any) -> str:
    """jax's ``Tracer._error_repr``."""
    return f"traced array with shape {jax_aval(tracer.aval).str_short()}"


def origin_message(tracer: Any) -> str:
    """jax's ``_origin_msg`` (the function, what it is traced for, the arguments the value
    depends on), then mlax's advice and the user's line."""
    trace = tracer.trace
    source = f" at {trace.source}" if trace.source else ""
    text = (f"\nThe error occurred while tracing the function {trace.function_name}{source} for "
            f"{trace.traced_for}. ")
    names = _arguments_behind(tracer)
    if names:
        listed = names[0] if len(names) == 1 else (
            f"{names[0]} and {names[1]}" if len(names) == 2 else f"{', '.join(names[:-1])}, and {names[-1]}")
        plural = "s" if len(names) > 1 else ""
        text += (f"This concrete value was not available in Python because it depends on the value{plural} "
                 f"of the argument{plural} {listed}.")
    else:
        text += f"The value is the {tracer.origin}."
    return (f"{text}\nFor value-dependent control flow use mlax.lax.cond, mlax.lax.while_loop or "
            "mlax.numpy.where; if the value is a configuration constant, mark the argument static with "
            f"static_argnums or static_argnames.{where()}")


def _arguments_behind(tracer: Any) -> list[str]:
    """The arguments of the traced function the value is computed from, in order (jax's
    progenitors), found by walking the traced IR back from the value."""
    trace = tracer.trace
    found: set[int] = set()
    seen: set[ir.Value] = set()
    pending = [tracer.value]
    while pending and len(seen) < _WALK_LIMIT:
        value = pending.pop()
        if value in seen:
            continue
        seen.add(value)
        if isinstance(value, ir.BlockArgument):
            if value.owner == trace.block and value.arg_number < len(trace.arg_names):
                found.add(value.arg_number)
            continue
        pending.extend(value.owner.operands)
    return [trace.arg_names[i] for i in sorted(found)]
