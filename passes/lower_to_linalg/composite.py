"""Rules for the elementwise ops that take several steps: erf_inv, nextafter and pow.

erf_inv is XLA's: Giles' polynomials in w = -log1p(-x*x) (dialect/erf_inv.py, shared with the
reference) in single precision with fused multiply-adds for f32 (f16/bf16 compute in f32) and
double precision for f64, then erf_inv(+-1) = +-inf. nextafter steps the bit pattern:
+1 moves away from zero, -1 toward it, zero steps to the smallest subnormal of y's sign,
x == y gives y, NaN gives NaN. Integer pow is square-and-multiply over the exponent's bits
in an scf.for (wrapping), with XLA's answers for negative exponents. Complex pow is complex.pow.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import arith, math, scf
from mlir.dialects import complex as cplx

from mlax.dialect.erf_inv import ERF_INV_F32, ERF_INV_F64, Piece
from mlax.passes.lower_to_linalg.common import Rule, elementwise, in_f32, scalar, width
from mlax.passes.lower_to_linalg.elementwise import by_kind

# --- erf_inv -------------------------------------------------------------------------------

def _piecewise(w: ir.Value, pieces: list[Piece]) -> ir.Value:
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
        fused = width(t) == 32  # XLA fuses the f32 steps
        step = math.fma(p, arg, coefficient) if fused else arith.addf(coefficient, arith.mulf(p, arg))
        done = sum(i >= len(c) for _, _, c in pieces)  # the last `done` pieces have finished
        p = arith.select(below[len(pieces) - done - 1], step, p) if done else step
    return p


def _erf_inv_body(x: ir.Value) -> ir.Value:
    t = x.type
    w = arith.negf(math.log1p(arith.negf(arith.mulf(x, x))))
    p = _piecewise(w, ERF_INV_F64 if width(t) == 64 else ERF_INV_F32)
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
    "pow": elementwise(by_kind(in_f32(math.powf), _pow_int, unsigned_body=_pow_unsigned,
                               complex_body=cplx.pow)),
}
