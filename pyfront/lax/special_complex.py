"""Complex forms of mlax.lax's asin, acos, atan, sinh, cosh, asinh, acosh and atanh.

jax lowers these to `chlo` ops that XLA expands with Hull et al.'s / Kahan's algorithms. Here
each is composed from mlax primitives in Kahan's formulas ("Branch cuts for complex elementary
functions", 1987): products of principal square roots, which neither cancel near 0 nor
overflow early for large |z|; the real inverse functions they call are mlax.lax's float
composites. On the branch cuts the signs follow jax: asin, acos, asinh and acosh give a zero
part's side the sign jax's expansions give (+ for both zeros; XLA's sqrt keeps no sign of a zero
part, so the sign is set from the operand rather than read through sqrt), atanh (and so atan)
keeps the sign of a zero imaginary part, as jax does. sinh and cosh are sin and cos of ``i z``
(mlax.sin/cos of complex are JAX's expm1-based forms, exact for tiny imaginary parts).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlax.lax.elementwise import (
    abs,
    add,
    atan2,
    complex,
    conj,
    cos,
    div,
    ge,
    imag,
    log,
    log1p,
    lt,
    mul,
    neg,
    real,
    select,
    sin,
    sqrt,
    sub,
)

Real = Callable[[Any], Any]
Const = Callable[[complex], Any]


def _one_plus(z: Any, c: Const, sign: int) -> Any:
    """1 + z or 1 - z part by part: ``1 - (x + 0i)`` as complex arithmetic gives a +0 imaginary
    part where the branch cut needs -0."""
    one = real(c(1))
    x, y = real(z), imag(z)
    return complex(add(one, x), y) if sign > 0 else complex(sub(one, x), neg(y))


def _signed_as(value: Any, y: Any, c: Const, flip: bool = False) -> Any:
    """|value| with the sign of y (minus for y < 0; plus for both zeros, as jax's expansions
    give and as XLA keeps no sign of a zero part through sqrt), negated for ``flip``."""
    magnitude = abs(value)
    zero = real(c(0))
    negative = ge(y, zero) if flip else lt(y, zero)
    return select(negative, neg(magnitude), magnitude)


def _twice(x: Any) -> Any:
    return add(x, x)  # exact, and needs no constant of the parts' type


def _times_i(z: Any) -> Any:
    return complex(neg(imag(z)), real(z))


def _times_minus_i(z: Any) -> Any:
    return complex(imag(z), neg(real(z)))


def asin(z: Any, c: Const, asinh: Real) -> Any:
    """Kahan: atan2(x, re(sqrt(1 - z) sqrt(1 + z))) + i asinh(im(conj(sqrt(1 - z)) sqrt(1 + z)))."""
    s1, s2 = sqrt(_one_plus(z, c, -1)), sqrt(_one_plus(z, c, 1))
    return complex(atan2(real(z), real(mul(s1, s2))), _signed_as(asinh(imag(mul(conj(s1), s2))), imag(z), c))


def acos(z: Any, c: Const, asinh: Real) -> Any:
    """Kahan: 2 atan2(re sqrt(1 - z), re sqrt(1 + z)) + i asinh(im(conj(sqrt(1 + z)) sqrt(1 - z)))."""
    s1, s2 = sqrt(_one_plus(z, c, -1)), sqrt(_one_plus(z, c, 1))
    return complex(_twice(atan2(real(s1), real(s2))),
                   _signed_as(asinh(imag(mul(conj(s2), s1))), imag(z), c, flip=True))


def acosh(z: Any, c: Const, asinh: Real) -> Any:
    """Kahan: asinh(re(conj(sqrt(z - 1)) sqrt(z + 1))) + 2i atan2(im sqrt(z - 1), re sqrt(z + 1))."""
    s1, s2 = sqrt(complex(sub(real(z), real(c(1))), imag(z))), sqrt(_one_plus(z, c, 1))
    angle = _twice(atan2(imag(s1), real(s2)))
    return complex(abs(asinh(real(mul(conj(s1), s2)))), _signed_as(angle, imag(z), c))


def asinh(z: Any, c: Const, asinh_real: Real) -> Any:
    """-i asin(i z)."""
    return _times_minus_i(asin(_times_i(z), c, asinh_real))


def atanh(z: Any, c: Const) -> Any:
    """The real part 0.25 log1p(4x / ((1 - x)^2 + y^2)) where that ratio is small (near 0 and for
    large |z|, where log|1 + z| - log|1 - z| would cancel), else (log|1 + z| - log|1 - z|) / 2
    (exact near +-1); the imaginary part atan2(2y, (1 - x)(1 + x) - y^2) / 2, which keeps the
    sign of a zero y on the cuts beyond +-1."""
    x, y = real(z), imag(z)
    one = real(c(1))
    one_minus, one_plus = sub(one, x), add(one, x)
    ratio = div(mul(real(c(4)), x), add(mul(one_minus, one_minus), mul(y, y)))
    near = mul(real(c(0.25)), log1p(ratio))
    far = mul(real(c(0.5)), sub(log(abs(add(c(1), z))), log(abs(sub(c(1), z)))))
    re = select(lt(abs(ratio), real(c(0.5))), near, far)
    im = atan2(add(y, y), sub(mul(one_minus, one_plus), mul(y, y)))
    return complex(re, mul(real(c(0.5)), im))


def atan(z: Any, c: Const) -> Any:
    """-i atanh(i z)."""
    return _times_minus_i(atanh(_times_i(z), c))


def sinh(z: Any, c: Const) -> Any:
    """-i sin(i z)."""
    return _times_minus_i(sin(_times_i(z)))


def cosh(z: Any, c: Const) -> Any:
    """cos(i z)."""
    return cos(_times_i(z))
