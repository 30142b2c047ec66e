"""Rules for convert (value-preserving) and bitcast_convert (same bits), one linalg.generic each.

convert follows XLA's CPU: float -> int truncates toward zero and saturates at the target's
range (NaN -> 0, negative -> 0 for unsigned targets), with fptosi / fptoui only seeing
in-range values; int -> int wraps (sign-extending signed sources, zero-extending unsigned
and boolean ones); int / f64 -> f16 / bf16 go through f32. bitcast_convert between types of
one width is arith.bitcast; to an n times narrower type each element is shifted and
truncated into a new minor dimension of size n (element 0 the lowest bits), to an n times
wider type the minor dimension's n elements are extended, shifted and or-ed together.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith, tensor
from mlir.dialects import complex as cplx

from mlax.dialect.opviews import linalg
from mlax.passes.lower_to_linalg.common import (
    Rule,
    element_type,
    elementwise,
    generic,
    is_bool,
    is_complex,
    is_float,
    is_unsigned,
    scalar,
    width,
)

_HALF = ("f16", "bf16")


def _float_to_int(x: ir.Value, t: ir.Type) -> ir.Value:
    """Truncate toward zero and saturate; NaN -> 0. fptosi / fptoui only see in-range values."""
    if width(x.type) < 32:
        x = arith.extf(ir.F32Type.get(), x)  # half types cannot hold the i32/i64 bounds
    bits, unsigned = width(t), is_unsigned(t)
    low, high = (0, 1 << bits) if unsigned else (-(1 << (bits - 1)), 1 << (bits - 1))
    lower, upper = scalar(x.type, float(low)), scalar(x.type, float(high))
    too_low = arith.cmpf(arith.CmpFPredicate.OLT, x, lower)
    too_high = arith.cmpf(arith.CmpFPredicate.OGE, x, upper)
    in_range = arith.andi(arith.cmpf(arith.CmpFPredicate.OGE, x, lower),
                          arith.cmpf(arith.CmpFPredicate.OLT, x, upper))  # false for NaN
    safe = arith.select(in_range, x, scalar(x.type, 0.0))
    value = arith.fptoui(t, safe) if unsigned else arith.fptosi(t, safe)
    value = arith.select(too_high, scalar(t, high - 1), value)
    return arith.select(too_low, scalar(t, low), value)


def _float_to_float(x: ir.Value, t: ir.Type) -> ir.Value:
    f32 = ir.F32Type.get()
    if str(t) in _HALF and x.type != f32 and str(x.type) not in _HALF:
        x = arith.truncf(f32, x)  # f64 -> half goes through f32, as XLA's CPU
    elif str(t) in _HALF and str(x.type) in _HALF:
        x = arith.extf(f32, x)
    if width(t) == width(x.type):
        return x
    return arith.extf(t, x) if width(t) > width(x.type) else arith.truncf(t, x)


def _int_to_float(x: ir.Value, t: ir.Type) -> ir.Value:
    convert = arith.uitofp if is_bool(x.type) or is_unsigned(x.type) else arith.sitofp
    if str(t) in _HALF:
        return arith.truncf(t, convert(ir.F32Type.get(), x))  # int -> half goes through f32
    return convert(t, x)


def _int_to_int(x: ir.Value, t: ir.Type) -> ir.Value:
    """Same width keeps the bits (uiN and iN meet as iN after the pass); else wrap or extend."""
    if width(t) == width(x.type):
        return x
    if width(t) < width(x.type):
        return arith.trunci(t, x)
    return arith.extui(t, x) if is_bool(x.type) or is_unsigned(x.type) else arith.extsi(t, x)


def _to_bool(x: ir.Value, t: ir.Type) -> ir.Value:
    if is_float(x.type):
        return arith.cmpf(arith.CmpFPredicate.UNE, x, scalar(x.type, 0.0))  # NaN -> true
    return arith.cmpi(arith.CmpIPredicate.ne, x, scalar(x.type, 0))


_CONVERSIONS: dict[tuple[bool, bool], Callable[[ir.Value, ir.Type], ir.Value]] = {
    (True, True): _float_to_float, (True, False): _float_to_int,
    (False, True): _int_to_float, (False, False): _int_to_int}


def _complex_convert(x: ir.Value, target: ir.Type) -> ir.Value:
    """Conversions that involve a complex type, as JAX's: a complex -> real conversion converts
    the real part (to bool: x != 0), real -> complex has imaginary part 0, and complex ->
    complex converts both parts."""
    if is_complex(target):
        part = ir.ComplexType(target).element_type
        if is_complex(x.type):
            real, imag = cplx.re(x), cplx.im(x)
            return cplx.create_(target, convert_scalar(real, part), convert_scalar(imag, part))
        return cplx.create_(target, convert_scalar(x, part), scalar(part, 0.0))
    if is_bool(target):
        return cplx.neq(x, scalar(x.type, 0))
    return convert_scalar(cplx.re(x), target)


def convert_scalar(x: ir.Value, target: ir.Type) -> ir.Value:
    """Scalar ``x`` converted to ``target`` with XLA's semantics (the body of ``convert``)."""
    if x.type == target:
        return x
    if is_complex(x.type) or is_complex(target):
        return _complex_convert(x, target)
    if is_bool(target):
        return _to_bool(x, target)
    return _CONVERSIONS[is_float(x.type), is_float(target)](x, target)


def _convert(op: ir.Operation) -> ir.Value:
    target = element_type(op.results[0])
    return elementwise(lambda x: convert_scalar(x, target))(op)


# --- bitcast_convert ---------------------------------------------------------------------

def _bits(x: ir.Value) -> ir.Value:
    """The integer with ``x``'s bits (``x`` itself for integers)."""
    return arith.bitcast(ir.IntegerType.get_signless(width(x.type)), x) if is_float(x.type) else x


def _from_bits(bits: ir.Value, t: ir.Type) -> ir.Value:
    return arith.bitcast(t, bits) if is_float(t) else bits


def _int_of(t: ir.Type) -> ir.Type:
    return ir.IntegerType.get_signless(width(t)) if is_float(t) else t


def _narrower(operand: ir.Value, result: ir.RankedTensorType) -> ir.Value:
    """Result element [..., j] is bits j * w ... j * w + w - 1 of operand element [...]."""
    target, rank = result.element_type, result.rank
    operand_map = ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in range(rank - 1)])

    def body(x: ir.Value) -> ir.Value:
        bits = _bits(x)
        j = arith.index_cast(bits.type, linalg.IndexOp(rank - 1).result)
        shifted = arith.shrui(bits, arith.muli(j, scalar(bits.type, width(target))))
        return _from_bits(arith.trunci(_int_of(target), shifted), target)

    return generic([operand], result, body, maps=[operand_map])


def _wider(operand: ir.Value, result: ir.RankedTensorType) -> ir.Value:
    """Result element [...] or-s operand elements [..., j] shifted left by j * their width."""
    target = result.element_type
    source = element_type(operand)
    count = ir.RankedTensorType(operand.type).shape[-1]

    def body() -> ir.Value:
        index = ir.IndexType.get()
        at = [linalg.IndexOp(d).result for d in range(result.rank)]
        acc = None
        for j in range(count):
            element = tensor.extract(operand, [*at, arith.constant(index, j)])
            part = arith.extui(_int_of(target), _bits(element))
            if j:
                part = arith.shli(part, scalar(part.type, j * width(source)))
            acc = part if acc is None else arith.ori(acc, part)
        return _from_bits(acc, target)

    return generic([], result, body)


def _bitcast_convert(op: ir.Operation) -> ir.Value:
    (operand,) = op.operands
    result = ir.RankedTensorType(op.results[0].type)
    source, target = element_type(operand), result.element_type
    if source == target:  # the only bitcast of complex (and i1) values
        return operand
    if width(source) > width(target):
        return _narrower(operand, result)
    if width(source) < width(target):
        return _wider(operand, result)
    if is_float(source) or is_float(target):
        return generic([operand], result, lambda x: arith.bitcast(target, x))
    return generic([operand], result, lambda x: x)  # iN <-> uiN: the same iN after the pass


RULES: dict[str, Rule] = {"convert": _convert, "bitcast_convert": _bitcast_convert}
