"""Rules for the reductions: reduce_* over dimensions, argmax/argmin, and the cumulative ops.

reduce_<kind> is `stablehlo.reduce` from the kind's identity (-inf, the lowest integer, or
false for max; all bits set for and; ...) with a one-op body; f16/bf16 sums and products
accumulate in f32 and round once, as the reference does (XLA would otherwise round every
partial sum to the narrow type). argmax/argmin is JAX's variadic reduce over (value, index)
pairs, with a combiner that is symmetric in its two pairs (a NaN beats any number, equal
values and two NaNs keep the lower index), so XLA may combine in any order and still return
the first extreme, as the interpreter; it counts in `index_dtype` as jax does when the axis fits
in it (XLA's CPU compiler crashed on an i64 count converted and fed to a bitwise op), else in
i64 converted to `index_dtype`, so narrow index types wrap as the reference's do.
cum<kind> is JAX's CPU lowering, a `stablehlo.reduce_window` whose window covers the axis,
padded by n - 1 identities before (after, with `reverse = 1`) each element; the sum starts
from -0.0, IEEE addition's identity, so a running sum of -0.0 stays -0.0 as the reference's
does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.lower_to_stablehlo.common import (
    Rule,
    body,
    compare,
    convert,
    dims,
    element_type,
    hlo,
    i64_array,
    iota,
    is_bool,
    is_complex,
    is_float,
    is_unsigned,
    scalar_reducer,
    scalar_type,
    select,
    splat,
    value,
    with_element,
)

_HALF = ("f16", "bf16")


def _extreme(t: ir.Type, highest: bool) -> float | int | bool:
    """The largest (``highest``) or smallest value of element type ``t`` (+-inf + 0i for complex)."""
    if is_float(t) or is_complex(t):
        return np.inf if highest else -np.inf
    if is_bool(t):
        return highest
    bits = ir.IntegerType(t).width
    if is_unsigned(t):
        return (1 << bits) - 1 if highest else 0
    return (1 << (bits - 1)) - 1 if highest else -(1 << (bits - 1))


def _all_ones(t: ir.Type) -> int | bool:
    return True if is_bool(t) else (-1 if not is_unsigned(t) else _extreme(t, highest=True))


# kind -> (StableHLO combiner, its boolean form, the identity of an element type)
MONOIDS: dict[str, tuple[str, str, Callable[[ir.Type], float | int | bool]]] = {
    "sum": ("add", "or", lambda t: 0),
    "prod": ("multiply", "and", lambda t: 1),
    "max": ("maximum", "or", lambda t: _extreme(t, highest=False)),
    "min": ("minimum", "and", lambda t: _extreme(t, highest=True)),
    "and": ("and", "and", _all_ones),
    "or": ("or", "or", lambda t: 0),
}


def _combiner(kind: str, t: ir.Type) -> str:
    combine, boolean, _ = MONOIDS[kind]
    return boolean if is_bool(t) else combine


def _reduce(kind: str) -> Rule:
    def rule(op: ir.Operation) -> ir.Value:
        (x,) = op.operands
        dimensions = i64_array(op, "dimensions")
        if not dimensions:
            return x
        element = element_type(x)
        work = ir.F32Type.get() if str(element) in _HALF and kind in ("sum", "prod") else element
        result = with_element(op.results[0].type, work)
        init = splat(MONOIDS[kind][2](work), scalar_type(work))
        reduce = hlo("reduce", [convert(x, work), init], result, {"dimensions": dims(dimensions)},
                     regions=1)
        scalar_reducer(reduce, 0, work, _combiner(kind, work))
        return convert(reduce.result, element)

    return rule


def _arg_extreme(kind: str) -> Rule:
    """The (value, index) reduce of argmax/argmin (see the module docstring)."""
    wins = "GT" if kind == "max" else "LT"

    def rule(op: ir.Operation) -> ir.Value:
        (x,) = op.operands
        axis = read_attributes(op)["axis"]
        shape = list(ir.RankedTensorType(x.type).shape)
        element, wanted = element_type(x), element_type(op.results[0].type)
        width = ir.IntegerType(wanted).width
        fits = shape[axis] - 1 < 2 ** (width if is_unsigned(wanted) else width - 1)
        counter = wanted if fits else ir.IntegerType.get_signless(64)
        indices = iota(with_element(x, counter), axis)
        kept = [d for i, d in enumerate(shape) if i != axis]
        results = [ir.RankedTensorType.get(kept, t) for t in (element, counter)]
        inits = [splat(_extreme(element, highest=kind == "min"), scalar_type(element)),
                 splat(0, scalar_type(counter))]
        reduce = hlo("reduce", [x, indices, *inits], results, {"dimensions": dims([axis])}, regions=1)

        def combine(a: ir.Value, i: ir.Value, b: ir.Value, j: ir.Value) -> list[ir.Value]:
            a_wins, tie = compare(a, b, wins), compare(a, b, "EQ")
            if is_float(element):  # NaN is the extreme; two NaNs tie
                a_nan, b_nan = compare(a, a, "NE"), compare(b, b, "NE")
                not_b_nan = value("not", [b_nan], b_nan.type)
                a_wins = value("or", [a_wins, value("and", [a_nan, not_b_nan], a_nan.type)], a_nan.type)
                tie = value("or", [tie, value("and", [a_nan, b_nan], a_nan.type)], a_nan.type)
            first = value("and", [tie, compare(i, j, "LT")], tie.type)
            return [select(a_wins, a, b), select(value("or", [a_wins, first], tie.type), i, j)]

        body(reduce, 0, [scalar_type(element), scalar_type(counter)] * 2,
             lambda a, i, b, j: combine(a, i, b, j))
        return reduce.results[1] if fits else convert(reduce.results[1], wanted)

    return rule


def _cumulative(kind: str) -> Rule:
    """A window of the whole axis over the operand padded by n - 1 identities on one side."""

    def rule(op: ir.Operation) -> ir.Value:
        (x,) = op.operands
        attributes = read_attributes(op)
        axis, reverse = attributes["axis"], attributes["reverse"]
        shape = list(ir.RankedTensorType(x.type).shape)
        element = element_type(x)
        identity = -0.0 if kind == "sum" and is_float(element) else MONOIDS[kind][2](element)
        window = [max(n, 1) if d == axis else 1 for d, n in enumerate(shape)]
        padding = np.zeros((len(shape), 2), np.int64)
        padding[axis, 1 if reverse else 0] = max(shape[axis] - 1, 0)
        ones = dims([1] * len(shape))
        window_op = hlo("reduce_window", [x, splat(identity, scalar_type(element))], x.type, {
            "window_dimensions": dims(window), "window_strides": ones, "base_dilations": ones,
            "window_dilations": ones,
            "padding": ir.DenseElementsAttr.get(padding, type=ir.IntegerType.get_signless(64)),
        }, regions=1)
        scalar_reducer(window_op, 0, element, _combiner(kind, element))
        return window_op.result

    return rule


RULES: dict[str, Rule] = {
    **{f"reduce_{kind}": _reduce(kind) for kind in MONOIDS},
    "argmax": _arg_extreme("max"),
    "argmin": _arg_extreme("min"),
    **{f"cum{kind}": _cumulative(kind) for kind in ("sum", "prod", "max", "min")},
}
