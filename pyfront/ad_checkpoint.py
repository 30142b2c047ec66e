"""mlax.checkpoint (remat) and mlax.ad_checkpoint: jax's rematerialization API, and a truthful
report of what mlax's reverse mode keeps for the backward pass.

``checkpoint(fun, policy=...)`` traces ``fun`` into a private function behind an
`mlax.checkpoint` declaration (fields: the policy's name and ``prevent_cse``), asks the policy
(jax's own objects, so jax code passes them unchanged) which of its ops' results may be saved
and marks those ops (pyfront/remat_policy.py). `mlax-autodiff`'s reverse mode keeps the marked
values and the region's inputs for the backward pass and recomputes the others there, reading
the inputs through optimization barriers unless ``prevent_cse=False``
(passes/autodiff/remat.py). `checkpoint_name` records its name on the op that computed the
value, for the name policies. `print_saved_residuals` reports what the backward pass reads
from the forward one.
"""

from __future__ import annotations

import functools
import inspect
import keyword
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import jax
from jax import ad_checkpoint as _jax_ad_checkpoint
from jax import tree_util
from mlir import ir

from mlax.api import JittedFunction
from mlax.autodiff import _call, _positional_names, _trace_callee, vjp
from mlax.core import Trace, Tracer, current_trace, is_array_like
from mlax.dialect import get_context
from mlax.dialect.transforms import (
    CHECKPOINT_NAMES_ATTR,
    RECOMPUTED_ATTR,
    declare_transform,
    read_kind,
    read_transform,
)
from mlax.errors import check_callable
from mlax.numpy import zeros_like
from mlax.passes.pipeline import run_pipeline
from mlax.passes.symbols import unique_name
from mlax.remat_policy import CHECKPOINT_NAME_SITES_ATTR, mark_saveable, name_value, policy_name
from mlax.source_info import current_location
from mlax.staging import Staged, traced_with_known
from mlax.tracing import flatten_arguments, function_name

checkpoint_policies = jax.checkpoint_policies
Recompute = _jax_ad_checkpoint.Recompute
Saveable = _jax_ad_checkpoint.Saveable
Offloadable = _jax_ad_checkpoint.Offloadable

_DEPRECATED: Any = object()


def _static_positions(static_argnums: tuple[int, ...], count: int) -> frozenset[int]:
    """``static_argnums`` as positions in ``count`` arguments, checked as jax.checkpoint does."""
    if not all(-count <= d < count for d in static_argnums):
        raise ValueError("the `static_argnums` argument to `mlax.checkpoint` / `mlax.remat` can only "
                         "take integer values greater than or equal to `-len(args)` and less than "
                         f"`len(args)`, but got {static_argnums}, while `len(args)` = {count}")
    return frozenset(d % count for d in static_argnums)


def checkpoint(fun: Callable[..., Any], *, prevent_cse: bool | Sequence[bool] = True,
               policy: Callable[..., Any] | None = None, static_argnums: int | tuple[int, ...] = (),
               static_argnames: str | Iterable[str] = (), concrete: Any = _DEPRECATED) -> Callable[..., Any]:
    """``jax.checkpoint``: ``fun``'s values, recomputed in the backward pass of reverse mode
    rather than kept from the forward pass, except those ``policy`` saves (None: only the
    inputs). ``static_argnums``/``static_argnames`` arguments are passed as the Python values
    they are (usable in Python control flow). ``prevent_cse`` (a tuple: per argument; mlax
    applies it when any is set) keeps the recomputation from being merged back into the
    forward values. Called outside any trace, ``fun`` is traced all the same, as jax's, and
    runs as a program of its own (pyfront/staging.py)."""
    check_callable(fun, "fun of mlax.checkpoint")
    if concrete is not _DEPRECATED:
        raise NotImplementedError("The `concrete` option to `jax.checkpoint` was deprecated in JAX v0.8.2, "
                                  "and removed in JAX v0.10.0. In its place please use `static_argnums`; "
                                  "for details refer to https://docs.jax.dev/en/latest/jep/11830-new-remat-"
                                  "checkpoint.html.")
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if not (type(static_argnums) is tuple and all(type(d) is int for d in static_argnums)):
        raise TypeError("the `static_argnums` argument to `mlax.checkpoint` / `mlax.remat` must be an int, "
                        f"tuple of ints or, bool, but got value {static_argnums}")
    if isinstance(prevent_cse, Sequence):
        prevent_cse = tuple(prevent_cse)
    if not isinstance(prevent_cse, (tuple, bool)):
        raise TypeError(f"prevent_cse must be a bool or tuple of bools, got {type(prevent_cse)=}")
    if policy is not None and not callable(policy):
        raise TypeError(f"policy of mlax.checkpoint must be None or a callable (such as one of "
                        f"mlax.checkpoint_policies), got {policy!r}")
    static_names = frozenset([static_argnames] if isinstance(static_argnames, str) else static_argnames)

    @functools.wraps(fun)
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        static = _static_positions(static_argnums, len(args))
        trace = current_trace()
        if trace is None:
            # As jax, fun is traced even outside any trace (its Python sees tracers of a trace
            # of its own, as code that checks which trace it runs in expects): run as a program.
            if not static and not static_names & kwargs.keys():
                return staged(*args, **kwargs)
            target, dynamic = _dynamic_part(fun, args, kwargs, static, static_names)
            return Staged(lambda trace, *a: emit(trace, frozenset(), a, {}, target), target)(*dynamic)
        return traced_with_known(lambda: emit(trace, static, args, kwargs), args, kwargs, fun)

    def emit(trace: Trace, static: frozenset[int], args: tuple[Any, ...], kwargs: dict[str, Any],
             target: Callable[..., Any] = fun) -> Any:
        dynamic = args
        if static or kwargs:
            target, dynamic = _dynamic_part(target, args, kwargs, static, static_names)
        sub, leaves, _ = _trace_callee(target, dynamic, trace)
        module = trace.block.owner.parent
        with get_context(), current_location():
            mark_saveable(module, sub.name, policy)
            name = unique_name(module, f"{sub.name}_checkpoint")
            declared = declare_transform(module, "checkpoint", name, callee=sub.name,
                                         policy=policy_name(policy),
                                         prevent_cse=bool(prevent_cse) if isinstance(prevent_cse, bool)
                                         else any(prevent_cse))
        results = _call(trace, name, ir.FunctionType(declared.type), [*leaves, *sub.captured], sub.out_avals,
                        f"result of checkpoint {function_name(fun)}")
        return tree_util.tree_unflatten(sub.out_tree, results)

    staged = Staged(lambda trace, *args, **kwargs: emit(trace, frozenset(), args, kwargs), fun)
    return checkpointed


def _dynamic_part(fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                  static: frozenset[int], static_names: frozenset[str]) -> tuple[Callable[..., Any], tuple]:
    """``fun`` as a function of its traced arguments alone (the positional ones, then a dict of
    the keyword ones), the static ones bound as they are; and those traced arguments."""
    positions = [i for i in range(len(args)) if i not in static]
    static_kwargs = {k: v for k, v in kwargs.items() if k in static_names}
    traced_kwargs = {k: v for k, v in kwargs.items() if k not in static_names}

    def dynamic(*traced: Any) -> Any:
        full = list(args)
        for i, value in zip(positions, traced[:-1], strict=True):
            full[i] = value
        return fun(*full, **traced[-1], **static_kwargs)

    names = _positional_names(fun, len(args))
    dynamic.__name__ = dynamic.__qualname__ = function_name(fun)
    dynamic.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY)
         for n in _parameter_names([*(names[i] for i in positions), "kwargs"])])
    return dynamic, (*(args[i] for i in positions), traced_kwargs)


def _parameter_names(names: list[str]) -> list[str]:
    """``names`` as distinct Python identifiers (a ``*args`` parameter's ``args[1]`` becomes
    ``args_1``), for a signature that names the traced arguments in messages."""
    out: list[str] = []
    for name in names:
        name = re.sub(r"\W", "_", name).strip("_") or "arg"
        name = f"_{name}" if name[0].isdigit() or keyword.iskeyword(name) else name
        while name in out:
            name += "_"
        out.append(name)
    return out


def remat(fun: Callable[..., Any], *, prevent_cse: bool = True, policy: Callable[..., Any] | None = None,
          static_argnums: int | tuple[int, ...] = (), concrete: Any = _DEPRECATED) -> Callable[..., Any]:
    """Alias of `checkpoint` (jax's signature: no ``static_argnames``)."""
    return checkpoint(fun, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums,
                      concrete=concrete)


def checkpoint_name(x: Any, name: Any) -> Any:
    """Identity on values, as jax's: names ``x`` (an array or a pytree of arrays) for the
    policies that select values by name (`save_only_these_names`...): inside a trace the name
    is recorded on the op that computed each array."""
    trace = current_trace()
    for leaf in tree_util.tree_leaves(x):
        if not is_array_like(leaf):
            raise TypeError("Error interpreting argument to name as a JAX value. The problematic value is of "
                            f"type {type(leaf)} and was passed to name at position 0.")
        if isinstance(leaf, Tracer) and leaf.trace is trace:
            with get_context():
                name_value(leaf.value, str(name), current_location())
    return x


_LOCATION = re.compile(r'loc\("(?P<function>[^"]*)"\("(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)')


def _type_text(value: ir.Value) -> str:
    """A value's type as jax's short form prints it: ``f32[3,4]``, ``bool[]``, ``u8[2]``."""
    tensor = ir.RankedTensorType(value.type)
    element = str(tensor.element_type)
    element = {"i1": "bool"}.get(element, element.replace("ui", "u"))
    return f"{element}[{','.join(map(str, tensor.shape))}]"


def _where(location: ir.Location | str) -> str:
    """`` from file:line:col (function)``, jax's form (0-based column), from a location."""
    match = _LOCATION.search(str(location))
    if match is None:
        return ""
    return f" from {match['file']}:{match['line']}:{int(match['col']) - 1} ({match['function']})"


def _producer(op: ir.Operation, table: ir.SymbolTable) -> str:
    """What made a value: the op's name, or the construct a call stands for (scan, cond...)."""
    if op.name != "func.call":
        return op.name.removeprefix("mlax.")
    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    transform = read_transform(table[callee]) if callee in table else None
    return transform.kind if transform is not None else f"call of @{callee}"


def _residuals(function: ir.Operation, n_primals: int) -> list[ir.Value]:
    """The values a derivative function's backward part reads from its forward part.

    mlax-autodiff writes a vjp as the primal ops, then the transposed ones; the backward part
    starts at the first op that reads a cotangent (an argument after the primals) or
    recomputes a checkpointed value (marked ``mlax.recomputed``). What it reads from before
    that point -- primal arguments, forward results or literals -- is what the program must
    keep: the residuals. Order: arguments, literals, then results in program order, as jax
    lists them."""
    block = function.regions[0].blocks[0]
    later: set[ir.Value] = set(list(block.arguments)[n_primals:])
    read: set[ir.Value] = set()
    backward = False
    for op in block.operations:
        op = op.operation
        if op.name == "func.return":
            break
        backward = backward or RECOMPUTED_ATTR in op.attributes or any(v in later for v in op.operands)
        if backward:
            read.update(v for v in op.operands if v not in later)
            later.update(op.results)
    arguments = [a for a in list(block.arguments)[:n_primals] if a in read]
    results = [r for op in block.operations for r in op.operation.results if r in read]
    literals = [r for r in results if r.owner.operation.name == "mlax.constant"]
    return arguments + literals + [r for r in results if r not in literals]


def saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> list[tuple[str, str]]:
    """``(type, source)`` of each value mlax's reverse mode keeps for the backward pass of ``f``
    at ``args`` (see `_residuals`), as jax's ``saved_residuals``."""
    check_callable(f, "f of mlax.ad_checkpoint.print_saved_residuals")
    leaves, tree, paths = flatten_arguments((args, kwargs), function_name(f), _positional_names(f, len(args)))

    def flat(*values: Any) -> Any:
        a, kw = tree_util.tree_unflatten(tree, list(values))
        return f(*a, **kw)

    flat.__name__ = flat.__qualname__ = function_name(f)

    def pullback(*values: Any) -> Any:
        out, pull = vjp(flat, *values)
        return pull(tree_util.tree_map(zeros_like, out))

    lowered = JittedFunction(pullback).lower(*leaves)
    module = lowered.mlir_module()
    with module.context, ir.Location.unknown():
        table = ir.SymbolTable(module.operation)
        entry = table[lowered._traced.entry]
        calls = [op.operation for op in entry.regions[0].blocks[0].operations
                 if op.operation.name == "func.call"]
        name, n_primals = "", 0
        for call in calls:
            callee = table[ir.FlatSymbolRefAttr(call.attributes["callee"]).value]
            transform = read_kind(callee, "vjp")
            if transform is not None:
                name = ir.StringAttr(callee.attributes["sym_name"]).value
                primal = table[transform.fields["callee"]]
                n_primals = len(ir.FunctionType(ir.TypeAttr(primal.attributes["function_type"]).value).inputs)
        run_pipeline(module, "mlax-expand-transforms")
        table = ir.SymbolTable(module.operation)
        described = []
        for value in _residuals(table[name].operation, n_primals):
            if isinstance(value.owner, ir.Block):
                source = f"from the argument {paths[ir.BlockArgument(value).arg_number]}"
            elif value.owner.operation.name == "mlax.constant":
                source = "from a literal"
            else:
                op = value.owner.operation
                if CHECKPOINT_NAMES_ATTR in op.attributes:  # where the (last) name was given, as jax
                    names = ir.ArrayAttr(op.attributes[CHECKPOINT_NAMES_ATTR])
                    sites = ir.ArrayAttr(op.attributes[CHECKPOINT_NAME_SITES_ATTR])
                    source = (f"named '{ir.StringAttr(names[len(names) - 1]).value}'"
                              f"{_where(ir.StringAttr(sites[len(sites) - 1]).value)}")
                else:
                    source = f"output of {_producer(op, table)}{_where(op.location)}"
            described.append((_type_text(value), source))
    return described


def print_saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Print, one line each, what mlax's reverse mode keeps for the backward pass of ``f`` at
    ``args``: its type and where it comes from (``f32[3] from the argument x``, ``f32[3]
    output of cos from file.py:4:8 (f)``), as ``jax.ad_checkpoint.print_saved_residuals``;
    inside a `checkpoint` only what its policy saves (the rest is recomputed)."""
    for type_text, source in saved_residuals(f, *args, **kwargs):
        print(f"{type_text} {source}")


# jax.ad_checkpoint's names (jax 0.10 removed its checkpoint and remat: they are jax.checkpoint
# and jax.remat, kept here as mlax.checkpoint and mlax.remat).
__all__ = ["Offloadable", "Recompute", "Saveable", "checkpoint", "checkpoint_name", "checkpoint_policies",
           "print_saved_residuals", "remat"]
