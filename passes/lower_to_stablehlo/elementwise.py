"""Rules for the elementwise and comparison families: one StableHLO op per mlax op, mostly.

mlax's elementwise semantics are StableHLO's as XLA implements them (integer x / 0 = -1,
x % 0 = x, INT_MIN / -1 = INT_MIN, shifts past the width give 0 or the sign fill,
NaN-propagating max/min with -0 < +0), so most ops are a renaming: the op's ``stablehlo``
trait names its StableHLO op, and renamings.py makes their rules (booleans use the
logical ops: add and max are or, mul and min are and; select and clamp keep rank-0 predicates
and bounds, as StableHLO allows, and clamp is min(max(x, lo), hi) with XLA's NaN-propagating
max/min, the reference's definition). This module holds the rules that are more than that.
Where StableHLO has no op, the rule emits what JAX emits, so that XLA computes what JAX's
programs compute: `chlo` ops for erf, erfc, erf_inv and nextafter (their traits name them;
XLA's text parser expands them), `exp(ln2 * x)` for exp2 and `1 / (1 + exp(-x))` for logistic
(each step in the operand type, as the reference defines them), `select(x == 0, 0, 1)` for the
sign of an unsigned integer. Integer pow is square-and-multiply over every exponent bit (XLA's
integer power reads only 6 of them, see `_pow`). compare carries the comparison type JAX gives
it (FLOAT, SIGNED, or UNSIGNED for unsigned integers and booleans).
"""

from __future__ import annotations

import math

from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.lower_to_stablehlo.common import (
    Rule,
    compare,
    complex_parts,
    is_complex,
    is_float,
    is_unsigned,
    lexicographic,
    select,
    splat,
    value,
)
from mlax.passes.lower_to_stablehlo.renamings import renamed

_ROUNDING = {"away_from_zero": "round_nearest_afz", "to_nearest_even": "round_nearest_even"}


def _sign(op: ir.Operation) -> ir.Value:
    """StableHLO's sign has no unsigned form: 0 stays 0, everything else is 1."""
    (x,) = op.operands
    if not is_unsigned(x.type):
        return value("sign", [x], x.type)
    return select(compare(x, splat(0, x.type), "EQ"), splat(0, x.type), splat(1, x.type))


def _round(op: ir.Operation) -> ir.Value:
    method = read_attributes(op)["rounding_method"]
    return value(_ROUNDING[method], list(op.operands), op.results[0].type)


def _exp2(op: ir.Operation) -> ir.Value:
    """exp(ln2 * x), ln2 and the product in x's type (JAX's lowering, the reference's definition)."""
    (x,) = op.operands
    return value("exponential", [value("multiply", [splat(math.log(2), x.type), x], x.type)], x.type)


def _logistic(op: ir.Operation) -> ir.Value:
    """1 / (1 + exp(-x)), every step in x's type (JAX's lowering, the reference's definition),
    rather than stablehlo.logistic, whose expansion is XLA's to choose."""
    (x,) = op.operands
    one = splat(1.0, x.type)
    exp = value("exponential", [value("negate", [x], x.type)], x.type)
    return value("divide", [one, value("add", [one, exp], x.type)], x.type)


def _pow(op: ir.Operation) -> ir.Value:
    """Float and complex powers are stablehlo.power. Integer powers are square-and-multiply over every bit
    of the exponent, wrapping, as the reference: XLA's integer power reads only the exponent's
    low 6 bits (wrong for odd bases past 63) and takes unsigned exponents with the top bit set
    for negative ones. A negative exponent gives 1 for base 1, +-1 for base -1 (by parity) and
    0 otherwise."""
    x, y = op.operands
    t = x.type
    if is_float(t) or is_complex(t):
        return value("power", [x, y], t)
    one, zero = splat(1, t), splat(0, t)

    def times(a: ir.Value, b: ir.Value) -> ir.Value:
        return value("multiply", [a, b], t)

    def has_bits(a: ir.Value, mask: int) -> ir.Value:
        return compare(value("and", [a, splat(mask, t)], t), zero, "NE")

    signed = not is_unsigned(t)
    negative = compare(y, zero, "LT") if signed else None
    exponent = select(negative, zero, y) if signed else y
    bits = ir.IntegerType(t.element_type).width - (1 if signed else 0)
    acc, base = one, x
    for k in range(bits):
        acc = select(has_bits(exponent, 1 << k), times(acc, base), acc)
        base = times(base, base) if k + 1 < bits else base
    if not signed:
        return acc
    minus_one = splat(-1, t)
    by_parity = select(has_bits(y, 1), minus_one, one)
    unit = select(compare(x, one, "EQ"), one, select(compare(x, minus_one, "EQ"), by_parity, zero))
    return select(negative, unit, acc)


def _max_min(direction: str) -> Rule:
    plain = renamed("max" if direction == "GT" else "min")

    def rule(op: ir.Operation) -> ir.Value:
        if is_complex(op.results[0].type):
            return lexicographic(*op.operands, direction)
        return plain(op)

    return rule


def _sin_cos(name: str) -> Rule:
    """Complex sin/cos as JAX lowers them (lax._sin_complex/_cos_complex): sinh and cosh of the
    imaginary part from expm1 (exact for tiny parts), a zero part where the real part is 0."""
    real_op = "sine" if name == "sin" else "cosine"

    def rule(op: ir.Operation) -> ir.Value:
        (x,) = op.operands
        if not is_complex(x.type):
            return value(real_op, [x], x.type)
        a, b, t = complex_parts(x)
        two = splat(2.0, t)
        sn, cs = value("sine", [a], t), value("cosine", [a], t)
        e1m = value("exponential_minus_one", [b], t)
        e2m = value("exponential_minus_one", [value("negate", [b], t)], t)
        snh = value("divide", [value("subtract", [e1m, e2m], t), two], t)
        csh = value("divide", [value("add", [value("add", [e1m, e2m], t), two], t), two], t)
        zero = splat(0.0, t)
        a_is_zero = compare(a, zero, "EQ")
        if name == "sin":
            re = select(a_is_zero, zero, value("multiply", [sn, csh], t))
            im = value("multiply", [cs, snh], t)
        else:
            re = value("multiply", [cs, csh], t)
            im = select(a_is_zero, zero, value("multiply", [value("negate", [sn], t), snh], t))
        return value("complex", [re, im], x.type)

    return rule


def _compare(op: ir.Operation) -> ir.Value:
    lhs, rhs = op.operands
    return compare(lhs, rhs, read_attributes(op)["comparison_direction"])


# Beside the renamings (renamings.py), which these replace.
RULES: dict[str, Rule] = {
    "sign": _sign,
    "round": _round,
    "exp2": _exp2,
    "logistic": _logistic,
    "pow": _pow,
    "max": _max_min("GT"),
    "min": _max_min("LT"),
    "sin": _sin_cos("sin"),
    "cos": _sin_cos("cos"),
    "compare": _compare,
}
