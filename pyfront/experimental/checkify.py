"""mlax.experimental.checkify: jax's functionalized runtime checks, for user checks.

``checkify(f)`` runs ``f`` as one traced program (nested jits inline into it) in a *scope*
that collects the ``check(pred, msg, *fmt_args, **fmt_kwargs)`` calls made in it; the program
returns ``(error, out)``, where ``error`` is an `Error`: a pytree whose leaves are each check's
"failed" flag and its formatting arguments, its messages static. ``error.get()`` is the message
of the first check that failed (None if none did), ``error.throw()`` raises it as jax's
``JaxRuntimeError``. A check outside any checkify acts at once on a concrete predicate and,
as in jax, is an error on a traced one (it cannot be staged without being functionalized).

Only user checks (``user_checks``, jax's default) are collected: the automatic categories
(NaN, division by zero, out-of-bounds indexing) raise NotImplementedError. A check inside a
transformation nested within the checkified function (vmap, scan, grad bodies) is refused
with the same error: its predicate belongs to that body.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from jax import tree_util
from jax._src.checkify import (
    ErrorCategory,
    FailedCheckError,
    JaxRuntimeError,
    all_checks,
    automatic_checks,
    div_checks,
    float_checks,
    index_checks,
    nan_checks,
    user_checks,
)

import mlax.numpy as mnp
from mlax.array import Array
from mlax.core import Tracer, current_trace
from mlax.errors import user_error
from mlax.staging import Staged, wraps

__all__ = ["Error", "ErrorCategory", "FailedCheckError", "JaxRuntimeError", "all_checks",
           "automatic_checks", "check", "check_error", "checkify", "debug_check", "div_checks",
           "float_checks", "index_checks", "nan_checks", "user_checks"]

_NOT_FUNCTIONALIZED = ("Cannot abstractly evaluate a checkify.check which was not functionalized. This "
                       "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
                       "functionalizing it through `checkify.checkify`.")


@tree_util.register_pytree_node_class
class Error:
    """The checks of one checkified call: per check a boolean "failed" flag, its message and
    its formatting arguments (arrays)."""

    def __init__(self, failed: list[Any], messages: tuple[str, ...], fmt: list[Any]) -> None:
        self._failed, self._messages, self._fmt = list(failed), tuple(messages), list(fmt)

    def tree_flatten(self) -> tuple[list[Any], Any]:
        fmt_leaves, fmt_trees = [], []
        for args in self._fmt:
            leaves, tree = tree_util.tree_flatten(args)
            fmt_leaves.append(leaves)
            fmt_trees.append(tree)
        children = [*self._failed, *(x for leaves in fmt_leaves for x in leaves)]
        return children, (self._messages, tuple(fmt_trees))

    @classmethod
    def tree_unflatten(cls, aux: Any, children: list[Any]) -> Error:
        messages, trees = aux
        failed, rest = children[:len(messages)], iter(children[len(messages):])
        fmt = [tree_util.tree_unflatten(t, [next(rest) for _ in range(t.num_leaves)]) for t in trees]
        return cls(failed, messages, fmt)

    def _first(self) -> int | None:
        if any(isinstance(f, Tracer) for f in self._failed):
            raise user_error(ValueError, "checkify.Error.get/throw need the error's values: call them on "
                             "the error a checkified function returned, outside the trace", "checkify.Error")
        return next((i for i, f in enumerate(self._failed) if bool(np.asarray(f))), None)

    def get(self) -> str | None:
        """The message of the first check that failed, or None."""
        i = self._first()
        if i is None:
            return None
        args, kwargs = tree_util.tree_map(mnp.asarray, self._fmt[i])  # Arrays, as jax formats them
        return f"{self._messages[i].format(*args, **kwargs)} (`check` failed)"  # jax's text

    def get_exception(self) -> JaxRuntimeError | None:
        message = self.get()
        return None if message is None else JaxRuntimeError(message)

    def throw(self) -> None:
        """Raise jax's JaxRuntimeError with the first failed check's message, if one failed."""
        error = self.get_exception()
        if error is not None:
            raise error

    def __str__(self) -> str:
        traced = any(isinstance(f, Tracer) for f in self._failed)
        return "Error(traced)" if traced else f"Error({self.get()})"

    __repr__ = __str__


class _Scope:
    def __init__(self, trace: Any) -> None:
        self.trace = trace
        self.failed: list[Any] = []
        self.messages: list[str] = []
        self.fmt: list[Any] = []


class _Scopes(threading.local):
    def __init__(self) -> None:
        self.stack: list[_Scope] = []


_SCOPES = _Scopes()


def _is_scalar_pred(pred: Any) -> bool:
    if isinstance(pred, bool):
        return True
    shape, dtype = getattr(pred, "shape", None), getattr(pred, "dtype", None)
    return shape == () and dtype is not None and np.dtype(dtype) == np.bool_


def _record(scope: _Scope, failed: Any, message: str, fmt: Any) -> None:
    if current_trace() is not scope.trace:
        raise user_error(NotImplementedError, "checkify.check inside a transformation (vmap, scan, grad, "
                         "cond...) nested in a checkified function is not supported by mlax yet",
                         "checkify.check")
    scope.failed.append(failed)
    scope.messages.append(message)
    scope.fmt.append(fmt)


def check(pred: Any, msg: str, *fmt_args: Any, debug: bool = False, **fmt_kwargs: Any) -> None:
    """Check ``pred``; if it is False, the enclosing checkify's error gets ``msg`` formatted
    with ``fmt_args``/``fmt_kwargs`` (arrays), as jax.experimental.checkify.check."""
    if not _is_scalar_pred(pred):
        raise TypeError(f"{'debug_check' if debug else 'check'} takes a scalar pred as argument, got {pred}")
    for arg in tree_util.tree_leaves((fmt_args, fmt_kwargs)):
        if not (isinstance(arg, (np.ndarray, Array)) or hasattr(arg, "aval") and hasattr(arg, "shape")):
            raise TypeError("Formatting arguments to checkify.check need to be PyTrees of arrays, but got "
                            f"{arg!r} of type {type(arg)}.")
    if _SCOPES.stack and not debug:
        _record(_SCOPES.stack[-1], mnp.logical_not(pred), msg, (fmt_args, fmt_kwargs))
        return
    if isinstance(pred, Tracer):
        if debug:
            return  # jax removes a debug check it cannot functionalize
        raise user_error(ValueError, _NOT_FUNCTIONALIZED, "checkify.check")
    Error([np.logical_not(np.asarray(pred))], (msg,), [(fmt_args, fmt_kwargs)]).throw()


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """A check that is dropped where it cannot be functionalized, as jax's."""
    check(pred, msg, *fmt_args, debug=True, **fmt_kwargs)


def check_error(error: Error) -> None:
    """Raise ``error`` if it holds a failed check (concrete), or add its checks to the
    enclosing checkify (traced), as jax's."""
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error as argument, got type {type(error)} instead.")
    if not any(isinstance(f, Tracer) for f in error._failed):
        error.throw()
        return
    if not _SCOPES.stack:
        raise user_error(ValueError, _NOT_FUNCTIONALIZED, "checkify.check_error")
    for failed, message, fmt in zip(error._failed, error._messages, error._fmt, strict=True):
        _record(_SCOPES.stack[-1], failed, message, fmt)


def checkify(f: Callable[..., Any], errors: frozenset[Any] = user_checks) -> Callable[..., Any]:
    """``f`` made to return ``(error, out)``: the `Error` of the checks it made, and its
    outputs, as jax.experimental.checkify.checkify (user checks only)."""
    unsupported = set(errors) - set(user_checks)
    if unsupported:
        names = sorted(getattr(e, "__name__", str(e)) for e in unsupported)
        raise user_error(NotImplementedError, f"checkify of the automatic error categories {names} is not "
                         "supported by mlax yet (user_checks are)", "errors of mlax checkify")

    def run(trace: Any, *args: Any, **kwargs: Any) -> Any:
        scope = _Scope(trace)
        _SCOPES.stack.append(scope)
        try:
            out = f(*args, **kwargs)
        finally:
            _SCOPES.stack.pop()
        return Error(scope.failed, tuple(scope.messages), scope.fmt), out

    staged = Staged(run, f)

    @wraps(f)
    def checked(*args: Any, **kwargs: Any) -> Any:
        return staged(*args, **kwargs)

    return checked
