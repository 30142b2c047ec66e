"""jax.named_scope and jax.named_call: names that label the ops traced inside them.

jax prefixes the ops' names (its HLO metadata) with the scopes they were traced in; mlax puts
the same scope path into each op's location, ``loc("block/layer1/f"("file":line:col))``, so
the scopes show in every stage's IR and in the names of passes' diagnostics. The stack is per
thread, like the trace state.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any

_LOCAL = threading.local()


def _stack() -> list[str]:
    stack = getattr(_LOCAL, "names", None)
    if stack is None:
        stack = _LOCAL.names = []
    return stack


def scoped(name: str) -> str:
    """``name`` under the current scopes: ``outer/inner/name``."""
    stack = _stack()
    return "/".join([*stack, name]) if stack else name


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """Label the ops traced in this block with ``name`` (nested scopes join with ``/``)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    stack = _stack()
    stack.append(name)
    try:
        yield
    finally:
        stack.pop()


def named_call(fun: Callable[..., Any], *, name: str | None = None) -> Callable[..., Any]:
    """``fun``, whose calls trace inside ``named_scope(name)`` (``fun``'s own name by default)."""
    scope = name if name is not None else getattr(fun, "__name__", "named_call")

    @functools.wraps(fun)
    def call(*args: Any, **kwargs: Any) -> Any:
        with named_scope(scope):
            return fun(*args, **kwargs)

    return call
