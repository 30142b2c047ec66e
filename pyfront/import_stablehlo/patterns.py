"""Recognising the bodies of reduce, reduce_window, scatter and sort.

mlax has no region-carrying reduce or sort: it has one primitive per monoid (reduce_sum,
reduce_max, ...), argmax/argmin, and a stable sort by keys. So a body is imported by
recognising what it computes, structurally: the monoids (one op over the two block
arguments, in either order), the (value, index) pair jax builds for argmax/argmin, a
scatter's "replace" (return the update) and the lexicographic less-than jax writes for
sorts (``lt(x0, y0) or (eq(x0, y0) and lt(x1, y1 ...))``, each key compared directly or
after jax's float canonicalisation of -0.0 and NaN). Anything else is not recognised and
the converter reports it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mlir import ir

from mlax.dialect.attrs import dense_to_numpy
from mlax.import_stablehlo.core import (
    argument_number,
    attribute,
    enum,
    producer,
    terminator_operands,
)

MONOIDS = {"stablehlo.add": "sum", "stablehlo.multiply": "prod", "stablehlo.maximum": "max",
           "stablehlo.minimum": "min", "stablehlo.and": "and", "stablehlo.or": "or"}


def _op(value: ir.Value, name: str) -> ir.Operation | None:
    op = producer(value)
    return op if op is not None and op.name == name else None


def _constant(value: ir.Value, test: Callable[[np.ndarray], bool]) -> bool:
    """Whether ``value`` is a stablehlo.constant whose every element passes ``test``."""
    op = _op(value, "stablehlo.constant")
    found = attribute(op, "value") if op is not None else None
    try:
        values = dense_to_numpy(found) if found is not None else None
        if values is not None and values.size > 1 and ir.DenseElementsAttr(found).is_splat:
            values = values.reshape(-1)[:1]  # its one value (a splat may have any shape)
        return values is not None and bool(np.all(test(values)))
    except (TypeError, ValueError):
        return False


def _args(op: ir.Operation, block: ir.Block) -> tuple[int | None, ...]:
    return tuple(argument_number(v, block) for v in op.operands)


def monoid(block: ir.Block, result: int, lhs: int, rhs: int) -> str | None:
    """The monoid ("sum", "max", ...) if the block's result ``result`` is one op applied to its
    arguments ``lhs`` and ``rhs`` (in either order)."""
    returned = terminator_operands(block)
    if result >= len(returned):
        return None
    op = producer(returned[result])
    if op is None or op.name not in MONOIDS:
        return None
    if sorted(_args(op, block), key=str) != sorted((lhs, rhs), key=str):
        return None
    return MONOIDS[op.name]


def returns_argument(block: ir.Block, result: int, argument: int) -> bool:
    returned = terminator_operands(block)
    return result < len(returned) and argument_number(returned[result], block) == argument


def _compare(value: ir.Value, block: ir.Block) -> tuple[str, int | None, int | None] | None:
    op = _op(value, "stablehlo.compare")
    if op is None:
        return None
    lhs, rhs = _args(op, block)
    return enum(op, "comparison_direction"), lhs, rhs


def _either(value: ir.Value, name: str) -> list[tuple[ir.Value, ir.Value]]:
    """The operand pairs of a commutative ``name`` op defining ``value``, in both orders."""
    op = _op(value, name)
    if op is None:
        return []
    a, b = op.operands
    return [(a, b), (b, a)]


def _picks_first(value: ir.Value, block: ir.Block) -> str | None:
    """"max"/"min" if ``value`` is jax's "the first value wins": ``gt(a, b)`` (``lt`` for min),
    optionally or-ed with ``ne(a, a)`` (a NaN wins)."""
    found = _compare(value, block)
    if found is not None and found[1:] == (0, 2):
        return {"GT": "max", "LT": "min"}.get(found[0])
    for first, second in _either(value, "stablehlo.or"):
        kind = _picks_first(first, block)
        if kind is not None and _compare(second, block) == ("NE", 0, 0):
            return kind
    return None


def arg_extreme(block: ir.Block) -> str | None:
    """"max"/"min" if a 4-argument reduce body ``(value, index, value, index)`` is jax's
    argmax/argmin combiner: the better value, and for equal values the lower index."""
    returned = terminator_operands(block)
    if len(block.arguments) != 4 or len(returned) != 2:
        return None
    pick_value, pick_index = (_op(v, "stablehlo.select") for v in returned)
    if pick_value is None or pick_index is None or _args(pick_value, block)[1:] != (0, 2) \
            or _args(pick_index, block)[1:] != (1, 3):
        return None
    kind = _picks_first(pick_value.operands[0], block)
    if kind is None:
        return None
    for first, second in _either(pick_index.operands[0], "stablehlo.or"):
        if _picks_first(first, block) != kind:
            continue
        for equal, lower in _either(second, "stablehlo.and"):
            eq = _compare(equal, block)
            if eq is not None and eq[0] == "EQ" and sorted(eq[1:], key=str) == [0, 2] \
                    and _compare(lower, block) == ("LT", 1, 3):
                return kind
    return None


# --- sort comparators --------------------------------------------------------------------------------


def _key(value: ir.Value, block: ir.Block) -> tuple[int, int] | None:
    """(operand, side) if ``value`` is comparator argument ``2 * operand + side``, directly or
    through jax's canonicalisation ``select(ne(a, a), nan, select(eq(a, 0), 0, a))``."""
    number = argument_number(value, block)
    if number is not None:
        return divmod(number, 2)
    outer = _op(value, "stablehlo.select")
    if outer is None:
        return None
    is_nan, nan, inner = outer.operands
    nan_test = _compare(is_nan, block)
    inner_select = _op(inner, "stablehlo.select")
    if nan_test is None or nan_test[0] != "NE" or nan_test[1] != nan_test[2] or inner_select is None \
            or not _constant(nan, np.isnan):
        return None
    is_zero, zero, raw = inner_select.operands
    zero_test = _op(is_zero, "stablehlo.compare")
    number = argument_number(raw, block)
    if zero_test is None or number is None or argument_number(zero_test.operands[0], block) != number \
            or enum(zero_test, "comparison_direction") != "EQ" or not _constant(zero, lambda z: z == 0) \
            or not _constant(zero_test.operands[1], lambda z: z == 0):
        return None
    return divmod(number, 2) if nan_test[1] == number else None


def _key_compare(value: ir.Value, block: ir.Block, direction: str) -> int | None:
    """The operand compared if ``value`` is ``direction(key_x, key_y)`` of one operand."""
    op = _op(value, "stablehlo.compare")
    if op is None or enum(op, "comparison_direction") != direction:
        return None
    lhs, rhs = (_key(v, block) for v in op.operands)
    if lhs is None or rhs is None or lhs[0] != rhs[0] or (lhs[1], rhs[1]) != (0, 1):
        return None
    return lhs[0]


def _lexicographic(value: ir.Value, block: ir.Block) -> list[int] | None:
    key = _key_compare(value, block, "LT")
    if key is not None:
        return [key]
    for first, second in _either(value, "stablehlo.or"):
        key = _key_compare(first, block, "LT")
        if key is None:
            continue
        for equal, rest in _either(second, "stablehlo.and"):
            if _key_compare(equal, block, "EQ") == key:
                tail = _lexicographic(rest, block)
                if tail is not None and key not in tail:
                    return [key, *tail]
    return None


def sort_keys(block: ir.Block) -> list[int] | None:
    """The operands a sort comparator orders by, most significant first, if it is an
    ascending lexicographic less-than; else None."""
    returned = terminator_operands(block)
    return _lexicographic(returned[0], block) if len(returned) == 1 else None
