"""Rules for the elementwise families: unary and binary math, compare, select, clamp.

Each op becomes one linalg.generic whose body is arith/math code with XLA's answers at
the edges: integer x / 0 = -1 (all ones) and x % 0 = x, INT_MIN / -1 = INT_MIN, shifts by
the bit width or more give 0 (sign fill for arithmetic shifts), NaN-propagating max/min
with -0 < +0, round half away from zero (math.round). Where an arith op has undefined
behaviour (divsi by 0, shifts past the width) its operand is made safe by a select first.
Bodies see the op's own element types, so unsigned integers pick the unsigned variants
(divui, remui, maxui, cmpi ult, ...). Transcendental functions on f16/bf16 compute in f32
and round once.
"""

from __future__ import annotations

import math as pymath

from mlir import ir
from mlir.dialects import arith, math
from mlir.dialects import complex as cplx

from mlax.passes.lower_to_linalg.common import (
    Body,
    Rule,
    element_type,
    elementwise,
    generic,
    in_f32,
    is_bool,
    is_complex,
    is_float,
    is_unsigned,
    scalar,
    width,
)


def by_kind(float_body: Body | None, int_body: Body | None, bool_body: Body | None = None,
            unsigned_body: Body | None = None, complex_body: Body | None = None) -> Body:
    """Pick a body by the element type of the first operand (bool and unsigned fall back to int)."""

    def body(*args: ir.Value) -> ir.Value:
        t = args[0].type
        if is_complex(t):
            chosen = complex_body
        elif is_float(t):
            chosen = float_body
        elif is_bool(t):
            chosen = bool_body or int_body
        else:
            chosen = (unsigned_body or int_body) if is_unsigned(t) else int_body
        assert chosen is not None, f"no body for {t}"  # the op's verifier excludes this dtype
        return chosen(*args)

    return body


def _where(cond: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
    return arith.select(cond, a, b)


def _cmp_const(pred: str, x: ir.Value, c: int) -> ir.Value:
    return arith.cmpi(getattr(arith.CmpIPredicate, pred), x, scalar(x.type, c))


# --- unary bodies ---------------------------------------------------------------------------

def _neg_int(x: ir.Value) -> ir.Value:
    return arith.subi(scalar(x.type, 0), x)


def _sign_float(x: ir.Value) -> ir.Value:
    # copysign(1, x), except that +-0 and NaN stay themselves.
    unit = math.copysign(scalar(x.type, 1.0), x)
    keep = arith.cmpf(arith.CmpFPredicate.UEQ, x, scalar(x.type, 0.0))  # true for 0 and NaN
    return _where(keep, x, unit)


def _sign_int(x: ir.Value) -> ir.Value:
    positive = arith.extui(x.type, _cmp_const("sgt", x, 0))
    negative = arith.extui(x.type, _cmp_const("slt", x, 0))
    return arith.subi(positive, negative)


def _sign_unsigned(x: ir.Value) -> ir.Value:
    return arith.extui(x.type, _cmp_const("ne", x, 0))


def _exp2(x: ir.Value) -> ir.Value:
    """exp(ln2 * x) with ln2 and the product in x's type, as JAX lowers exp2."""
    return in_f32(math.exp)(arith.mulf(scalar(x.type, pymath.log(2)), x))


def _logistic(x: ir.Value) -> ir.Value:
    one = scalar(x.type, 1.0)
    return arith.divf(one, arith.addf(one, in_f32(math.exp)(arith.negf(x))))


def _rsqrt(x: ir.Value) -> ir.Value:
    return arith.divf(scalar(x.type, 1.0), math.sqrt(x))


def _not(x: ir.Value) -> ir.Value:
    return arith.xori(x, scalar(x.type, -1))


def _is_finite(x: ir.Value) -> ir.Value:
    # |x| != inf, ordered, so NaN is not finite either.
    return arith.cmpf(arith.CmpFPredicate.ONE, math.absf(x), scalar(x.type, float("inf")))


_F32_UNARY: dict[str, Body] = {
    "floor": math.floor, "ceil": math.ceil, "exp": math.exp, "expm1": math.expm1, "log": math.log,
    "log1p": math.log1p, "sqrt": math.sqrt, "rsqrt": _rsqrt, "cbrt": math.cbrt, "sin": math.sin,
    "cos": math.cos, "tan": math.tan, "tanh": math.tanh, "erf": math.erf,
}


def _erfc(x: ir.Value) -> ir.Value:
    """erfc of narrower floats via f64 and one rounding: single-precision libm erfcf is off by
    an ulp where the result is subnormal, the reference rounds the f64 value."""
    if str(x.type) == "f64":
        return math.erfc(x)
    f64 = ir.F64Type.get()
    return arith.truncf(x.type, math.erfc(arith.extf(f64, x)))


_UNARY: dict[str, Body] = {
    **{name: in_f32(body) for name, body in _F32_UNARY.items()},
    "erfc": in_f32(_erfc),  # halves through f32: f64 <-> f16 conversions need a runtime library
    "neg": by_kind(arith.negf, _neg_int),
    "abs": by_kind(math.absf, math.absi),
    "sign": by_kind(_sign_float, _sign_int, unsigned_body=_sign_unsigned),
    # Each step rounds in the operand's own type, as JAX lowers them.
    "exp2": _exp2,
    "logistic": _logistic,
    "is_finite": _is_finite,
    "not": _not,
    "population_count": math.ctpop,
}


def _round(op: ir.Operation) -> ir.Value:
    method = ir.StringAttr(op.attributes["rounding_method"]).value
    body = math.round if method == "away_from_zero" else math.roundeven
    return elementwise(in_f32(body))(op)


# --- binary bodies --------------------------------------------------------------------------

def _safe_divisor(y: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(y == 0, y == -1, y with 0 and -1 replaced by 1): divsi/remsi are UB on the first two."""
    zero, minus_one = _cmp_const("eq", y, 0), _cmp_const("eq", y, -1)
    safe = _where(arith.ori(zero, minus_one), scalar(y.type, 1), y)
    return zero, minus_one, safe


def _div_int(x: ir.Value, y: ir.Value) -> ir.Value:
    zero, minus_one, safe = _safe_divisor(y)
    quotient = _where(minus_one, _neg_int(x), arith.divsi(x, safe))  # INT_MIN / -1 wraps
    return _where(zero, scalar(x.type, -1), quotient)


def _rem_int(x: ir.Value, y: ir.Value) -> ir.Value:
    zero, minus_one, safe = _safe_divisor(y)
    rem = _where(minus_one, scalar(x.type, 0), arith.remsi(x, safe))
    return _where(zero, x, rem)


def _div_unsigned(x: ir.Value, y: ir.Value) -> ir.Value:
    zero = _cmp_const("eq", y, 0)
    return _where(zero, scalar(x.type, -1), arith.divui(x, _where(zero, scalar(y.type, 1), y)))


def _rem_unsigned(x: ir.Value, y: ir.Value) -> ir.Value:
    zero = _cmp_const("eq", y, 0)
    return _where(zero, x, arith.remui(x, _where(zero, scalar(y.type, 1), y)))


def _shift(kind: str) -> Body:
    """Shift by an amount read as unsigned; amounts >= the bit width give 0 or the sign fill."""
    op = {"left": arith.shli, "logical": arith.shrui, "arithmetic": arith.shrsi}[kind]

    def body(x: ir.Value, y: ir.Value) -> ir.Value:
        bits = width(x.type)
        out_of_range = _cmp_const("uge", y, bits)
        if kind == "arithmetic":
            return op(x, _where(out_of_range, scalar(y.type, bits - 1), y))
        return _where(out_of_range, scalar(x.type, 0), op(x, _where(out_of_range, scalar(y.type, 0), y)))

    return body


_BINARY: dict[str, Body] = {
    "add": by_kind(arith.addf, arith.addi, arith.ori),
    "sub": by_kind(arith.subf, arith.subi),
    "mul": by_kind(arith.mulf, arith.muli, arith.andi),
    "div": by_kind(arith.divf, _div_int, unsigned_body=_div_unsigned),
    "rem": by_kind(in_f32(arith.remf), _rem_int, unsigned_body=_rem_unsigned),
    # arith.maximumf/minimumf are IEEE 754-2019 maximum/minimum, as XLA's max/min: NaN
    # propagates and -0 < +0 (LLVM's llvm.maximum/minimum keep that; see mlax-expand-bf16).
    "max": by_kind(arith.maximumf, arith.maxsi, arith.ori, arith.maxui),
    "min": by_kind(arith.minimumf, arith.minsi, arith.andi, arith.minui),
    "atan2": in_f32(math.atan2),
    "and": arith.andi,
    "or": arith.ori,
    "xor": arith.xori,
    "shift_left": _shift("left"),
    "shift_right_logical": _shift("logical"),
    "shift_right_arithmetic": _shift("arithmetic"),
}


# --- compare, select, clamp ----------------------------------------------------------------

_FLOAT_PREDICATES = {"EQ": "OEQ", "NE": "UNE", "LT": "OLT", "LE": "OLE", "GT": "OGT", "GE": "OGE"}
_INT_PREDICATES = {"EQ": "eq", "NE": "ne", "LT": "slt", "LE": "sle", "GT": "sgt", "GE": "sge"}
_UNSIGNED_PREDICATES = {**_INT_PREDICATES, "LT": "ult", "LE": "ule", "GT": "ugt", "GE": "uge"}


def _compare(op: ir.Operation) -> ir.Value:
    direction = ir.StringAttr(op.attributes["comparison_direction"]).value

    def body(x: ir.Value, y: ir.Value) -> ir.Value:
        if is_complex(x.type):  # only EQ and NE verify
            return cplx.eq(x, y) if direction == "EQ" else cplx.neq(x, y)
        if is_float(x.type):
            return arith.cmpf(getattr(arith.CmpFPredicate, _FLOAT_PREDICATES[direction]), x, y)
        unsigned = is_bool(x.type) or is_unsigned(x.type)  # booleans order false < true
        table = _UNSIGNED_PREDICATES if unsigned else _INT_PREDICATES
        return arith.cmpi(getattr(arith.CmpIPredicate, table[direction]), x, y)

    return elementwise(body)(op)


def _clamp(op: ir.Operation) -> ir.Value:
    lo, x, hi = op.operands
    big, small = _BINARY["max"], _BINARY["min"]
    body = _complex_clamp if is_complex(element_type(x)) else lambda x, lo, hi: small(big(x, lo), hi)
    return generic([x, lo, hi], op.results[0].type, body)


def _complex_clamp(x: ir.Value, lo: ir.Value, hi: ir.Value) -> ir.Value:
    """XLA's clamp of complex values, by real parts only: lo where lo.re >= x.re, else x; then
    that value unless hi.re is not >= its real part (NaN), else hi."""
    oge = arith.CmpFPredicate.OGE
    raised = _where(arith.cmpf(oge, cplx.re(lo), cplx.re(x)), lo, x)
    return _where(arith.cmpf(oge, cplx.re(hi), cplx.re(raised)), raised, hi)


def _lexicographic(predicate: str) -> Body:
    """JAX's complex max/min: x where ``predicate`` (OGT or OLT, false on NaN) holds of the real
    parts, or of the imaginary parts when the real parts are equal; y otherwise."""
    wins = getattr(arith.CmpFPredicate, predicate)

    def body(x: ir.Value, y: ir.Value) -> ir.Value:
        rx, ry = cplx.re(x), cplx.re(y)
        real_eq = arith.cmpf(arith.CmpFPredicate.OEQ, rx, ry)
        pick = _where(real_eq, arith.cmpf(wins, cplx.im(x), cplx.im(y)), arith.cmpf(wins, rx, ry))
        return _where(pick, x, y)

    return body


COMPLEX_MAX, COMPLEX_MIN = _lexicographic("OGT"), _lexicographic("OLT")


def _sin_cos(x: ir.Value, cosine: bool) -> ir.Value:
    """JAX's complex sin/cos (lax._sin_complex/_cos_complex): sinh and cosh of the imaginary
    part from expm1, exact for tiny parts where e**b - e**-b cancels, and a zero real
    (sin) or imaginary (cos) part where the real operand part is 0."""
    a, b = cplx.re(x), cplx.im(x)
    two = scalar(a.type, 2.0)
    sn, cs = math.sin(a), math.cos(a)
    e1m, e2m = math.expm1(b), math.expm1(arith.negf(b))
    snh = arith.divf(arith.subf(e1m, e2m), two)
    csh = arith.divf(arith.addf(arith.addf(e1m, e2m), two), two)
    zero = scalar(a.type, 0.0)
    a_is_zero = arith.cmpf(arith.CmpFPredicate.OEQ, a, zero)
    if cosine:
        re, im = arith.mulf(cs, csh), arith.mulf(arith.negf(sn), snh)
        im = _where(a_is_zero, zero, im)
    else:
        re, im = _where(a_is_zero, zero, arith.mulf(sn, csh)), arith.mulf(cs, snh)
    return cplx.create_(x.type, re, im)


def _complex_log1p(x: ir.Value) -> ir.Value:
    """log1p(a + ib) as the reference computes it (dialect/ops/elementwise.py `_log1p`): the
    real part 0.5 log1p(a (2 + a) + b b) where that sum is within 1/2 of 0, else log |1 + x|
    (exact at -1, where complex.log1p's expansion gives 0); the imaginary part atan2(b, 1 + a)."""
    a, b = cplx.re(x), cplx.im(x)
    t = a.type
    a1 = arith.addf(a, scalar(t, 1.0))
    twice = arith.mulf(a, arith.addf(a, scalar(t, 2.0)))
    sum_ = arith.addf(twice, arith.mulf(b, b))
    large = math.log(cplx.abs(cplx.create_(x.type, a1, b)))
    near = arith.cmpf(arith.CmpFPredicate.OLT, math.absf(sum_), scalar(t, 0.5))
    small = arith.mulf(scalar(t, 0.5), math.log1p(sum_))
    return cplx.create_(x.type, _where(near, small, large), math.atan2(b, a1))


def _complex_atan2(y: ir.Value, x: ir.Value) -> ir.Value:
    """XLA's complex atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)), the reference's formula."""
    squares = cplx.add(cplx.mul(x, x), cplx.mul(y, y))
    ratio = cplx.div(cplx.add(x, cplx.mul(scalar(x.type, 1j), y)), cplx.sqrt(squares))
    return cplx.mul(scalar(x.type, -1j), cplx.log(ratio))


def _complex_exp2(x: ir.Value) -> ir.Value:
    return cplx.exp(cplx.mul(scalar(x.type, pymath.log(2)), x))


def _complex_logistic(x: ir.Value) -> ir.Value:
    one = scalar(x.type, 1.0)
    return cplx.div(one, cplx.add(one, cplx.exp(cplx.neg(x))))


# The complex dialect's op for each elementwise op that takes complex operands (abs gives the
# parts' type); convert-complex-to-standard expands them in the CPU pipeline.
_COMPLEX: dict[str, Body] = {
    "neg": cplx.neg, "abs": cplx.abs, "sign": cplx.sign, "exp": cplx.exp, "log": cplx.log,
    "sqrt": cplx.sqrt, "add": cplx.add, "sub": cplx.sub, "mul": cplx.mul, "div": cplx.div,
    "expm1": cplx.expm1, "log1p": _complex_log1p, "rsqrt": cplx.rsqrt,
    "sin": lambda x: _sin_cos(x, cosine=False), "cos": lambda x: _sin_cos(x, cosine=True),
    "tan": cplx.tan, "tanh": cplx.tanh, "exp2": _complex_exp2,
    "logistic": _complex_logistic, "max": COMPLEX_MAX, "min": COMPLEX_MIN, "atan2": _complex_atan2,
}


def _or_complex(body: Body, complex_body: Body | None) -> Body:
    """``body``, or ``complex_body`` for complex operands (the op's verifier admits them)."""
    if complex_body is None:
        return body
    return lambda *args: complex_body(*args) if is_complex(args[0].type) else body(*args)


RULES: dict[str, Rule] = {
    **{name: elementwise(_or_complex(body, _COMPLEX.get(name)))
       for name, body in {**_UNARY, **_BINARY}.items()},
    "round": _round,
    "compare": _compare,
    "select": elementwise(lambda pred, a, b: arith.select(pred, a, b)),
    "clamp": _clamp,
}
