"""`mlax.debug`: callback, print and breakpoint, as jax.debug.

Each is a debug callback (pyfront/callbacks.py): effectful, with no results, never dropped,
and called in program order on every backend. Under vmap it is called once per batch element
(with that element's slice of the batched operands), under jvp and grad once, with the primal
values, as in jax.

`breakpoint` does not start jax's debugger: it calls `breakpoint_hook` on the host with a
`DebugFrame` of the caller's local variables (traced values replaced by their concrete values
at that point of the program). The default hook opens an interactive console on them (like
pdb's ``interact``); tests and tools set their own with `set_breakpoint_hook`.
"""

from __future__ import annotations

import code
import string
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlax.callbacks import CallArguments, check_callable, stage_callback
from mlax.core import is_array_like
from mlax.errors import user_error
from mlax.visualize import inspect_array_sharding, visualize_array_sharding, visualize_sharding  # noqa: F401


def callback(
    callback: Callable[..., Any] | None = None,
    *args: Any,
    ordered: bool = False,
    partitioned: bool = False,
    **kwargs: Any,
) -> Callable[..., None] | None:
    """Call ``callback(*args, **kwargs)`` on the host from a traced program (jax.debug.callback);
    its return value is ignored. ``callback(ordered=True)`` alone returns the two-call form."""
    del partitioned

    def call(fun: Callable[..., Any], *c_args: Any, **c_kwargs: Any) -> None:
        check_callable(fun, "mlax.debug.callback")
        stage_callback(
            fun, CallArguments(c_args, c_kwargs), [], kind="debug", api="mlax.debug.callback", ordered=ordered
        )

    if callback is not None:
        call(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise user_error(
            TypeError, f"debug_callback received unexpected arguments in the two-call form: {args=} {kwargs=}"
        )
    return call


class _FormatChecker(string.Formatter):
    """jax's check that ``fmt`` uses exactly the arguments given (nothing is formatted)."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def check_unused_args(self, used_args: Any, args: Any, kwargs: Any) -> None:
        unused_args = [arg for i, arg in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused_args:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused_args}")
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. "
                'You may be passing an f-string (i.e, `f"{x}"`) into '
                "`jax.debug.print` and instead should pass in a regular string."
            )


def _printer(fmt: str, printoptions: dict[str, Any], has_placeholders: bool) -> Callable[..., None]:
    def write(*args: Any, **kwargs: Any) -> None:
        if has_placeholders:
            with np.printoptions(**printoptions):
                message = fmt.format(*args, **kwargs)
        else:
            message = " ".join((fmt, *(str(a) for a in args)))
        sys.stdout.write(message + "\n")

    write.__name__ = "debug_print"
    return write


def print(
    fmt: str | None = None,
    *args: Any,
    ordered: bool = False,
    partitioned: bool = False,  # noqa: A001
    skip_format_check: bool = False,
    **kwargs: Any,
) -> Callable[..., None] | None:
    """Print ``fmt.format(*args, **kwargs)`` on the host when the program runs (jax.debug.print):
    arrays print as jax's do (NumPy's str, with the print options in effect at the call)."""
    del partitioned

    def call(fmt: str, *c_args: Any, **c_kwargs: Any) -> None:
        if not skip_format_check:
            _FormatChecker().format(fmt, *c_args, **c_kwargs)
        has_placeholders = bool(fmt) and next(iter(string.Formatter().parse(fmt)))[1] is not None
        write = _printer(fmt, dict(np.get_printoptions()), has_placeholders)
        stage_callback(
            write, CallArguments(c_args, c_kwargs), [], kind="debug", api="mlax.debug.print", ordered=ordered
        )

    if fmt is not None:
        call(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise user_error(
            TypeError, f"debug_print received unexpected arguments in the two-call form: {args=} {kwargs=}"
        )
    return call


@dataclass(frozen=True)
class DebugFrame:
    """What a breakpoint hook sees: the caller's file, line, function and local variables."""

    filename: str
    lineno: int
    function_name: str
    locals: dict[str, Any]


def _console(frame: DebugFrame) -> None:
    banner = (
        f"mlax.debug.breakpoint at {frame.filename}:{frame.lineno} in {frame.function_name}; "
        "locals are in scope, Ctrl-D continues"
    )
    code.interact(banner=banner, local=dict(frame.locals), exitmsg="")


_DEFAULT_HOOK: list[Callable[[DebugFrame], None]] = [_console]


def set_breakpoint_hook(hook: Callable[[DebugFrame], None] | None) -> None:
    """Make ``hook(frame)`` what `breakpoint` calls (None restores the console), process-wide."""
    _DEFAULT_HOOK[0] = _console if hook is None else hook


def breakpoint(
    *,
    backend: str | None = None,
    filter_frames: bool = True,  # noqa: A001
    num_frames: int | None = None,
    ordered: bool = False,
    **kwargs: Any,
) -> None:
    """Stop at this point of the program (jax.debug.breakpoint): calls the breakpoint hook with
    the caller's local variables, their values as computed there. Only the calling frame is
    given (``num_frames`` and ``backend`` are accepted and ignored)."""
    del backend, filter_frames, num_frames, kwargs
    caller = sys._getframe(1)
    names = list(caller.f_locals)
    values = [caller.f_locals[n] for n in names]
    where = (caller.f_code.co_filename, caller.f_lineno, caller.f_code.co_name)

    def enter(*concrete: Any) -> None:
        given = iter(concrete)
        local = {n: next(given) if is_array_like(v) else v for n, v in zip(names, values, strict=True)}
        _DEFAULT_HOOK[0](DebugFrame(*where, local))

    enter.__name__ = "breakpoint"
    stage_callback(
        enter,
        CallArguments(tuple(v for v in values if is_array_like(v)), {}),
        [],
        kind="debug",
        api="mlax.debug.breakpoint",
        ordered=ordered,
    )
