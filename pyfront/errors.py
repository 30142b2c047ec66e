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


class ConcretizationTypeError(jax_errors.ConcretizationTypeError):
    """A traced value was used where Python needs a concrete one (bool, int, NumPy...). A
    subclass of jax's, so ``except jax.errors.ConcretizationTypeError`` catches it too."""

    def __init__(self, tracer: Any, conversion: str) -> None:
        name = tracer.trace.function_name
        TypeError.__init__(  # jax's own __init__ wants a jax tracer
            self,
            f"Attempted {conversion} conversion of a traced array {tracer.aval} inside the "
            f"traced function '{name}'.\n"
            f"The value is the {tracer.origin}.\n"
            "Its value is unknown while tracing: for value-dependent control flow use "
            "mlax.lax.cond, mlax.lax.while_loop or mlax.numpy.where; if the value is a "
            "configuration constant, mark the argument static with static_argnums or "
            f"static_argnames.{where()}"
        )


class UnexpectedTracerError(jax_errors.UnexpectedTracerError):
    """A tracer escaped the function that created it (stored globally, returned by a side
    effect). A subclass of jax's, as ConcretizationTypeError is."""

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
