"""mlax.scipy.special's integrals (exp1, expi, expn, sici, fresnel, spence), hypergeometric
functions (hyp1f1, hyp2f1), owens_t and bessel_jn against jax, float32 and float64: random
values and specials (0, +-inf, NaN, the branch edges). In float32 all functions in one jit of
vmap of value_and_grad (values on the table; derivatives against jax's where they are well
conditioned), the first elements also eagerly; in float64 eagerly (the same program but for the
dtype); the argument rules. Long forms (-m slow): the table under a plain jit, grad of a sum,
vmap with an unbatched argument.

Tolerances are in ulp of max(|expected|, floor): Ci (gamma + log x + series cancel below 4:
floor 1), E_n near their zeros and the series
summed to a relative eps (hyp1f1, hyp2f1) differ from XLA's by the rounding of their terms;
owens_t's reflection 1/4 - ... - T cancels; bessel_jn's backward recurrence loses digits
where J is near a zero (floor 1e-3 of the recurrence's scale). Derivatives: 256 ulp of
max(|expected|, 1).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.scipy.special as jss
import numpy as np
import pytest

import mlax
import mlax.scipy.special as mss
from tests.scipy.helpers import GradRow, assert_close, check_table, check_table_with_grads, uniform

N = 60


def _real(rng: np.random.Generator, dt: Any) -> np.ndarray:
    edges = [0.0, -0.0, 1.0, 2.0, 4.0, 8.0, 64.0, 100.0, -3.5, np.inf, -np.inf, np.nan]
    return np.concatenate([rng.uniform(-12, 12, N), 10 ** rng.uniform(-3, 2.5, N), edges]).astype(dt)


def _positive(rng: np.random.Generator, dt: Any) -> np.ndarray:
    edges = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, np.inf, np.nan, -1.0]
    return np.concatenate([10 ** rng.uniform(-2, 1.5, N), edges]).astype(dt)


def _expn_args(rng: np.random.Generator, dt: Any) -> tuple[np.ndarray, np.ndarray]:
    n = np.concatenate([rng.integers(0, 7, N), [0, 1, 2, 1, -1, 6000, 2, 3]]).astype(dt)
    x = np.concatenate([10 ** rng.uniform(-2, 1.3, N), [0.0, 0.0, 0.0, 0.5, 1.0, 2.0, np.inf, np.nan]])
    return n, x.astype(dt)


def _hyp1f1_args(rng: np.random.Generator, dt: Any) -> tuple[np.ndarray, ...]:
    a = np.concatenate([rng.uniform(0.1, 4, N), [0.0, 2.0, 1.0, 1.5]])
    b = np.concatenate([rng.uniform(0.5, 5, N), [1.0, 2.0, 0.0, 2.5]])
    x = np.concatenate([rng.uniform(-8, 8, N), [3.0, 0.5, 1.0, 120.0]])
    return a.astype(dt), b.astype(dt), x.astype(dt)


def _hyp2f1_args(rng: np.random.Generator, dt: Any) -> tuple[np.ndarray, ...]:
    edges = np.array([[1.0, 2.0, 3.0, 0.0], [0.0, 2.0, 3.0, 0.5], [1.0, 2.0, 0.0, 0.5], [-3.0, 2.0, 4.5, 0.7],
                      [1.0, 2.0, 1.5, 0.5], [1.0, 2.0, 2.0, 0.5], [1.5, 2.0, 5.0, 1.0], [1.0, 2.0, 3.0, 1.5],
                      [0.5, 1.5, 4.0, 0.95], [1.0, 2.0, 3.0, 0.95], [2.0, 3.0, 4.0, -0.6]])
    a, b = rng.uniform(0.1, 3, N), rng.uniform(0.1, 3, N)
    c, x = rng.uniform(0.5, 5, N), rng.uniform(-0.8, 0.85, N)
    return tuple(np.concatenate([v, edges[:, i]]).astype(dt) for i, v in enumerate((a, b, c, x)))


def _owens_t_args(rng: np.random.Generator, dt: Any) -> tuple[np.ndarray, np.ndarray]:
    h = np.concatenate([rng.normal(0, 2, N), [0.0, 1.0, 0.3, 2.0, np.nan, 1.0]]).astype(dt)
    a = np.concatenate([rng.normal(0, 3, N), [0.5, 1.0, 2.0, -4.0, 1.0, np.nan]]).astype(dt)
    return h, a


# (name, inputs, ulps, floor); sici and fresnel return pairs
TABLE = [
    ("exp1", _positive, 32, 1e-6), ("expi", _real, 32, 1e-6), ("expn", _expn_args, 64, 1e-6),
    ("sici", _real, 32, 1.0), ("fresnel", _real, 8, 0.0), ("spence", _positive, 16, 1e-6),
    ("hyp1f1", _hyp1f1_args, 256, 1e-3), ("hyp2f1", _hyp2f1_args, 1024, 1e-3),
    ("owens_t", _owens_t_args, 256, 1e-3),
]


# (differentiated arguments, their inputs) of every function of TABLE; expn's order n is not
# differentiable (jax's nondiff_argnums)
GRADS: dict[str, GradRow] = {
    "exp1": ((0,), uniform((0.3, 3))), "expi": ((0,), uniform((1.3, 2.7))),
    "expn": ((1,), uniform(2.0, (0.2, 2))), "sici": ((0,), uniform((0.9, 9))),
    "fresnel": ((0,), uniform((-1.4, 1.4))), "spence": ((0,), uniform((0.2, 3))),
    "hyp1f1": ((0, 1, 2), uniform((0.3, 3), (1.2, 3), (-0.7, 0.7))),
    "hyp2f1": ((0, 1, 2, 3), uniform((0.3, 3), (0.2, 2), (2.3, 5), (-0.7, 0.7))),
    "owens_t": ((0, 1), uniform((-0.7, 0.7), (0.3, 3))),
}
PAIRS = {"sici": 2, "fresnel": 2}


def _lib(module: Any) -> Any:
    return lambda name: getattr(module, name)


def test_special_functions(dtype: Any) -> None:
    if dtype == np.float32:
        check_table_with_grads(TABLE, GRADS, _lib(mss), _lib(jss), dtype, PAIRS)
    else:
        check_table(TABLE, _lib(mss), _lib(jss), dtype, jit=False)


@pytest.mark.slow
def test_special_functions_plain_jit() -> None:
    check_table(TABLE, _lib(mss), _lib(jss), np.float32)


def test_bessel_jn(dtype: Any, rng: np.random.Generator) -> None:
    """float32 needs fewer recurrence steps than the default 50 (1e-16 times the growth of
    the recurrence overflows: jax's NaN)."""
    z = np.concatenate([rng.uniform(-15, 15, 24), [0.5, -2.0]]).astype(dtype)
    n_iter = 50 if dtype == np.float64 else 24
    for v in (0, 3):
        assert_close(mss.bessel_jn(z, v=v, n_iter=n_iter), jss.bessel_jn(z, v=v, n_iter=n_iter), 64, 1e-3,
                     f"bessel_jn v={v}")
    assert_close(mlax.jit(lambda z: mss.bessel_jn(z, v=2, n_iter=n_iter))(z),
                 jss.bessel_jn(z, v=2, n_iter=n_iter), 64, 1e-3, "bessel_jn jit")


@pytest.mark.slow
def test_grads(rng: np.random.Generator) -> None:
    """mlax.grad of a sum (outside jit) against jax.grad for every argument jax differentiates."""
    x = rng.uniform(0.3, 3, 8).astype(np.float32)
    y = rng.uniform(0.2, 2, 8).astype(np.float32)
    u = rng.uniform(-0.7, 0.7, 8).astype(np.float32)
    n = np.full(8, 2.0, np.float32)

    def total(lib: Any) -> Any:
        def f(x: Any, y: Any, u: Any) -> Any:
            parts = [lib.exp1(x), lib.expi(u + 2), lib.expn(n, y), *lib.sici(x * 3), *lib.fresnel(u * 2),
                     lib.hyp1f1(x, y + 1, u), lib.hyp2f1(x, y, x + 2, u), lib.owens_t(u, x)]
            return sum(p.sum() * (i + 1) for i, p in enumerate(parts))

        return f

    expected = jax.grad(total(jss), argnums=(0, 1, 2))(x, y, u)
    actual = mlax.grad(total(mss), argnums=(0, 1, 2))(x, y, u)
    for a, e in zip(actual, expected, strict=True):
        assert_close(a, e, 256, 1.0, "grad")


@pytest.mark.slow
def test_vmap(rng: np.random.Generator) -> None:
    a = rng.uniform(0.5, 3, (3, 4)).astype(np.float32)
    x = rng.uniform(-0.5, 0.5, (3, 4)).astype(np.float32)
    assert_close(mlax.vmap(mss.hyp1f1)(a, a + 1, x), jax.vmap(jss.hyp1f1)(a, a + 1, x), 64, 1e-3, "hyp1f1")
    two = np.float32(2)
    assert_close(mlax.vmap(mss.expn, (None, 0))(two, a), jax.vmap(jss.expn, (None, 0))(two, a), 32, 0.0)


def test_arguments() -> None:
    """Integers promote, scalars broadcast; spence takes float32 and float64 only."""
    for name in ("exp1", "expi", "sici", "fresnel"):
        for a, e in zip(np.atleast_1d(getattr(mss, name)(np.arange(1, 4))),
                        np.atleast_1d(getattr(jss, name)(np.arange(1, 4))), strict=True):
            assert (a.dtype, a.shape) == (e.dtype, e.shape), name
    a, e = mss.expn(2, np.ones((2, 3), np.float32)), jss.expn(2, np.ones((2, 3), np.float32))
    assert (a.dtype, a.shape) == (e.dtype, e.shape)
    a, e = mss.fresnel(np.float16(1.5)), jss.fresnel(np.float16(1.5))
    assert a[0].dtype == e[0].dtype == np.float16
    assert mss.bessel_jn(np.ones(3, np.float32), v=2).shape == (3, 3)
    for module in (mss, jss):
        with pytest.raises(TypeError):
            module.spence(np.arange(3))
        with pytest.raises(TypeError):
            module.bessel_jn(np.ones(3, np.float32), v=1.5)
