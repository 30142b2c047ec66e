"""mlax.numpy integer and float-representation functions: gcd, lcm (Euclid's algorithm in a
while loop), frexp, ldexp and spacing (through the bits of the float), as jax.numpy; the
bessel function i0 is in mlax.numpy.bessel.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax
from mlax.custom_derivatives import custom_jvp
from mlax.numpy import elementwise as ew
from mlax.numpy import math_extra as mx
from mlax.numpy.manipulation import broadcast_arrays
from mlax.numpy.reductions import any as any_
from mlax.numpy.util import asarray, check_arraylike, const_like, promote_args_inexact, promote_dtypes

__all__ = ["frexp", "gcd", "lcm", "ldexp", "spacing"]


def _integer_operands(fname: str, x1: Any, x2: Any) -> tuple[Any, Any]:
    check_arraylike(fname, x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    if not front_dtypes.issubdtype(x1.dtype, np.integer):
        raise ValueError(f"Arguments to mlax.numpy.{fname} must be integers.")
    return ew.absolute(x1), ew.absolute(x2)


def _euclid_step(pair: tuple[Any, Any]) -> tuple[Any, Any]:
    """``(a, b) -> (b, a mod b)`` where ``b != 0``, kept ordered larger first."""
    a, b = pair
    nonzero = ew.not_equal(b, 0)
    a, b = mx.where(nonzero, b, a), mx.where(nonzero, lax.rem(a, mx.where(nonzero, b, 1)), const_like(b, 0))
    swap = ew.less(a, b)
    return mx.where(swap, b, a), mx.where(swap, a, b)


def gcd(x1: Any, x2: Any) -> Any:
    """``jnp.gcd``: the greatest common divisor of ``|x1|`` and ``|x2|`` (0 for two zeros)."""
    pair = tuple(broadcast_arrays(*_integer_operands("gcd", x1, x2)))
    out, _ = lax.while_loop(lambda p: any_(ew.not_equal(p[1], 0)), _euclid_step, pair)
    return out


def lcm(x1: Any, x2: Any) -> Any:
    """``jnp.lcm``: the least common multiple of ``|x1|`` and ``|x2|`` (0 if either is 0)."""
    x1, x2 = _integer_operands("lcm", x1, x2)
    d = gcd(x1, x2)
    is_zero = ew.equal(d, 0)
    return mx.where(is_zero, const_like(d, 0), ew.multiply(x1, ew.floor_divide(x2, mx.where(is_zero, 1, d))))


_BITS_INT = {16: np.int16, 32: np.int32, 64: np.int64}


def _float_bits(x: Any) -> tuple[Any, Any, Any]:
    """``x``'s bits as a signed integer, subnormals first scaled by ``2**nmant`` into the normal
    range, with the exponent correction that undoes it, and ``x``'s finfo."""
    info = ml_dtypes.finfo(x.dtype)
    int_type = _BITS_INT[info.bits]
    tiny = ew.less(lax.abs(x), const_like(x, info.tiny, "never"))
    scaled = mx.where(tiny, lax.mul(x, const_like(x, 1 << info.nmant)), x)
    shift = mx.where(tiny, asarray(np.array(-info.nmant, int_type)), asarray(np.array(0, int_type)))
    return lax.bitcast_convert_type(scaled, int_type), shift, info


def _frexp_primal(x: Any) -> tuple[Any, Any]:
    bits, exponent, info = _float_bits(x)
    mask = (1 << info.nexp) - 1
    bias = 1 - info.minexp
    int_const = lambda v: const_like(bits, v, "never")  # noqa: E731
    field = lax.bitwise_and(lax.shift_right_arithmetic(bits, int_const(info.nmant)), int_const(mask))
    exponent = ew.add(exponent, ew.add(ew.subtract(field, int_const(bias)), int_const(1)))
    bits = lax.bitwise_and(bits, int_const(~(mask << info.nmant)))
    bits = lax.bitwise_or(bits, int_const((bias - 1) << info.nmant))
    special = ew.logical_or(ew.logical_or(mx.isinf(x), mx.isnan(x)), ew.equal(x, 0))
    exponent = mx.where(special, const_like(exponent, 0), exponent)
    mantissa = mx.where(special, x, lax.bitcast_convert_type(bits, x.dtype))
    return mantissa, lax.convert_element_type(exponent, np.int32)


def _frexp_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    """The mantissa's tangent is ``t * 2**-e`` (e held fixed); the exponent's is zero (mlax's rules
    give integer outputs integer zero tangents where jax uses float0)."""
    (x,), (t,) = primals, tangents
    m, e = _frexp(x)
    m_dot = ew.multiply(t, ew.exp2(ew.negative(mx.astype(e, t.dtype))))
    return (m, e), (m_dot, const_like(e, 0, "never"))


_frexp = custom_jvp(_frexp_primal)
_frexp.defjvp(_frexp_jvp)


def frexp(x: Any, /) -> tuple[Any, Any]:
    """``jnp.frexp``: mantissa in [0.5, 1) (with ``x``'s sign) and int32 exponent, ``x = m * 2**e``;
    zeros, infinities and NaN give ``(x, 0)``. Differentiable in the mantissa, as in jax."""
    check_arraylike("frexp", x)
    (x,) = promote_args_inexact("frexp", x)
    return _frexp(x)


def ldexp(x1: Any, x2: Any, /) -> Any:
    """``jnp.ldexp``: ``x1 * 2**x2`` for integer ``x2``, built from frexp so that results in the
    subnormal range and near overflow come out as jnp's."""
    check_arraylike("ldexp", x1, x2)
    x1, x2 = asarray(x1), asarray(x2)
    if front_dtypes.issubdtype(x2.dtype, np.inexact):
        raise ValueError(f"ldexp not supported for input types {(x1.dtype, x2.dtype)}")
    (x1,) = promote_args_inexact("ldexp", x1)
    x2 = lax.convert_element_type(x2, x1.dtype)
    m, e = frexp(x1)
    e = mx.astype(ew.add(mx.astype(e, x2.dtype), x2), x1.dtype)
    positive = ew.greater(e, 0)
    m = mx.where(positive, ew.multiply(m, 2), m)
    e = mx.where(positive, ew.subtract(e, 1), e)
    x = ew.multiply(m, ew.power(2, mx.astype(e, m.dtype)))
    return mx.where(ew.logical_or(mx.isinf(x1), ew.equal(x1, 0)), x1, x)


def spacing(x: Any, /) -> Any:
    """``jnp.spacing``: the distance from ``x`` to the next float away from zero (toward +inf for
    float16, as jnp)."""
    (x,) = promote_args_inexact("spacing", x)
    inf = const_like(x, np.inf)
    if x.dtype == np.float16:
        return ew.subtract(lax.nextafter(x, inf), x)
    out = ew.subtract(lax.nextafter(x, mx.copysign(inf, x)), x)
    smallest = ml_dtypes.finfo(x.dtype).smallest_subnormal
    return mx.where(ew.equal(out, 0), mx.copysign(smallest, x), out)
