"""The rules of user primitives (`mlax.user_primitive` declarations), as the passes reach them.

A declaration's ``id`` keys this table of `Rules`, which the front end registers when a program
binds the primitive (pyfront/extend_primitive.py): each rule traces a function into the module
at pass time and returns its symbol. `mlax-autodiff` differentiates a call with `Rules.jvp` and
transposes a linear call with `Rules.transpose`, `mlax-batch` batches one with `Rules.batch`,
and `mlax-expand-transforms`, after every transformation is resolved, gives each declaration a
body with `Rules.expand` (the primitive's lowering, traced into mlax ops). An error of the
user's rule (jax's NotImplementedError for a rule not registered) fails the pass and is
raised as it is by the pipeline (passes/pipeline.py), with the pass and location as a note.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Protocol

from mlir import ir
from mlir.dialects import func

from mlax.dialect.transforms import ATTR_PREFIX
from mlax.dialect.user_primitives import USER_PRIMITIVE_KIND, read_user_primitive
from mlax.passes.registry import PassFailure

Flags = tuple[bool, ...]


class Rules(Protocol):
    """One bound primitive (with its parameters and operand types); each method traces a
    function into ``module`` and returns its symbol, with flags of which outputs it returns."""

    def jvp(self, module: ir.Operation, nonzero: Flags) -> tuple[str, list[bool]]:
        """(operands..., tangents of the ``nonzero`` ones...) -> (results..., the nonzero
        result tangents...); the flags say which result tangents are returned."""

    def transpose(self, module: ir.Operation, linear: Flags, present: Flags) -> tuple[str, list[bool]]:
        """(the operands not ``linear``..., the ``present`` result cotangents...) -> the nonzero
        cotangents of the linear operands; the flags (one per linear operand) say which."""

    def batch(self, module: ir.Operation, batched: Flags, size: int,
              axis_name: str | None) -> tuple[str, list[bool]]:
        """(operands, the ``batched`` ones with a leading batch dimension of ``size``) ->
        results; the flags say which results are batched (along dimension 0)."""

    def expand(self, module: ir.Operation) -> str:
        """The primitive's lowering: operands -> results, in mlax ops."""


_LIMIT = 4096  # bound primitives kept; the oldest is dropped first (its programs are long compiled)
_LOCK = threading.Lock()
_RULES: OrderedDict[int, Rules] = OrderedDict()
_COUNTER = itertools.count()


def register(rules: Rules) -> int:
    """The id under which the passes find ``rules``."""
    with _LOCK:
        key = next(_COUNTER)
        _RULES[key] = rules
        while len(_RULES) > _LIMIT:
            _RULES.popitem(last=False)
    return key


def lookup(declaration: ir.Operation) -> Rules | None:
    """The rules of a user primitive declaration; None for another op, or an id not known here."""
    transform = read_user_primitive(declaration)
    if transform is None:
        return None
    with _LOCK:
        return _RULES.get(transform.fields["id"])


def apply_rule(declaration: ir.Operation, pass_name: str, rule: Callable[[Rules], Any]) -> Any:
    """``rule`` applied to the rules of ``declaration``; a failure of the user's rule is the
    pass's failure, of the same exception type."""
    transform = read_user_primitive(declaration)
    assert transform is not None
    rules = lookup(declaration)
    if rules is None:
        raise PassFailure(f"{pass_name}: @{transform.name} names user primitive {transform.fields['id']} "
                          f"({transform.fields['name']}), which this process does not have",
                          declaration.location)
    try:
        return rule(rules)
    except PassFailure:
        raise
    except Exception as error:  # the user's rule's (or jax's for a missing rule): raised as it is
        raise PassFailure(f"{pass_name}: {error}", declaration.location, kind=type(error),
                          raised=error) from error


def call(symbol: str, function: ir.Operation, operands: list[ir.Value], point: ir.InsertionPoint,
         location: ir.Location) -> list[ir.Value]:
    """A call of ``function`` (named ``symbol``) on ``operands`` at ``point``."""
    results = list(ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value).results)
    with location:
        return list(func.CallOp(results, symbol, operands, ip=point).results)


def declarations(module: ir.Operation) -> list[ir.Operation]:
    """The module's user primitive declarations."""
    return [op.operation for op in module.regions[0].blocks[0].operations
            if op.operation.name == "func.func" and read_user_primitive(op) is not None]


def expand(module: ir.Operation, pass_name: str) -> bool:
    """Give each user primitive declaration of ``module`` a body calling its lowering; whether
    there was one (a lowering may bind user primitives again: the caller repeats)."""
    found = declarations(module)
    for declaration in found:
        symbol = apply_rule(declaration, pass_name, lambda rules: rules.expand(module))
        del declaration.attributes[ATTR_PREFIX + USER_PRIMITIVE_KIND]
        with declaration.location:
            block = declaration.opview.add_entry_block()
        target = ir.SymbolTable(module)[symbol].operation
        results = call(symbol, target, list(block.arguments), ir.InsertionPoint(block), declaration.location)
        with declaration.location:
            func.ReturnOp(results, ip=ir.InsertionPoint(block))
    return bool(found)
