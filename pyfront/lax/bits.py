"""mlax.lax clz and reduce_precision: bit manipulations that XLA itself expands into integer
ops, written here with the same ops (bitcast_convert_type, shifts, masks, popcount) instead
of new primitives. Both are elementwise, so batching follows from the ops they are made of;
reduce_precision is linear for jax (its tangent is rounded too), which a custom_jvp keeps:
through the integer ops its derivative would be zero.
"""

from __future__ import annotations

import operator
from typing import Any

import ml_dtypes
import numpy as np

from mlax.custom_derivatives import custom_jvp
from mlax.dialect import dtypes as ir_dtypes
from mlax.lax import elementwise as ew
from mlax.lax.common import operand as as_operand
from mlax.source_info import where


def clz(x: Any) -> Any:
    """Elementwise number of leading zero bits (integer dtypes; the bit width for 0)."""
    x = as_operand(x)
    if not ir_dtypes.is_int(x.dtype):
        raise TypeError(f"mlax.lax.clz: x must have an integer dtype, got {x.dtype}{where()}")
    bits = 8 * x.dtype.itemsize
    # Set every bit below the highest set one; the zeros left are the leading zeros.
    smeared, shift = x, 1
    while shift < bits:
        smeared = ew.bitwise_or(smeared, ew.shift_right_logical(smeared, np.array(shift, x.dtype)))
        shift *= 2
    return ew.sub(np.array(bits, x.dtype), ew.population_count(smeared))


def _rounded_bits(x: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """XLA's ReducePrecision expansion: round the mantissa to nearest even, then flush
    exponents out of the narrow range to zero or infinity, keeping the sign; NaNs stay."""
    info = ml_dtypes.finfo(x.dtype)
    width, src_mantissa, src_exponent = info.bits, info.nmant, info.nexp
    uint = np.dtype(f"uint{width}")
    const = lambda v: np.array(v, uint)  # noqa: E731
    bits = ew.bitcast_convert_type(x, uint)
    if mantissa_bits < src_mantissa:
        dropped = src_mantissa - mantissa_bits
        last_kept = 1 << dropped
        # Adding half an ulp minus one, plus the last kept bit, rounds to nearest with ties to even.
        last_bit = ew.shift_right_logical(ew.bitwise_and(bits, const(last_kept)), const(dropped))
        bias = ew.add(last_bit, const((last_kept >> 1) - 1))
        bits = ew.bitwise_and(ew.add(bits, bias), const(~(last_kept - 1) & ((1 << width) - 1)))
    if exponent_bits < src_exponent:
        sign_mask = const(1 << (width - 1))
        exponent_mask = ((1 << src_exponent) - 1) << src_mantissa
        bias, narrow_bias = (1 << (src_exponent - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        exponent = ew.bitwise_and(bits, const(exponent_mask))
        overflows = ew.gt(exponent, const((bias + narrow_bias) << src_mantissa))
        underflows = ew.le(exponent, const((bias - narrow_bias) << src_mantissa))
        signed_zero = ew.bitwise_and(bits, sign_mask)
        signed_inf = ew.bitwise_or(signed_zero, const(exponent_mask))
        bits = ew.select(overflows, signed_inf, ew.select(underflows, signed_zero, bits))
    return ew.select(ew.ne(x, x), x, ew.bitcast_convert_type(bits, x.dtype))  # NaNs stay as they are


_reduce_precision = custom_jvp(_rounded_bits, nondiff_argnums=(1, 2))


@_reduce_precision.defjvp
def _reduce_precision_jvp(exponent_bits: int, mantissa_bits: int, primals: Any, tangents: Any) -> Any:
    """Linear, as jax: the tangent is rounded as the value is."""
    (x,), (t,) = primals, tangents
    return tuple(_reduce_precision(v, exponent_bits, mantissa_bits) for v in (x, t))


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """``operand`` rounded to the float format with ``exponent_bits`` and ``mantissa_bits``
    (to nearest, ties to even; overflow to inf, underflow to zero), in its own dtype."""
    exponent_bits, mantissa_bits = operator.index(exponent_bits), operator.index(mantissa_bits)
    x = as_operand(operand)
    if not ir_dtypes.is_float(x.dtype):
        raise TypeError(f"mlax.lax.reduce_precision: operand must be a float, got {x.dtype}{where()}")
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"mlax.lax.reduce_precision: needs exponent_bits >= 1 and mantissa_bits >= 0, got "
                         f"{exponent_bits} and {mantissa_bits}{where()}")
    info = ml_dtypes.finfo(x.dtype)
    if exponent_bits >= info.nexp and mantissa_bits >= info.nmant:
        return x
    return _reduce_precision(x, exponent_bits, mantissa_bits)


__all__ = ["clz", "reduce_precision"]
