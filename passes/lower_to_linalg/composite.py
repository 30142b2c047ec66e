"""Rules for the elementwise ops that take several steps: erf_inv, nextafter and pow.

erf_inv is XLA's: Giles' polynomials in w = -log1p(-x*x) ("Approximating the erfinv
function", GPU Computing Gems) in single precision for f32 (f16/bf16 compute in f32) and
double precision for f64, then erf_inv(+-1) = +-inf. nextafter steps the bit pattern:
+1 moves away from zero, -1 toward it, zero steps to the smallest subnormal of y's sign,
x == y gives y, NaN gives NaN. Integer pow is square-and-multiply over the exponent's bits
in an scf.for (wrapping), with XLA's answers for negative exponents.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import arith, math, scf

from mlax.passes.lower_to_linalg.common import Rule, elementwise, in_f32, scalar, width
from mlax.passes.lower_to_linalg.elementwise import by_kind

# --- erf_inv -------------------------------------------------------------------------------

# (upper bound of w, the offset subtracted from w or sqrt(w), Horner coefficients highest first)
_Piece = tuple[float, tuple[bool, float], Sequence[float]]

_ERF_INV_F32: list[_Piece] = [
    (5.0, (False, 2.5), [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                         -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]),
    (float("inf"), (True, 3.0), [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                                 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]),
]

_ERF_INV_F64: list[_Piece] = [
    (6.25, (False, 3.125), [
        -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
        1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
        6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
        2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
        1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
        4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
        0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
        0.24015818242558961693, 1.6536545626831027356]),
    (16.0, (True, 3.25), [
        2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
        1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
        2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
        6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
        0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
        -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
        3.0838856104922207635]),
    (float("inf"), (True, 5.0), [
        -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
        -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
        2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
        -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
        7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
        1.0103004648645343977, 4.8499064014085844221]),
]


def _piecewise(w: ir.Value, pieces: list[_Piece]) -> ir.Value:
    """The polynomial of the first piece whose bound w is below, evaluated as XLA does: each
    Horner step runs on the selected argument and coefficient; once the shorter pieces
    (listed last) have run out of coefficients, the step is only taken where a longer piece
    is selected."""
    t = w.type
    below = [arith.cmpf(arith.CmpFPredicate.OLT, w, scalar(t, bound)) for bound, _, _ in pieces[:-1]]

    def choose(values: Sequence[ir.Value]) -> ir.Value:
        """values[i] where piece i is selected (the last piece where no bound holds)."""
        chosen = values[-1]
        for cond, value in reversed(list(zip(below, values, strict=False))):
            chosen = arith.select(cond, value, chosen)
        return chosen

    root = math.sqrt(w)
    arg = choose([arith.subf(root if use_root else w, scalar(t, offset))
                  for _, (use_root, offset), _ in pieces])
    p = choose([scalar(t, c[0]) for _, _, c in pieces])
    for i in range(1, len(pieces[0][2])):
        coefficient = choose([scalar(t, c[i] if i < len(c) else 0.0) for _, _, c in pieces])
        step = arith.addf(coefficient, arith.mulf(p, arg))
        done = sum(i >= len(c) for _, _, c in pieces)  # the last `done` pieces have finished
        p = arith.select(below[len(pieces) - done - 1], step, p) if done else step
    return p


def _erf_inv_body(x: ir.Value) -> ir.Value:
    t = x.type
    w = arith.negf(math.log1p(arith.negf(arith.mulf(x, x))))
    p = _piecewise(w, _ERF_INV_F64 if width(t) == 64 else _ERF_INV_F32)
    at_one = arith.cmpf(arith.CmpFPredicate.OEQ, math.absf(x), scalar(t, 1.0))
    return arith.select(at_one, arith.mulf(x, scalar(t, float("inf"))), arith.mulf(p, x))


# --- nextafter -----------------------------------------------------------------------------

def _nextafter(x: ir.Value, y: ir.Value) -> ir.Value:
    t, as_int = x.type, ir.IntegerType.get_signless(width(x.type))
    xb, yb = arith.bitcast(as_int, x), arith.bitcast(as_int, y)
    sign, magnitude = scalar(as_int, 1 << (width(t) - 1)), scalar(as_int, (1 << (width(t) - 1)) - 1)
    x_abs, y_abs = arith.andi(xb, magnitude), arith.andi(yb, magnitude)
    y_sign = arith.andi(yb, sign)
    same_sign = arith.cmpi(arith.CmpIPredicate.eq, arith.andi(xb, sign), y_sign)
    away_from_zero = arith.andi(same_sign, arith.cmpi(arith.CmpIPredicate.ult, x_abs, y_abs))
    one = scalar(as_int, 1)
    step = arith.select(away_from_zero, arith.addi(xb, one), arith.subi(xb, one))
    from_zero = arith.ori(y_sign, one)  # the smallest subnormal toward y
    x_zero = arith.cmpi(arith.CmpIPredicate.eq, x_abs, scalar(as_int, 0))
    result = arith.bitcast(t, arith.select(x_zero, from_zero, step))
    result = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, y), y, result)
    return arith.select(arith.cmpf(arith.CmpFPredicate.UNO, x, y), arith.addf(x, y), result)


# --- integer pow ---------------------------------------------------------------------------

def _square_and_multiply(x: ir.Value, exponent: ir.Value, bits: int) -> ir.Value:
    """x ** exponent (wrapping) for 0 <= exponent < 2 ** bits: one scf.for step per bit."""
    index = ir.IndexType.get()
    loop = scf.ForOp(arith.constant(index, 0), arith.constant(index, bits), arith.constant(index, 1),
                     [scalar(x.type, 1), x, exponent])
    with ir.InsertionPoint(loop.body):
        acc, base, e = loop.inner_iter_args
        odd = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(e, scalar(e.type, 1)), scalar(e.type, 0))
        acc = arith.select(odd, arith.muli(acc, base), acc)
        scf.yield_([acc, arith.muli(base, base), arith.shrui(e, scalar(e.type, 1))])
    return loop.results[0]


def _pow_unsigned(x: ir.Value, y: ir.Value) -> ir.Value:
    return _square_and_multiply(x, y, width(x.type))


def _pow_int(x: ir.Value, y: ir.Value) -> ir.Value:
    """A negative exponent gives 1 for base 1, +-1 for base -1 (by parity) and 0 otherwise."""
    negative = arith.cmpi(arith.CmpIPredicate.slt, y, scalar(y.type, 0))
    power = _square_and_multiply(x, arith.select(negative, scalar(y.type, 0), y), width(x.type) - 1)
    one, minus_one, zero = scalar(x.type, 1), scalar(x.type, -1), scalar(x.type, 0)
    odd = arith.cmpi(arith.CmpIPredicate.ne, arith.andi(y, one), zero)
    unit = arith.select(arith.cmpi(arith.CmpIPredicate.eq, x, minus_one),
                        arith.select(odd, minus_one, one), zero)
    unit = arith.select(arith.cmpi(arith.CmpIPredicate.eq, x, one), one, unit)
    return arith.select(negative, unit, power)


RULES: dict[str, Rule] = {
    "erf_inv": elementwise(by_kind(in_f32(_erf_inv_body), None)),
    "nextafter": elementwise(_nextafter),
    "pow": elementwise(by_kind(in_f32(math.powf), _pow_int, unsigned_body=_pow_unsigned)),
}
