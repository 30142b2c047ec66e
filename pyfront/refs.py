"""Mutable array references as jax 0.10.2 has them: ``new_ref``, ``Ref``, ``freeze`` and
``jax.ref``'s get / set / swap / addupdate, with ``ref[idx]`` reads and writes.

mlax's programs are pure, so a Ref is *discharged* while Python traces, as jax's own
discharge turns a jaxpr with refs into one without: a Ref is a box whose value is kept per
trace. Outside any trace it holds an mlax Array (written in place of the box). Inside a trace
``ref[idx]`` reads the value the innermost enclosing trace has for it (an enclosing trace's
value is captured as any closed-over value is) and ``ref[idx] = v`` makes a new value for the
current trace (an ``.at[idx].set``: a dynamic_update_slice or a scatter). Where a traced body
ends, the values it wrote for refs made outside it are threaded out by the construct:

- ``jit`` at the top level: the refs passed in (anywhere in the arguments' pytrees) and those
  the function closes over become inputs of the program; the values written are extra outputs,
  stored back into the caller's refs after the call (`call_jit`). Closed-over refs are found
  by tracing: a trace that meets new ones (reading their values as constants) is done again
  with them as inputs, and the jitted function remembers them.
- a jit called inside a trace is inlined while refs exist (its Python runs in the caller's
  trace, so reads and writes are the caller's).
- ``scan`` / ``fori_loop`` / ``while_loop``: refs the body writes are extra carries (found by
  tracing the body once: a body that writes one traces twice, and what the first trace
  emitted is erased); ``cond`` / ``switch``: extra outputs of every branch
  (`scan_refs`, `while_refs`, `branch_refs`).
- ``vmap``: refs passed with a mapped in_axes reach the function as refs of one example,
  their values written back batched; writing an unmapped ref under vmap is jax's error
  (`vmap_refs`).
- ``grad`` / ``value_and_grad``: functions that use refs internally need nothing (the
  discharged function is pure); refs made outside the function that it writes come out as
  auxiliary outputs, and a written value that depends on a differentiated input is jax's
  error (`grad_refs`).

Any other traced body that writes a ref made outside it is refused where it ends (`check_body`),
so a write is never lost silently.
"""

from __future__ import annotations

import builtins
import inspect
import itertools
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax import tree_util
from jax.ref import AbstractRef

from mlax.core import Trace, Tracer, abstractify, current_trace, to_numpy, with_weak_type
from mlax.errors import user_error

_JaxRef: type = jax.Ref


class _State(threading.local):
    def __init__(self) -> None:
        self.writes: dict[Trace, dict[int, Ref]] = {}  # refs written in a trace and made outside it
        self.roots: dict[Trace, _JitRefs] = {}  # top-level jit traces that take closed-over refs
        self.pending: list[tuple[str, Ref]] | None = None  # the call's ref arguments (call_jit)


_STATE = _State()
_LIVE: weakref.WeakSet[Ref] = weakref.WeakSet()
_POINTERS = itertools.count(0x7F0000001000, 0x1000)


def any_alive() -> bool:
    """Whether any Ref exists in this process (else jit and control flow skip ref handling)."""
    return bool(_LIVE)


class _ClosedRef(BaseException):  # noqa: N818 (a signal, not an error: restarts a jit's trace)
    """A top-level jit's trace used refs it closes over: trace again with them as inputs."""

    def __init__(self, refs: list[Ref]) -> None:
        super().__init__("closed-over refs")
        self.refs = refs


def _aval_text(aval: Any) -> str:
    return f"Ref{{{aval.inner_aval.str_short()}}}"


def _shaped(shape: tuple[int, ...], dtype: Any, weak: bool) -> Any:
    from jax.core import ShapedArray

    return ShapedArray(tuple(shape), np.dtype(dtype), weak_type=weak)


class Ref(_JaxRef):
    """A mutable array reference (``jax.Ref``): made by `new_ref`; read with ``ref[idx]``,
    written with ``ref[idx] = x``; see the module docstring for how transformations see it."""

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
        _LIVE.add(self)

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
                             f"a mutable array reference of type {_aval_text(self._aval)} made inside a "
                             f"traced function ({self._origin}) was used after that trace ended",
                             "a jax.Ref")
        if here is not None and not quiet:
            root = here
            while root.parent is not None:
                root = root.parent
            state = _STATE.roots.get(root)
            if state is not None:  # a jit's closed-over ref: its value this once, then a new trace
                if all(self is not r for r in state.found):
                    state.found.append(self)
        return None, self._base

    def _write(self, value: Any) -> None:
        trace = current_trace()
        value = with_weak_type(value, False)
        self._value()  # a closed-over ref of a jit restarts its trace
        if trace is None:
            from mlax.array import Array

            self._base = value if type(value) is Array else Array._wrap(np.array(to_numpy(value)))
            return
        self._vals[trace] = value
        if self._creator is not trace:
            _STATE.writes.setdefault(trace, {})[id(self)] = self


# ---------------------------------------------------------------- creating and reading


def new_ref(init_val: Any, *, memory_space: Any = None, kind: Any = None) -> Ref:
    """Create a mutable array reference with initial value ``init_val`` (``jax.new_ref``)."""
    from mlax.array import Array
    from mlax.core import is_array_like

    if isinstance(init_val, _JaxRef):
        raise user_error(TypeError, "a mutable array reference cannot hold another one (no refs of refs)",
                         "init_val of jax.new_ref")
    if not is_array_like(init_val):
        import mlax.numpy as jnp

        init_val = jnp.asarray(init_val)
    aval = abstractify(init_val)
    ref_aval = AbstractRef(_shaped(aval.shape, aval.dtype, aval.weak_type), memory_space=memory_space,
                           kind=kind)
    trace = current_trace()
    from mlax.source_info import user_frame_info

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
    import mlax.numpy as jnp

    return new_ref(jnp.zeros(ty.shape, ty.dtype), memory_space=memory_space)


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
    from mlax.core import is_array_like

    if isinstance(value, _JaxRef):
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


# ---------------------------------------------------------------- where traced bodies end


def _describe_origin(ref: Ref) -> str:
    if ref._argument is not None:
        return f"The returned mutable array was passed in as the argument {ref._argument}."
    if ref._creator is not None:
        return f"The returned mutable array was {ref._origin}."
    return "The returned mutable array was closed over."


def check_outputs(where: str, traced_for: str, out_leaves: Sequence[Any]) -> None:
    """jax's error for a ref among a traced function's outputs."""
    for leaf in out_leaves:
        if isinstance(leaf, Ref):
            raise ValueError(f"function {where} traced for {traced_for} returned a mutable array "
                             f"reference of type {_aval_text(leaf.aval)}, but mutable array references "
                             f"cannot be returned.\n\n{_describe_origin(leaf)}")


def _purge() -> None:
    """Forget the writes of traces that ended without threading them out (a trace abandoned by
    an error, or restarted for a closed-over ref): they must not keep their refs alive."""
    for trace in [t for t in _STATE.writes if not t.active]:
        for ref in _STATE.writes.pop(trace).values():
            ref._vals.pop(trace, None)


def check_body(trace: Trace, out_leaves: Sequence[Any]) -> None:
    """Where a traced body ends: a ref among its outputs is jax's error; a write to a ref made
    outside the body that no construct threads out is refused (jax's error under vmap and
    under differentiation)."""
    if not _LIVE:
        return
    check_outputs(f"{trace.function_name} at {trace.source}" if trace.source else trace.function_name,
                  trace.traced_for, out_leaves)
    written = _STATE.writes.pop(trace, None)
    if not written:
        return
    for ref in written.values():
        ref._vals.pop(trace, None)
    if trace.traced_for == "eval_shape":  # shapes only: its writes change nothing, as jax's
        return
    ref = next(iter(written.values()))
    if trace.traced_for == "vmap":
        raise Exception(f"performing a set/swap operation with vmapped value on an unbatched array reference "  # noqa: TRY002 (jax's type)
                        f"of type {_aval_text(ref.aval)}. Move the array reference to be an argument to the "
                        "vmapped function?")
    if trace.traced_for in ("grad", "jvp", "vjp", "linearize"):
        raise Exception(f"performing a set/swap operation with a differentiated value on a "  # noqa: TRY002
                        f"non-differentiated array reference of type {_aval_text(ref.aval)}. Move the array "
                        "reference to be an argument of the differentiated function?")
    raise user_error(NotImplementedError, f"mlax does not thread writes to a mutable array reference of type "
                     f"{_aval_text(ref.aval)} out of {trace.function_name} traced for {trace.traced_for} "
                     "(refs are threaded through jit, scan, fori_loop, while_loop, cond, vmap and grad)",
                     "a jax.Ref")


class _Scope:
    """A traced body's refs: those bound to its arguments, and those it wrote."""

    def __init__(self, bound: Sequence[Ref], values: Sequence[Any]) -> None:
        self.trace = current_trace()
        self.bound = list(bound)
        for ref, value in zip(self.bound, values, strict=True):
            ref._vals[self.trace] = value

    def finish(self) -> tuple[list[Any], list[Ref]]:
        """The bound refs' values now, and the other refs made outside the body it wrote."""
        written = _STATE.writes.pop(self.trace, {})
        values = [ref._vals.pop(self.trace) for ref in self.bound]
        known = {id(r) for r in self.bound}
        new = [r for i, r in written.items() if i not in known]
        for ref in new:
            ref._vals.pop(self.trace, None)
        return values, new


def _assign_all(refs: Sequence[Ref], values: Sequence[Any]) -> None:
    for ref, value in zip(refs, values, strict=True):
        ref._write(value)


def _current(refs: Sequence[Ref]) -> list[Any]:
    return [with_weak_type(r._value()[1], r.weak_type) for r in refs]


def _loop(run: Callable[[Callable[..., Any], list[Any]], tuple[Any, list[Any]]]) -> Any:
    """A loop whose bodies may write refs: ``run(wrap, extra_init)`` runs it with each body
    wrapped by ``wrap`` and the carry extended by the carried refs' values; it returns
    ``(result, final values)``. The refs the bodies write are found by a first run (its
    results are unused: dead code); a second one carries them."""
    carried: list[Ref] = []
    while True:
        found: list[Ref] = []

        def wrap(f: Callable[..., Any], unpack: Callable[..., tuple[tuple[Any, ...], Any]],
                 pack: Callable[[Any, Any], Any] | None, traced_for: str,
                 refs: list[Ref] = carried, found: list[Ref] = found) -> Callable[..., Any]:
            def body(*args: Any) -> Any:
                inner, values = unpack(*args)
                scope = _Scope(refs, values)
                out = f(*inner)
                check_outputs(_definition(inspect.unwrap(f)), traced_for, tree_util.tree_leaves(out))
                values, new = scope.finish()
                found.extend(r for r in new if all(r is not f for f in found))
                return pack(out, values) if pack is not None else out
            body._mlax_refs_threaded = True  # type: ignore[attr-defined]
            body.__wrapped__ = inspect.unwrap(f)  # type: ignore[attr-defined] (errors name the user's function)
            body.__name__ = getattr(f, "__name__", "body")
            return body

        mark = _ir_mark()
        result, finals = run(wrap, _current(carried))
        if not found:
            _assign_all(carried, finals)
            return result
        _ir_erase(mark)  # the first construct's results are unused: nothing of it stays
        carried = carried + found


def _ir_mark() -> Any:
    """(trace, ops in its block, functions of its module) before a construct is emitted."""
    trace = current_trace()
    if trace is None:
        return None
    module = trace.block.owner.parent
    return trace, len(trace.block.operations), len(module.regions[0].blocks[0].operations)


def _ir_erase(mark: Any) -> None:
    """Erase what was emitted since ``mark``: ops of the trace's block (last first), then the
    functions they called."""
    if mark is None:
        return
    trace, ops, functions = mark
    block = trace.block
    module_block = block.owner.parent.regions[0].blocks[0]
    for op in list(block.operations)[ops:][::-1]:
        op.operation.erase()
    for op in list(module_block.operations)[functions:][::-1]:
        op.operation.erase()


def _names(name: Any, count: int) -> Any:
    return [*name, *(f"ref[{i}]" for i in range(count))] if isinstance(name, list) else name


def no_carried_refs(f: Callable[..., Any], init: Any, traced_for: str) -> None:
    """jax's error for a ref in a loop's carry (which the body would return)."""
    for leaf in tree_util.tree_leaves(init):
        if isinstance(leaf, Ref):
            raise ValueError(f"function {_definition(inspect.unwrap(f))} traced for {traced_for} returned a "
                             f"mutable array reference of type {_aval_text(leaf.aval)}, but mutable array "
                             "references cannot be returned.")


def scan_refs(scan: Callable[..., Any], pair: Callable[..., Any], f: Callable[..., Any], init: Any, xs: Any,
              length: Any, reverse: bool, name: Any, body_argument: str) -> Any:
    """lax.scan (and fori_loop) whose body may write refs: the refs it writes are carried."""
    no_carried_refs(f, init, "scan")
    def run(wrap: Callable[..., Any], extra: list[Any]) -> Any:
        body = wrap(pair(f), lambda c, x: ((c[0], x), c[1]), lambda out, v: ((out[0], v), out[1]), "scan")
        (carry, finals), ys = scan(body, (init, extra), xs, length, reverse, _names(name, len(extra)),
                                   body_argument)
        return (carry, ys), finals

    return _loop(run)


def while_refs(while_loop: Callable[..., Any], cond_fun: Callable[..., Any], body_fun: Callable[..., Any],
               init_val: Any, name: Any, api: str) -> Any:
    """lax.while_loop (and fori_loop) whose functions may write refs: those written are carried."""
    no_carried_refs(body_fun, init_val, "while_body")
    def run(wrap: Callable[..., Any], extra: list[Any]) -> Any:
        unpack = lambda c: ((c[0],), c[1])  # noqa: E731
        cond = wrap(cond_fun, unpack, None, "while_cond")
        body = wrap(body_fun, unpack, lambda out, v: (out, v), "while_body")
        carry, finals = while_loop(cond, body, (init_val, extra), _names(name, len(extra)), api)
        return carry, finals

    return _loop(run)


class _RefOperand:
    """A ref among a cond's operands: a pytree node without leaves; the branch gets the ref back
    (it then reads and writes it as a ref it closes over)."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


tree_util.register_pytree_node(_RefOperand, lambda r: ((), r.index), lambda index, _: _RefOperand(index))


def branch_refs(run: Callable[[Sequence[Callable[..., Any]], tuple[Any, ...]], Any],
                branches: Sequence[Callable[..., Any]], operands: tuple[Any, ...]) -> Any:
    """cond / switch whose branches may write refs: ``run(branches, operands)`` with each
    branch wrapped to return ``(out, values of the refs written)``; refs among the operands
    reach the branches as they are."""
    passed: list[Ref] = []

    def placeholder(x: Any) -> Any:
        if isinstance(x, Ref):
            passed.append(x)
            return _RefOperand(len(passed) - 1)
        return x

    operands = tree_util.tree_map(placeholder, operands)
    is_placeholder = lambda x: isinstance(x, _RefOperand)  # noqa: E731
    refs: list[Ref] = []
    while True:
        found: list[Ref] = []

        def wrap(f: Callable[..., Any], refs: list[Ref] = refs,
                 found: list[Ref] = found) -> Callable[..., Any]:
            def branch(*args: Any) -> Any:
                args = tree_util.tree_map(lambda x: passed[x.index] if is_placeholder(x) else x, args,
                                          is_leaf=is_placeholder)
                scope = _Scope(refs, _current(refs))
                out = f(*args)
                check_outputs(_definition(inspect.unwrap(f)), "cond", tree_util.tree_leaves(out))
                values, new = scope.finish()
                found.extend(r for r in new if all(r is not f for f in found))
                return out, values
            branch._mlax_refs_threaded = True  # type: ignore[attr-defined]
            branch.__name__ = getattr(f, "__name__", "branch")
            branch.__wrapped__ = inspect.unwrap(f)  # type: ignore[attr-defined]
            return branch

        mark = _ir_mark()
        result, values = run([wrap(b) for b in branches], operands)
        if not found:
            _assign_all(refs, values)
            return result
        _ir_erase(mark)
        refs = refs + found


def threaded(f: Any) -> bool:
    """Whether ``f`` is a body these wrappers made (its refs are threaded already)."""
    return getattr(f, "_mlax_refs_threaded", False)


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


class _JitRefs:
    """What one jitted function knows of refs: those it closes over, and its discharged jit."""

    def __init__(self) -> None:
        self.closed: list[Ref] = []
        self.found: list[Ref] = []  # closed-over refs the trace in progress met: the next one takes them
        self.inner: Any = None


def holds_refs(tree: Any) -> bool:
    return bool(_LIVE) and any(isinstance(leaf, _JaxRef) for leaf in tree_util.tree_leaves(tree))


def _definition(fun: Any, raw: bool = True) -> str:
    """``name at file:line``, as jax's errors name a function."""
    from mlax.tracing import definition_info, function_name

    info = definition_info(fun)
    name = getattr(fun, "__name__", None) if raw else None
    name = name if isinstance(name, str) else function_name(fun)
    return f"{name} at {info.filename}:{info.line}" if info else name


def _inner_jit(jitted: Any, state: _JitRefs) -> Any:
    """The jit of ``jitted``'s function with refs discharged: ref arguments come in as values
    (in `_RefSlot` nodes), closed-over refs in the keyword ``_mlax_refs``; it returns
    ``(out, written arguments, written closed-over refs)``."""
    from mlax.api import JittedFunction

    fun = jitted._fun

    def discharged(*args: Any, _mlax_refs: tuple[Any, ...] = (), **kwargs: Any) -> Any:
        trace = current_trace()
        pending = _STATE.pending or []
        _STATE.pending = None
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
        _STATE.roots[trace] = state
        try:
            out = fun(*args, **kwargs)
        except Exception:
            if state.found:  # (it may have failed on a closed-over ref's value as a constant)
                raise _ClosedRef(state.found) from None
            raise
        finally:
            del _STATE.roots[trace]
        if state.found:
            raise _ClosedRef(state.found)
        check_outputs(_definition(fun, raw=True), "jit", tree_util.tree_leaves(out))
        written = _STATE.writes.pop(trace, {})
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
    from mlax.core import concrete_mode, known_of

    if concrete_mode() is not None and isinstance(tracer, Tracer) and ref._base is not None:
        tracer.known = known_of(ref._base)
    return tracer


UNHANDLED = object()


def call_jit(jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any], once: bool = False) -> Any:
    """``jitted(*args, **kwargs)`` outside any trace while refs exist: refs passed and refs
    closed over go in as values and come back written (the module docstring). `UNHANDLED`
    for a jit this does not apply to."""
    if getattr(jitted, "_mlax_discharged", False):
        return UNHANDLED
    if jitted._in_shardings is not jitted_unspecified() or jitted._out_shardings is not jitted_unspecified():
        if holds_refs((args, kwargs)):
            raise user_error(NotImplementedError, "mlax.jit with in_shardings/out_shardings does not take "
                             "mutable array references yet", "the arguments of mlax.jit")
        return UNHANDLED
    # one per jit object (not shared as its traces are, mlax.api._traces_for): it holds the refs
    # the function closes over, which live as long as the jitted function then, and no longer
    state = jitted.__dict__.setdefault("_mlax_ref_state", _JitRefs())
    from mlax.tracing import _describe_path

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
                        f"but when tracing {_definition(jitted._fun)} for jit the mutable array reference of "
                        f"type {_aval_text(leaf.aval)} appeared at both {other_path} and {path}.")
            explicit.append((path, leaf))
    if state.inner is None:
        state.inner = _inner_jit(jitted, state)
    while True:
        for path, ref in explicit:
            if any(ref is c for c in state.closed):
                raise ValueError(f"when tracing {_definition(jitted._fun)} for jit, a mutable array "
                                 f"reference of type {_aval_text(ref.aval)} was both closed over and passed "
                                 f"as the argument {path}")
        slotted = tree_util.tree_map(lambda x: _RefSlot(_current([x])[0]) if isinstance(x, Ref) else x,
                                     (args, kwargs))
        closed = tuple(_RefSlot(v) for v in _current(state.closed))
        saved, _STATE.pending = _STATE.pending, explicit
        try:
            call = state.inner.call_once if once else state.inner
            out, out_args, out_closed = call(*slotted[0], _mlax_refs=closed, **slotted[1])
            break
        except _ClosedRef as signal:
            state.found = []
            if any(r is c for r in signal.refs for c in state.closed):
                raise RuntimeError("internal error: a closed-over ref was not bound") from None
            state.closed.extend(signal.refs)
        finally:
            _STATE.pending = saved
            _purge()
    for i, value in out_args.items():
        explicit[i][1]._write(value)
    for i, value in out_closed.items():
        state.closed[i]._write(value)
    return out


def jitted_unspecified() -> Any:
    from mlax.jit_sharding import UNSPECIFIED

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
    from mlax.errors import index_tuple

    nums = [n % len(args) for n in index_tuple(argnums, "argnums", api)] if args else []
    written: list[Ref] = []

    def threaded_fun(*a: Any) -> Any:
        trace = current_trace()
        out = fun(*a)
        writes = _STATE.writes.pop(trace, {})
        sources = [leaf.value for i in nums if i < len(a) for leaf in tree_util.tree_leaves(a[i])
                   if isinstance(leaf, Tracer) and leaf.trace is trace]
        values = []
        for ref in writes.values():
            value = ref._vals.pop(trace)
            if isinstance(value, Tracer) and value.trace is trace and np.issubdtype(ref.dtype, np.inexact) \
                    and _depends(value.value, sources):
                raise Exception(f"performing a set/swap operation with a differentiated value on a "  # noqa: TRY002
                                f"non-differentiated array reference of type {_aval_text(ref.aval)}. "
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
    _assign_all(written, values)
    return value, grads


# ---------------------------------------------------------------- vmap


def vmap_refs(vmap: Callable[..., Any], fun: Callable[..., Any], in_axes: Any, out_axes: Any,
              axis_size: Any, axis_name: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``vmap(fun, ...)(*args, **kwargs)`` with refs among the arguments: a mapped ref reaches
    ``fun`` as a ref of one example and its written value is stored back batched; an unmapped
    one (in_axes None) may be read, and writing it is jax's error."""
    from mlax.batching import flatten_axes

    axes_tree = (in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args), 0)
    leaves, tree = tree_util.tree_flatten((args, kwargs))
    leaf_axes = flatten_axes("vmap in_axes", tree, axes_tree)
    mapped = [(i, leaf, axis) for i, (leaf, axis) in enumerate(zip(leaves, leaf_axes, strict=True))
              if isinstance(leaf, Ref) and axis is not None]
    refs = [leaf for _, leaf, _ in mapped]
    values = list(leaves)
    for i, ref, _ in mapped:
        values[i] = _current([ref])[0]
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
            proxy = Ref(AbstractRef(_shaped(aval.shape, ref.dtype, ref.weak_type)), None, trace, ref._origin,
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
    _assign_all(refs, finals)
    return out


__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get", "new_ref", "set",
           "swap"]
