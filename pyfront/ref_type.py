"""The mutable array reference type (``jax.Ref``) and its reads and writes: ``new_ref``,
``freeze`` and ``jax.ref``'s get / set / swap / addupdate. A Ref keeps one value per trace
(pyfront/refs.py says why); this module holds those values and the per-thread record of which
traces wrote refs made outside them, which pyfront/ref_bodies.py and ref_transforms.py thread out.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import TYPE_CHECKING, Any

import jax
import numpy as np
from jax.ref import AbstractRef

from mlax.array import Array
from mlax.core import (
    Aval,
    Trace,
    Tracer,
    abstractify,
    current_trace,
    is_array_like,
    to_numpy,
    with_weak_type,
    zeros,
)
from mlax.errors import user_error
from mlax.source_info import user_frame_info

if TYPE_CHECKING:
    from mlax.ref_transforms import JitRefs

JaxRef: type = jax.Ref


class _State(threading.local):
    def __init__(self) -> None:
        self.writes: dict[Trace, dict[int, Ref]] = {}  # refs written in a trace and made outside it
        self.roots: dict[Trace, JitRefs] = {}  # top-level jit traces that take closed-over refs
        self.pending: list[tuple[str, Ref]] | None = None  # the call's ref arguments (call_jit)


STATE = _State()
LIVE: weakref.WeakSet[Ref] = weakref.WeakSet()
_POINTERS = itertools.count(0x7F0000001000, 0x1000)


def any_alive() -> bool:
    """Whether any Ref exists in this process (else jit and control flow skip ref handling)."""
    return bool(LIVE)


class ClosedRef(BaseException):  # noqa: N818 (a signal, not an error: restarts a jit's trace)
    """A top-level jit's trace used refs it closes over: trace again with them as inputs."""

    def __init__(self, refs: list[Ref]) -> None:
        super().__init__("closed-over refs")
        self.refs = refs


def aval_text(aval: Any) -> str:
    return f"Ref{{{aval.inner_aval.str_short()}}}"


def shaped(shape: tuple[int, ...], dtype: Any, weak: bool) -> Any:
    from jax.core import ShapedArray

    return ShapedArray(tuple(shape), np.dtype(dtype), weak_type=weak)


class Ref(JaxRef):
    """A mutable array reference (``jax.Ref``): made by `new_ref`; read with ``ref[idx]``,
    written with ``ref[idx] = x``; pyfront/refs.py says how transformations see it."""

    def __init__(self, aval: Any, base: Any = None, creator: Trace | None = None, origin: str = "",
                 argument: str | None = None) -> None:
        self._aval = aval
        self._refs = None
        self._base = base  # the value outside any trace (an mlax Array), None for a traced ref
        self._creator = creator  # the trace that made it (None: made outside any trace)
        self._vals: dict[Trace, Any] = {}
        self._origin = origin  # where it was made (errors)
        self._argument = argument  # the argument it stands for inside a jit or vmap
        self._pointer = next(_POINTERS)
        LIVE.add(self)

    # -- type-level information, as jax.Ref's
    aval = property(lambda self: self._aval)
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: len(self._aval.shape))
    size = property(lambda self: int(np.prod(self._aval.shape, dtype=np.int64)))
    weak_type = property(lambda self: self._aval.weak_type)
    committed = _committed = property(lambda self: True)

    @property
    def sharding(self) -> Any:
        return self._value()[1].sharding

    def unsafe_buffer_pointer(self) -> int:
        """A number that stays the same for the life of the ref (its contents are updated in
        place as far as Python can see, as jax's)."""
        return self._pointer

    @property
    def at(self) -> Any:
        raise NotImplementedError()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        trace, value = self._value(quiet=True)
        if trace is not None or value is None or isinstance(value, Tracer):
            return f"Ref{{{self._aval.inner_aval.str_short()}}}"
        return "Ref" + repr(value)[5:]  # the value as stored: written values are never weak (jax's)

    __str__ = __repr__

    def __getitem__(self, idx: Any) -> Any:
        return get(self, idx)

    def __setitem__(self, idx: Any, value: Any) -> None:
        swap(self, idx, value, _name="swap")

    def addupdate(self, x: Any, idx: Any = ()) -> None:
        addupdate(self, idx, x)

    __hash__ = object.__hash__

    # -- the value, per trace
    def _value(self, quiet: bool = False) -> tuple[Trace | None, Any]:
        """(the trace whose value this is, the value) for the current trace: the innermost
        enclosing trace that has one, else the value outside traces."""
        here = current_trace()
        trace = here
        while trace is not None:
            if trace in self._vals:
                return trace, self._vals[trace]
            trace = trace.parent
        if self._base is None:
            if quiet:
                return None, None
            raise user_error(ValueError,
                             f"a mutable array reference of type {aval_text(self._aval)} made inside a "
                             f"traced function ({self._origin}) was used after that trace ended",
                             "a jax.Ref")
        if here is not None and not quiet:
            root = here
            while root.parent is not None:
                root = root.parent
            state = STATE.roots.get(root)
            if state is not None:  # a jit's closed-over ref: its value this once, then a new trace
                if all(self is not r for r in state.found):
                    state.found.append(self)
        return None, self._base

    def _write(self, value: Any) -> None:
        trace = current_trace()
        value = with_weak_type(value, False)
        self._value()  # a closed-over ref of a jit restarts its trace
        if trace is None:
            self._base = value if type(value) is Array else Array._wrap(np.array(to_numpy(value)))
            return
        self._vals[trace] = value
        if self._creator is not trace:
            STATE.writes.setdefault(trace, {})[id(self)] = self


# ---------------------------------------------------------------- creating and reading


def new_ref(init_val: Any, *, memory_space: Any = None, kind: Any = None) -> Ref:
    """Create a mutable array reference with initial value ``init_val`` (``jax.new_ref``)."""
    if isinstance(init_val, JaxRef):
        raise user_error(TypeError, "a mutable array reference cannot hold another one (no refs of refs)",
                         "init_val of jax.new_ref")
    if not is_array_like(init_val):
        import mlax.numpy as jnp

        init_val = jnp.asarray(init_val)
    aval = abstractify(init_val)
    ref_aval = AbstractRef(shaped(aval.shape, aval.dtype, aval.weak_type), memory_space=memory_space,
                           kind=kind)
    trace = current_trace()
    origin = f"created at {user_frame_info()}"
    if trace is None:
        if memory_space is not None:
            raise user_error(NotImplementedError, "array ref with memory space only works inside of a `jit`.",
                             "memory_space of jax.new_ref")
        return Ref(ref_aval, Array._wrap(np.array(to_numpy(init_val)), aval.weak_type), None, origin)
    ref = Ref(ref_aval, None, trace, origin)
    ref._vals[trace] = with_weak_type(init_val, aval.weak_type)
    return ref


def empty_ref(ty: Any, memory_space: Any = None) -> Ref:
    """A ref of type ``ty`` (anything with a shape and dtype) holding zeros (jax leaves it
    uninitialised; outside jit jax refuses it: 'Evaluation rule for empty_ref not implemented')."""
    if current_trace() is None:
        raise NotImplementedError("Evaluation rule for 'empty_ref' not implemented")
    return new_ref(zeros(Aval(tuple(ty.shape), np.dtype(ty.dtype))), memory_space=memory_space)


def _check_ref(ref: Any, api: str) -> Ref:
    if not isinstance(ref, Ref):
        raise user_error(ValueError, f"`{api}` must be called on `Ref` types: {abstractify(ref)}.",
                         f"ref of jax.ref.{api}")
    return ref


def _static_bounds(ref: Ref, idx: Any) -> None:
    """jax's error for a static integer index out of bounds."""
    items = list(idx) if isinstance(idx, tuple) else [idx]
    if Ellipsis in items:
        at = items.index(Ellipsis)
        used = sum(1 for item in items if item is not None and item is not Ellipsis)
        items[at:at + 1] = [slice(None)] * max(len(ref.shape) - used, 0)
    dim = 0
    for item in items:
        if item is None:
            continue
        if isinstance(item, (int, np.integer)) and not isinstance(item, bool) and dim < len(ref.shape):
            if not -ref.shape[dim] <= item < ref.shape[dim]:
                raise ValueError(f"Out of bound indexer: idx={int(item)}, dim={ref.shape[dim]}.")
        dim += 1


def _whole(idx: Any) -> bool:
    return idx is None or idx is Ellipsis or (
        isinstance(idx, tuple) and (len(idx) == 0 or (len(idx) == 1 and idx[0] is Ellipsis)))


def _read(ref: Ref, idx: Any) -> Any:
    trace, value = ref._value()
    value = with_weak_type(value, ref.weak_type)
    if _whole(idx):
        if trace is None and current_trace() is None:
            ref._base = value  # as jax's: an eager whole read leaves the buffer with the ref's weak type
        return value
    _static_bounds(ref, idx)
    return value[idx]


def get(ref: Any, idx: Any = None) -> Any:
    """``ref[idx]`` (``jax.ref.get``)."""
    return _read(_check_ref(ref, "get"), idx)


def freeze(ref: Any) -> Any:
    """The final value of ``ref`` (``jax.freeze``)."""
    return _read(_check_ref(ref, "freeze"), None)


def free_ref(ref: Any) -> tuple[()]:
    """Invalidate ``ref`` (``jax.free_ref``): nothing to free in mlax."""
    _check_ref(ref, "free_ref")
    return ()


def _value_for(ref: Ref, value: Any, api: str, expected: tuple[int, ...]) -> Any:
    """``value`` as the ref's elements: jax's implicit cast, then its shape and dtype checks."""
    import mlax.lax as lax
    import mlax.numpy as jnp
    if isinstance(value, JaxRef):
        raise ValueError("Cannot store a Ref into another Ref. Did you forget to load from it using `[...]`?")
    if not is_array_like(value):
        value = jnp.asarray(value)
    aval = abstractify(value)
    dtype = np.dtype(ref.dtype)
    floating = np.issubdtype(dtype, np.floating) and np.issubdtype(aval.dtype, np.floating)
    integer = np.issubdtype(dtype, np.integer) and np.issubdtype(aval.dtype, np.integer)
    if (aval.weak_type and floating) or integer:  # jax's _maybe_implicit_cast, precedence included
        value = lax.convert_element_type(value, dtype)
        aval = abstractify(value)
    if tuple(aval.shape) != tuple(expected):
        raise ValueError(f"Invalid shape for `{api}`. Ref shape: {ref.shape}. "
                         f"Expected shape: {tuple(expected)}. "
                         f"Value shape: {tuple(aval.shape)}. Transforms: (). ")
    if aval.dtype != dtype:
        if api == "addupdate":
            raise ValueError(f"Invalid dtype for `addupdate`. Ref dtype: {dtype}. "
                             f"Value shape: {aval.dtype}. ")
        raise ValueError(f"Invalid dtype for `swap`. Ref dtype: {dtype}. Value dtype: {aval.dtype}. ")
    return value


def swap(ref: Any, idx: Any, value: Any, _name: str = "swap") -> Any:
    """``old = ref[idx]; ref[idx] = value; return old`` (``jax.ref.swap``)."""
    ref = _check_ref(ref, _name)
    old = _read(ref, idx)
    value = _value_for(ref, value, "swap", old.shape)
    if _whole(idx):
        ref._write(value)
    else:
        _, current = ref._value()
        ref._write(current.at[idx].set(value))
    return old


def set(ref: Any, idx: Any, value: Any) -> None:  # noqa: A001 (jax.ref.set)
    """``ref[idx] = value`` (``jax.ref.set``)."""
    swap(ref, idx, value, _name="set")


def addupdate(ref: Any, idx: Any, x: Any) -> None:
    """``ref[idx] += x`` in one update (``jax.ref.addupdate``)."""
    ref = _check_ref(ref, "addupdate")
    old = _read(ref, idx)
    x = _value_for(ref, x, "addupdate", old.shape)
    if _whole(idx):
        ref._write(old + x)
    else:
        _, current = ref._value()
        ref._write(current.at[idx].add(x))


def refs_as_values(fun: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, tuple[Any, ...],
                                                                                     dict[str, Any]]:
    """For a tracing that only reads types (``eval_shape``): the Ref arguments replaced by their
    values, and ``fun`` wrapped to make fresh refs of those inside the trace, so that ``fun``
    reads and writes refs as it would while the caller's refs are left as they are (jax's
    eval_shape never runs the function). Unchanged without Ref arguments."""
    import functools

    from jax import tree_util

    is_ref = lambda x: isinstance(x, JaxRef)  # noqa: E731
    leaves, tree = tree_util.tree_flatten((args, kwargs), is_leaf=is_ref)
    at = {i for i, leaf in enumerate(leaves) if isinstance(leaf, Ref)}
    if not at:
        return fun, args, kwargs

    @functools.wraps(fun)
    def with_refs(*a: Any, **k: Any) -> Any:
        flat = tree_util.tree_leaves((a, k), is_leaf=is_ref)
        fresh = [new_ref(v) if i in at else v for i, v in enumerate(flat)]
        call_args, call_kwargs = tree_util.tree_unflatten(tree, fresh)
        return fun(*call_args, **call_kwargs)

    values = [_read(leaf, ...) if i in at else leaf for i, leaf in enumerate(leaves)]
    new_args, new_kwargs = tree_util.tree_unflatten(tree, values)
    return with_refs, new_args, new_kwargs
