"""mlax.experimental.checkify: jax's functionalized runtime checks, user and automatic.

``checkify(f, errors)`` runs ``f`` as one traced program (nested jits inline into it) in a
*scope* that collects its errors; the program returns ``(error, out)``, where ``error`` is an
`Error`: a pytree whose leaves are, per recorded check, its "failed" flag and its payload
(a user check's formatting arguments, an out-of-bounds error's index, axis and size), its
messages static as jax's exception classes (`FailedCheckError`, `NaNError`, `OOBError`,
`DivisionByZeroError`). Each check gets a code in the order it is traced, so the first error
wins, as jax's codes do.

- User checks (``user_checks``): ``check(pred, msg, *fmt_args, **fmt_kwargs)``.
- Automatic checks (``nan_checks``, ``div_checks``, ``index_checks``): every op traced while
  the scope is open is seen at the one place mlax binds ops (`mlax.core.observed_binds`), and
  the rules of `checkify_rules` add its predicates, as jax's checkify interprets each
  primitive of the jaxpr.

Errors are values: under ``vmap`` of a checkified function they are batched, and ``get()``
names each mapped index, as jax's ``BatchedError``; ``throw()`` reduces them first (the last
failing index of each error type), as jax does. The bodies of transformations inside a
checkified function collect their own errors, which leave them as extra outputs: a vmap's
reduced that way, a shard_map's (pmap's) left per device, a scan's reduced to its first
failing step, a cond's branches' and a while_loop body's (carried) found by tracing them
once and returned by tracing them again, a grad's forward pass's as auxiliary outputs (its
derivative program, written later by mlax-autodiff, is not instrumented). Other nested bodies
(jvp, vjp, a while_loop's cond_fun, custom rules) have no scope: a user check there is refused
with NotImplementedError, and their ops are not instrumented.

``error.get()`` is the message of the first check that failed (None if none did),
``error.get_exception()`` jax's exception for it, ``error.throw()`` raises it as jax's
``JaxRuntimeError``. A check outside any checkify acts at once on a concrete predicate and,
as in jax, is an error on a traced one (it cannot be staged without being functionalized).
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from jax import tree_util
from jax._src.checkify import (
    BatchedError,
    ErrorCategory,
    FailedCheckError,
    JaxException,
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
from mlax.core import Tracer, current_trace, observed_binds
from mlax.errors import user_error
from mlax.experimental.checkify_rules import op_errors
from mlax.staging import Staged, wraps

__all__ = ["Error", "ErrorCategory", "FailedCheckError", "JaxRuntimeError", "all_checks",
           "automatic_checks", "check", "check_error", "checkify", "debug_check", "div_checks",
           "float_checks", "index_checks", "nan_checks", "user_checks"]

_NOT_FUNCTIONALIZED = ("Cannot abstractly evaluate a checkify.check which was not functionalized. This "
                       "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
                       "functionalizing it through `checkify.checkify`.")

_next_code = itertools.count(1).__next__  # as jax's: unique across checkified programs


@tree_util.register_pytree_node_class
class Error:
    """The checks of one checkified call, by code (the order they were traced): each one's
    "failed" flag and payload leaves; ``_metadata`` maps a code to its exception's treedef."""

    def __init__(self, pred: dict[int, Any], payload: dict[int, list[Any]], metadata: dict[int, Any]) -> None:
        self._pred, self._payload, self._metadata = dict(pred), dict(payload), dict(metadata)

    def tree_flatten(self) -> tuple[list[Any], Any]:
        codes = tuple(self._pred)
        children = [x for c in codes for x in (self._pred[c], *self._payload[c])]
        return children, (codes, tuple(self._metadata[c] for c in codes))

    @classmethod
    def tree_unflatten(cls, aux: Any, children: list[Any]) -> Error:
        codes, treedefs = aux
        rest = iter(children)
        pred, payload = {}, {}
        for code, treedef in zip(codes, treedefs, strict=True):
            pred[code] = next(rest)
            payload[code] = [next(rest) for _ in range(treedef.num_leaves)]
        return cls(pred, payload, dict(zip(codes, treedefs, strict=True)))

    def _values(self) -> dict[int, np.ndarray]:
        if any(isinstance(p, Tracer) for p in self._pred.values()):
            raise user_error(ValueError, "checkify.Error.get/throw need the error's values: call them on "
                             "the error a checkified function returned, outside the trace", "checkify.Error")
        return {c: np.asarray(p) for c, p in self._pred.items()}

    def _exception(self, code: int, index: tuple[int, ...] = ()) -> JaxException:
        """Check ``code``'s exception, its payload (at ``index`` of a batched error) as Arrays,
        as jax formats them."""
        mapped = index and np.shape(self._pred[code])  # (a check made outside the map is not)
        leaves = [mnp.asarray(np.asarray(x)[index] if mapped else x) for x in self._payload[code]]
        return tree_util.tree_unflatten(self._metadata[code], leaves)

    def get_exception(self) -> JaxException | None:
        """jax's exception of the first failed check (a `BatchedError` naming each mapped index
        of a batched error), or None."""
        preds = self._values()
        shape = next((p.shape for p in preds.values() if p.shape), None)
        if shape is None:
            code = min((c for c, p in preds.items() if p), default=None)
            return None if code is None else self._exception(code)
        mapping = {}
        for index in np.ndindex(*shape):
            code = min((c for c, p in preds.items() if np.broadcast_to(p, shape)[index]), default=None)
            if code is not None:
                mapping[index] = self._exception(code, index)
        return BatchedError(mapping) if mapping else None

    def get(self) -> str | None:
        """The message of the first check that failed, or None."""
        exception = self.get_exception()
        return None if exception is None else str(exception)

    def throw(self) -> None:
        """Raise jax's JaxRuntimeError for the first failed check (of a batched error: reduced
        over the batch as jax reduces it), if one failed."""
        error = _reduced(self) if any(p.shape for p in self._values().values()) else self
        exception = error.get_exception()
        if exception is not None:
            raise JaxRuntimeError(str(exception)) from exception

    def __str__(self) -> str:
        traced = any(isinstance(p, Tracer) for p in self._pred.values())
        return "Error(traced)" if traced else f"Error({self.get()})"

    __repr__ = __str__


def _effect(error: Error, code: int) -> Any:
    """jax's error effect of a check: its exception type and its payload's shapes and dtypes
    (jax merges the checks of one effect into one error)."""
    return (error._metadata[code].node_data()[0],
            tuple((np.shape(x), str(getattr(x, "dtype", ""))) for x in error._payload[code]))


def _reduced(error: Error, first: bool = False) -> Error:
    """A batched error reduced over its leading axis as jax's ``_reduce_any_error``: per error
    effect, the last index where one of its checks failed (``first``: the first, as a loop's
    carried error keeps it), each check's flag and payload there (the first of them that failed
    there wins by its code)."""
    traced = any(isinstance(p, Tracer) for p in error._pred.values())
    lib: Any = mnp if traced else np
    groups: dict[Any, list[int]] = {}
    for code in error._pred:
        groups.setdefault(_effect(error, code), []).append(code)
    pred, payload = dict(error._pred), dict(error._payload)
    for codes in groups.values():
        mapped = [c for c in codes if np.shape(error._pred[c])]  # (a check made outside the map is not)
        if not mapped:
            continue
        failed = functools.reduce(lib.logical_or, [lib.asarray(error._pred[c]) for c in codes])
        index = lib.argmax(failed) if first else failed.shape[0] - 1 - lib.argmax(failed[::-1])
        for c in mapped:
            pred[c] = lib.asarray(error._pred[c])[index]
            payload[c] = [x[index] for x in error._payload[c]]
    return Error(pred, payload, error._metadata)


class _Scope:
    """The errors collected while one trace runs (a checkified function, or the body of a vmap
    inside one), and the categories it checks."""

    def __init__(self, trace: Any, enabled: frozenset[Any]) -> None:
        self.trace, self.enabled = trace, enabled
        self.error = Error({}, {}, {})

    def add(self, failed: Any, exception: JaxException) -> None:
        code = _next_code()
        payload, treedef = tree_util.tree_flatten(exception)
        self.error._pred[code], self.error._payload[code] = failed, payload
        self.error._metadata[code] = treedef

    def merge(self, error: Error) -> None:
        """Add another error's checks (check_error, a vmapped body's), keeping their codes."""
        for code in error._pred:
            self.error._pred[code], self.error._payload[code] = error._pred[code], error._payload[code]
            self.error._metadata[code] = error._metadata[code]


class _Scopes(threading.local):
    def __init__(self) -> None:
        self.stack: list[_Scope] = []


_SCOPES = _Scopes()


def _scope_of(trace: Any) -> _Scope | None:
    return next((s for s in reversed(_SCOPES.stack) if s.trace is trace), None)


def _observe(op_name: str, operands: tuple[Any, ...], outs: list[Any], attrs: dict[str, Any],
             trace: Any) -> None:
    """The automatic checks of an op traced where a scope collects (not in a nested body it
    cannot reach), emitted with the observation off."""
    scope = _scope_of(trace)
    if scope is None or not scope.enabled & automatic_checks:
        return
    with observed_binds(None):
        for failed, exception in op_errors(op_name, operands, outs, attrs, scope.enabled):
            scope.add(failed, exception)


def _collecting_scope(checker: str) -> _Scope:
    scope = _scope_of(current_trace())
    if scope is None:
        raise user_error(NotImplementedError, f"{checker} inside a transformation (jvp, vjp, a "
                         "while_loop's cond_fun, custom rules...) nested in a checkified function is not "
                         "supported by mlax yet (vmap, pmap, scan, cond, while_loop bodies and grad are)",
                         checker)
    return scope


def _is_scalar_pred(pred: Any) -> bool:
    if isinstance(pred, bool):
        return True
    shape, dtype = getattr(pred, "shape", None), getattr(pred, "dtype", None)
    return shape == () and dtype is not None and np.dtype(dtype) == np.bool_


def check(pred: Any, msg: str, *fmt_args: Any, debug: bool = False, **fmt_kwargs: Any) -> None:
    """Check ``pred``; if it is False, the enclosing checkify's error gets ``msg`` formatted
    with ``fmt_args``/``fmt_kwargs`` (arrays), as jax.experimental.checkify.check."""
    if not _is_scalar_pred(pred):
        raise TypeError(f"{'debug_check' if debug else 'check'} takes a scalar pred as argument, got {pred}")
    for arg in tree_util.tree_leaves((fmt_args, fmt_kwargs)):
        if not (isinstance(arg, (np.ndarray, Array)) or hasattr(arg, "aval") and hasattr(arg, "shape")):
            raise TypeError("Formatting arguments to checkify.check need to be PyTrees of arrays, but got "
                            f"{arg!r} of type {type(arg)}.")
    exception = FailedCheckError(None, msg, *fmt_args, **fmt_kwargs)
    if _SCOPES.stack:
        scope = _collecting_scope("checkify.check")
        if FailedCheckError in scope.enabled:  # (without user_checks, jax drops them)
            scope.add(mnp.logical_not(pred), exception)
        return
    if isinstance(pred, Tracer):
        if debug:
            return  # jax removes a debug check it cannot functionalize
        raise user_error(ValueError, _NOT_FUNCTIONALIZED, "checkify.check")
    if not debug and not bool(np.asarray(pred)):
        error = Error({0: np.True_}, {}, {})
        error._payload[0], error._metadata[0] = tree_util.tree_flatten(exception)
        error.throw()


def debug_check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """A check that is dropped where it cannot be functionalized, as jax's."""
    check(pred, msg, *fmt_args, debug=True, **fmt_kwargs)


def check_error(error: Error) -> None:
    """Raise ``error`` if it holds a failed check (concrete), or add its checks to the
    enclosing checkify (traced), as jax's."""
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes an Error as argument, got type {type(error)} instead.")
    if not any(isinstance(p, Tracer) for p in error._pred.values()):
        error.throw()
        return
    if not _SCOPES.stack:
        raise user_error(ValueError, _NOT_FUNCTIONALIZED, "checkify.check_error")
    scope = _collecting_scope("checkify.check_error")
    with observed_binds(None):
        scope.merge(_reduced(error) if any(np.shape(p) for p in error._pred.values()) else error)


class MappedBody(NamedTuple):
    """A mapped body's errors (`mapped_body`): the body, what takes its errors back, and the
    body as a scan's, its errors among the ys."""

    body: Callable[..., Any]
    finish: Callable[[list[Any]], None]
    scan_body: Callable[[Any, Any], Any]


def mapped_body(fun: Callable[..., Any], trace: Any, per_device: bool = False,
                first: bool = False) -> MappedBody | None:
    """For a vmap, scan or shard_map (``per_device``) traced in ``trace`` where a checkify
    collects: ``fun`` made to return ``(out, leaves of its body's error)`` (stacked along a new
    axis 0; per device, each with a new axis of 1 for the devices to be stacked along), the
    function that adds the stacked error to ``trace``'s checks (a vmap's reduced over the batch
    as jax's check batching rule reduces it, a scan's to its ``first`` failing step in the order
    it runs, as jax's carried error, a shard_map's or pmap's left a value per device, as jax's
    rules leave them), and, for a scan, ``fun`` (a ``(carry, y)`` body) with the error leaves
    among its ys. None where no checkify collects in ``trace``."""
    outer = _scope_of(trace)
    if outer is None:
        return None
    structure: list[Any] = []

    @wraps(fun)
    def body(*args: Any, **kwargs: Any) -> Any:
        scope = _Scope(current_trace(), outer.enabled)
        _SCOPES.stack.append(scope)
        try:
            out = fun(*args, **kwargs)
        finally:
            _SCOPES.stack.pop()
        leaves, treedef = tree_util.tree_flatten(scope.error)
        structure.append(treedef)
        with observed_binds(None):
            return out, [mnp.expand_dims(x, 0) for x in leaves] if per_device else leaves

    @wraps(fun)
    def scan_body(carry: Any, x: Any) -> tuple[Any, Any]:
        """A scan body whose ys carry the error leaves of each step: ``(carry, (y, leaves))``."""
        (carry, y), leaves = body(carry, x)
        return carry, (y, leaves)

    def finish(leaves: list[Any]) -> None:
        error = tree_util.tree_unflatten(structure[-1], leaves)
        if per_device:  # a value per device, as jax's shard_map and pmap rules leave them
            outer.merge(error)
            return
        with observed_binds(None):
            outer.merge(_reduced(error, first))

    return MappedBody(body, finish, scan_body)


class BodyErrors:
    """The errors of control-flow bodies (cond branches, a while_loop's body) traced where a
    checkify collects: each body runs in a scope of its own, and its error's structure is kept
    (per body key, its last trace's), so that the construct can return every body's errors
    (a branch that did not run: its checks unfailed) or carry them through the loop."""

    def __init__(self, outer: _Scope) -> None:
        self.outer = outer
        self.found: dict[int, tuple[Any, list[tuple[tuple[int, ...], np.dtype]]]] = {}

    def run(self, key: int, fun: Callable[..., Any], *args: Any) -> tuple[Any, list[Any]]:
        """``fun(*args)`` collecting its checks: its output and its error's leaves."""
        scope = _Scope(current_trace(), self.outer.enabled)
        _SCOPES.stack.append(scope)
        try:
            out = fun(*args)
        finally:
            _SCOPES.stack.pop()
        leaves, treedef = tree_util.tree_flatten(scope.error)
        self.found[key] = (treedef, [(np.shape(x), np.dtype(x.dtype)) for x in leaves])
        return out, leaves

    def checked(self) -> bool:
        """Whether a body made a check."""
        return any(treedef.num_leaves for treedef, _ in self.found.values())

    def unfailed(self, key: int) -> list[np.ndarray]:
        """Leaves of body ``key``'s error with no check failed (zero payloads)."""
        return [np.zeros(shape, dtype) for shape, dtype in self.found[key][1]]

    def union(self, key: int, leaves: list[Any]) -> list[Any]:
        """Body ``key``'s error leaves in its place among every body's (the others unfailed)."""
        return [x for k in self.found for x in (leaves if k == key else self.unfailed(k))]

    def carried(self, key: int, before: list[Any], leaves: list[Any]) -> list[Any]:
        """A loop's carried error leaves after a step: each check's first failure kept."""
        treedef = self.found[key][0]
        old, new = tree_util.tree_unflatten(treedef, before), tree_util.tree_unflatten(treedef, leaves)
        with observed_binds(None):
            for code, failed in old._pred.items():
                new._payload[code] = [mnp.where(failed, a, b)
                                      for a, b in zip(old._payload[code], new._payload[code], strict=True)]
                new._pred[code] = mnp.logical_or(failed, new._pred[code])
        return tree_util.tree_leaves(new)

    def probed(self, key: int, body: Callable[..., Any]) -> Callable[..., Any]:
        """``body``, its checks collected on the side under ``key``."""
        @wraps(body)
        def probed(*args: Any) -> Any:
            return self.run(key, body, *args)[0]

        return probed

    def with_union(self, key: int, branch: Callable[..., Any]) -> Callable[..., Any]:
        """A cond branch returning ``(out, every branch's error leaves)``, its own in its place."""
        @wraps(branch)
        def with_union(*operands: Any) -> Any:
            out, leaves = self.run(key, branch, *operands)
            return out, self.union(key, leaves)

        return with_union

    def carrying(self, body_fun: Callable[[Any], Any]) -> Callable[[Any], Any]:
        """A while_loop body on ``(carry, error leaves)``: its checks' first failures carried
        through the loop, as jax's carried error (marked ``carries_errors``)."""
        @wraps(body_fun)
        def carrying(carry: tuple[Any, list[Any]]) -> tuple[Any, list[Any]]:
            val, before = carry
            out, leaves = self.run(0, body_fun, val)
            return out, self.carried(0, before, leaves)

        carrying.carries_errors = True  # type: ignore[attr-defined]
        return carrying

    def with_aux(self, fun: Callable[..., Any], has_aux: bool) -> Callable[..., Any]:
        """A differentiated function returning its error leaves as (more) auxiliary outputs:
        ``(out, (aux, leaves))`` with ``has_aux``, else ``(out, leaves)`` (marked
        ``carries_errors``)."""
        @wraps(fun)
        def with_aux(*args: Any) -> Any:
            out, leaves = self.run(0, fun, *args)
            return (out[0], (out[1], leaves)) if has_aux else (out, leaves)

        with_aux.carries_errors = True  # type: ignore[attr-defined]
        return with_aux

    def finish(self, leaves: list[Any]) -> None:
        """Add the construct's error leaves (every body's, in key order) to the enclosing checks."""
        rest = iter(leaves)
        for treedef, _ in self.found.values():
            own = [next(rest) for _ in range(treedef.num_leaves)]
            self.outer.merge(tree_util.tree_unflatten(treedef, own))


def body_errors(trace: Any) -> BodyErrors | None:
    """Where a checkify collects in ``trace``, what collects the errors of a construct's bodies."""
    outer = _scope_of(trace)
    return None if outer is None else BodyErrors(outer)


def checkify(f: Callable[..., Any], errors: frozenset[Any] = user_checks) -> Callable[..., Any]:
    """``f`` made to return ``(error, out)``: the `Error` of the checks of the ``errors``
    categories it made, and its outputs, as jax.experimental.checkify.checkify."""
    enabled = frozenset(errors)

    def run(trace: Any, *args: Any, **kwargs: Any) -> Any:
        scope = _Scope(trace, enabled)
        _SCOPES.stack.append(scope)
        try:
            with observed_binds(_observe):
                out = f(*args, **kwargs)
        finally:
            _SCOPES.stack.pop()
        return scope.error, out

    staged = Staged(run, f)

    @wraps(f)
    def checked(*args: Any, **kwargs: Any) -> Any:
        return staged(*args, **kwargs)

    return checked
