"""User-facing errors of the front end, worded after JAX's so users recognise them.

Every error a user's input causes is raised through `user_error`, which names the argument
at fault and the user's source line (the innermost frame outside mlax, as `where()` finds it):
errors are often found deep inside a transformation, far from the call that caused them.
"""

from __future__ import annotations

import operator
import threading
from typing import Any, TypeVar

from jax import errors as jax_errors

from mlax.source_info import where

E = TypeVar("E", bound=BaseException)


def user_error(kind: type[E], message: str, argument: str | None = None) -> E:
    """``kind(message)``, followed by the argument at fault (e.g. ``"fun of mlax.jit"``) and
    the user's file:line."""
    named = f"{message}\n  argument: {argument}" if argument else message
    return kind(f"{named}{where()}")


def check_callable(value: Any, argument: str) -> None:
    """JAX's check of a function argument, made when the transformation is built."""
    if not callable(value):
        raise user_error(TypeError, f"Expected a callable value, got {value!r}", argument)


def index_tuple(value: Any, name: str, api: str) -> tuple[int, ...]:
    """An int or a sequence of ints (``static_argnums``, ``argnums``...) as a tuple of ints."""
    items = value if isinstance(value, (tuple, list)) else (value,)
    try:
        return tuple(operator.index(v) for v in items)
    except TypeError:
        raise user_error(TypeError, f"{name} must be an int or a sequence of ints, got {value!r}",
                         f"{name} of {api}") from None


def name_tuple(value: Any, name: str, api: str) -> tuple[str, ...]:
    """A str or a sequence of strs (``static_argnames``...) as a tuple of strs."""
    items = (value,) if isinstance(value, str) else value
    if not isinstance(items, (tuple, list)) or not all(isinstance(v, str) for v in items):
        raise user_error(TypeError, f"{name} must be a str or a sequence of strs, got {value!r}",
                         f"{name} of {api}")
    return tuple(items)


# Python asking a traced value for a concrete one raises jax's own classes (jax.errors under
# install_as_jax), with jax's text: they build it from the tracer's ``_error_repr`` and
# ``_origin_msg`` (mlax.tracer_text).
ConcretizationTypeError = jax_errors.ConcretizationTypeError
TracerBoolConversionError = jax_errors.TracerBoolConversionError
TracerIntegerConversionError = jax_errors.TracerIntegerConversionError
TracerArrayConversionError = jax_errors.TracerArrayConversionError
NonConcreteBooleanIndexError = jax_errors.NonConcreteBooleanIndexError
# What any of Python's conversions of a tracer raises (jax's classes do not share a base below
# TypeError): the classes mlax's own code lets through where it catches other TypeErrors.
CONCRETIZATION_ERRORS = (ConcretizationTypeError, TracerIntegerConversionError, TracerArrayConversionError)


def concretization_error(tracer: Any, conversion: str, context: str = "") -> TypeError:
    """jax's error for ``conversion`` of ``tracer``: ``"bool"``, ``"index"`` (``__index__``),
    ``"array"`` (``__array__``), ``"int"``/``"float"``/``"complex"``, ``"item"``, ``"tolist"``,
    or ``"value"`` (a concrete value an API needs, ``context`` saying which)."""
    if conversion == "bool":
        return TracerBoolConversionError(tracer)
    if conversion == "index":
        return TracerIntegerConversionError(tracer)
    if conversion == "array":
        return TracerArrayConversionError(tracer)
    if conversion in ("int", "float", "complex"):
        context = (f"The problem arose with the `{conversion}` function. If trying to convert the data "
                   f"type of a value, try using `x.astype({conversion})` or `jnp.array(x, {conversion})` "
                   "instead.")
    elif conversion == "item":
        context = "This occurred in the item() method of jax.Array"
    elif conversion == "tolist":
        context = f"The tolist() method was called on {tracer._error_repr()}."
    return ConcretizationTypeError(tracer, context)


class UnexpectedTracerError(jax_errors.UnexpectedTracerError):
    """A tracer escaped the function that created it (stored globally, returned by a side
    effect). A subclass of jax's, so ``except jax.errors.UnexpectedTracerError`` catches it."""

    def __init__(self, tracer: Any, trace: Any) -> None:
        here = threading.current_thread().name
        if tracer.trace.active and tracer.trace.thread != here:
            place = (f" in thread {here!r}, while thread {tracer.trace.thread!r} is tracing it"
                     + (f" (this thread is tracing '{trace.function_name}')" if trace is not None else ""))
        elif trace is not None:
            place = f" inside the traced function '{trace.function_name}'"
        else:
            place = " outside of it"
        TypeError.__init__(
            self,
            f"Encountered a traced value {tracer.aval} ({tracer.origin}) from the traced "
            f"function '{tracer.trace.function_name}'{place}. Traced values are only "
            "valid inside the function being traced (in the thread tracing it); return them "
            f"as outputs instead of storing them in globals or closures.{where()}"
        )
