"""`mlax-approximate-math`: f32/f64 `math` functions as branch-free `arith` polynomials.

The CPU pipeline lowers `math.exp` & co. to scalar libm calls, which stop LLVM from
vectorizing the loops of an elementwise `linalg.generic`. This pass replaces `math.exp`,
`math.expm1`, `math.log`, `math.log1p`, `math.tanh` (f32 and f64) and `math.erf` (f32 only)
on scalars, vectors or tensors by straight-line `arith` code: multiplies, adds, at most one
division, integer ops on the bits for powers of two and exponents, and `arith.select` for
the special cases. Every branch is computed and the right one selected, so the code
vectorizes. No `math.fma`: without FMA hardware it would be a libm call again.

Algorithms (polynomial coefficients are Taylor's, or fitted for this pass in float64 by least
squares on Chebyshev nodes reweighted towards minimax (Lawson), then rounded to f32):

- exp / expm1: ``x = n ln2 + r`` with ``|r| <= ln2/2`` (Cody-Waite: ln2 split in a high
  part with trailing zero bits, so ``n * LN2_HI`` is exact), ``expm1(r) = r + r^2 P(r)``
  (Taylor), then ``exp = (1 + q) 2^n`` and ``expm1 = (q + (1 - 2^-n)) 2^n`` (for n = 1,
  ``((r + 1/2) + r^2 P(r)) 2``, which does not cancel); 2^n is applied in two halves so that
  results near overflow and in the subnormal range round once.
- log: ``x = 2^k m`` with ``m`` in [sqrt(1/2), sqrt(2)) (subnormals scaled up first),
  ``f = m - 1``, ``s = f / (2 + f)`` and ``log(1 + f) = f - (hfsq - s (hfsq + R(s^2)))`` with
  ``hfsq = f^2/2`` and R the atanh series, plus ``k ln2`` in two parts.
- log1p: ``u = 1 + x`` rounded, ``log1p(x) = log(u) + c / u`` where ``c`` is the exact rounding
  error of ``1 + x`` (Fast2Sum).
- tanh, f32: ``x + x^3 P(x^2)`` (fitted) for ``|x| < 0.625``, else ``1 - 2 / (exp(2|x|) + 1)``;
  f64: ``expm1(2|x|) / (expm1(2|x|) + 2)``. |x| is clamped where tanh rounds to 1.
- erf (f32): ``x + x Q(x^2)`` for ``|x| < 1``, else ``1 - exp(-x^2) C(|x| - 2.5)`` with C
  fitted to ``erfc(x) exp(x^2)`` on [1, 4]; |x| is clamped to 4, where erf rounds to 1.

Other element types (f16, bf16, and f64 erf) are left alone. One rule per op name in RULES.
"""

from __future__ import annotations

import math as pymath
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import nested_ops

INF = float("inf")
LOG2E = 1.4426950408889634


def _taylor_expm1(degree: int) -> tuple[float, ...]:
    """P with expm1(r) = r + r^2 P(r) to ``degree``: 1/2!, 1/3!, ..., 1/degree!."""
    return tuple(1.0 / pymath.factorial(k) for k in range(2, degree + 1))


def _atanh_series(terms: int) -> tuple[float, ...]:
    """R(z) / z with 2 atanh(s) = 2s + s R(s^2): 2/3, 2/5, 2/7, ..."""
    return tuple(2.0 / (2 * j + 1) for j in range(1, terms + 1))


@dataclass(frozen=True)
class Format:
    """The constants of one float format; truncation errors are below 0.1 ulp."""

    width: int  # of the float and of its integer twin
    mantissa: int  # explicit mantissa bits
    ln2_hi: float  # ln 2 with enough trailing zero bits that n * ln2_hi is exact for every n used
    ln2_lo: float  # ln 2 - ln2_hi
    exp_range: tuple[float, float]  # exp is 0 below and inf above (clamping keeps that)
    expm1_low: float  # expm1 rounds to -1 below this
    expm1_p: tuple[float, ...]  # for |r| <= ln2/2
    log_r: tuple[float, ...]  # for z = s^2 <= 0.0295
    tanh_one: float  # tanh rounds to 1 above this

    @property
    def bias(self) -> int:
        return (1 << (self.width - self.mantissa - 2)) - 1

    @property
    def round_magic(self) -> float:
        """1.5 * 2^mantissa: (y + M) - M rounds |y| < 2^(mantissa - 1) to an integer."""
        return 1.5 * 2.0 ** self.mantissa

    @property
    def sqrt_half_bits(self) -> int:
        """The bits of sqrt(1/2) rounded to this format."""
        packed = struct.pack("<f" if self.width == 32 else "<d", pymath.sqrt(0.5))
        return int.from_bytes(packed, "little")


F32 = Format(width=32, mantissa=23, ln2_hi=0.693145751953125, ln2_lo=1.4286068e-06,
             exp_range=(-104.0, 89.0), expm1_low=-18.0, expm1_p=_taylor_expm1(7),
             log_r=_atanh_series(4), tanh_one=10.0)
F64 = Format(width=64, mantissa=52, ln2_hi=6.93147180369123816490e-01,
             ln2_lo=1.90821492927058770002e-10, exp_range=(-746.0, 710.0), expm1_low=-38.0,
             expm1_p=_taylor_expm1(14), log_r=_atanh_series(10), tanh_one=20.0)

# f32 tanh(x) = x + x^3 P(x^2) on [0, 0.625]: relative error 1.6e-10.
TANH_P = (-0.3333333, 0.13333206, -0.053946763, 0.021700703, -0.008177398, 0.0021429614)
TANH_SMALL = 0.625
# f32 erf(x) = x + x Q(x^2) on [0, 1]: relative error 1.2e-9.
ERF_Q = (0.12837917, -0.37612626, 0.112835854, -0.026853817, 0.0051883343, -0.00080102455,
         7.8540186e-05)
# f32 erfc(x) exp(x^2) = C(x - 2.5) on [1, 4]: absolute error of erfc(x) 4.5e-10.
ERFC_C = (0.21080634, -0.07434938, 0.024929535, -0.008000191, 0.0025207081, -0.00064916705,
          0.00022366885, -0.00013621173, -5.7781403e-05, -2.7994702e-05)
ERF_SMALL = 1.0
ERF_ONE = 4.0  # erf rounds to 1.0 in f32 above 3.92


def _element_type(t: ir.Type) -> ir.Type:
    return ir.ShapedType(t).element_type if isinstance(t, ir.ShapedType) else t


def format_of(t: ir.Type) -> Format | None:
    """The format of a float type the pass handles: scalars, vectors, and tensors of static shape
    (splat constants need one); None for any other."""
    if isinstance(t, ir.ShapedType) and not ir.ShapedType(t).has_static_shape:
        return None
    element = _element_type(t)
    return F32 if isinstance(element, ir.F32Type) else F64 if isinstance(element, ir.F64Type) else None


class Emitter:
    """arith ops on one float type (scalar, vector or tensor of f32 or f64) and its integer
    twin, at the current insertion point; constants are splats of the operand's shape."""

    def __init__(self, ftype: ir.Type) -> None:
        fmt = format_of(ftype)
        if fmt is None:
            raise ValueError(f"no approximation for values of type {ftype}")
        self.fmt = fmt
        self.f = ftype
        self.scalar_f = _element_type(ftype)
        self.scalar_i = ir.IntegerType.get_signless(fmt.width)
        if isinstance(ftype, ir.VectorType):
            self.i = ir.VectorType.get(ftype.shape, self.scalar_i, scalable=ftype.scalable_dims)
        elif isinstance(ftype, ir.RankedTensorType):
            self.i = ir.RankedTensorType.get(ftype.shape, self.scalar_i)
        else:
            self.i = self.scalar_i
        self.constants: dict[tuple[str, str], ir.Value] = {}

    def _const(self, t: ir.Type, attr: ir.Attribute, key: tuple[str, str]) -> ir.Value:
        """One constant op per value: the first use is at the rewritten op, which every later
        use follows."""
        if key not in self.constants:
            if isinstance(t, ir.ShapedType):
                attr = ir.DenseElementsAttr.get_splat(t, attr)
            self.constants[key] = arith.constant(t, attr)
        return self.constants[key]

    def fconst(self, value: float) -> ir.Value:
        return self._const(self.f, ir.FloatAttr.get(self.scalar_f, value), ("f", value.hex()))

    def iconst(self, value: int) -> ir.Value:
        return self._const(self.i, ir.IntegerAttr.get(self.scalar_i, value), ("i", str(value)))

    def add(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.addf(a, b)

    def sub(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.subf(a, b)

    def mul(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.mulf(a, b)

    def div(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.divf(a, b)

    def cmp(self, predicate: str, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.cmpf(getattr(arith.CmpFPredicate, predicate.upper()), a, b)

    def select(self, cond: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
        return arith.select(cond, a, b)

    def bits(self, x: ir.Value) -> ir.Value:
        return arith.bitcast(self.i, x)

    def from_bits(self, i: ir.Value) -> ir.Value:
        return arith.bitcast(self.f, i)

    def poly(self, coefficients: Sequence[float], x: ir.Value) -> ir.Value:
        """sum c_k x^k by Horner's rule."""
        acc = self.fconst(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            acc = self.add(self.mul(acc, x), self.fconst(c))
        return acc

    def clamp(self, x: ir.Value, lo: float, hi: float) -> ir.Value:
        """x limited to [lo, hi]; NaN becomes ``hi`` (callers select NaN back at the end), so no
        NaN reaches an integer conversion."""
        x = self.select(self.cmp("olt", x, self.fconst(hi)), x, self.fconst(hi))
        return self.select(self.cmp("ogt", x, self.fconst(lo)), x, self.fconst(lo))

    def abs(self, x: ir.Value) -> ir.Value:
        return self.from_bits(arith.andi(self.bits(x), self.iconst((1 << (self.fmt.width - 1)) - 1)))

    def copysign(self, magnitude: ir.Value, sign: ir.Value) -> ir.Value:
        """``magnitude`` (sign bit clear) with the sign bit of ``sign``."""
        sign_bit = arith.andi(self.bits(sign), self.iconst(-(1 << (self.fmt.width - 1))))
        return self.from_bits(arith.ori(self.bits(magnitude), sign_bit))

    def pow2(self, k: ir.Value) -> ir.Value:
        """2^k for an integer ``k`` in the normal exponent range, built from its exponent bits."""
        biased = arith.addi(k, self.iconst(self.fmt.bias))
        return self.from_bits(arith.shli(biased, self.iconst(self.fmt.mantissa)))

    def scale(self, x: ir.Value, n: ir.Value) -> ir.Value:
        """x * 2^n for n up to twice the exponent range, as two exact-range multiplies: one
        rounding at the end, also for results that overflow or are subnormal."""
        half = arith.shrsi(n, self.iconst(1))
        return self.mul(self.mul(x, self.pow2(half)), self.pow2(arith.subi(n, half)))

    def nan_passes(self, x: ir.Value, result: ir.Value) -> ir.Value:
        """``result``, except x itself where x is NaN."""
        return self.select(self.cmp("uno", x, x), x, result)


def reduce_exp(e: Emitter, x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """(n, r, t) with exp(x) = 2^n (1 + r + t), |r| <= ln2/2 and t = r^2 P(r), for finite x in the
    format's exp range (n an integer)."""
    fmt = e.fmt
    n = e.sub(e.add(e.mul(x, e.fconst(LOG2E)), e.fconst(fmt.round_magic)), e.fconst(fmt.round_magic))
    r = e.sub(e.sub(x, e.mul(n, e.fconst(fmt.ln2_hi))), e.mul(n, e.fconst(fmt.ln2_lo)))
    return arith.fptosi(e.i, n), r, e.mul(e.mul(r, r), e.poly(fmt.expm1_p, r))


def exp_core(e: Emitter, x: ir.Value) -> ir.Value:
    """exp(x) for finite x in the format's exp range (0 and inf at the ends)."""
    n, r, t = reduce_exp(e, x)
    return e.scale(e.add(e.fconst(1.0), e.add(r, t)), n)


def exp(e: Emitter, x: ir.Value) -> ir.Value:
    return e.nan_passes(x, exp_core(e, e.clamp(x, *e.fmt.exp_range)))


def expm1_core(e: Emitter, x: ir.Value) -> ir.Value:
    """expm1(x) for x that is not NaN; -0.0 gives +0.0.

    (r + t + (1 - 2^-n)) 2^n: 1 - 2^-n is exact for small |n| and rounds to 1 for large n, where it
    no longer matters. For n = 1, where r + 1/2 cancels, r + 1/2 is added first (exactly)."""
    n, r, t = reduce_exp(e, e.clamp(x, e.fmt.expm1_low, e.fmt.exp_range[1]))
    neg_n = arith.subi(e.iconst(0), arith.minsi(n, e.iconst(e.fmt.bias - 1)))
    general = e.add(e.add(r, t), e.sub(e.fconst(1.0), e.pow2(neg_n)))
    one = arith.cmpi(arith.CmpIPredicate.eq, n, e.iconst(1))
    return e.scale(e.select(one, e.add(e.add(r, e.fconst(0.5)), t), general), n)


def expm1(e: Emitter, x: ir.Value) -> ir.Value:
    y = expm1_core(e, x)
    y = e.select(e.cmp("oeq", x, e.fconst(0.0)), x, y)  # keeps -0.0
    return e.nan_passes(x, y)


def log_core(e: Emitter, x: ir.Value) -> ir.Value:
    """log(x) for finite x > 0 (other inputs give unspecified values)."""
    fmt = e.fmt
    subnormal = e.cmp("olt", x, e.fconst(2.0 ** (1 - fmt.bias)))
    x = e.select(subnormal, e.mul(x, e.fconst(2.0 ** (fmt.mantissa + 1))), x)
    # Adding bits(1) - bits(sqrt(1/2)) carries into the exponent field exactly when the mantissa
    # is >= sqrt(2); the mantissa field rebased at bits(sqrt(1/2)) is m in [sqrt(1/2), sqrt(2)).
    one_bits = fmt.bias << fmt.mantissa
    bits = arith.addi(e.bits(x), e.iconst(one_bits - fmt.sqrt_half_bits))
    k = arith.subi(arith.shrsi(bits, e.iconst(fmt.mantissa)), e.iconst(fmt.bias))
    k = arith.subi(k, arith.select(subnormal, e.iconst(fmt.mantissa + 1), e.iconst(0)))
    mantissa = arith.andi(bits, e.iconst((1 << fmt.mantissa) - 1))
    m = e.from_bits(arith.addi(mantissa, e.iconst(fmt.sqrt_half_bits)))
    f = e.sub(m, e.fconst(1.0))  # exact (Sterbenz)
    s = e.div(f, e.add(e.fconst(2.0), f))
    z = e.mul(s, s)
    r = e.mul(z, e.poly(fmt.log_r, z))
    hfsq = e.mul(e.fconst(0.5), e.mul(f, f))
    kf = arith.sitofp(e.f, k)
    tail = e.add(e.mul(s, e.add(hfsq, r)), e.mul(kf, e.fconst(fmt.ln2_lo)))
    return e.sub(e.mul(kf, e.fconst(fmt.ln2_hi)), e.sub(e.sub(hfsq, tail), f))


def log_special(e: Emitter, x: ir.Value, y: ir.Value) -> ir.Value:
    """log's answers at the edges: +inf -> +inf, +-0 -> -inf, x < 0 or NaN -> NaN."""
    y = e.select(e.cmp("oeq", x, e.fconst(INF)), x, y)
    y = e.select(e.cmp("oeq", x, e.fconst(0.0)), e.fconst(-INF), y)
    return e.select(e.cmp("ult", x, e.fconst(0.0)), e.fconst(float("nan")), y)


def log(e: Emitter, x: ir.Value) -> ir.Value:
    return log_special(e, x, log_core(e, x))


def log1p(e: Emitter, x: ir.Value) -> ir.Value:
    u = e.add(e.fconst(1.0), x)
    # Fast2Sum: the exact error of the rounded 1 + x, ordering the operands by magnitude.
    big = e.sub(e.fconst(1.0), e.sub(u, x))
    small = e.sub(x, e.sub(u, e.fconst(1.0)))
    c = e.select(e.cmp("ogt", x, e.fconst(1.0)), big, small)
    y = e.add(log_core(e, u), e.div(c, u))
    y = e.select(e.cmp("oeq", u, e.fconst(1.0)), x, y)  # tiny x and -0.0
    return log_special(e, u, y)


def tanh(e: Emitter, x: ir.Value) -> ir.Value:
    a = e.abs(x)
    twice = e.mul(e.fconst(2.0), e.clamp(a, 0.0, e.fmt.tanh_one))
    if e.fmt is F64:
        em = expm1_core(e, twice)
        y = e.div(em, e.add(em, e.fconst(2.0)))
    else:
        a2 = e.mul(a, a)
        small = e.add(a, e.mul(e.mul(a, a2), e.poly(TANH_P, a2)))
        big = e.sub(e.fconst(1.0), e.div(e.fconst(2.0), e.add(exp_core(e, twice), e.fconst(1.0))))
        y = e.select(e.cmp("olt", a, e.fconst(TANH_SMALL)), small, big)
    return e.nan_passes(x, e.copysign(y, x))


def erf(e: Emitter, x: ir.Value) -> ir.Value:
    a = e.clamp(e.abs(x), 0.0, ERF_ONE)
    a2 = e.mul(a, a)
    small = e.add(a, e.mul(a, e.poly(ERF_Q, a2)))
    erfc = e.mul(exp_core(e, e.sub(e.fconst(0.0), a2)), e.poly(ERFC_C, e.sub(a, e.fconst(2.5))))
    y = e.select(e.cmp("olt", a, e.fconst(ERF_SMALL)), small, e.sub(e.fconst(1.0), erfc))
    return e.nan_passes(x, e.copysign(y, x))


@dataclass(frozen=True)
class Rule:
    emit: Callable[[Emitter, ir.Value], ir.Value]
    formats: tuple[Format, ...] = (F32, F64)


# One rule per math op: the replacement's builder and the formats it is accurate for.
RULES: dict[str, Rule] = {
    "math.exp": Rule(exp), "math.expm1": Rule(expm1), "math.log": Rule(log),
    "math.log1p": Rule(log1p), "math.tanh": Rule(tanh), "math.erf": Rule(erf, (F32,)),
}


@register_pass
@dataclass
class ApproximateMath(ModulePass):
    """Replace f32/f64 exp/expm1/log/log1p/tanh and f32 erf by arith polynomial approximations."""

    argument = "mlax-approximate-math"
    sees_mlax_ops = False
    summary = "rewrite f32/f64 math.exp/expm1/log/log1p/tanh and f32 math.erf into arith polynomials"

    def run(self, module: ir.Operation) -> None:
        with module.context:
            for op in nested_ops(module):
                rule = RULES.get(op.name)
                if rule is None or format_of(op.results[0].type) not in rule.formats:
                    continue
                with ir.InsertionPoint(op), op.location:
                    value = rule.emit(Emitter(op.results[0].type), op.operands[0])
                op.results[0].replace_all_uses_with(value)
                op.erase()
