"""Program order of the ordered host callbacks (debug, ordered io) on the StableHLO road.

XLA:CPU runs an operation as soon as its operands are ready, whatever else has side effects,
and an optimization barrier orders nothing at run time: only data orders. So each ordered
callback's custom call takes a token (a ``tensor<i8>``) the previous one returned (past the
descriptor's counts, so the runtime's handler ignores it), and across calls and control flow:

- into a function: a private function that holds ordered callbacks (itself, through calls, or
  in the bodies of a construct it calls) takes the token as an extra last argument, and so do
  the functions a construct names beside it (the other branches, the loop's condition), since
  a construct passes them the same operands; its calls pass the caller's current token (as a
  const of a while or scan: a scan's ``num_consts`` grows by one);
- out of it: a function only ever called (never a construct's body) also returns its last
  token, the caller's next; after a construct (one XLA operation, done when its results are),
  the next token is the last one joined with a scalar of its results by float arithmetic XLA
  cannot fold (``t + r * 0.0``: the token's value is never read).

Used by `lower_callbacks` (callbacks.py) before control flow is lowered, while constructs are
still calls of declarations naming their body functions.
"""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import func

from mlax.dialect.callbacks import callee_of
from mlax.dialect.control_flow import CONTROL_FLOW_KINDS
from mlax.dialect.transforms import read_kind
from mlax.passes.lower_to_stablehlo.common import (
    constant,
    dims,
    is_complex,
    reshape,
    splat,
    tensor_type,
    value,
    with_shape,
)
from mlax.passes.walk import nested_ops


def chained(fields: dict) -> bool:
    """Whether a callback's calls keep program order: debug and ordered io ones."""
    return fields["kind"] == "debug" or (fields["kind"] == "io" and bool(fields["ordered"]))


def _token_type() -> ir.Type:
    return ir.RankedTensorType.get([], ir.IntegerType.get_signless(8), loc=ir.Location.unknown())


def _function_type(function: ir.Operation) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)


class EffectOrder:
    """The tokens of one module's function bodies while its callback calls are lowered."""

    def __init__(self, module: ir.Operation, declarations: dict) -> None:
        self.table = ir.SymbolTable(module)
        functions = [op.operation for op in module.regions[0].blocks[0].operations
                     if op.operation.name == "func.func"]
        self.named = {self._name(f): self._named(self._name(f)) for f in functions}
        reaches: dict[str, set[str]] = {}
        self.ordered: set[str] = set()
        for function in functions:
            name = self._name(function)
            reaches[name] = set()
            for op in nested_ops(function):
                if op.name != "func.call":
                    continue
                callee = callee_of(op)
                if callee in declarations:
                    if chained(declarations[callee][1].fields):
                        self.ordered.add(name)
                else:
                    reaches[name].update([callee, *self.named.get(callee, [])])
        self.ordered |= self._closure(reaches, self.ordered)
        self.takers = self._takers(functions)
        bodies = {name for names in self.named.values() for name in names}
        self.returners = self.takers - bodies  # only called: they give their last token back
        self.tokens: dict[ir.Block, ir.Value] = {}
        for name in sorted(self.takers):
            function = self.table[name].operation
            with function.location:
                self._take_token(function)
        self._grown: set[str] = set()

    @staticmethod
    def _name(function: ir.Operation) -> str:
        return ir.StringAttr(function.attributes["sym_name"]).value

    def _named(self, callee: str) -> list[str]:
        """The functions a declaration's fields name (a control-flow construct's bodies)."""
        transform = read_kind(self.table[callee] if callee in self.table else None, *CONTROL_FLOW_KINDS)
        if transform is None:
            return []
        values = [v for field in transform.fields.values()
                  for v in (field if isinstance(field, (tuple, list)) else (field,))]
        return [v for v in values if isinstance(v, str) and v in self.table and v != callee]

    @staticmethod
    def _closure(reaches: dict[str, set[str]], start: set[str]) -> set[str]:
        found, changed = set(start), True
        while changed:
            changed = False
            for name, callees in reaches.items():
                if name not in found and callees & found:
                    found.add(name)
                    changed = True
        return found

    def _private(self, name: str) -> bool:
        function = self.table[name].operation
        if "sym_visibility" not in function.attributes or not len(function.regions[0].blocks):
            return False
        return ir.StringAttr(function.attributes["sym_visibility"]).value == "private"

    def _takers(self, functions: list[ir.Operation]) -> set[str]:
        """The private functions that take the token: the ordered ones, and every function a
        construct names beside one of them (a construct passes them all the same operands)."""
        takers = {name for name in self.ordered if self._private(name)}
        groups = [names for names in self.named.values() if names]
        changed = True
        while changed:
            changed = False
            for names in groups:
                if set(names) & takers and not set(names) <= takers:
                    if all(self._private(n) for n in names):
                        takers |= set(names)
                        changed = True
                    else:  # a construct naming a public function: no token through it
                        takers -= set(names)
        return takers

    def _take_token(self, function: ir.Operation) -> None:
        block = function.regions[0].blocks[0]
        self.tokens[block] = block.add_argument(_token_type(), function.location)
        old = _function_type(function)
        function.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([*old.inputs, _token_type()], list(old.results)))

    def _grow_declaration(self, name: str) -> None:
        """A construct's declaration takes the token as one more trailing operand (a const)."""
        if name in self._grown:
            return
        self._grown.add(name)
        declaration = self.table[name].operation
        old = _function_type(declaration)
        declaration.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([*old.inputs, _token_type()], list(old.results)))
        if (transform := read_kind(declaration, "scan")) is not None:
            key = "mlax.scan"
            fields = ir.DictAttr(declaration.attributes[key])
            entries = {fields[i].name: fields[i].attr for i in range(len(fields))}
            entries["num_consts"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                      transform.fields["num_consts"] + 1)
            declaration.attributes[key] = ir.DictAttr.get(entries)

    def _current(self, block: ir.Block) -> ir.Value:
        if block not in self.tokens:
            self.tokens[block] = constant(np.int8(0), _token_type())
        return self.tokens[block]

    def call(self, call: ir.Operation) -> None:
        """A call of a function or construct holding ordered callbacks: the token goes in
        where it takes one, and the next token comes out of it (or after it)."""
        callee, block = callee_of(call), call.operation.block
        named = self.named.get(callee, [])
        if callee not in self.ordered and not set(named) & self.ordered:
            return
        with call.location, ir.InsertionPoint(call):
            token = self._current(block)
            if callee in self.takers or set(named) & self.takers:
                returns = [_token_type()] if callee in self.returners else []
                types = [*(r.type for r in call.results), *returns]
                new = func.CallOp(types, callee, [*call.operands, token])
                for old, replacement in zip(call.results, new.results, strict=False):
                    old.replace_all_uses_with(replacement)
                call.erase()
                call = new.operation
                if named:
                    self._grow_declaration(callee)
                if returns:
                    self.tokens[block] = call.results[len(call.results) - 1]
                    return
        with call.location, ir.InsertionPoint.after(call):
            self.tokens[block] = _join(token, list(call.results))

    def before_effect(self, call: ir.Operation) -> list[ir.Value]:
        """The token an ordered callback's custom call takes (none before the first)."""
        block = call.operation.block
        return [self.tokens[block]] if block in self.tokens else []

    def after_effect(self, call: ir.Operation, token: ir.Value) -> None:
        self.tokens[call.operation.block] = token

    def finish(self) -> None:
        """The functions that give their token back return it (their last one)."""
        for name in sorted(self.returners):
            function = self.table[name].operation
            block = function.regions[0].blocks[0]
            terminator = list(block.operations)[-1]
            with terminator.location, ir.InsertionPoint(terminator):
                func.ReturnOp([*terminator.operands, self._current(block)])
            terminator.erase()
            old = _function_type(function)
            function.attributes["function_type"] = ir.TypeAttr.get(
                ir.FunctionType.get(list(old.inputs), [*old.results, _token_type()]))


def _join(token: ir.Value, values: list[ir.Value]) -> ir.Value:
    """A token that is ``token`` once one of ``values`` (a construct's results) is there."""
    scalar = ir.RankedTensorType.get([], ir.F32Type.get())
    for v in values:
        shape = list(tensor_type(v).shape)
        if 0 in shape or is_complex(v.type):
            continue
        first = v
        if shape:
            rank = len(shape)
            first = reshape(value("slice", [v], with_shape(v, [1] * rank),
                                  {"start_indices": dims([0] * rank), "limit_indices": dims([1] * rank),
                                   "strides": dims([1] * rank)}), [])
        product = value("multiply", [value("convert", [first], scalar), splat(0.0, scalar)], scalar)
        joined = value("add", [value("convert", [token], scalar), product], scalar)
        return value("convert", [joined], token.type)
    return token
