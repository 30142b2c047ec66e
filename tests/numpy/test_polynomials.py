"""mlax.numpy polynomials and 1-d convolutions against jax.numpy: convolve/correlate (every mode,
operand order, integer and mixed dtypes, preferred_element_type, precision), poly, polyval,
polyadd/sub/mul/div, polyder, polyint, vander, trim_zeros; eager and under mlax.jit, grad
against jax.grad, vmap, errors, and polyfit/roots declared not yet implemented."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.numpy.helpers import check_both, operand
from tests.oracle import assert_same

MODES = ("full", "same", "valid")


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.float16], ids=["f32", "i16", "f16"])
def test_convolve_correlate(dtype: Any, rng: np.random.Generator) -> None:
    """Every mode, the longer operand first and second, a length-1 operand, mixed dtypes."""
    a = operand(rng, dtype, (7,), specials=False)
    v = operand(rng, dtype, (3,), specials=False)
    one = operand(rng, np.int8, (1,))

    def spell(m: Any) -> Callable[..., Any]:
        return lambda a, v, one: tuple(
            getattr(m, name)(x, y, mode) for name in ("convolve", "correlate") for mode in MODES
            for x, y in ((a, v), (v, a), (one, v), (a, v.astype(np.float32))))

    check_both(spell, a, v, one, rtol=4e-3 if dtype == np.float16 else 1e-5, atol=1e-5)


def test_convolve_options(rng: np.random.Generator) -> None:
    ia = rng.integers(-4, 4, 7).astype(np.int32)
    iv = rng.integers(-4, 4, 3).astype(np.int8)
    a = operand(rng, np.float32, (6,), specials=False)
    check_both(lambda m: lambda ia, iv, a: (
        m.convolve(ia, iv, preferred_element_type=np.int32),
        m.correlate(iv, ia, "full", preferred_element_type=np.int32), m.convolve(a, iv, precision="highest"),
        m.correlate(a, a, "same", precision=jax.lax.Precision.HIGHEST)),
        ia, iv, a, rtol=1e-5, atol=1e-5)
    for call in (lambda m: m.convolve(a, a, "middle"), lambda m: m.correlate(a[:0], a),
                 lambda m: m.convolve(a[None], a)):
        for lib in (jnp, mnp):
            with pytest.raises(ValueError):
                call(lib)


@pytest.mark.parametrize("dtype", [np.float32, np.int8], ids=["f32", "i8"])
def test_polynomial_arithmetic(dtype: Any, rng: np.random.Generator) -> None:
    a = operand(rng, dtype, (6,), specials=False)
    v = operand(rng, dtype, (3,), specials=False)
    v[0] = 2  # a nonzero leading coefficient for polydiv
    x = operand(rng, np.float32, (3, 4), specials=False)

    def spell(m: Any) -> Callable[..., Any]:
        return lambda a, v, x: (
            m.poly(v), m.poly(a[:0]), m.poly(v[0]), m.polyval(a, x), m.polyval(a, 1.5), m.polyval(a, 3),
            m.polyval(x[:, :2], x[0, :2]), m.polyadd(a, v), m.polyadd(v, a), m.polysub(a, v),
            m.polysub(v, a[::-1]),
            m.polymul(a, v), m.polymul(v, a[:1]), m.polymul(a, v[:0]), m.polydiv(a, v), m.polydiv(v, a),
            *(m.polyder(a, k) for k in (0, 1, 2, 9)), *(m.polyint(a, k) for k in (0, 1, 3)),
            m.polyint(a, 2, k=1.5), m.polyint(a, 2, k=v[:2]),
            m.vander(a), m.vander(v, 4), m.vander(a, increasing=True), m.vander(v, 0))

    check_both(spell, a, v, x, rtol=1e-5, atol=1e-4)


def test_concrete_trimming(rng: np.random.Generator) -> None:
    """trim_zeros and the ``trim_leading_zeros`` options need concrete values: eager only."""
    t = np.zeros((4, 5), np.float32)
    t[1, 1], t[2, 3] = 1.0, -2.0
    for kw in ({}, {"trim": "f"}, {"trim": "b"}, {"axis": 0}, {"axis": (1,)}, {"trim": "x"}):
        assert_same(mnp.trim_zeros(t, **kw), jnp.trim_zeros(t, **kw))
    assert_same(mnp.trim_zeros(np.zeros(3)), jnp.trim_zeros(np.zeros(3)))
    a = np.r_[0.0, 0.0, operand(rng, np.float32, (4,), specials=False)].astype(np.float32)
    v = np.array([1.0, 2.0], np.float32)
    assert_same(mnp.polymul(a, v, trim_leading_zeros=True), jnp.polymul(a, v, trim_leading_zeros=True))
    cube = np.array([1.0, 3.0, 3.0, 1.0], np.float32)
    assert_same(mnp.polydiv(cube, v[:1] * 0 + 1, trim_leading_zeros=True),
                jnp.polydiv(cube, v[:1] * 0 + 1, trim_leading_zeros=True))
    assert_same(mnp.polydiv(cube, np.array([1.0, 1.0]), trim_leading_zeros=True),
                jnp.polydiv(cube, np.array([1.0, 1.0]), trim_leading_zeros=True))


def test_grad_and_vmap_against_jax(rng: np.random.Generator) -> None:
    p = rng.normal(size=5).astype(np.float32)
    x = rng.normal(size=(3, 4)).astype(np.float32)
    fns: list[Callable[[Any, Any, Any], Any]] = [
        lambda m, p, x: m.polyval(p, x).sum(),
        lambda m, p, x: (m.convolve(p, x[0], "same") ** 2).sum() + m.correlate(x[1], p).sum(),
        lambda m, p, x: (m.polymul(p, x[2]) ** 2).sum() + m.polyder(p, 2).sum() + m.polyint(p)[1],
        lambda m, p, x: m.polydiv(p, x[0])[1].sum() + m.poly(x[0]).sum(),
    ]
    for fn in fns:
        expected = jax.jit(jax.grad(lambda p, x, fn=fn: fn(jnp, p, x), argnums=(0, 1)))(p, x)
        assert_same(mlax.grad(lambda p, x, fn=fn: fn(mnp, p, x), argnums=(0, 1))(p, x), expected,
                    rtol=1e-5, atol=1e-5)
    def batched(m: Any, p: Any, x: Any) -> Any:
        return m.polyval(p, x), m.convolve(p, x), m.polyadd(p, x[:2])

    expected = jax.jit(jax.vmap(lambda p, x: batched(jnp, p, x)))(x, x * 2)
    assert_same(mlax.vmap(lambda p, x: batched(mnp, p, x))(x, x * 2), expected, rtol=1e-5, atol=1e-5)


def test_errors(rng: np.random.Generator) -> None:
    a = operand(rng, np.float32, (4,), specials=False)
    for call, err in [
        (lambda m: m.polyder(a, -1), ValueError), (lambda m: m.polyint(a, -1), ValueError),
        (lambda m: m.polyint(a, 2, k=np.ones(3)), ValueError), (lambda m: m.vander(a, -1), ValueError),
        (lambda m: m.vander(np.ones((2, 2))), ValueError), (lambda m: m.poly(np.ones((2, 3))), ValueError),
        (lambda m: m.polymul(a, 2.0), TypeError), (lambda m: m.polydiv(2.0, a), TypeError),
        (lambda m: m.polyfit(a, a, -1), ValueError), (lambda m: m.polyfit(a[None], a, 1), TypeError),
        (lambda m: m.roots(np.ones((2, 2))), ValueError),
    ]:
        for lib in (jnp, mnp):
            with pytest.raises(err):
                call(lib)
    matrix = rng.standard_normal((3, 3)).astype(np.float32)  # its characteristic polynomial
    assert_same(mnp.poly(matrix), jnp.poly(matrix), rtol=1e-4, atol=1e-4)
