"""Where traced bodies end while refs exist: a ref returned is jax's error; writes to refs made
outside a body are threaded out by loops (extra carries) and branches (extra outputs), or
refused (pyfront/refs.py has the whole picture)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from jax import tree_util

from mlax.core import Trace, current_trace, with_weak_type
from mlax.errors import user_error
from mlax.ref_type import LIVE, STATE, Ref, aval_text
from mlax.tracing import definition_info, function_name


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
                             f"reference of type {aval_text(leaf.aval)}, but mutable array references "
                             f"cannot be returned.\n\n{_describe_origin(leaf)}")


def purge() -> None:
    """Forget the writes of traces that ended without threading them out (a trace abandoned by
    an error, or restarted for a closed-over ref): they must not keep their refs alive."""
    for trace in [t for t in STATE.writes if not t.active]:
        for ref in STATE.writes.pop(trace).values():
            ref._vals.pop(trace, None)


def check_body(trace: Trace, out_leaves: Sequence[Any]) -> None:
    """Where a traced body ends: a ref among its outputs is jax's error; a write to a ref made
    outside the body that no construct threads out is refused (jax's error under vmap and
    under differentiation)."""
    if not LIVE:
        return
    check_outputs(f"{trace.function_name} at {trace.source}" if trace.source else trace.function_name,
                  trace.traced_for, out_leaves)
    written = STATE.writes.pop(trace, None)
    if not written:
        return
    for ref in written.values():
        ref._vals.pop(trace, None)
    if trace.traced_for == "eval_shape":  # shapes only: its writes change nothing, as jax's
        return
    ref = next(iter(written.values()))
    if trace.traced_for == "vmap":
        raise Exception(f"performing a set/swap operation with vmapped value on an unbatched array reference "  # noqa: TRY002 (jax's type)
                        f"of type {aval_text(ref.aval)}. Move the array reference to be an argument to the "
                        "vmapped function?")
    if trace.traced_for in ("grad", "jvp", "vjp", "linearize"):
        raise Exception(f"performing a set/swap operation with a differentiated value on a "  # noqa: TRY002
                        f"non-differentiated array reference of type {aval_text(ref.aval)}. Move the array "
                        "reference to be an argument of the differentiated function?")
    raise user_error(NotImplementedError, f"mlax does not thread writes to a mutable array reference of type "
                     f"{aval_text(ref.aval)} out of {trace.function_name} traced for {trace.traced_for} "
                     "(refs are threaded through jit, scan, fori_loop, while_loop, cond, vmap and grad)",
                     "a jax.Ref")


class Scope:
    """A traced body's refs: those bound to its arguments, and those it wrote."""

    def __init__(self, bound: Sequence[Ref], values: Sequence[Any]) -> None:
        self.trace = current_trace()
        self.bound = list(bound)
        for ref, value in zip(self.bound, values, strict=True):
            ref._vals[self.trace] = value

    def finish(self) -> tuple[list[Any], list[Ref]]:
        """The bound refs' values now, and the other refs made outside the body it wrote."""
        written = STATE.writes.pop(self.trace, {})
        values = [ref._vals.pop(self.trace) for ref in self.bound]
        known = {id(r) for r in self.bound}
        new = [r for i, r in written.items() if i not in known]
        for ref in new:
            ref._vals.pop(self.trace, None)
        return values, new


def assign_all(refs: Sequence[Ref], values: Sequence[Any]) -> None:
    for ref, value in zip(refs, values, strict=True):
        ref._write(value)


def current_values(refs: Sequence[Ref]) -> list[Any]:
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
                scope = Scope(refs, values)
                out = f(*inner)
                check_outputs(definition(inspect.unwrap(f)), traced_for, tree_util.tree_leaves(out))
                values, new = scope.finish()
                found.extend(r for r in new if all(r is not f for f in found))
                return pack(out, values) if pack is not None else out
            body._mlax_refs_threaded = True  # type: ignore[attr-defined]
            body.__wrapped__ = inspect.unwrap(f)  # type: ignore[attr-defined] (errors name the user's function)
            body.__name__ = getattr(f, "__name__", "body")
            return body

        mark = _ir_mark()
        result, finals = run(wrap, current_values(carried))
        if not found:
            assign_all(carried, finals)
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
            raise ValueError(f"function {definition(inspect.unwrap(f))} traced for {traced_for} returned a "
                             f"mutable array reference of type {aval_text(leaf.aval)}, but mutable array "
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
                scope = Scope(refs, current_values(refs))
                out = f(*args)
                check_outputs(definition(inspect.unwrap(f)), "cond", tree_util.tree_leaves(out))
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
            assign_all(refs, values)
            return result
        _ir_erase(mark)
        refs = refs + found


def threaded(f: Any) -> bool:
    """Whether ``f`` is a body these wrappers made (its refs are threaded already)."""
    return getattr(f, "_mlax_refs_threaded", False)


def definition(fun: Any, raw: bool = True) -> str:
    """``name at file:line``, as jax's errors name a function."""
    info = definition_info(fun)
    name = getattr(fun, "__name__", None) if raw else None
    name = name if isinstance(name, str) else function_name(fun)
    return f"{name} at {info.filename}:{info.line}" if info else name
