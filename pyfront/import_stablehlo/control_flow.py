"""Control flow and calls: while, case, if, func.call, composite, and the ops that are the
identity on one device (sharding annotations).

Regions become Python closures that walk them (in the scope of the op, whose values they
may use): mlax.lax traces them into the body functions of its constructs, capturing the
enclosing values they use as consts.

A while loop whose condition is ``counter < N`` (or ``<=``) on a carry that starts at a
known value and that the body increments by one runs a known number of times: it imports as
`mlax.lax.scan` of that length, as jax's own fori_loop with static bounds, so reverse-mode
differentiation works (jax writes every lax.scan and static fori_loop that way). Other
loops import as `mlax.lax.while_loop` (forward-mode only, as in jax). Carries the body
returns unchanged are loop invariants: the bodies read them as consts, not carries.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mlir import ir

import mlax.lax as lax
from mlax.dialect import dtypes
from mlax.import_stablehlo.core import (
    Entry,
    Importer,
    argument_number,
    attribute,
    enum,
    producer,
    single_block,
    symbol,
    terminator_operands,
    unsupported,
    value_spec,
)

CONVERTERS: dict[str, Entry] = {}

_MIRROR = {"LT": "GT", "LE": "GE", "GT": "LT", "GE": "LE", "EQ": "EQ", "NE": "NE"}


def trip_count(imp: Importer, op: ir.Operation) -> int | None:
    """The number of iterations of a counted while loop, or None if it is not one."""
    cond, body = single_block(op, 0), single_block(op, 1)
    returned = terminator_operands(cond)
    compare = producer(returned[0]) if len(returned) == 1 else None
    if compare is None or compare.name != "stablehlo.compare":
        return None
    direction = enum(compare, "comparison_direction")
    lhs, rhs = compare.operands
    counter, bound_value = argument_number(lhs, cond), rhs
    if counter is None:
        counter, bound_value, direction = argument_number(rhs, cond), lhs, _MIRROR[direction]
    if counter is None or direction not in ("LT", "LE") \
            or not dtypes.is_int(value_spec(op, op.operands[counter]).dtype):
        return None
    bound, start = imp.concrete(bound_value), imp.concrete(op.operands[counter])
    step = producer(terminator_operands(body)[counter])
    if bound is None or start is None or step is None or step.name != "stablehlo.add":
        return None
    a, b = step.operands
    increment = b if argument_number(a, body) == counter else \
        a if argument_number(b, body) == counter else None
    one = imp.concrete(increment) if increment is not None else None
    if one is None or int(one) != 1:
        return None
    return max(int(bound) - int(start) + (direction == "LE"), 0)


def while_loop(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    returned = terminator_operands(single_block(op, 1))
    body_block = single_block(op, 1)
    variant = [j for j in range(len(args)) if argument_number(returned[j], body_block) != j]

    def carries(carry: tuple[Any, ...]) -> list[Any]:
        values = list(args)
        for j, value in zip(variant, carry, strict=True):
            values[j] = value
        return values

    def body(carry: tuple[Any, ...]) -> tuple[Any, ...]:
        outs = imp.run_region(op, 1, carries(carry))
        return tuple(outs[j] for j in variant)

    def scan_body(carry: tuple[Any, ...], _: Any) -> tuple[tuple[Any, ...], None]:
        return body(carry), None

    def while_cond(carry: tuple[Any, ...]) -> Any:
        return imp.run_region(op, 0, carries(carry))[0]

    init = tuple(args[j] for j in variant)
    steps = trip_count(imp, op)
    if steps is not None:
        final, _ = lax.scan(scan_body, init, None, length=steps)
    else:
        body.__name__ = "while_body"
        final = lax.while_loop(while_cond, body, init)
    return carries(tuple(final))


def _in_range(imp: Importer, index: ir.Value, n: int) -> bool:
    """Whether a case index is known to lie in [0, n): a constant, jax's clamp, or a bool."""
    known = imp.concrete(index)
    if known is not None:
        return 0 <= int(known) < n
    op = producer(index)
    if op is not None and op.name == "stablehlo.clamp":
        low, high = imp.concrete(op.operands[0]), imp.concrete(op.operands[2])
        return low is not None and high is not None and int(low) >= 0 and int(high) < n
    if op is not None and op.name == "stablehlo.convert":
        return n >= 2 and dtypes.is_bool(value_spec(op, op.operands[0]).dtype)
    return False


def case(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    """stablehlo.case runs the last branch for an index out of range; lax.switch clamps, so an
    index not known to be in range is first sent to the last branch."""
    (index,) = args
    n = len(op.regions)
    if n == 1:
        return imp.run_region(op, 0, [])
    selector = producer(op.operands[0])
    if n == 2 and selector is not None and selector.name == "stablehlo.convert" \
            and dtypes.is_bool(value_spec(selector, selector.operands[0]).dtype):  # jax's lax.cond
        return list(lax.cond(imp.env[selector.operands[0]], _branch(imp, op, 1), _branch(imp, op, 0)))
    if not _in_range(imp, op.operands[0], n):
        dtype = value_spec(op, op.operands[0]).dtype
        outside = lax.bitwise_or(lax.lt(index, np.array(0, dtype)), lax.ge(index, np.array(n, dtype)))
        index = lax.select(outside, np.array(n - 1, dtype), index)
    return list(lax.switch(index, [_branch(imp, op, r) for r in range(n)]))


def _branch(imp: Importer, op: ir.Operation, region: int) -> Any:
    def branch() -> tuple[Any, ...]:
        return tuple(imp.run_region(op, region, []))

    branch.__name__ = f"branch{region}"
    return branch


def if_(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    (pred,) = args
    return list(lax.cond(pred, _branch(imp, op, 0), _branch(imp, op, 1)))


def call(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    return imp.call(symbol(op, "callee"), args, op)


def composite(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    return imp.call(symbol(op, "decomposition"), args, op)


IDENTITY_TARGETS = ("Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape")


def custom_call(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    """Sharding annotations are the identity on one device; other targets are foreign code."""
    target_attr = attribute(op, "call_target_name")
    target = ir.StringAttr(target_attr).value if target_attr is not None else "?"
    if target in IDENTITY_TARGETS and len(args) == len(op.results) == 1:
        return args
    raise unsupported(op, f"the custom call target '{target}' (foreign code mlax cannot see into)")


def _identity(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    return list(args)


CONVERTERS.update({
    "stablehlo.while": Entry(while_loop, "mlax.lax.scan (counted loops), mlax.lax.while_loop"),
    "stablehlo.case": Entry(case, "mlax.lax.switch"),
    "stablehlo.if": Entry(if_, "mlax.lax.cond"),
    "func.call": Entry(call, "the callee, inlined"),
    "stablehlo.composite": Entry(composite, "its decomposition, inlined"),
    "stablehlo.optimization_barrier": Entry(lambda imp, op, args: list(lax.optimization_barrier(list(args))),
                                            "mlax.lax.optimization_barrier (one per operand)"),
    "stablehlo.custom_call": Entry(custom_call, "identity for @Sharding (one device); else an error"),
    "sdy.sharding_constraint": Entry(_identity, "identity (one device)"),
})
