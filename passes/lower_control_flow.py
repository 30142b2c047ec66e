"""`mlax-lower-control-flow`: calls of `mlax.cond` / `mlax.while` / `mlax.scan` declarations
become upstream `scf` on tensors.

The declarations (dialect/control_flow.py) are body-less functions naming branch and body
functions; the CPU pipeline needs real control flow. Each `func.call` of one is rewritten in
place into `scf.if` (a chain of them for a switch) / `scf.while` / `scf.for` whose regions `func.call`
the branch or body functions (`mlax-inline` then inlines those calls, nested regions
included). Values stay tensors, so the rest of the linalg stage works inside the regions and
bufferization picks the buffers: a scan's stacked outputs are `scf.for` accumulators updated
with `tensor.insert_slice`, which the buffers stage turns into writes in place (see
backends/cpu/pipeline.py for the options that keep loops free of per-step copies). Constants
(``consts``) are used from above rather than loop-carried. The declarations are erased once no
call is left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mlir import ir
from mlir.dialects import arith, func, scf, tensor

from mlax.dialect.control_flow import CONTROL_FLOW_KINDS
from mlax.dialect.transforms import Transform, read_transform, verify_transforms
from mlax.passes.registry import ModulePass, PassFailure, register_pass
from mlax.passes.walk import nested_ops

ARGUMENT = "mlax-lower-control-flow"
_MAX_DEPTH = 64
_DYNAMIC = ir.ShapedType.get_dynamic_size()


@dataclass
class CallSite:
    """One call of a declaration: the op, the declaration's fields, and its callees' types."""

    op: ir.Operation
    fields: dict[str, Any]
    types: Callable[[str], ir.FunctionType]

    @property
    def operands(self) -> list[ir.Value]:
        return list(self.op.operands)

    @property
    def result_types(self) -> list[ir.Type]:
        return [r.type for r in self.op.results]

    def call(self, symbol: str, operands: Sequence[ir.Value]) -> list[ir.Value]:
        """``func.call @symbol(operands)`` at the current insertion point; its results."""
        return list(func.CallOp(list(self.types(symbol).results), symbol, list(operands)).results)


Lowering = Callable[[CallSite], Sequence[ir.Value]]


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def _yield_call(site: CallSite, block: ir.Block, symbol: str, operands: Sequence[ir.Value]) -> None:
    with ir.InsertionPoint(block):
        scf.YieldOp(site.call(symbol, operands))


def _lower_cond(site: CallSite) -> list[ir.Value]:
    branches, (selector, *operands) = site.fields["branches"], site.operands
    if len(branches) == 1:
        return site.call(branches[0], operands)
    chosen = tensor.extract(selector, [])
    if len(branches) == 2:  # tensor<i1>: [false, true]
        return _if(site, chosen, branches[1], lambda: site.call(branches[0], operands), operands)
    return _switch(site, chosen, branches, 0, operands)


def _if(site: CallSite, condition: ir.Value, then_branch: str, otherwise: Callable[[], list[ir.Value]],
        operands: Sequence[ir.Value]) -> list[ir.Value]:
    op = scf.IfOp(condition, site.result_types, has_else=True)
    _yield_call(site, op.then_block, then_branch, operands)
    with ir.InsertionPoint(op.else_block):
        scf.YieldOp(otherwise())
    return list(op.results)


def _switch(site: CallSite, index: ir.Value, branches: Sequence[str], first: int,
            operands: Sequence[ir.Value]) -> list[ir.Value]:
    """Branch ``first`` if ``index <= first``, else the rest: a chain of `scf.if` that clamps the
    index into range by construction. Not `scf.index_switch`: one-shot bufferization in LLVM 22
    does not see that its results alias buffers its cases yield, and writes over a live one (a
    wrong gradient through a switch inside a scan)."""
    if first == len(branches) - 1:
        return site.call(branches[first], operands)
    i32 = ir.IntegerType.get_signless(32)
    at_most = arith.cmpi(arith.CmpIPredicate.sle, index, arith.constant(i32, first))
    return _if(site, at_most, branches[first], lambda: _switch(site, index, branches, first + 1, operands),
               operands)


def _lower_while(site: CallSite) -> list[ir.Value]:
    types = site.result_types
    carry, consts = site.operands[:len(types)], site.operands[len(types):]
    op = scf.WhileOp(types, carry)
    locations = [site.op.location] * len(types)
    before = op.before.blocks.append(*types, arg_locs=locations)
    with ir.InsertionPoint(before):
        (holds,) = site.call(site.fields["cond"], [*before.arguments, *consts])
        scf.ConditionOp(tensor.extract(holds, []), list(before.arguments))
    after = op.after.blocks.append(*types, arg_locs=locations)
    _yield_call(site, after, site.fields["body"], [*after.arguments, *consts])
    return list(op.results)


def _static(t: ir.Type, site: CallSite, what: str) -> ir.RankedTensorType:
    if not isinstance(t, ir.RankedTensorType) or not ir.RankedTensorType(t).has_static_shape:
        raise PassFailure(f"{ARGUMENT}: {what} of type {t} needs a static shape", site.op.location)
    return ir.RankedTensorType(t)


def _slice_attrs(t: ir.RankedTensorType) -> tuple[list[int], list[int], list[int]]:
    """Static offsets, sizes and strides of row ``i`` (dynamic) of a stack of ``t``."""
    return [_DYNAMIC] + [0] * t.rank, [1, *t.shape], [1] * (t.rank + 1)


def _row(t: ir.RankedTensorType, stack: ir.Value, i: ir.Value) -> ir.Value:
    """Row ``i`` of ``stack``. An empty row is a `tensor.empty` (the slice verifier rejects the
    in-range offset 0 into a dimension of size 0); an empty y likewise stores nothing."""
    if 0 in t.shape:
        return tensor.EmptyOp(list(t.shape), t.element_type).result
    return tensor.ExtractSliceOp(t, stack, [i], [], [], *_slice_attrs(t)).result


def _store(t: ir.RankedTensorType, row: ir.Value, stack: ir.Value, i: ir.Value) -> ir.Value:
    """``stack`` with row ``i`` replaced by ``row``."""
    if 0 in t.shape:
        return stack
    return tensor.InsertSliceOp(row, stack, [i], [], [], *_slice_attrs(t)).result


def _lower_scan(site: CallSite) -> list[ir.Value]:
    fields, operands = site.fields, site.operands
    length, num_carry, num_consts = fields["length"], fields["num_carry"], fields["num_consts"]
    body = site.types(fields["body"])
    num_xs = len(operands) - num_carry - num_consts
    end_xs = num_carry + num_xs
    x_types = [_static(t, site, "a scanned slice") for t in list(body.inputs)[num_carry:end_xs]]
    y_types = [_static(t, site, "a scanned output") for t in list(body.results)[num_carry:]]
    carry, xs, consts = operands[:num_carry], operands[num_carry:end_xs], operands[end_xs:]
    stacks = [tensor.EmptyOp(list(t.shape), t.element_type).result for t in site.result_types[num_carry:]]
    if length == 0:
        return [*carry, *stacks]
    loop = scf.ForOp(_index(0), _index(length), _index(1), [*carry, *stacks])
    with ir.InsertionPoint(loop.body):
        step = loop.induction_variable
        i = arith.subi(_index(length - 1), step) if fields["reverse"] else step
        rows = [_row(t, x, i) for t, x in zip(x_types, xs, strict=True)]
        outs = site.call(fields["body"], [*loop.inner_iter_args[:num_carry], *rows, *consts])
        updated = [_store(t, y, stack, i) for t, y, stack in
                   zip(y_types, outs[num_carry:], loop.inner_iter_args[num_carry:], strict=True)]
        scf.YieldOp([*outs[:num_carry], *updated])
    return list(loop.results)


LOWERINGS: dict[str, Lowering] = {
    "cond": _lower_cond, "while": _lower_while, "scan": _lower_scan}


def declarations_of(module: ir.Operation) -> dict[str, tuple[ir.Operation, Transform]]:
    """The control-flow declarations by name; malformed ones fail the pass where they are."""
    if verify_transforms(module):  # each problem was emitted at its declaration
        raise PassFailure("")
    found = {}
    for op in module.regions[0].blocks[0].operations:
        transform = read_transform(op)
        if transform is not None and transform.kind in CONTROL_FLOW_KINDS:
            found[transform.name] = (op.operation, transform)
    return found


@register_pass
@dataclass
class LowerControlFlow(ModulePass):
    """Rewrite calls of control-flow declarations into scf on tensors calling the bodies."""

    argument = ARGUMENT
    summary = "lower calls of mlax.cond / mlax.while / mlax.scan declarations to scf on tensors"

    def run(self, module: ir.Operation) -> None:
        rewrite_calls(module, LOWERINGS, ARGUMENT)



def rewrite_calls(module: ir.Operation, lowerings: dict[str, Lowering], argument: str) -> None:
    """Replace every call of a control-flow declaration by ``lowerings[kind]`` of its call site
    (built at the call), round by round, since a lowered region may call a declaration in turn;
    then erase the declarations. Shared by the CPU road (scf) and the StableHLO one."""
    declarations = declarations_of(module)
    table = ir.SymbolTable(module)

    def types(symbol: str) -> ir.FunctionType:
        return ir.FunctionType(ir.TypeAttr(table[symbol].attributes["function_type"]).value)

    for _ in range(_MAX_DEPTH):
        calls = [op for op in nested_ops(module) if op.name == "func.call"
                 and ir.FlatSymbolRefAttr(op.attributes["callee"]).value in declarations]
        if not calls:
            break
        for call in calls:
            _, transform = declarations[ir.FlatSymbolRefAttr(call.attributes["callee"]).value]
            with call.location, ir.InsertionPoint(call):
                results = lowerings[transform.kind](CallSite(call, transform.fields, types))
            for result, replacement in zip(call.results, results, strict=True):
                result.replace_all_uses_with(replacement)
            call.erase()
    else:
        raise PassFailure(f"{argument}: control-flow declarations name each other more than "
                          f"{_MAX_DEPTH} deep")
    for declaration, _ in declarations.values():
        declaration.erase()
