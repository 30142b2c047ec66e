"""Transformations called outside any trace: one program per call signature, retraced with
concrete values where the user's Python needs them, non-array arguments passed through.

grad, vmap and co. build their result as IR, so outside a trace they run as a jitted program
of their own (`Staged`), traced and compiled once per signature. JAX's eager grad sees
concrete inputs, so ``if x > 0``, ``int(n)`` and value-dependent shapes work there; here the
cached abstract trace comes first, and only if it fails because Python asked for a value a
concrete retrace would know (a ConcretizationTypeError that says so, pyfront/core.py `Known`)
the call is traced again in *concrete mode*: tracers carry their values, computed when asked
for. That trace holds for this call only, so it is never cached (its compiled program is shared
only with an identical program, through the compile cache keyed by program text).

Arguments that are not arrays (functions, strings, modules, configuration objects) travel as
*static* placeholders, pytree nodes without leaves: they reach the user's function unchanged
(an argument holding no array is passed as it is, identity preserved) and are part of the trace
cache key when hashable; an unhashable one makes the call trace without the cache. The trace
cache is bounded (``config.jit_cache_size``), so what it holds is let go in time.
"""

from __future__ import annotations

import functools
import operator
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import tree_util

from mlax import prng
from mlax.array import Array
from mlax.configuration import disable_jit_state
from mlax.core import (
    Known,
    Tracer,
    abstractify,
    captures_logged,
    concrete_mode,
    current_trace,
    held_tracer,
    is_array_like,
    known_of,
    mode_scope,
    opaque,
    substituting,
    suspended,
    to_numpy,
)
from mlax.dtypes import issubdtype


class _StaticKey:
    """A static object as part of a cache key: equal when of the same types and structure
    with equal leaves (a dict of functions: the same functions); ``hashable`` says whether
    it can be a key at all."""

    __slots__ = ("obj", "_key", "hashable")

    def __init__(self, obj: Any) -> None:
        leaves, tree = tree_util.tree_flatten(obj)
        self.obj = obj
        self._key = (tree, tuple(leaves), tuple(type(leaf) for leaf in leaves))
        try:
            hash(self._key)
            self.hashable = True
        except TypeError:
            self.hashable = False

    def __hash__(self) -> int:
        return hash(self._key) if self.hashable else 0

    def __eq__(self, other: object) -> bool:
        if not (isinstance(other, _StaticKey) and self.hashable and other.hashable):
            return self is other
        try:
            return bool(self._key == other._key)
        except Exception:  # noqa: BLE001 (an __eq__ that fails compares unequal)
            return False


class _Static:
    """A placeholder for a static object in a pytree: a node without children."""

    __slots__ = ("key",)

    def __init__(self, key: _StaticKey) -> None:
        self.key = key


tree_util.register_pytree_node(_Static, lambda s: ((), s.key), lambda key, _: _Static(key))


def _is_static(x: Any) -> bool:
    return isinstance(x, _Static)


def static_leaves(tree: Any, keep: Sequence[bool] | None = None) -> Any:
    """``tree`` with its non-array leaves as static placeholders (``keep``: one flag per leaf,
    True where a non-array leaf must stay, to be reported by the caller's own check)."""
    leaves, treedef = tree_util.tree_flatten(tree)
    keep = keep or [False] * len(leaves)
    placed = [leaf if kept or is_array_like(leaf) else _Static(_StaticKey(leaf))
              for leaf, kept in zip(leaves, keep, strict=True)]
    return tree_util.tree_unflatten(treedef, placed)


def as_static(tree: Any, flags: Sequence[bool]) -> Any:
    """``tree`` with the leaves flagged (one flag per leaf) as static placeholders, whatever
    they are: ``restore_static`` gives them back unchanged (vmap's unmapped Python scalars)."""
    leaves, treedef = tree_util.tree_flatten(tree)
    placed = [_Static(_StaticKey(leaf)) if flag else leaf for leaf, flag in zip(leaves, flags, strict=True)]
    return tree_util.tree_unflatten(treedef, placed)


def static_arguments(args: tuple[Any, ...], kwargs: dict[str, Any],
                     transformed: Sequence[int] = ()) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The arguments with their non-array objects as static placeholders: an argument that
    holds no array whole (passed on as it is), else leaf by leaf. The ``transformed``
    positions stay as they are (their non-arrays are the caller's error to report)."""

    def mark(i: Any, arg: Any) -> Any:
        if i in transformed:
            return arg
        if not any(is_array_like(leaf) for leaf in tree_util.tree_leaves(arg)):
            return _Static(_StaticKey(arg))
        return static_leaves(arg)

    return (tuple(mark(i, a) for i, a in enumerate(args)), {k: mark(k, v) for k, v in kwargs.items()})


def aux_static(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``fun``, returning ``(out, aux)``, with the leaves of ``aux`` that are not traced as
    static placeholders: as in jax, an aux output may hold any Python objects (equinox returns
    strings and Modules there), and what the trace did not compute comes back as it was (a
    Python float stays a float, a NumPy array that array: equinox's filter_vjp returns its
    non-differentiable outputs through aux); the transformation gives them back with
    ``restore_static``."""
    def with_static_aux(*args: Any, **kwargs: Any) -> Any:
        out = fun(*args, **kwargs)
        if isinstance(out, (tuple, list)) and len(out) == 2:
            aux = out[1]
            flags = [held_tracer(leaf) is None for leaf in tree_util.tree_leaves(aux)]
            return type(out)((out[0], as_static(aux, flags)))
        return out  # the caller's check reports the bad output

    return wraps(fun)(with_static_aux)


def restore_static(tree: Any) -> Any:
    """``tree`` with its static placeholders replaced by the objects they stand for."""
    return tree_util.tree_map(lambda x: x.key.obj if _is_static(x) else x, tree, is_leaf=_is_static)


def _hashable(tree: Any) -> bool:
    found = tree_util.tree_leaves(tree, is_leaf=_is_static)
    return all(x.key.hashable for x in found if _is_static(x))


def needs_values(error: BaseException) -> bool:
    """Whether ``error`` was caused by Python asking for a value a concrete retrace knows."""
    seen: BaseException | None = error
    while seen is not None:
        if getattr(seen, "_mlax_retry", False):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class _Pending(threading.local):
    """The arguments of the call being staged in this thread (their tracers get their values)."""

    def __init__(self) -> None:
        self.arguments: Any = None


_PENDING = _Pending()


_PLAIN = (Array, np.ndarray)


def wraps(fun: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``functools.wraps(fun)`` that never fails, as jax's ``api_util.wraps``: a callable object
    whose ``__name__`` is no string (an equinox Module rebuilt from its leaves has equinox's
    ``Missing`` there) wraps as far as it can."""
    def wrap(wrapper: Callable[..., Any]) -> Callable[..., Any]:
        try:
            return functools.wraps(fun)(wrapper)
        except (TypeError, AttributeError, ValueError):
            return wrapper
    return wrap


_NEEDS_VALUES_SIZE = 64  # signatures remembered per transformation


def _signature(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The call's structure, shapes, dtypes and weak types: what selects the abstract trace."""
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    avals = tuple(abstractify(leaf) for leaf in leaves)
    return tree, avals


class Staged:
    """A transformation ``run(trace, *args, **kwargs)`` that emits into ``trace``: called in a
    trace it does so (its results known to concrete mode by running it eagerly when asked);
    called outside any it runs as a program of its own, as the module docstring says. With
    ``differentiated``, the arguments' float leaves count as differentiated inputs (vjp's
    forward pass: float() of them would drop their derivative)."""

    def __init__(self, run: Callable[..., Any], fun: Callable[..., Any] | None = None,
                 differentiated: bool = False, static_outputs: bool = False) -> None:
        from mlax.api import staged_jit

        self._run = run
        self._static_outputs = static_outputs  # results may hold static placeholders (`aux_static`)
        if fun is not None:  # as jax's transformed functions: fun's name and doc, and __wrapped__
            try:
                functools.update_wrapper(self, fun, updated=())  # (fun's __dict__ is not ours)
            except (TypeError, AttributeError, ValueError):
                self.__wrapped__ = fun

        def staged(*args: Any, **kwargs: Any) -> Any:
            given = _PENDING.arguments
            _PENDING.arguments = None
            if given is not None:  # (key arrays as their data, as the program takes them)
                tracers = prng.tree_flatten((args, kwargs))[0]
                for tracer, leaf in zip(tracers, prng.tree_flatten(given)[0], strict=True):
                    tracer.known = known_of(leaf, differentiated)
            args, kwargs = restore_static((args, kwargs))
            return run(current_trace(), *args, **kwargs)

        self._jitted = staged_jit(wraps(fun)(staged) if fun is not None else staged)
        # The signatures whose abstract trace asked for a value (its Python control flow needs
        # values): their calls skip that attempt, which would fail again.
        self._needs_values: dict[Any, None] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        out = self._call(*args, **kwargs)
        return restore_static(out) if self._static_outputs else out

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        trace = current_trace()
        if trace is not None:
            return traced_with_known(lambda: self._run(trace, *args, **kwargs), args, kwargs, self)
        hashable = True
        if kwargs or not all(type(a) in _PLAIN for a in args):  # else: the common call, plain arrays
            args, kwargs = static_arguments(args, kwargs)
            hashable = _hashable((args, kwargs))
        cached = hashable and not substituting()  # (closed-over values as constants: this call's)
        attempt = self._jitted.__call__ if cached else self._jitted.call_once
        signature = _signature(args, kwargs) if self._needs_values and hashable else None
        if signature is None or signature not in self._needs_values:
            try:
                return self._staged(attempt, "deferred", args, kwargs)
            except Exception as error:
                if not needs_values(error):
                    raise
            signature = _signature(args, kwargs) if hashable else None
            if signature is not None:  # next time straight to the concrete trace
                self._needs_values[signature] = None
                while len(self._needs_values) > _NEEDS_VALUES_SIZE:
                    self._needs_values.pop(next(iter(self._needs_values)), None)
        return self._staged(self._jitted.call_once, "concrete", args, kwargs)

    def _staged(self, call: Callable[..., Any], mode: str, args: tuple[Any, ...],
                kwargs: dict[str, Any]) -> Any:
        saved, _PENDING.arguments = _PENDING.arguments, (args, kwargs)
        try:
            with mode_scope(mode):
                return call(*args, **kwargs)
        finally:
            _PENDING.arguments = saved


def traced_with_known(emit: Callable[[], Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                      eager: Callable[..., Any]) -> Any:
    """``emit()``, which traces ``eager(*args, **kwargs)`` into the current trace, its results
    given what concrete mode knows of them (`with_known`), from the arguments and from the
    enclosing values the traced functions closed over."""
    if concrete_mode() is None:
        return emit()
    with captures_logged() as captured:
        out = emit()
    return with_known(out, args, kwargs, eager, captured)


def with_known(out: Any, args: tuple[Any, ...], kwargs: dict[str, Any], eager: Callable[..., Any],
               captured: Sequence[Tracer] = ()) -> Any:
    """``out``, the results of ``eager(*args, **kwargs)`` traced into the current trace, with
    what concrete mode knows of them: computed, when asked for, by running ``eager`` outside
    the trace on the arguments' values (nothing where it misses an argument's value). The
    ``captured`` tracers (values of enclosing traces the traced functions closed over) are
    inputs too: while ``eager`` runs they stand for their values (core.suspended)."""
    if concrete_mode() is None:
        return out
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    traced = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tracer)]
    current, seen = current_trace(), {leaves[i].value for i in traced}
    closed: list[Tracer] = []
    for tracer in captured:  # those of this trace or enclosing ones (not of traces that ended)
        if tracer.value not in seen and current is not None and current.encloses(tracer.trace):
            seen.add(tracer.value)
            closed.append(tracer)
    inputs = [leaves[i].known for i in traced] + [c.known for c in closed]
    out_leaves = tree_util.tree_leaves(out)
    targets = [i for i, leaf in enumerate(out_leaves) if isinstance(leaf, Tracer) and leaf.known is None]
    if not targets or any(k is None for k in inputs):
        return out
    flows = any(k.differentiated for k in inputs)  # type: ignore[union-attr]

    def compute(*values: np.ndarray) -> list[np.ndarray]:
        given = list(leaves)
        for i, value in zip(traced, values[:len(traced)], strict=True):
            given[i] = Array._wrap(value, leaves[i].aval.weak_type)
        call_args, call_kwargs = tree_util.tree_unflatten(tree, given)
        inputs = [*(leaves[i] for i in traced), *closed]
        substitutes = {c.value: v for c, v in zip(inputs, values, strict=True)}
        with suspended(substitutes):
            result = eager(*call_args, **call_kwargs)
        return [to_numpy(leaf) for leaf in tree_util.tree_leaves(result)]

    node = None if concrete_mode() == "deferred" else Known(inputs=tuple(inputs), compute=compute)  # type: ignore[arg-type]
    for i in targets:
        leaf = out_leaves[i]
        mark = flows and issubdtype(leaf.dtype, np.inexact)
        leaf.known = (Known(differentiated=mark) if node is None
                      else Known(None, mark, (node,), operator.itemgetter(i)))
    return out


def inlined(fun: Callable[..., Any], jitted: Callable[..., Any], args: tuple[Any, ...],
            kwargs: dict[str, Any]) -> Any:
    """A jit called inside a trace: ``fun`` inlined into it. In concrete mode its values are
    abstract to Python (as in JAX, where a nested jit traces abstractly: core.opaque), and its
    results' values are known op by op, as the enclosing trace's are (``jitted`` is not run:
    the values it closes over are known that way too)."""
    del jitted
    if concrete_mode() is None or current_trace() is None or disable_jit_state.value:
        return fun(*args, **kwargs)
    with opaque():
        return fun(*args, **kwargs)
