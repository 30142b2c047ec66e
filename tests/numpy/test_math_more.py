"""mlax.numpy gcd, lcm, frexp, ldexp, spacing, i0, packbits, unpackbits, the window functions
and the host-side readers/writers against jax.numpy: values, dtypes and weak types over the
dtypes jnp accepts (Python scalars too), eagerly and under mlax.jit; gradients of i0, ldexp,
frexp and kaiser against jax.grad; vmap; jnp's errors.

Float inputs avoid subnormals: XLA's CPU kernels flush them to zero, mlax's do not."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.numpy.helpers import BF16, check_values, operand
from tests.oracle import assert_same, random_array

FLOATS = [np.dtype(np.float32), np.dtype(np.float16), BF16, float]
INTS = [np.dtype(d) for d in (np.int8, np.uint32)] + [int]


def _exponents(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-20, 20, size=shape).astype(np.int32)


# name: (spelling for a module m, dtypes, random arguments of one dtype)
ELEMENTWISE: dict[str, tuple[Callable[[Any], Callable[..., Any]], list[Any], Callable[..., tuple]]] = {
    "gcd": (lambda m: m.gcd, INTS + [np.dtype(np.bool_)],
            lambda r, d: (operand(r, d, (2, 3)), operand(r, d, (3,)))),
    "lcm": (lambda m: m.lcm, [np.dtype(np.int16), np.dtype(np.uint8)],
            lambda r, d: (operand(r, d, (4,)), operand(r, d, (2, 1)))),
    "gcd_scalar": (lambda m: lambda a: m.gcd(a, 12), [np.dtype(np.int32)],
                   lambda r, d: (operand(r, d, (5,)),)),
    "frexp": (lambda m: m.frexp, FLOATS + [np.dtype(np.int8)],
              lambda r, d: (operand(r, d, (3, 4)),)),
    "ldexp": (lambda m: m.ldexp, [np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.bool_)],
              lambda r, d: (operand(r, d, (3, 4)), _exponents(r, (4,)))),
    "ldexp_int8_exponent": (lambda m: lambda x, e: m.ldexp(x, e), [np.dtype(np.float32)],
                            lambda r, d: (operand(r, d, (5,)), _exponents(r, (5,)).astype(np.int8))),
    "ldexp_float_exponent": (lambda m: m.ldexp, [np.dtype(np.float32)],
                             lambda r, d: (operand(r, d, (2,)), operand(r, d, (2,)))),
    "spacing": (lambda m: m.spacing, FLOATS + [np.dtype(np.int32)],
                lambda r, d: (operand(r, d, (3, 4)),)),
    "i0": (lambda m: m.i0, FLOATS + [np.dtype(np.int8)],
           lambda r, d: (operand(r, d, (3, 4)),)),
    "i0_wide": (lambda m: m.i0, [np.dtype(np.float32)],
                lambda r, d: (random_array(r, (40,), d, -25.0, 25.0),)),
    "packbits": (lambda m: m.packbits, [np.dtype(np.bool_), np.dtype(np.uint32)],
                 lambda r, d: (operand(r, d, (3, 11)),)),
    "packbits_axis_little": (lambda m: lambda a: m.packbits(a, axis=0, bitorder="little"),
                             [np.dtype(np.bool_), np.dtype(np.int16)], lambda r, d: (operand(r, d, (9, 2)),)),
    "packbits_float": (lambda m: m.packbits, [np.dtype(np.float32)], lambda r, d: (operand(r, d, (3,)),)),
    "unpackbits": (lambda m: lambda a: m.unpackbits(a, axis=1), [np.dtype(np.uint8)],
                   lambda r, d: (operand(r, d, (2, 3)),)),
    "unpackbits_count": (lambda m: lambda a: m.unpackbits(a, count=13, bitorder="little"),
                         [np.dtype(np.uint8)], lambda r, d: (operand(r, d, (2,)),)),
    "unpackbits_count_short": (lambda m: lambda a: m.unpackbits(a, axis=0, count=-5),
                               [np.dtype(np.uint8)], lambda r, d: (operand(r, d, (2, 2)),)),
    "unpackbits_int8": (lambda m: m.unpackbits, [np.dtype(np.int8)], lambda r, d: (operand(r, d, (2,)),)),
}
ELEMENTWISE_CASES = [pytest.param(name, d, id=f"{name}-{getattr(d, 'name', getattr(d, '__name__', d))}")
                     for name, (_, dtypes, _) in ELEMENTWISE.items() for d in dtypes]


@pytest.mark.parametrize("name, dtype", ELEMENTWISE_CASES)
def test_matches_jax(name: str, dtype: Any, rng: np.random.Generator) -> None:
    spell, _, args = ELEMENTWISE[name]
    check_values(spell(mnp), spell(jnp), *args(rng, dtype))


WINDOWS = [("bartlett", ()), ("blackman", ()), ("hamming", ()), ("hanning", ()), ("kaiser", (3.5,))]


@pytest.mark.parametrize("M", [0, 1, 8])
@pytest.mark.parametrize("name, extra", WINDOWS, ids=[f"{n}{e}" for n, e in WINDOWS])
def test_windows(name: str, extra: tuple, M: int) -> None:
    check_values(lambda: getattr(mnp, name)(M, *extra), lambda: getattr(jnp, name)(M, *extra), atol=1e-6)


@pytest.mark.parametrize("name", ["frexp", "spacing", "i0", "ldexp"])
def test_float64_under_x64(name: str, x64: bool, rng: np.random.Generator) -> None:
    spell, _, args = ELEMENTWISE[name]
    check_values(spell(mnp), spell(jnp), *args(rng, np.dtype(np.float64) if x64 else float))


def test_window_dtype_under_x64(x64: bool) -> None:
    check_values(lambda: mnp.kaiser(9, 2.0), lambda: jnp.kaiser(9, 2.0))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16], ids=lambda d: np.dtype(d).name)
def test_gradients(dtype: Any, rng: np.random.Generator) -> None:
    """i0's custom rule (0 at x = 0), ldexp and frexp through the mantissa's rule, kaiser in beta."""
    x = np.concatenate([random_array(rng, (9,), dtype, -9.0, 9.0), np.zeros(1, dtype)])
    e = _exponents(rng, (10,))
    rtol = {np.dtype(np.float32): 1e-5}.get(np.dtype(dtype), 2e-2)
    for make in (lambda m: m.i0, lambda m: lambda a: m.ldexp(a, e[0]), lambda m: lambda a: m.frexp(a)[0]):
        assert_same(mlax.vmap(mlax.grad(make(mnp)))(x), jax.vmap(jax.grad(make(jnp)))(x), rtol=rtol)
    ldexp_grad = mlax.jit(mlax.vmap(mlax.grad(mnp.ldexp)))(x, e)
    assert_same(ldexp_grad, jax.vmap(jax.grad(jnp.ldexp))(x, e), rtol=rtol)


def test_kaiser_gradient_in_beta() -> None:
    beta = np.float32(2.5)
    assert_same(mlax.grad(lambda b: mnp.sum(mnp.kaiser(7, b)))(beta),
                jax.grad(lambda b: jnp.sum(jnp.kaiser(7, b)))(beta), rtol=1e-5)


def test_vmap(rng: np.random.Generator) -> None:
    a, b = random_array(rng, (3, 4), np.int16), random_array(rng, (3, 4), np.int16)
    assert_same(mlax.vmap(mnp.gcd)(a, b), jax.vmap(jnp.gcd)(a, b))
    bits = random_array(rng, (3, 10), np.bool_)
    assert_same(mlax.vmap(mnp.packbits)(bits), jax.vmap(jnp.packbits)(bits))


@pytest.mark.parametrize("call, error", [
    (lambda m: m.gcd(1.5, 2), ValueError),
    (lambda m: m.lcm(np.ones(2, np.float32), 2), ValueError),
    (lambda m: m.ldexp(2.0, 1.5), ValueError),
    (lambda m: m.packbits(np.ones(3, np.int8), bitorder="middle"), ValueError),
    (lambda m: m.unpackbits(np.ones(3, np.uint8), bitorder="middle"), ValueError),
    (lambda m: m.hanning(-1), TypeError),
    (lambda m: m.fromfile("x"), NotImplementedError),
    (lambda m: m.fromiter(iter([1, 2])), NotImplementedError),
    (lambda m: m.from_dlpack([1, 2]), TypeError),
])
def test_errors_match_jax(call: Callable[[Any], Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        call(jnp)
    with pytest.raises(error):
        call(mnp)


def test_host_io(rng: np.random.Generator) -> None:
    """The NumPy functions jnp passes through are NumPy's; the readers return mlax arrays as jnp's."""
    assert (mnp.save, mnp.savez, mnp.array_repr, mnp.array_str) == (np.save, np.savez, np.array_repr,
                                                                      np.array_str)
    x = random_array(rng, (2, 3), np.float32)
    assert mnp.array_str(mnp.asarray(x)) == jnp.array_str(jnp.asarray(x))
    for value in (x, x.astype(ml_dtypes.bfloat16), x.astype(np.int8)):
        buffer = io.BytesIO()
        mnp.save(buffer, value)
        buffer.seek(0)
        loaded = mnp.load(buffer)
        buffer.seek(0)
        assert isinstance(loaded, mlax.Array)
        assert_same(loaded, jnp.load(buffer))
    data = x.tobytes()
    assert_same(mnp.frombuffer(data, np.float32, count=4, offset=4),
                jnp.frombuffer(data, np.float32, count=4, offset=4))
    assert_same(mnp.fromstring("1 2 3.5", sep=" "), jnp.fromstring("1 2 3.5", sep=" "))
    assert_same(mnp.from_dlpack(x), jnp.from_dlpack(x))
