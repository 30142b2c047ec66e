"""Calls of `mlax.cond` / `mlax.while` / `mlax.scan` declarations -> `stablehlo.case` /
`stablehlo.while` whose regions `func.call` the branch and body functions.

The declarations (dialect/control_flow.py) are body-less functions naming the functions that
regions would have held; XLA wants real regions, and reads `func.call` inside them, so each
region is one call and a `stablehlo.return` of its results (XLA inlines the callees itself).
The body functions stay ordinary functions, whose mlax ops the pass lowers afterwards. As in
`mlax-lower-control-flow` (the CPU road into scf, whose declaration table and call sites this
reuses), consts are used from above rather than carried, and a body that is itself a
declaration is lowered in the next round.

- cond: `stablehlo.case` on an i32 index. An i1 selector converts to 0 (false, branch 0) or 1;
  an i32 one is clamped into ``[0, N-1]`` first, as `lax.switch` and the interpreter do
  (`stablehlo.case` would run the last branch for a negative index). One branch is just called.
- while: `stablehlo.while` over the carries; its condition region calls the cond function and
  its body region the body function, both with the consts appended.
- scan: `stablehlo.while` over (i32 step, carries..., stacked ys...), the stacks starting as
  zeros (the step is i64 in a scan longer than i32 counts). Step i reads row ``i``
  (``length-1-i`` when `reverse`) of each xs with `stablehlo.dynamic_slice`, calls the body,
  and writes its ys into that row with `stablehlo.dynamic_update_slice`. A scan of length 0
  is its initial carries and empty stacks.
"""

from __future__ import annotations

from mlir import ir

from mlax.passes.lower_control_flow import CallSite, Lowering, rewrite_calls
from mlax.passes.lower_to_stablehlo.common import (
    body,
    compare,
    convert,
    dims,
    hlo,
    reshape,
    scalar_type,
    splat,
    tensor_type,
    value,
    with_shape,
)


def _i32() -> ir.Type:
    return scalar_type(ir.IntegerType.get_signless(32))


def _step_type(length: int) -> ir.Type:
    """The scan's step counter: i32 as jax counts, i64 for more steps than i32 holds."""
    return _i32() if length <= 2**31 - 1 else scalar_type(ir.IntegerType.get_signless(64))


def _lower_cond(site: CallSite) -> list[ir.Value]:
    branches, (selector, *operands) = site.fields["branches"], site.operands
    if len(branches) == 1:
        return site.call(branches[0], operands)
    if tensor_type(selector).element_type == ir.IntegerType.get_signless(1):
        index = convert(selector, ir.IntegerType.get_signless(32))
    else:
        index = value("clamp", [splat(0, _i32()), selector, splat(len(branches) - 1, _i32())], _i32())
    case = hlo("case", [index], site.result_types, regions=len(branches))
    for region, branch in enumerate(branches):
        body(case, region, [], lambda branch=branch: site.call(branch, operands))
    return list(case.results)


def _lower_while(site: CallSite) -> list[ir.Value]:
    types = site.result_types
    carry, consts = site.operands[:len(types)], site.operands[len(types):]
    loop = hlo("while", carry, types, regions=2)
    for region, symbol in enumerate((site.fields["cond"], site.fields["body"])):
        body(loop, region, types, lambda *values, symbol=symbol: site.call(symbol, [*values, *consts]))
    return list(loop.results)


def _starts(i: ir.Value, rank: int) -> list[ir.Value]:
    """The start indices of row ``i`` of a stack of rank ``rank``: (i, 0, ..., 0), of i's type."""
    return [i, *[splat(0, i.type)] * (rank - 1)] if rank > 1 else [i]


def _row(stack: ir.Value, i: ir.Value) -> ir.Value:
    """Row ``i`` of ``stack`` (its leading dimension dropped)."""
    shape = tensor_type(stack).shape
    sizes = [1, *shape[1:]]
    row = value("dynamic_slice", [stack, *_starts(i, len(shape))], with_shape(stack, sizes),
                {"slice_sizes": dims(sizes)})
    return reshape(row, shape[1:])


def _store(stack: ir.Value, row: ir.Value, i: ir.Value) -> ir.Value:
    """``stack`` with row ``i`` replaced by ``row``."""
    shape = tensor_type(stack).shape
    return value("dynamic_update_slice", [stack, reshape(row, [1, *shape[1:]]), *_starts(i, len(shape))],
                 stack.type)


def _lower_scan(site: CallSite) -> list[ir.Value]:
    fields, operands = site.fields, site.operands
    length, num_carry, num_consts = fields["length"], fields["num_carry"], fields["num_consts"]
    end_xs = len(operands) - num_consts
    carry, xs, consts = operands[:num_carry], operands[num_carry:end_xs], operands[end_xs:]
    stacks = [splat(0, t) for t in site.result_types[num_carry:]]
    if length == 0:
        return [*carry, *stacks]
    counter = _step_type(length)
    state = [splat(0, counter), *carry, *stacks]
    loop = hlo("while", state, [v.type for v in state], regions=2)
    body(loop, 0, [v.type for v in state], lambda i, *_: [compare(i, splat(length, counter), "LT")])

    def step(i: ir.Value, *values: ir.Value) -> list[ir.Value]:
        row = value("subtract", [splat(length - 1, counter), i], counter) if fields["reverse"] else i
        outs = site.call(fields["body"], [*values[:num_carry], *(_row(x, row) for x in xs), *consts])
        ys = [_store(stack, y, row) for stack, y in zip(values[num_carry:], outs[num_carry:], strict=True)]
        return [value("add", [i, splat(1, counter)], counter), *outs[:num_carry], *ys]

    body(loop, 1, [v.type for v in state], step)
    return list(loop.results)[1:]


LOWERINGS: dict[str, Lowering] = {
    "cond": _lower_cond, "while": _lower_while, "scan": _lower_scan}


def lower_control_flow(module: ir.Operation) -> None:
    """Rewrite every func.call of a control-flow declaration in place; erase the declarations."""
    rewrite_calls(module, LOWERINGS, "mlax-lower-to-stablehlo")
