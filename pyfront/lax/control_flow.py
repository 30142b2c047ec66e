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
import inspect
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
from jax import tree_util
from mlir import ir
from mlir.dialects import func

import mlax.lax as lax  # the package (its public functions): used only when called
from mlax import dtypes as front_dtypes
from mlax import prng, refs
from mlax.batching import vmap
from mlax.core import Aval, Trace, Tracer, abstractify, current_trace, is_array_like
from mlax.dialect import get_context
from mlax.dialect.transforms import declare_transform
from mlax.errors import check_callable, user_error
from mlax.jax_private import fun_sourceinfo
from mlax.passes.symbols import unique_name
from mlax.sharding_types import jax_type, tracking, varying_as
from mlax.source_info import current_location
from mlax.staging import traced_with_known
from mlax.tracing import SubFunction, checkify_bodies, checkify_body, function_name, trace_subfunction


def _staged(run: Callable[..., Any], api: str, names: Sequence[str], *arrays: Any) -> Any:
    """``run(trace, *arrays)`` in the current trace, or as a jitted program outside one (whose
    parameters are ``names``, so that its errors name the construct's arguments). In concrete
    mode (grad outside jit) the results' values are known: the construct run on the values."""
    trace = current_trace()
    if trace is not None:
        return traced_with_known(lambda: run(trace, *arrays), arrays, {},
                                 lambda *a: _staged(run, api, names, *a))
    from mlax.api import staged_jit

    def staged(*a: Any) -> Any:
        return run(current_trace(), *a)

    staged.__name__ = api
    staged.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names])
    return staged_jit(staged)(*arrays)


def _operand_aval(value: Any, argument: str) -> Aval:
    """The abstract value of an array operand given to a construct, checked to be one."""
    if not is_array_like(value):
        raise user_error(TypeError, f"expected an array or a scalar, got {value!r} of type "
                         f"{type(value).__name__}", argument)
    return abstractify(value)


def _avals_text(avals: Sequence[Aval]) -> str:
    return "(" + ", ".join(str(a) for a in avals) + ")"


def _same_types(a: Sequence[Aval], b: Sequence[Aval]) -> bool:
    pairs = zip(a, b, strict=False)
    return len(a) == len(b) and all(x.shape == y.shape and x.dtype == y.dtype for x, y in pairs)


class _Body:
    """One function to trace: on leaves of ``in_tree`` with ``in_avals`` (paths name them), for
    the construct ``traced_for`` (as jax's tracer errors name it)."""

    def __init__(self, fun: Callable[..., Any], in_tree: Any, in_avals: Sequence[Aval], paths: Sequence[str],
                 traced_for: str, unpack: Callable[[Any], tuple[Any, ...]] = lambda x: (x,)) -> None:
        self.fun, self.in_tree, self.in_avals, self.paths, self.unpack = fun, in_tree, in_avals, paths, unpack
        self.traced_for = traced_for

    def trace(self, parent: Trace) -> SubFunction:
        def build_args(tracers: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
            return self.unpack(tree_util.tree_unflatten(self.in_tree, tracers)), {}

        return trace_subfunction(self.fun, build_args, self.in_avals, self.paths, parent, self.traced_for)


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
    """Leaves, structure, avals and paths (``name`` + key path, or the given list of paths); a
    PRNG key leaf as its data, which the structure rebuilds into a key (mlax.prng)."""
    pairs, treedef = prng.tree_flatten_with_path(tree)
    leaves = [leaf for _, leaf in pairs]
    paths = name if isinstance(name, list) else [name + tree_util.keystr(path) for path, _ in pairs]
    return leaves, treedef, [abstractify(leaf) for leaf in leaves], paths


def _scalar_selector(value: Any, what: str, argument: str) -> Aval:
    aval = _operand_aval(value, argument)
    if aval.shape != ():
        raise user_error(TypeError, f"{what} must be a scalar, got shape {aval.shape}", argument)
    return aval


# ---- cond and switch ---------------------------------------------------------------------------


def _vma_mismatch_text(diffs: list[str], fixes: list[str], item_end: str) -> tuple[str, str]:
    """jax's wording of a varying-axes mismatch: the differences, and the ``pcast`` that might fix
    them (jax's cond and loop messages end their list items differently: ``item_end``)."""
    def listed(items: list[str]) -> str:
        return "\n".join(f"  * {d};{item_end}" for d in items[:-1]) + ("" if item_end else "\n") + \
            f"  * {items[-1]}.\n"

    differences = f"{diffs[0][0].upper()}{diffs[0][1:]}.\n" if len(diffs) == 1 else listed(diffs)
    hint = ""
    if fixes:
        hint = f"This might be fixed by {fixes[0]}.\n" if len(fixes) == 1 else \
            f"This might be fixed by:\n{listed(fixes)}"
        hint += ("See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for more "
                 "information.\n\n")
    return differences, hint


def _check_branch_vma(api: str, branches: Sequence[Callable[..., Any]], subs: Sequence[SubFunction]) -> None:
    """jax's TypeError for branches whose outputs vary over other manual axes, inside a shard_map
    body traced with check_vma (jax's _check_branch_outputs; its text). A cond's branches are
    (false_fun, true_fun) here; jax compares true_fun's outputs with false_fun's."""
    if not tracking():
        return
    if api == "cond":
        pairs = [("true_fun", "false_fun", 1, 0)]
    else:
        pairs = [("branch 0", f"branch{i}", 0, i) for i in range(1, len(subs))]
    for name1, name2, i1, i2 in pairs:
        avals1, avals2 = subs[i1].out_avals, subs[i2].out_avals
        if all(a.vma == b.vma for a, b in zip(avals1, avals2, strict=True)):
            continue
        dummy = tree_util.tree_unflatten(subs[i1].out_tree, [0] * len(avals1))
        paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(dummy)[0]]
        component = [f" at path {p}" if p else "" for p in paths]
        diffs = [f"the output of {name1}{c} has type {jax_type(a).str_short()} but the corresponding output "
                 f"of {name2} has type {jax_type(b).str_short()}, so the manual axis types do not match"
                 for c, a, b in zip(component, avals1, avals2, strict=True) if a.vma != b.vma]
        fixes = [f"applying `jax.lax.pcast(..., {tuple(sorted(x1.vma - x2.vma))}, to='varying')` to the "
                 f"output of {n}{c}"
                 for c, a1, a2 in zip(component, avals1, avals2, strict=True)
                 for n, x1, x2 in [(name1, a2, a1), (name2, a1, a2)]
                 if x1.vma != x2.vma and x2.vma - x1.vma]
        differences, hint = _vma_mismatch_text(diffs, fixes, item_end="")
        info1, info2 = fun_sourceinfo(branches[i1]), fun_sourceinfo(branches[i2])
        raise TypeError(f"{api} branches must have equal output types but they differ.\n\n"
                        f"{name1} is {info1}\n{name2} is {info2}\n\n{differences}\n{hint}"
                        f"Revise {name1} and/or {name2} so that all output types match.")


def _branches(trace: Trace, selector: Any, branches: Sequence[Callable[..., Any]], operands: tuple,
              names: Sequence[str], api: str) -> Any:
    if refs.any_alive() and not refs.threaded(branches[0]):  # branches writing refs return their values
        return refs.branch_refs(lambda wrapped, ops: _branches(trace, selector, wrapped, ops, names, api),
                                branches, operands)
    leaves, tree, avals, paths = _flatten(operands, "operand")
    position: dict[int, int] = {}  # a function given as several branches is traced once, as jax's
    distinct = []
    for b in branches:
        if id(b) not in position:
            position[id(b)] = len(distinct)
            distinct.append(b)
    errors = checkify_bodies(trace)  # in a checkified function: each branch's checks collected
    probed = [errors.probed(k, b) if errors else b for k, b in enumerate(distinct)]
    bodies = [_Body(b, tree, avals, paths, api, unpack=tuple) for b in probed]
    traced, consts = _trace_bodies(trace, bodies)
    subs = [traced[position[id(b)]] for b in branches]
    first = subs[0]
    for name, sub in zip(names[1:], subs[1:], strict=True):
        if sub.out_tree != first.out_tree or not _same_types(sub.out_avals, first.out_avals):
            lead = (f"{api} branch outputs must have the same pytree structure, but they differ"
                    if sub.out_tree != first.out_tree else
                    f"{api} branches must have equal output types but they differ")  # jax's words
            raise user_error(
                TypeError, f"{lead}: {names[0]} and {name} output must have identical types, got\n"
                f"{names[0]}: {first.out_tree} {_avals_text(first.out_avals)}\n"
                f"{name}: {sub.out_tree} {_avals_text(sub.out_avals)}", f"{name} of mlax.lax.{api}")
    _check_branch_vma(api, branches, subs)
    if errors and errors.checked():  # traced again, each branch returning every branch's errors
        _discard(trace, traced)
        bodies = [_Body(errors.with_union(k, b), tree, avals, paths, api, unpack=tuple)
                  for k, b in enumerate(distinct)]
        traced, consts = _trace_bodies(trace, bodies)
        subs = [traced[position[id(b)]] for b in branches]
        first = subs[0]
    out_avals = list(first.out_avals)  # JAX types the result as the first branch's (weak types included)
    outs = _emit(trace, "cond", first.name, [selector, *leaves, *consts], out_avals,
                 f"result of cond over {', '.join(function_name(b) for b in branches)}",
                 branches=tuple(s.name for s in subs))
    out = tree_util.tree_unflatten(first.out_tree, outs)
    if errors and errors.checked():
        out, error_leaves = out
        errors.finish(error_leaves)
    return out


_NO_OPERAND = object()


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any,
         operand: Any = _NO_OPERAND) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; both are traced (as jax.lax).

    jax's older forms are kept as jax keeps them (haiku's ``hk.cond`` passes them on): one
    operand as ``operand=x``, and ``cond(pred, true_operand, true_fun, false_operand, false_fun)``."""
    if not callable(true_fun) and callable(false_fun) and len(operands) == 2 and callable(operands[1]):
        x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
        return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
    if operand is not _NO_OPERAND:
        if operands:
            raise user_error(TypeError, "if 'operand' keyword is passed then no positional operands can be "
                             f"passed, got operand={operand!r} and positional operands {operands!r}",
                             "operand of mlax.lax.cond")
        operands = (operand,)
    check_callable(true_fun, "true_fun of mlax.lax.cond")
    check_callable(false_fun, "false_fun of mlax.lax.cond")
    aval = _scalar_selector(pred, "Pred", "pred of mlax.lax.cond")

    def run(trace: Trace, pred: Any, operands: tuple) -> Any:
        if aval.dtype != np.bool_:
            pred = lax.ne(pred, np.zeros((), aval.dtype))
        return _branches(trace, pred, [false_fun, true_fun], operands, ["false_fun", "true_fun"], "cond")

    return _staged(run, "cond", ("pred", "operands"), pred, operands)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[clamp(index, 0, len(branches) - 1)](*operands)`` (as jax.lax.switch)."""
    if not isinstance(branches, Sequence) or not all(callable(b) for b in branches):
        raise user_error(TypeError, "lax.switch: branches argument should be a sequence of callables, got "
                         f"{branches!r}", "branches of mlax.lax.switch")
    branches = list(branches)
    if not branches:
        raise user_error(ValueError, "Empty branch sequence", "branches of mlax.lax.switch")
    aval = _scalar_selector(index, "Branch index", "index of mlax.lax.switch")
    if not np.issubdtype(aval.dtype, np.integer):
        raise user_error(TypeError, f"Branch index must have an integer type, got {aval.dtype.name}",
                         "index of mlax.lax.switch")

    def run(trace: Trace, index: Any, operands: tuple) -> Any:
        if len(branches) == 1:
            return branches[0](*operands)
        index = lax.convert_element_type(index, np.int32)  # wraps a wider index first, as JAX
        if len(branches) == 2:
            selector = lax.ge(index, np.int32(1))
        else:
            selector = lax.clamp(np.int32(0), index, np.int32(len(branches) - 1))
        names = [f"branches[{i}]" for i in range(len(branches))]
        return _branches(trace, selector, branches, operands, names, "switch")

    return _staged(run, "switch", ("index", "operands"), index, operands)


# ---- loops -------------------------------------------------------------------------------------


def _check_carry(what: str, argument: str, paths: Sequence[str], in_tree: Any, in_avals: Sequence[Aval],
                 out_tree: Any, out_avals: Sequence[Aval]) -> None:
    if out_tree != in_tree:
        raise user_error(TypeError, f"{what} output and input must have identical types: the carry has "
                         f"structure {in_tree} on input but {out_tree} on output", argument)
    for path, a, b in zip(paths, in_avals, out_avals, strict=True):
        if a.shape != b.shape or a.dtype != b.dtype:
            raise user_error(TypeError, f"{what} output and input must have identical types: the carry "
                             f"{path} enters as {a} but leaves as {b}", argument)


def _carry_avals(in_avals: Sequence[Aval], out_avals: Sequence[Aval]) -> list[Aval]:
    pairs = zip(in_avals, out_avals, strict=True)
    return [varying_as(Aval(a.shape, a.dtype, a.weak_type and b.weak_type), b) for a, b in pairs]


def _check_carry_vma(what: str, body_fun: Callable[..., Any], root: str | list[str], paths: Sequence[str],
                     in_avals: Sequence[Aval], out_avals: Sequence[Aval]) -> None:
    """jax's TypeError for a loop carry whose varying manual axes (vma) change in the body of a
    shard_map traced with check_vma (jax's _check_carry_type; its text)."""
    if not tracking() or all(a.vma == b.vma for a, b in zip(in_avals, out_avals, strict=True)):
        return
    try:
        carry = next(iter(inspect.signature(body_fun).parameters), None)
    except (TypeError, ValueError):
        carry = None

    def component(path: str) -> str:
        suffix = path[len(root):] if isinstance(root, str) and path.startswith(root) else path
        if carry:
            return f"the input carry component {carry}{suffix}" if suffix else f"the input carry {carry}"
        return f"the input carry at path {suffix}" if suffix else "the input carry"

    bad = [(p, a, b) for p, a, b in zip(paths, in_avals, out_avals, strict=True) if a.vma != b.vma]
    diffs = [f"{component(p)} has type {jax_type(a).str_short()} but the corresponding output carry "
             f"component has type {jax_type(b).str_short()}, so the manual axis types do not match"
             for p, a, b in bad]
    fixes = [f"applying `jax.lax.pcast(..., {tuple(sorted(b.vma - a.vma))}, to='varying')`, to the initial "
             f"carry value corresponding to {component(p)}" for p, a, b in bad if b.vma - a.vma]
    differences, hint = _vma_mismatch_text(diffs, fixes, item_end="\n")
    # jax's text exactly (pages print it), so without user_error's argument and source lines
    raise TypeError(f"{what} function carry input and carry output must have equal types, but they differ:"
                    f"\n\n{differences}\n{hint}Revise the function so that all output types match the "
                    "corresponding input types.")


def _promote_weak_carry(trace: Trace, leaves: list[Any], avals: list[Aval],
                        out_avals: Sequence[Aval]) -> bool:
    """JAX's promotion of weakly typed initial carries: one the body returns with another dtype
    (``init=0`` with a float body) is converted to the promoted dtype. Whether any was."""
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
    check_callable(cond_fun, "cond_fun of mlax.lax.while_loop")
    check_callable(body_fun, "body_fun of mlax.lax.while_loop")
    return _while_loop(cond_fun, body_fun, init_val, "init_val", "mlax.lax.while_loop")


def _while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any,
                name: str | list[str], api: str) -> Any:
    if refs.any_alive() and not refs.threaded(body_fun):  # refs the body writes are carried
        return refs.while_refs(_while_loop, cond_fun, body_fun, init_val, name, api)
    def run(trace: Trace, init_val: Any) -> Any:
        leaves, tree, avals, paths = _flatten(init_val, name)
        errors = None if getattr(body_fun, "carries_errors", False) else checkify_bodies(trace)
        while True:
            body = errors.probed(0, body_fun) if errors else body_fun
            bodies = [_Body(cond_fun, tree, avals, paths, "while_cond"),
                      _Body(body, tree, avals, paths, "while_body")]
            (cond_sub, body_sub), consts = _trace_bodies(trace, bodies)
            if body_sub.out_tree != tree or not _promote_weak_carry(trace, leaves, avals, body_sub.out_avals):
                break
            _discard(trace, [cond_sub, body_sub])
        if len(cond_sub.out_avals) != 1 or cond_sub.out_avals[0].shape != () \
                or cond_sub.out_avals[0].dtype != np.bool_:
            raise user_error(TypeError, "cond_fun must return a boolean scalar, but got output type(s) "
                             f"{_avals_text(cond_sub.out_avals)}", f"cond_fun of {api}")
        _check_carry("body_fun", f"body_fun of {api}", paths, tree, avals, body_sub.out_tree,
                     body_sub.out_avals)
        _check_carry_vma("while_loop body", body_fun, name, paths, avals, body_sub.out_avals)
        if errors and errors.checked():  # in a checkified function: the body's errors carried
            _discard(trace, [cond_sub, body_sub])
            unfailed = errors.unfailed(0)
            names = name if isinstance(name, str) else [*name, *(f"error[{i}]" for i in range(len(unfailed)))]
            carried_cond = functools.wraps(cond_fun)(lambda carry: cond_fun(carry[0]))
            out, error_leaves = _while_loop(carried_cond, errors.carrying(body_fun), (init_val, unfailed),
                                            names, api)
            errors.finish(error_leaves)
            return out
        outs = _emit(trace, "while", body_sub.name, [*leaves, *consts],
                     _carry_avals(avals, body_sub.out_avals),
                     f"result of while_loop {function_name(body_fun)}",
                     cond=cond_sub.name, body=body_sub.name)
        return tree_util.tree_unflatten(tree, outs)

    return _staged(run, "while_loop", ("init_val",), init_val)


def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1, _split_transpose: bool = False) -> tuple[Any, Any]:
    """Loop ``f(carry, x) -> (carry, y)`` over the leading axis of ``xs`` (as jax.lax.scan).

    ``unroll`` is accepted for compatibility; the loop is not unrolled.
    """
    check_callable(f, "f of mlax.lax.scan")
    return _scan(f, init, xs, length, reverse, "init", "f of mlax.lax.scan")


def _scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any, length: int | None, reverse: bool,
          name: str | list[str], body_argument: str) -> tuple[Any, Any]:
    if length is not None and int(length) < 0:
        raise user_error(ValueError, f"scan length must be non-negative, got {length}",
                         "length of mlax.lax.scan")
    if refs.any_alive() and not refs.threaded(f):  # refs the body writes are carried
        return refs.scan_refs(_scan, _pair_returning, f, init, xs, length, reverse, name, body_argument)

    def run(trace: Trace, init: Any, xs: Any) -> tuple[Any, Any]:
        carry_leaves, carry_tree, carry_avals, carry_paths = _flatten(init, name)
        x_leaves, x_tree, x_avals, x_paths = _flatten(xs, "xs")
        ranks = [len(a.shape) - key for a, key in zip(x_avals, prng.key_mask(x_tree), strict=True)]
        sizes = {a.shape[0] if rank else None for a, rank in zip(x_avals, ranks, strict=True)}
        if None in sizes:
            path = next(p for p, rank in zip(x_paths, ranks, strict=True) if not rank)
            raise user_error(ValueError, f"scan got value with no leading axis to scan over: {path} has "
                             "shape ()", f"{path} of mlax.lax.scan")
        if len(sizes) > 1 or (length is not None and sizes and sizes != {length}):
            found = ", ".join(f"{p} axis 0 of size {a.shape[0]}"
                              for p, a in zip(x_paths, x_avals, strict=True))
            given = f" and length={length}" if length is not None else ""
            raise user_error(ValueError, f"scan got values with different leading axis sizes: {found}{given}",
                             "xs of mlax.lax.scan")
        if not sizes and length is None:
            raise user_error(ValueError, "scan got no values to scan over and `length` not provided.",
                             "xs of mlax.lax.scan")
        steps = int(length) if length is not None else sizes.pop()
        slice_avals = [varying_as(Aval(a.shape[1:], a.dtype, a.weak_type), a) for a in x_avals]
        in_tree = prng.tree_flatten((init, xs))[1]
        n = len(carry_leaves)
        checked = checkify_body(_pair_returning(f), trace, first=not reverse)  # errors as ys
        while True:
            body = _Body(checked.scan_body if checked else _pair_returning(f), in_tree,
                         [*carry_avals, *slice_avals],
                         [*carry_paths, *(p + "[i]" for p in x_paths)], "scan", unpack=tuple)
            (sub,), consts = _trace_bodies(trace, [body])
            carry_out_tree, y_tree = sub.out_tree.children()
            if carry_out_tree != carry_tree or \
                    not _promote_weak_carry(trace, carry_leaves, carry_avals, sub.out_avals[:n]):
                break
            _discard(trace, [sub])
        _check_carry("scan body function carry", body_argument, carry_paths, carry_tree, carry_avals,
                     carry_out_tree, sub.out_avals[:n])
        _check_carry_vma("scan body", f, name, carry_paths, carry_avals, sub.out_avals[:n])
        y_avals = [varying_as(Aval((steps, *a.shape), a.dtype, a.weak_type), a) for a in sub.out_avals[n:]]
        outs = _emit(trace, "scan", sub.name, [*carry_leaves, *x_leaves, *consts],
                     [*_carry_avals(carry_avals, sub.out_avals[:n]), *y_avals],
                     f"result of scan {function_name(f)}", body=sub.name, length=steps,
                     reverse=bool(reverse), num_carry=n, num_consts=len(consts))
        ys = tree_util.tree_unflatten(y_tree, outs[n:])
        if checked:
            ys, error_leaves = ys
            checked.finish(error_leaves)
        return tree_util.tree_unflatten(carry_tree, outs[:n]), ys

    return _staged(run, "scan", ("init", "xs"), init, xs)


def _pair_returning(f: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(f)
    def body(carry: Any, x: Any) -> tuple[Any, Any]:
        out = f(carry, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            got = abstractify(out) if is_array_like(out) else type(out).__name__
            raise user_error(TypeError, f"scan body function {function_name(f)} must return a pair "
                             f"(carry, y), got {got}", "f of mlax.lax.scan")
        return tuple(out)

    return body


def _bounds_dtype(lower: Any, upper: Any) -> np.dtype:
    """JAX's rule for fori_loop's bounds: the same dtype, or signed integers of which only one is
    weakly typed (a Python int), which takes the other's dtype."""
    lo = _operand_aval(lower, "lower of mlax.lax.fori_loop")
    hi = _operand_aval(upper, "upper of mlax.lax.fori_loop")
    if lo.dtype == hi.dtype:
        return lo.dtype
    if np.issubdtype(lo.dtype, np.signedinteger) and np.issubdtype(hi.dtype, np.signedinteger) \
            and lo.weak_type != hi.weak_type:
        return hi.dtype if lo.weak_type else lo.dtype
    raise user_error(TypeError, "lower and upper arguments to fori_loop must have equal types, got "
                     f"{lo.dtype.name} and {hi.dtype.name}", "lower and upper of mlax.lax.fori_loop")


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any, *,
              unroll: int | bool | None = None) -> Any:
    """``for i in range(lower, upper): val = body_fun(i, val)`` (as jax.lax.fori_loop).

    With concrete bounds it is a scan of ``int(upper) - int(lower)`` steps over a Python-int
    (weakly typed) index, float bounds included (reverse-differentiable); with traced bounds a
    while_loop (forward-differentiable only), as in JAX.
    """
    check_callable(body_fun, "body_fun of mlax.lax.fori_loop")
    if refs.any_alive():
        refs.no_carried_refs(body_fun, init_val, "fori_loop")
    dtype = _bounds_dtype(lower, upper)
    paths = _flatten(init_val, "init_val")[3]
    if not isinstance(lower, Tracer) and not isinstance(upper, Tracer):
        lo, hi = int(lower), int(upper)

        def step(carry: tuple[Any, Any], _: Any) -> tuple[tuple[Any, Any], None]:
            i, val = carry
            return (lax.add(i, 1), body_fun(i, val)), None

        (_, result), _ = _scan(step, (lo, init_val), None, builtins.max(hi - lo, 0), False, ["i", *paths],
                               "body_fun of mlax.lax.fori_loop")
        return result
    if unroll not in (None, False, 1):
        raise user_error(ValueError, "Can only use `unroll` in `fori_loop` if the loop bounds are statically "
                         "known.", "unroll of mlax.lax.fori_loop")

    def cond_fun(carry: tuple[Any, Any, Any]) -> Any:
        return lax.lt(carry[0], carry[1])

    def body(carry: tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
        i, hi_, val = carry
        return lax.add(i, np.ones((), dtype)), hi_, body_fun(i, val)

    start = lax.convert_element_type(lower, dtype)
    stop = lax.convert_element_type(upper, dtype)
    return _while_loop(cond_fun, body, (start, stop, init_val), ["i", "upper", *paths],
                       "mlax.lax.fori_loop")[2]


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001
    """``f`` applied to each slice of the leading axis of ``xs``, stacked (as jax.lax.map).

    With ``batch_size``, each scan step applies ``vmap(f)`` to ``batch_size`` slices, and the
    remainder (all of it for ``batch_size=0``) is one more ``vmap(f)``, concatenated, as JAX.
    """
    check_callable(f, "f of mlax.lax.map")
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int)):
        raise user_error(TypeError, f"batch_size must be an int, got {batch_size!r}",
                         "batch_size of mlax.lax.map")
    if batch_size is not None and batch_size < 0:
        raise user_error(ValueError, f"batch_size must be non-negative, got {batch_size}",
                         "batch_size of mlax.lax.map")
    if batch_size is None:
        return scan(lambda carry, x: (carry, f(x)), (), xs)[1]
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
    return tree_util.tree_map(lambda x, y: lax.concatenate([x, y], 0), *parts)


__all__ = ["cond", "fori_loop", "map", "scan", "switch", "while_loop"]
