"""jax.core.eval_jaxpr (and jaxpr_as_fun) over the jaxprs mlax.make_jaxpr reads back.

A jaxpr of mlax's is a view of one function of a traced MLIR module (pyfront/jaxpr.py): its
equations carry jax's primitive names with mlax's params, which jax's own evaluator cannot
bind. So the view remembers the function it was read from (`record`), and evaluating it calls
that function: inside a trace, the function (with every function of its module it may name:
callees, rule variants, declarations) is copied into the trace's module once and called there;
outside one, the call runs as a program of its own (pyfront/staging.py). Every transformation
then sees the call as it sees a nested jit's. Traced where debug effects are silenced (a vjp's
pullback: pyfront/callbacks.py `debug_effects_silenced`), the copy leaves out its debug
callbacks, whose effects the forward pass had.

The arguments are the jaxpr's inputs followed by the consts of its leading constvars, the
values of an enclosing trace the function used (its own extra arguments); the consts of
constants made inside the function are part of its body, so the values given for those are
not read. A jaxpr built or edited by hand (not read from a trace) has no function to call:
evaluating it raises NotImplementedError.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax.extend.core as jex
import numpy as np
from mlir import ir

from mlax.array import Array
from mlax.autodiff import _call
from mlax.callbacks import debug_effects_are_silenced
from mlax.core import Aval, Trace, Tracer, abstractify
from mlax.dialect import get_context
from mlax.dialect.callbacks import callback_declarations, callee_of
from mlax.errors import user_error
from mlax.passes.symbols import unique_name
from mlax.passes.walk import nested_ops
from mlax.staging import Staged

__all__ = ["eval_jaxpr", "jaxpr_as_fun", "record"]

_SOURCE_ATTR = "mlax.jaxpr_source"  # on a copied function: the token of the jaxpr it evaluates
_TOKENS = itertools.count()


@dataclass
class _Source:
    """The function a jaxpr was read from: ``symbol`` of ``module`` (kept alive here), whose
    arguments are the jaxpr's inputs and then its first ``n_captured`` consts."""

    module: ir.Module
    symbol: str
    n_captured: int
    token: str = field(default_factory=lambda: f"jaxpr{next(_TOKENS)}")
    staged: Staged | None = None  # the call outside any trace, built on first use


_SOURCES: weakref.WeakKeyDictionary[jex.Jaxpr, _Source] = weakref.WeakKeyDictionary()


def record(jaxpr: jex.Jaxpr, module: ir.Module, symbol: str, n_captured: int = 0) -> None:
    """Remember that ``jaxpr`` was read from function ``symbol`` of ``module``."""
    _SOURCES[jaxpr] = _Source(module, symbol, n_captured)


def _functions(module: ir.Operation) -> list[ir.Operation]:
    ops = [op.operation for op in module.regions[0].blocks[0].operations]
    return [op for op in ops if "sym_name" in op.attributes]


def _fresh(target: ir.Operation, base: str, taken: set[str]) -> str:
    """A symbol that neither ``target`` nor ``taken`` uses, ``base`` where it can be."""
    name = unique_name(target, base)
    k = 0
    while name in taken:
        k += 1
        name = unique_name(target, f"{base}_{k}")
    return name


def _rename(scratch: ir.Operation, function: ir.Operation, new: str) -> None:
    old = ir.StringAttr(function.attributes["sym_name"]).value
    ir.SymbolTable.replace_all_symbol_uses(old, new, scratch)
    function.attributes["sym_name"] = ir.StringAttr.get(new)


def _drop_debug_calls(module: ir.Operation) -> None:
    """Erase the calls of debug callbacks in ``module`` (they have no results)."""
    debug = {name for name, (_, t) in callback_declarations(module).items() if t.fields["kind"] == "debug"}
    for op in nested_ops(module):
        if op.name == "func.call" and callee_of(op) in debug:
            op.erase()


def _copy_into(target: ir.Operation, source: _Source, silent: bool) -> str:
    """The symbol, in ``target``, of the source's function: copied there the first time, with
    every function of its module (renamed where ``target`` uses the name already); ``silent``:
    a copy without its debug callbacks (a vjp's pullback, `debug_effects_silenced`)."""
    token = f"{source.token}_silent" if silent else source.token
    for op in _functions(target):
        if _SOURCE_ATTR in op.attributes and ir.StringAttr(op.attributes[_SOURCE_ATTR]).value == token:
            return ir.StringAttr(op.attributes["sym_name"]).value
    with get_context(), ir.Location.unknown():
        scratch = ir.Module.create()
        copies = [op.clone(ir.InsertionPoint(scratch.body)) for op in _functions(source.module.operation)]
        if silent:
            _drop_debug_calls(scratch.operation)
        names = [ir.StringAttr(op.attributes["sym_name"]).value for op in copies]
        # first to names no module uses, so that no rename meets a name not renamed yet
        for i, op in enumerate(copies):
            _rename(scratch.operation, op, f"__mlax_copy_{token}_{i}")
        taken: set[str] = set()
        for op, name in zip(copies, names, strict=True):
            new = _fresh(target, name, taken)
            taken.add(new)
            _rename(scratch.operation, op, new)
            op.attributes["sym_visibility"] = ir.StringAttr.get("private")
        entry = copies[names.index(source.symbol)]
        entry.attributes[_SOURCE_ATTR] = ir.StringAttr.get(token)
        block = target.regions[0].blocks[0]
        for op in copies:
            block.append(op)
    return ir.StringAttr(entry.attributes["sym_name"]).value


def _source(jaxpr: Any) -> _Source:
    source = _SOURCES.get(jaxpr) if isinstance(jaxpr, jex.Jaxpr) else None
    if source is None:
        raise user_error(NotImplementedError, "mlax evaluates the jaxprs that mlax.make_jaxpr (or a traced "
                         "function's .jaxpr) gives, which call the traced function; this jaxpr was not read "
                         "from an mlax trace", "jaxpr of jax.core.eval_jaxpr")
    return source


def _operand(x: Any, aval: Aval, what: str) -> Any:
    """``x`` as an argument of the function's type (jax binds what it is given; the function
    has one type): a value of another dtype is converted, another shape is an error."""
    got = abstractify(x)
    if got.shape != aval.shape:
        raise user_error(TypeError, f"jax.core.eval_jaxpr: {what} has shape {got.shape}, but the jaxpr's "
                         f"variable has shape {aval.shape}", what)
    if got.dtype != aval.dtype:  # arrays and tracers convert themselves; Python and NumPy values here
        return x.astype(aval.dtype) if isinstance(x, Tracer | Array) else np.asarray(x, dtype=aval.dtype)
    return x


def _run(source: _Source, out_avals: tuple[Aval, ...], trace: Trace, *operands: Any) -> list[Tracer]:
    """The call of the source's function in ``trace`` (its module gets a copy of it once)."""
    module = trace.block.owner.parent
    symbol = _copy_into(module, source, debug_effects_are_silenced())
    with get_context():
        function = ir.SymbolTable(module)[symbol]
        function_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    return _call(trace, symbol, function_type, operands, out_avals, "result of jax.core.eval_jaxpr")


def _aval(atom: Any) -> Aval:
    aval = atom.aval
    return Aval(tuple(aval.shape), np.dtype(aval.dtype), bool(getattr(aval, "weak_type", False)))


def eval_jaxpr(jaxpr: jex.Jaxpr, consts: Sequence[Any], *args: Any, propagate_source_info: bool = True
               ) -> list[Any]:
    """The outputs of ``jaxpr`` on ``args`` with ``consts`` for its constvars, as jax's
    eval_jaxpr: a call of the traced function it was read from (the module docstring)."""
    del propagate_source_info  # (the call's location is the caller's)
    source = _source(jaxpr)
    consts = list(consts)
    if len(consts) != len(jaxpr.constvars) or len(args) != len(jaxpr.invars):
        raise user_error(ValueError, f"jax.core.eval_jaxpr: the jaxpr takes {len(jaxpr.constvars)} consts "
                         f"and {len(jaxpr.invars)} arguments, got {len(consts)} and {len(args)}",
                         "arguments of jax.core.eval_jaxpr")
    params = [*jaxpr.invars, *jaxpr.constvars[:source.n_captured]]
    given = [*args, *consts[:source.n_captured]]
    operands = [_operand(x, _aval(v), f"argument {i}")
                for i, (x, v) in enumerate(zip(given, params, strict=True))]
    out_avals = tuple(_aval(v) for v in jaxpr.outvars)
    if source.staged is None:
        source.staged = Staged(lambda trace, *xs: _run(source, out_avals, trace, *xs))
    return list(source.staged(*operands))


def jaxpr_as_fun(closed: jex.ClosedJaxpr) -> Callable[..., list[Any]]:
    """``closed`` as a function of its inputs, as jax's jaxpr_as_fun."""
    def fun(*args: Any) -> list[Any]:
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)

    return fun
