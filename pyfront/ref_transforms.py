"""Refs through jit at the top level, grad and vmap: refs passed or closed over go in as
values and the values written come back out and are stored (pyfront/refs.py)."""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import tree_util
from jax.ref import AbstractRef

from mlax.batching import flatten_axes
from mlax.core import Tracer, abstractify, concrete_mode, current_trace, known_of
from mlax.errors import index_tuple, user_error
from mlax.jit_sharding import UNSPECIFIED
from mlax.ref_bodies import assign_all, check_body, check_outputs, current_values, definition, purge
from mlax.ref_type import LIVE, STATE, ClosedRef, JaxRef, Ref, aval_text, shaped
from mlax.tracing import _describe_path

# ---------------------------------------------------------------- jit at the top level


class _RefSlot:
    """A ref argument in a jit's arguments: its value, in a node of its own (so that a ref and
    an array at one position are different signatures)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


tree_util.register_pytree_node(_RefSlot, lambda s: ((s.value,), None), lambda _, c: _RefSlot(c[0]))


def _is_slot(x: Any) -> bool:
    return isinstance(x, _RefSlot)


class JitRefs:
    """What one jitted function knows of refs: those it closes over, and its discharged jit."""

    def __init__(self) -> None:
        self.closed: list[Ref] = []
        self.found: list[Ref] = []  # closed-over refs the trace in progress met: the next one takes them
        self.inner: Any = None


def holds_refs(tree: Any) -> bool:
    return bool(LIVE) and any(isinstance(leaf, JaxRef) for leaf in tree_util.tree_leaves(tree))


def _inner_jit(jitted: Any, state: JitRefs) -> Any:
    """The jit of ``jitted``'s function with refs discharged: ref arguments come in as values
    (in `_RefSlot` nodes), closed-over refs in the keyword ``_mlax_refs``; it returns
    ``(out, written arguments, written closed-over refs)``."""
    from mlax.api import JittedFunction

    fun = jitted._fun

    def discharged(*args: Any, _mlax_refs: tuple[Any, ...] = (), **kwargs: Any) -> Any:
        trace = current_trace()
        pending = STATE.pending or []
        STATE.pending = None
        slots = iter(pending)
        proxies: list[Ref] = []
        given: list[Any] = []

        def proxy(slot: _RefSlot) -> Ref:
            path, original = next(slots)
            ref = Ref(original.aval, None, trace, original._origin, argument=path)
            ref._vals[trace] = _known(slot.value, original)
            proxies.append(ref)
            given.append(slot.value)
            return ref

        args, kwargs = tree_util.tree_map(lambda x: proxy(x) if _is_slot(x) else x, (args, kwargs),
                                          is_leaf=_is_slot)
        closed = list(state.closed)
        for ref, slot in zip(closed, _mlax_refs, strict=True):
            ref._vals[trace] = _known(slot.value, ref)
        STATE.roots[trace] = state
        try:
            out = fun(*args, **kwargs)
        except Exception:
            if state.found:  # (it may have failed on a closed-over ref's value as a constant)
                raise ClosedRef(state.found) from None
            raise
        finally:
            del STATE.roots[trace]
        if state.found:
            raise ClosedRef(state.found)
        check_outputs(definition(fun, raw=True), "jit", tree_util.tree_leaves(out))
        written = STATE.writes.pop(trace, {})
        out_args = {i: r._vals[trace] for i, r in enumerate(proxies) if r._vals[trace] is not given[i]}
        out_closed = {i: r._vals.pop(trace) for i, r in enumerate(closed) if id(r) in written}
        for ref in closed:
            ref._vals.pop(trace, None)
        return out, out_args, out_closed

    try:
        signature = inspect.signature(fun)
        params = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        extra = inspect.Parameter("_mlax_refs", inspect.Parameter.KEYWORD_ONLY, default=())
        rest = [p for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD]
        discharged.__signature__ = signature.replace(parameters=[*params, extra, *rest])  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        pass
    discharged.__name__ = getattr(fun, "__name__", "discharged")
    discharged.__qualname__ = getattr(fun, "__qualname__", discharged.__name__)
    code = getattr(getattr(fun, "__wrapped__", fun), "__code__", None)
    if code is not None:
        discharged.__wrapped__ = fun  # type: ignore[attr-defined] (definition_info names the user's function)
    inner = JittedFunction(discharged, static_argnums=tuple(jitted._static_argnums),
                           static_argnames=tuple(jitted._static_argnames) or None,
                           donate_argnums=jitted._donate_argnums or None, backend=jitted._backend)
    inner._stages_always = jitted._stages_always
    inner._mlax_discharged = True  # type: ignore[attr-defined]
    inner._calls_inside_traces = False
    return inner


def _known(tracer: Any, ref: Ref) -> Any:
    """A ref's value in a trace of eager grad and co. (concrete mode, pyfront/core.py `Known`):
    known to Python, as jax's eager refs are."""
    if concrete_mode() is not None and isinstance(tracer, Tracer) and ref._base is not None:
        tracer.known = known_of(ref._base)
    return tracer


UNHANDLED = object()


def call_jit(jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any], once: bool = False) -> Any:
    """``jitted(*args, **kwargs)`` outside any trace while refs exist: refs passed and refs
    closed over go in as values and come back written (the module docstring). `UNHANDLED`
    for a jit this does not apply to."""
    def call(inner: Any, slotted: Any, closed: tuple[Any, ...]) -> Any:
        return (inner.call_once if once else inner)(*slotted[0], _mlax_refs=closed, **slotted[1])

    done = _discharged(jitted, args, kwargs, call)
    if done is UNHANDLED:
        return UNHANDLED
    explicit, state, (out, out_args, out_closed) = done
    for i, value in out_args.items():
        explicit[i][1]._write(value)
    for i, value in out_closed.items():
        state.closed[i]._write(value)
    return out


def stage_jit(jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any], stage: str) -> Any:
    """``jitted.trace(...)`` or ``.lower(...)`` while refs exist: the stage of the discharged
    function (refs passed and closed over are its inputs, the values it writes extra outputs,
    as jax's lowering of refs takes and returns their buffers). `UNHANDLED` where it does not
    apply."""
    done = _discharged(jitted, args, kwargs,
                       lambda inner, slotted, closed: getattr(inner, stage)(*slotted[0], _mlax_refs=closed,
                                                                            **slotted[1]))
    return done if done is UNHANDLED else done[2]


def _discharged(jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                run: Callable[[Any, Any, tuple[Any, ...]], Any]) -> Any:
    """``run(inner, slotted arguments, closed-over values)`` with the jit of ``jitted``'s function
    with refs discharged, traced again as often as it meets closed-over refs it did not take:
    ``(the refs passed with their paths, the jit's ref state, what run returned)``, or
    `UNHANDLED`."""
    if getattr(jitted, "_mlax_discharged", False):
        return UNHANDLED
    if jitted._in_shardings is not jitted_unspecified() or jitted._out_shardings is not jitted_unspecified():
        if holds_refs((args, kwargs)):
            raise user_error(NotImplementedError, "mlax.jit with in_shardings/out_shardings does not take "
                             "mutable array references yet", "the arguments of mlax.jit")
        return UNHANDLED
    # one per jit object (not shared as its traces are, mlax.api._traces_for): it holds the refs
    # the function closes over, which live as long as the jitted function then, and no longer
    state = jitted.__dict__.setdefault("_mlax_ref_state", JitRefs())
    pairs, _ = tree_util.tree_flatten_with_path((args, kwargs))
    names = jitted._arg_names
    explicit: list[tuple[str, Ref]] = []
    for key_path, leaf in pairs:
        if isinstance(leaf, Ref):
            path = _describe_path(key_path, names)
            for other_path, other in explicit:
                if other is leaf:
                    raise ValueError(
                        f"only one reference to a mutable array may be passed as an argument to a function, "
                        f"but when tracing {definition(jitted._fun)} for jit the mutable array reference of "
                        f"type {aval_text(leaf.aval)} appeared at both {other_path} and {path}.")
            explicit.append((path, leaf))
    if state.inner is None:
        state.inner = _inner_jit(jitted, state)
    while True:
        for path, ref in explicit:
            if any(ref is c for c in state.closed):
                raise ValueError(f"when tracing {definition(jitted._fun)} for jit, a mutable array "
                                 f"reference of type {aval_text(ref.aval)} was both closed over and passed "
                                 f"as the argument {path}")
        slotted = tree_util.tree_map(lambda x: _RefSlot(current_values([x])[0]) if isinstance(x, Ref) else x,
                                     (args, kwargs))
        closed = tuple(_RefSlot(v) for v in current_values(state.closed))
        saved, STATE.pending = STATE.pending, explicit
        try:
            return explicit, state, run(state.inner, slotted, closed)
        except ClosedRef as signal:
            state.found = []
            if any(r is c for r in signal.refs for c in state.closed):
                raise RuntimeError("internal error: a closed-over ref was not bound") from None
            state.closed.extend(signal.refs)
        finally:
            STATE.pending = saved
            purge()


def jitted_unspecified() -> Any:
    return UNSPECIFIED


# ---------------------------------------------------------------- grad


def _depends(value: Any, sources: Sequence[Any]) -> bool:
    """Whether IR ``value`` is computed from any of ``sources`` (values of the same block), not
    through a stop_gradient: whether it would carry a derivative (conservatively: any op, calls
    of loops and branches included, passes dependence on)."""
    from mlir import ir

    wanted = builtins.set(sources)
    seen: builtins.set[Any] = builtins.set()
    stack = [value]
    while stack:
        v = stack.pop()
        if v in wanted:
            return True
        if v in seen or isinstance(v, ir.BlockArgument):
            continue
        seen.add(v)
        op = v.owner
        if op.name == "mlax.stop_gradient":
            continue
        stack.extend(op.operands)
    return False


def grad_refs(value_and_grad: Callable[..., Any], fun: Callable[..., Any], argnums: Any, has_aux: bool,
              holomorphic: bool, allow_int: bool, api: str, args: tuple[Any, ...]) -> Any:
    """``value_and_grad(fun)(*args)`` in a trace while refs exist: refs made outside ``fun`` that
    it writes (closed over, or passed at positions not differentiated) come out as auxiliary
    outputs and are stored back; a written value that depends on a differentiated input is
    jax's error."""
    nums = [n % len(args) for n in index_tuple(argnums, "argnums", api)] if args else []
    written: list[Ref] = []

    def threaded_fun(*a: Any) -> Any:
        trace = current_trace()
        out = fun(*a)
        writes = STATE.writes.pop(trace, {})
        sources = [leaf.value for i in nums if i < len(a) for leaf in tree_util.tree_leaves(a[i])
                   if isinstance(leaf, Tracer) and leaf.trace is trace]
        values = []
        for ref in writes.values():
            value = ref._vals.pop(trace)
            if isinstance(value, Tracer) and value.trace is trace and np.issubdtype(ref.dtype, np.inexact) \
                    and _depends(value.value, sources):
                raise Exception(f"performing a set/swap operation with a differentiated value on a "  # noqa: TRY002
                                f"non-differentiated array reference of type {aval_text(ref.aval)}. "
                                "Move the array reference to be an argument of the differentiated function?")
            written.append(ref)
            values.append(value)
        if has_aux:
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                return out  # value_and_grad's own error for it
            return out[0], (out[1], values)
        return out, values

    threaded_fun._mlax_refs_threaded = True  # type: ignore[attr-defined]
    threaded_fun.__wrapped__ = fun  # type: ignore[attr-defined]
    threaded_fun.__name__ = getattr(fun, "__name__", "fun")
    (value, aux), grads = value_and_grad(threaded_fun, argnums, True, holomorphic, allow_int, api)(*args)
    if has_aux:
        aux, values = aux
        value = (value, aux)
    else:
        values = aux
    assign_all(written, values)
    return value, grads


# ---------------------------------------------------------------- vmap


def vmap_refs(vmap: Callable[..., Any], fun: Callable[..., Any], in_axes: Any, out_axes: Any,
              axis_size: Any, axis_name: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``vmap(fun, ...)(*args, **kwargs)`` with refs among the arguments: a mapped ref reaches
    ``fun`` as a ref of one example and its written value is stored back batched; an unmapped
    one (in_axes None) may be read, and writing it is jax's error."""
    axes_tree = (in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args), 0)
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    leaf_axes = flatten_axes("vmap in_axes", tree, axes_tree)
    mapped = [(i, leaf, axis) for i, (leaf, axis) in enumerate(zip(leaves, leaf_axes, strict=True))
              if isinstance(leaf, Ref) and axis is not None]
    refs = [leaf for _, leaf, _ in mapped]
    values = list(leaves)
    for i, ref, _ in mapped:
        values[i] = current_values([ref])[0]
    new_args, new_kwargs = tree_util.tree_unflatten(tree, values)
    positions = [i for i, _, _ in mapped]
    ref_axes = tuple(axis if axis >= 0 else axis + len(ref.shape) for _, ref, axis in mapped)

    def body(*a: Any, **k: Any) -> Any:
        trace = current_trace()
        flat, t = tree_util.tree_flatten((a, k))
        if len(flat) != len(leaves):
            raise RuntimeError("internal error: vmap's arguments changed structure inside it")
        proxies = []
        for i, ref in zip(positions, refs, strict=True):
            aval = abstractify(flat[i])
            proxy = Ref(AbstractRef(shaped(aval.shape, ref.dtype, ref.weak_type)), None, trace, ref._origin,
                        argument=f"argument {i}")
            proxy._vals[trace] = flat[i]
            flat[i] = proxy
            proxies.append(proxy)
        a, k = tree_util.tree_unflatten(t, flat)
        out = fun(*a, **k)
        check_body(trace, tree_util.tree_leaves(out))  # writes to unmapped refs: jax's error
        return out, tuple(p._vals[trace] for p in proxies)

    body._mlax_refs_threaded = True  # type: ignore[attr-defined]
    body.__wrapped__ = fun  # type: ignore[attr-defined]
    out, finals = vmap(body, in_axes, (out_axes, ref_axes), axis_size, axis_name)(*new_args, **new_kwargs)
    assign_all(refs, finals)
    return out
