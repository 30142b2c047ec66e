"""Trace a Python function on abstract arguments into a `func.func` of mlax ops."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
from jax import tree_util
from mlir import ir
from mlir.dialects import func

from mlax import dtypes as front_dtypes
from mlax import prng
from mlax.array import Array
from mlax.core import Aval, Trace, Tracer, abstractify, is_array_like, observing, to_numpy, trace_scope
from mlax.dialect import get_context
from mlax.errors import user_error
from mlax.passes.symbols import unique_name
from mlax.source_info import SourceInfo


@dataclass
class TracedFunction:
    """A traced program: the module, its entry function and how to rebuild pytrees."""

    module: ir.Module
    entry: str
    in_avals: tuple[Aval, ...]
    out_avals: tuple[Aval, ...]
    out_tree: Any
    captured: tuple[Tracer, ...] = ()  # enclosing values used (a parent trace's): extra arguments


def function_name(fun: Callable[..., Any]) -> str:
    name = getattr(fun, "__name__", None)
    if not isinstance(name, str) or not name:  # (an object's __name__ may be anything)
        name = type(fun).__name__
    name = re.sub(r"\W", "_", name.replace("<lambda>", "lambda"))
    return name if name and not name[0].isdigit() else f"f_{name}"


def definition_info(fun: Callable[..., Any]) -> SourceInfo | None:
    code = getattr(getattr(fun, "__wrapped__", fun), "__code__", None)
    if code is None:
        return None
    return SourceInfo(code.co_filename, code.co_firstlineno, 1,
                      getattr(code, "co_qualname", code.co_name))


def _leaf_type_error(path: str, leaf: Any, fun_name: str) -> TypeError:
    return user_error(
        TypeError, f"Argument {path} of {fun_name} has type {type(leaf).__name__}, which is not a "
        "valid mlax type: arguments must be arrays, scalars or pytrees of them (mark it static "
        "with static_argnums/static_argnames if it is configuration).")


def flatten_arguments(args: Any, fun_name: str, arg_names: Sequence[str]) -> tuple[list[Any], Any, list[str]]:
    """Flatten (args, kwargs) into leaves, checking each leaf, with a readable path per leaf
    (a PRNG key leaf as its data: the tree rebuilds the key, see mlax.prng)."""
    paths_and_leaves, tree = prng.tree_flatten_with_path(args)
    leaves, paths = [], []
    for key_path, leaf in paths_and_leaves:
        path = _describe_path(key_path, arg_names)
        if not is_array_like(leaf):
            raise _leaf_type_error(path, leaf, fun_name)
        if isinstance(leaf, (np.ndarray, np.generic, jax.Array)) and not front_dtypes.supported(leaf.dtype):
            raise user_error(TypeError, f"Argument {path} of {fun_name} has dtype {leaf.dtype}: "
                             f"{front_dtypes.unsupported_message(np.dtype(leaf.dtype))}")
        leaves.append(leaf)
        paths.append(path)
    return leaves, tree, paths


def _describe_path(key_path: Any, arg_names: Sequence[str]) -> str:
    """``((SequenceKey(0), SequenceKey(1)), DictKey('w'))`` -> ``x[1]['w']``."""
    if len(key_path) >= 2:
        group, position, *rest = key_path
        index = getattr(position, "idx", getattr(position, "key", None))
        if getattr(group, "idx", None) == 0 and isinstance(index, int) and index < len(arg_names):
            name = arg_names[index]
        else:
            name = str(index)
        return name + tree_util.keystr(tuple(rest))
    return tree_util.keystr(tuple(key_path)) or "argument"


def _call_user(fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], name: str) -> Any:
    """``fun(*args, **kwargs)``; a call the arguments do not fit (the TypeError of the call
    itself, not one raised inside ``fun``) also names the user's line that made it."""
    try:
        return fun(*args, **kwargs)
    except TypeError as err:
        if err.__traceback__ is not None and err.__traceback__.tb_next is None:
            raise user_error(TypeError, str(err), f"the arguments {name} is called with") from None
        raise


@dataclass
class TracedBody:
    """What tracing a function's body found: outputs and the enclosing values it captured."""

    out_avals: tuple[Aval, ...]
    out_tree: Any
    captured: list[Tracer]


def _trace_body(func_op: func.FuncOp, fun: Callable[..., Any],
                build_args: Callable[[list[Any]], tuple[tuple[Any, ...], dict[str, Any]]],
                in_avals: Sequence[Aval], arg_paths: Sequence[str], info: SourceInfo | None,
                def_loc: ir.Location, parent: Trace | None, traced_for: str,
                batch: tuple[int, tuple[int, ...]] | None = None) -> TracedBody:
    """Trace ``fun`` into ``func_op`` (given its entry block) and fix its type."""
    arg_locs = [ir.Location.name(path, childLoc=def_loc) for path in arg_paths]
    block = func_op.add_entry_block(arg_locs=arg_locs)
    display_name = info.function if info else function_name(fun)
    source = f"{info.filename}:{info.line}" if info else ""
    trace = Trace(display_name, block, parent, traced_for, source, tuple(arg_paths), batch)
    tracers = [Tracer(trace, value, aval, f"argument {path}")
               for value, aval, path in zip(block.arguments, in_avals, arg_paths, strict=True)]
    with trace_scope(trace):
        args, kwargs = build_args(tracers)
        out = _call_user(fun, args, kwargs, display_name)
        out_leaves, out_tree = prng.tree_flatten(out)
        from mlax.refs import check_body

        check_body(trace, out_leaves)  # refs returned, or written and not threaded out: jax's errors
        for i, leaf in enumerate(out_leaves):
            if not is_array_like(leaf):
                raise user_error(
                    TypeError, f"{display_name} returned a value of type {type(leaf).__name__} at output "
                    f"{i}, which is not a valid mlax type; outputs must be arrays, scalars or pytrees of "
                    "them.", f"the output of {display_name}")
        out_avals = tuple(abstractify(leaf) for leaf in out_leaves)
        out_values = [trace.value_of(leaf) for leaf in out_leaves]
        with ir.InsertionPoint(block):
            func.ReturnOp(out_values, loc=def_loc)
    func_op.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in block.arguments], [v.type for v in out_values]))
    return TracedBody(out_avals, out_tree, [outer for outer, _ in trace.captures.values()])


def trace_function(
    fun: Callable[..., Any],
    build_args: Callable[[list[Any]], tuple[tuple[Any, ...], dict[str, Any]]],
    in_avals: Sequence[Aval],
    arg_paths: Sequence[str],
    parent: Trace | None = None,
    traced_for: str = "jit",
) -> TracedFunction:
    """Trace ``fun`` on tracers of ``in_avals``; ``build_args`` rebuilds its (args, kwargs);
    ``traced_for`` names the API, as jax's tracer reprs and errors do.

    With a ``parent`` (a trace in progress), values of that trace ``fun`` uses become extra
    arguments of the function, after those of ``in_avals``: for programs only inspected, never
    run with ``in_avals`` alone (``mlax.eval_shape`` inside a trace)."""
    name = function_name(fun)
    info = definition_info(fun)
    context = get_context()
    with context, ir.Location.unknown():
        def_loc = info.to_location() if info else ir.Location.unknown()
        module = ir.Module.create(loc=def_loc)
        in_types = [a.spec.to_mlir() for a in in_avals]
        with ir.InsertionPoint(module.body):
            func_op = func.FuncOp(name, ir.FunctionType.get(in_types, []), loc=def_loc)
        body = _trace_body(func_op, fun, build_args, in_avals, arg_paths, info, def_loc, parent, traced_for)
        try:
            module.operation.verify()
        except ir.MLIRError as err:
            raise RuntimeError(f"internal error: the traced module of {name} does not verify: "
                               f"{err}") from None
    return TracedFunction(module, name, tuple(in_avals), body.out_avals, body.out_tree, tuple(body.captured))


@dataclass
class SubFunction:
    """A function traced into the module of an enclosing trace: its symbol, and what it needs
    besides its own arguments (captured enclosing values, passed after them)."""

    name: str
    in_avals: tuple[Aval, ...]
    out_avals: tuple[Aval, ...]
    out_tree: Any
    captured: list[Tracer]


def trace_subfunction(
    fun: Callable[..., Any],
    build_args: Callable[[list[Any]], tuple[tuple[Any, ...], dict[str, Any]]],
    in_avals: Sequence[Aval],
    arg_paths: Sequence[str],
    parent: Trace,
    traced_for: str = "jit",
    batch: tuple[int, tuple[int, ...]] | None = None,
) -> SubFunction:
    """Trace ``fun`` into a new private function of ``parent``'s module (for transformations
    of a function inside a traced program: the declaration names it as its callee), for the
    API ``traced_for`` (a vmap gives its ``batch``: axis size, each argument's mapped axis)."""
    module = parent.block.owner.parent
    info = definition_info(fun)
    with get_context(), ir.Location.unknown():
        def_loc = info.to_location() if info else ir.Location.unknown()
        name = unique_name(module, function_name(fun))
        in_types = [a.spec.to_mlir() for a in in_avals]
        with ir.InsertionPoint(module.regions[0].blocks[0]):
            func_op = func.FuncOp(name, ir.FunctionType.get(in_types, []), loc=def_loc, visibility="private")
        body = _trace_body(func_op, fun, build_args, in_avals, arg_paths, info, def_loc, parent,
                           traced_for, batch)
    return SubFunction(name, tuple(in_avals), body.out_avals, body.out_tree, body.captured)


def checkify_body(fun: Callable[..., Any], trace: Trace, per_device: bool = False,
                  first: bool = False) -> Any:
    """Inside a checkified function (where it instruments the ops), a vmap's, scan's or
    shard_map's body made to map its errors out, and what takes them back
    (mlax.experimental.checkify ``mapped_body``); else None."""
    if not observing():
        return None
    from mlax.experimental.checkify import mapped_body

    return mapped_body(fun, trace, per_device, first)


def checkify_bodies(trace: Trace) -> Any:
    """Inside a checkified function, what collects the errors of a cond's branches or a
    while_loop's body (mlax.experimental.checkify ``BodyErrors``); else None."""
    if not observing():
        return None
    from mlax.experimental.checkify import body_errors

    return body_errors(trace)


def avals_of(leaves: Sequence[Any]) -> tuple[Aval, ...]:
    return tuple(abstractify(leaf) for leaf in leaves)


def numpy_leaves(leaves: Sequence[Any]) -> list[np.ndarray]:
    return [to_numpy(leaf) for leaf in leaves]


_EVAL_SHAPE_ADVICE = ("eval_shape treats every argument as an array: pass other values through a closure or "
                      "functools.partial.")


def abstract_argument(leaf: Any, path: str, fun_name: str, api: str = "eval_shape",
                      advice: str = _EVAL_SHAPE_ADVICE) -> Aval:
    """An argument leaf's abstract value, read from its ``shape``/``dtype``/``weak_type``
    alone as JAX does (so no array is converted or copied): arrays, ShapeDtypeStructs and
    duck-typed arrays alike; the dtype is canonicalised (float64 -> float32 without x64).
    eval_shape and make_jaxpr read their arguments so; ``advice`` ends their error."""
    if isinstance(leaf, Tracer) or front_dtypes.is_python_scalar(leaf):
        return abstractify(leaf)
    if not hasattr(leaf, "dtype"):
        raise user_error(
            TypeError, f"Error interpreting argument to {fun_name} as an abstract array. The problematic "
            f"value is of type {type(leaf)} and was passed to the function at path {path}. {advice}",
            f"argument {path} of mlax.{api}")
    try:
        dtype = front_dtypes.canonicalize(leaf.dtype)
    except TypeError as err:
        raise user_error(TypeError, str(err), f"argument {path} of mlax.{api}") from None
    sharding = leaf.aval.sharding if type(leaf) is Array else None  # one on a mesh: its type's sharding
    return Aval(tuple(np.shape(leaf)), dtype, bool(getattr(leaf, "weak_type", False)), sharding)
