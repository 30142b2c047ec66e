"""Structured control flow as jax.lax: cond, switch, while_loop, fori_loop, scan, map.

Branches and loop bodies are traced once, each into a private function of the program, and
the construct is a call of an `mlax.cond` / `mlax.while` / `mlax.scan` declaration naming them
(dialect/control_flow.py says why functions rather than regions). Enclosing traced values the
bodies use become extra operands shared by all the bodies of one construct (closure
conversion), so `mlax-autodiff` and `mlax-batch` see every input. Outside a trace each
construct runs as a jitted program of its own.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
from jax import tree_util
from mlir import ir
from mlir.dialects import func

from mlax import dtypes as front_dtypes
from mlax.core import Aval, Trace, Tracer, abstractify, current_trace
from mlax.dialect import get_context
from mlax.dialect.transforms import declare_transform
from mlax.passes.symbols import unique_name
from mlax.source_info import current_location, where
from mlax.tracing import SubFunction, function_name, trace_subfunction


def _staged(run: Callable[..., Any], *arrays: Any) -> Any:
    """``run(trace, *arrays)`` in the current trace, or as a jitted program outside one."""
    trace = current_trace()
    if trace is not None:
        return run(trace, *arrays)
    from mlax.api import jit

    return jit(lambda *a: run(current_trace(), *a))(*arrays)


def _avals_text(avals: Sequence[Aval]) -> str:
    return "(" + ", ".join(str(a) for a in avals) + ")"


def _same_types(a: Sequence[Aval], b: Sequence[Aval]) -> bool:
    pairs = zip(a, b, strict=False)
    return len(a) == len(b) and all(x.shape == y.shape and x.dtype == y.dtype for x, y in pairs)


class _Body:
    """One function to trace: on leaves of ``in_tree`` with ``in_avals`` (paths name them)."""

    def __init__(self, fun: Callable[..., Any], in_tree: Any, in_avals: Sequence[Aval],
                 paths: Sequence[str], unpack: Callable[[Any], tuple[Any, ...]] = lambda x: (x,)) -> None:
        self.fun, self.in_tree, self.in_avals, self.paths, self.unpack = fun, in_tree, in_avals, paths, unpack

    def trace(self, parent: Trace) -> SubFunction:
        def build_args(tracers: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
            return self.unpack(tree_util.tree_unflatten(self.in_tree, tracers)), {}

        return trace_subfunction(self.fun, build_args, self.in_avals, self.paths, parent)


def _trace_bodies(trace: Trace, bodies: Sequence[_Body]) -> tuple[list[SubFunction], list[Tracer]]:
    """Trace ``bodies``; each function then takes its own arguments followed by the enclosing
    values ANY of them captured (in one shared order), the construct's trailing operands."""
    subs = [body.trace(trace) for body in bodies]
    consts: dict[int, Tracer] = {}
    for sub in subs:
        consts.update((id(c), c) for c in sub.captured)
    shared = list(consts.values())
    module = trace.block.owner.parent
    for sub in subs:
        if [id(c) for c in sub.captured] != list(consts):
            _share_consts(ir.SymbolTable(module)[sub.name].operation, sub, shared)
    return subs, shared


def _share_consts(function: ir.Operation, sub: SubFunction, shared: list[Tracer]) -> None:
    block = function.regions[0].blocks[0]
    own = len(sub.in_avals)
    old = {id(c): block.arguments[own + i] for i, c in enumerate(sub.captured)}
    with get_context():
        for c in shared:
            argument = block.add_argument(c.value.type, ir.Location.name(f"captured {c.origin}"))
            if id(c) in old:
                old[id(c)].replace_all_uses_with(argument)
        for i in reversed(range(len(sub.captured))):
            block.erase_argument(own + i)
        results = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value).results
        function.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in block.arguments], list(results)))


def _emit(trace: Trace, kind: str, base: str, operands: Sequence[Any], out_avals: Sequence[Aval],
          origin: str, **fields: Any) -> list[Tracer]:
    """Declare the construct and call it on ``operands``."""
    module = trace.block.owner.parent
    values = [trace.value_of(x) for x in operands]
    with get_context(), current_location():
        declaration = declare_transform(module, kind, unique_name(module, f"{base}_{kind}"),
                                        loc=current_location(), **fields)
        results = list(ir.FunctionType(declaration.type).results)
        with ir.InsertionPoint(trace.block):
            call = func.CallOp(results, ir.StringAttr(declaration.attributes["sym_name"]).value, values)
    return [Tracer(trace, v, a, origin) for v, a in zip(call.results, out_avals, strict=True)]


def _flatten(tree: Any, name: str | list[str]) -> tuple[list[Any], Any, list[Aval], list[str]]:
    """Leaves, structure, avals and paths (``name`` + key path, or the given list of paths)."""
    pairs, treedef = tree_util.tree_flatten_with_path(tree)
    leaves = [leaf for _, leaf in pairs]
    paths = name if isinstance(name, list) else [name + tree_util.keystr(path) for path, _ in pairs]
    return leaves, treedef, [abstractify(leaf) for leaf in leaves], paths


def _scalar_selector(trace: Trace, value: Any, what: str) -> Aval:
    aval = abstractify(value)
    if aval.shape != ():
        raise TypeError(f"{what} must be a scalar, got shape {aval.shape}{where()}")
    return aval


# ---- cond and switch ---------------------------------------------------------------------------


def _branches(trace: Trace, selector: Any, branches: Sequence[Callable[..., Any]], operands: tuple,
              names: Sequence[str]) -> Any:
    leaves, tree, avals, paths = _flatten(operands, "operand")
    bodies = [_Body(b, tree, avals, paths, unpack=tuple) for b in branches]
    subs, consts = _trace_bodies(trace, bodies)
    first = subs[0]
    for name, sub in zip(names[1:], subs[1:], strict=True):
        if sub.out_tree != first.out_tree or not _same_types(sub.out_avals, first.out_avals):
            raise TypeError(
                f"{names[0]} and {name} output must have identical types, got\n"
                f"{names[0]}: {first.out_tree} {_avals_text(first.out_avals)}\n"
                f"{name}: {sub.out_tree} {_avals_text(sub.out_avals)}{where()}")
    out_avals = list(first.out_avals)  # JAX types the result as the first branch's (weak types included)
    outs = _emit(trace, "cond", first.name, [selector, *leaves, *consts], out_avals,
                 f"result of cond over {', '.join(function_name(b) for b in branches)}",
                 branches=tuple(s.name for s in subs))
    return tree_util.tree_unflatten(first.out_tree, outs)


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; both are traced (as jax.lax)."""
    import mlax.lax as lax

    def run(trace: Trace, pred: Any, operands: tuple) -> Any:
        aval = _scalar_selector(trace, pred, "Pred")
        if aval.dtype != np.bool_:
            pred = lax.ne(pred, np.zeros((), aval.dtype))
        return _branches(trace, pred, [false_fun, true_fun], operands, ["false_fun", "true_fun"])

    return _staged(run, pred, operands)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[clamp(index, 0, len(branches) - 1)](*operands)`` (as jax.lax.switch)."""
    import mlax.lax as lax

    branches = list(branches)
    if not branches:
        raise ValueError(f"Empty branch sequence{where()}")

    def run(trace: Trace, index: Any, operands: tuple) -> Any:
        aval = _scalar_selector(trace, index, "Branch index")
        if not np.issubdtype(aval.dtype, np.integer):
            raise TypeError(f"Branch index must have an integer type, got {aval.dtype.name}{where()}")
        if len(branches) == 1:
            return branches[0](*operands)
        index = lax.convert_element_type(index, np.int32)  # wraps a wider index first, as JAX
        if len(branches) == 2:
            selector = lax.ge(index, np.int32(1))
        else:
            selector = lax.clamp(np.int32(0), index, np.int32(len(branches) - 1))
        names = [f"branches[{i}]" for i in range(len(branches))]
        return _branches(trace, selector, branches, operands, names)

    return _staged(run, index, operands)


# ---- loops -------------------------------------------------------------------------------------


def _check_carry(what: str, paths: Sequence[str], in_tree: Any, in_avals: Sequence[Aval],
                 out_tree: Any, out_avals: Sequence[Aval]) -> None:
    if out_tree != in_tree:
        raise TypeError(f"{what} output and input must have identical types: the carry has structure "
                        f"{in_tree} on input but {out_tree} on output{where()}")
    for path, a, b in zip(paths, in_avals, out_avals, strict=True):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise TypeError(f"{what} output and input must have identical types: the carry {path} enters "
                            f"as {a} but leaves as {b}{where()}")


def _carry_avals(in_avals: Sequence[Aval], out_avals: Sequence[Aval]) -> list[Aval]:
    pairs = zip(in_avals, out_avals, strict=True)
    return [Aval(a.shape, a.dtype, a.weak_type and b.weak_type) for a, b in pairs]


def _promote_weak_carry(trace: Trace, leaves: list[Any], avals: list[Aval],
                        out_avals: Sequence[Aval]) -> bool:
    """JAX's promotion of weakly typed initial carries: one the body returns with another dtype
    (``init=0`` with a float body) is converted to the promoted dtype. Whether any was."""
    import mlax.lax as lax

    changed = False
    for i, (a, b) in enumerate(zip(avals, out_avals, strict=True)):
        if a.weak_type and a.shape == b.shape and a.dtype != b.dtype:
            dtype = front_dtypes.result_type(leaves[i], SimpleNamespace(aval=b))
            leaves[i] = lax.convert_element_type(leaves[i], dtype)
            avals[i] = Aval(a.shape, dtype, False)
            changed = True
    return changed


def _discard(trace: Trace, subs: Sequence[SubFunction]) -> None:
    """Erase traced bodies before tracing them again."""
    table = ir.SymbolTable(trace.block.owner.parent)
    for sub in subs:
        table[sub.name].operation.erase()


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any) -> Any:
    """Apply ``body_fun`` to the carry while ``cond_fun`` holds (as jax.lax.while_loop)."""
    return _while_loop(cond_fun, body_fun, init_val, "init_val")


def _while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any,
                name: str | list[str]) -> Any:
    def run(trace: Trace, init_val: Any) -> Any:
        leaves, tree, avals, paths = _flatten(init_val, name)
        while True:
            (cond_sub, body_sub), consts = _trace_bodies(trace, [_Body(cond_fun, tree, avals, paths),
                                                                 _Body(body_fun, tree, avals, paths)])
            if body_sub.out_tree != tree or not _promote_weak_carry(trace, leaves, avals, body_sub.out_avals):
                break
            _discard(trace, [cond_sub, body_sub])
        if len(cond_sub.out_avals) != 1 or cond_sub.out_avals[0].shape != () \
                or cond_sub.out_avals[0].dtype != np.bool_:
            raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) "
                            f"{_avals_text(cond_sub.out_avals)}{where()}")
        _check_carry("body_fun", paths, tree, avals, body_sub.out_tree, body_sub.out_avals)
        outs = _emit(trace, "while", body_sub.name, [*leaves, *consts],
                     _carry_avals(avals, body_sub.out_avals),
                     f"result of while_loop {function_name(body_fun)}",
                     cond=cond_sub.name, body=body_sub.name)
        return tree_util.tree_unflatten(tree, outs)

    return _staged(run, init_val)


def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1, _split_transpose: bool = False) -> tuple[Any, Any]:
    """Loop ``f(carry, x) -> (carry, y)`` over the leading axis of ``xs`` (as jax.lax.scan).

    ``unroll`` is accepted for compatibility; the loop is not unrolled.
    """
    return _scan(f, init, xs, length, reverse, "init")


def _scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any, length: int | None, reverse: bool,
          name: str | list[str]) -> tuple[Any, Any]:
    def run(trace: Trace, init: Any, xs: Any) -> tuple[Any, Any]:
        carry_leaves, carry_tree, carry_avals, carry_paths = _flatten(init, name)
        x_leaves, x_tree, x_avals, x_paths = _flatten(xs, "xs")
        sizes = {a.shape[0] if a.shape else None for a in x_avals}
        if None in sizes:
            path = next(p for p, a in zip(x_paths, x_avals, strict=False) if not a.shape)
            raise ValueError(f"scan got value with no leading axis to scan over: {path} has shape ()"
                             f"{where()}")
        if len(sizes) > 1 or (length is not None and sizes and sizes != {length}):
            found = ", ".join(f"{p} axis 0 of size {a.shape[0]}"
                              for p, a in zip(x_paths, x_avals, strict=True))
            given = f" and length={length}" if length is not None else ""
            raise ValueError(f"scan got values with different leading axis sizes: {found}{given}{where()}")
        if not sizes and length is None:
            raise ValueError(f"scan got no values to scan over and `length` not provided.{where()}")
        steps = int(length) if length is not None else sizes.pop()
        slice_avals = [Aval(a.shape[1:], a.dtype, a.weak_type) for a in x_avals]
        in_tree = tree_util.tree_structure((init, xs))
        n = len(carry_leaves)
        while True:
            body = _Body(_pair_returning(f), in_tree, [*carry_avals, *slice_avals],
                         [*carry_paths, *(p + "[i]" for p in x_paths)], unpack=tuple)
            (sub,), consts = _trace_bodies(trace, [body])
            carry_out_tree, y_tree = sub.out_tree.children()
            if carry_out_tree != carry_tree or \
                    not _promote_weak_carry(trace, carry_leaves, carry_avals, sub.out_avals[:n]):
                break
            _discard(trace, [sub])
        _check_carry("scan body function carry", carry_paths, carry_tree, carry_avals, carry_out_tree,
                     sub.out_avals[:n])
        y_avals = [Aval((steps, *a.shape), a.dtype, a.weak_type) for a in sub.out_avals[n:]]
        outs = _emit(trace, "scan", sub.name, [*carry_leaves, *x_leaves, *consts],
                     [*_carry_avals(carry_avals, sub.out_avals[:n]), *y_avals],
                     f"result of scan {function_name(f)}", body=sub.name, length=steps,
                     reverse=bool(reverse), num_carry=n, num_consts=len(consts))
        return tree_util.tree_unflatten(carry_tree, outs[:n]), tree_util.tree_unflatten(y_tree, outs[n:])

    return _staged(run, init, xs)


def _pair_returning(f: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(f)
    def body(carry: Any, x: Any) -> tuple[Any, Any]:
        out = f(carry, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError(f"scan body function {function_name(f)} must return a pair (carry, y), got "
                            f"{type(out).__name__}{where()}")
        return tuple(out)

    return body


def _python_ints(*values: Any) -> bool:
    """Python int bounds give a weakly typed loop index, as in JAX."""
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def _concrete_int(x: Any) -> int | None:
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    if isinstance(x, np.ndarray) and x.shape == () and np.issubdtype(x.dtype, np.integer):
        return int(x)
    return None


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any, *,
              unroll: int | bool | None = None) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)`` (as jax.lax.fori_loop).

    With concrete bounds it is a scan of ``upper - lower`` steps (reverse-differentiable);
    with traced bounds a while_loop (forward-differentiable only), as in JAX.
    """
    import mlax.lax as lax
    import mlax.numpy as mnp

    lo, hi = _concrete_int(lower), _concrete_int(upper)
    paths = _flatten(init_val, "init_val")[3]
    dtype = mnp.result_type(lower, upper)
    if lo is not None and hi is not None:
        weak = _python_ints(lower, upper)
        one = 1 if weak else np.ones((), dtype)

        def step(carry: tuple[Any, Any], _: Any) -> tuple[tuple[Any, Any], None]:
            i, val = carry
            return (lax.add(i, one), body_fun(i, val)), None

        start = lo if weak else np.asarray(lo, dtype)
        steps = builtins.max(hi - lo, 0)
        (_, result), _ = _scan(step, (start, init_val), None, steps, False, ["i", *paths])
        return result

    def cond_fun(carry: tuple[Any, Any, Any]) -> Any:
        return lax.lt(carry[0], carry[1])

    def body(carry: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
        i, hi_, val = carry
        return lax.add(i, np.ones((), dtype)), hi_, body_fun(i, val)

    start = lax.convert_element_type(lower, dtype)
    stop = lax.convert_element_type(upper, dtype)
    return _while_loop(cond_fun, body, (start, stop, init_val), ["i", "upper", *paths])[2]


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001
    """``f`` applied to each slice of the leading axis of ``xs``, stacked (as jax.lax.map).

    With ``batch_size``, each scan step applies ``vmap(f)`` to ``batch_size`` slices, and the
    remainder (all of it for ``batch_size=0``) is one more ``vmap(f)``, concatenated, as JAX.
    """
    if batch_size is None:
        return scan(lambda carry, x: (carry, f(x)), (), xs)[1]
    from mlax.batching import vmap

    leaves = tree_util.tree_leaves(xs)
    if not leaves:
        return scan(lambda carry, x: (carry, f(x)), (), xs)[1]
    size = abstractify(leaves[0]).shape[0]
    steps, remainder = (0, size) if batch_size == 0 else divmod(size, batch_size)
    whole = steps * batch_size

    def rows(start: int, stop: int) -> Any:
        return tree_util.tree_map(lambda x: x[start:stop], xs)

    parts = []
    if steps:
        batched = tree_util.tree_map(lambda x: x[:whole].reshape(steps, batch_size, *x.shape[1:]), xs)
        stacked = scan(lambda carry, x: (carry, vmap(f)(x)), (), batched)[1]
        parts.append(tree_util.tree_map(lambda y: y.reshape(-1, *y.shape[2:]), stacked))
    if remainder or not steps:
        parts.append(vmap(f)(rows(whole, size)))
    if len(parts) == 1:
        return parts[0]
    import mlax.lax as lax

    return tree_util.tree_map(lambda x, y: lax.concatenate([x, y], 0), *parts)


__all__ = ["cond", "fori_loop", "map", "scan", "switch", "while_loop"]
