"""mlax.lax's special functions (lgamma ... bessel_i1e) and mlax.scipy.special's functions on
them against jax, float32 and float64: random values, tails and specials (poles, 0, inf,
NaN); in float32 under jit of vmap of value_and_grad (a few functions a program: values on
the table, derivatives against jax's where it defines them), the first elements also eagerly;
in float64 eagerly; dtype rules and errors. Long forms (-m slow): the tables under a plain jit,
grad of a sum, vmap with an unbatched argument.

Tolerances are in ulp of max(|expected|, floor). The reference is XLA's expansion of the same
algorithms, so most functions agree within a few ulp where they are well conditioned. Where
they are not, the floor or a larger count says why: lgamma and digamma have zeros (absolute
error ~ ulp of the Lanczos sum, floor 1), exp of a log-space prefactor (igamma, betainc,
gamma, poch) carries the absolute error of its argument's lgamma terms (|log| up to ~100,
hence ~100 x ulp), and the loop-based functions stop where their own estimate converged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.scipy.special as jss
import numpy as np
import pytest

import mlax
import mlax.lax as mlax_lax
import mlax.scipy.special as mss
from tests.scipy.helpers import GradRow, as_tuple, assert_close, check_table, check_table_with_grads, uniform

N = 120


def _wide(rng: np.random.Generator, dt: Any) -> np.ndarray:
    special = [0.0, -0.0, 1.0, 2.0, -1.0, -2.5, 0.5, 1e-3, -1e-3, 30.5, -30.5, np.inf, -np.inf, np.nan]
    return np.concatenate([rng.uniform(-12, 12, N), 10 ** rng.uniform(-3, 2, N), special]).astype(dt)


def _erfcx_inputs(rng: np.random.Generator, dt: Any) -> np.ndarray:
    """_wide without float32's (9.1, 9.45): there XLA flushes erfc's subnormal values to 0, so
    jax's erfcx (exp(x^2) erfc(x) below sqrt(log(max float))) is 0, mlax's the true value."""
    x = _wide(rng, dt)
    return x[~((x > 9.1) & (x < 9.45))]


def _positive(rng: np.random.Generator, dt: Any) -> np.ndarray:
    special = [0.0, 1.0, 0.5, 40.0, np.inf, np.nan, -1.0]
    return np.concatenate([10 ** rng.uniform(-2, 1.5, N), special]).astype(dt)


def _pair_gamma(rng: np.random.Generator, dt: Any) -> tuple[np.ndarray, np.ndarray]:
    a = np.concatenate([10 ** rng.uniform(-2, 1.5, N), [0.0, 0.0, 1.0, 2.0, 3.0, -1.0, np.nan, 2.0]])
    x = np.concatenate([10 ** rng.uniform(-3, 1.7, N), [0.0, 1.0, 0.0, np.inf, 1e-30, 1.0, 1.0, np.nan]])
    return a.astype(dt), x.astype(dt)


def _triple_beta(rng: np.random.Generator, dt: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a = np.concatenate([10 ** rng.uniform(-1, 1.3, N), [0.0, 1.0, 2.0, -1.0, np.inf, 2.0]])
    b = np.concatenate([10 ** rng.uniform(-1, 1.3, N), [1.0, 0.0, 2.0, 1.0, 1.0, 2.0]])
    x = np.concatenate([rng.uniform(0, 1, N), [0.5, 0.5, 0.0, 0.5, 0.5, 1.5]])
    return a.astype(dt), b.astype(dt), x.astype(dt)


def _pair_zeta(rng: np.random.Generator, dt: Any) -> tuple[np.ndarray, np.ndarray]:
    x = np.concatenate([rng.uniform(1.01, 12, N), [1.0, 0.5, 2.0, 3.0, 2.0, 2.5]])
    q = np.concatenate([10 ** rng.uniform(-1, 1.5, N), [1.0, 1.0, -2.0, -2.0, 0.0, -1.5]])
    return x.astype(dt), q.astype(dt)


def _pair_polygamma(rng: np.random.Generator, dt: Any) -> tuple[np.ndarray, np.ndarray]:
    n = np.concatenate([rng.integers(0, 5, N), [0, 1, 2, 1, -1]]).astype(dt)
    x = np.concatenate([rng.uniform(0.2, 15, N), [0.0, -1.5, 3.0, np.inf, 2.0]]).astype(dt)
    return n, x


# (name, inputs, ulps, floor) for mlax.lax against jax.lax: those without loops, and those
# iterating to convergence (their compiles dominate: under jit in float32, eagerly in float64,
# where the program is the same but for the dtype)
LAX = [
    ("lgamma", _wide, 16, 1.0),
    ("digamma", _wide, 16, 1.0),
    ("bessel_i0e", _wide, 16, 0.0),
    ("bessel_i1e", _wide, 16, 0.0),
    ("zeta", _pair_zeta, 16, 0.0),
    ("polygamma", _pair_polygamma, 64, 1.0),
]
LAX_LOOPS = [
    ("igamma", _pair_gamma, 512, 1e-3),
    ("igammac", _pair_gamma, 1024, 1e-3),
    ("igamma_grad_a", _pair_gamma, 512, 1e-2),
    ("random_gamma_grad", _pair_gamma, 512, 1e-2),
    ("betainc", _triple_beta, 1024, 1e-3),
]


@pytest.mark.slow
def test_lax_special_functions(dtype: Any) -> None:
    """Long form: the tables under a plain jit (float32) and the loop-free ones in float64."""
    ours, theirs = (lambda n: getattr(mlax_lax, n)), (lambda n: getattr(jax.lax, n))
    check_table(LAX, ours, theirs, dtype)
    check_table(LAX_LOOPS, ours, theirs, dtype, jit=dtype == np.float32)


def _unit(rng: np.random.Generator, dt: Any) -> np.ndarray:
    return np.concatenate([rng.uniform(-1, 1, N), [0.0, 1.0, -1.0, 0.5, np.nan]]).astype(dt)


def _pair_positive(rng: np.random.Generator, dt: Any) -> tuple[np.ndarray, np.ndarray]:
    return _positive(rng, dt), _positive(rng, dt)


def _pair_box(rng: np.random.Generator, dt: Any) -> tuple[np.ndarray, np.ndarray]:
    x = np.concatenate([10 ** rng.uniform(-2, 2, N), [0.0, 1.0, 2.0, -0.5]]).astype(dt)
    lmbda = np.concatenate([rng.uniform(-2, 2, N), [0.0, 0.0, 1.0, 0.5]]).astype(dt)
    return x, lmbda


def _pair_comb(rng: np.random.Generator, dt: Any) -> tuple[np.ndarray, np.ndarray]:
    n = np.concatenate([rng.integers(0, 40, N), [5, 5, -1, 0]]).astype(dt)
    k = np.concatenate([rng.integers(0, 40, N), [0, 6, 0, 0]]).astype(dt)
    return n, k


def _pair_poch(rng: np.random.Generator, dt: Any) -> tuple[np.ndarray, np.ndarray]:
    return rng.uniform(0.1, 8, N).astype(dt), np.concatenate([rng.uniform(-0.5, 5, N - 1), [0.0]]).astype(dt)


def _pair_rel(rng: np.random.Generator, dt: Any) -> tuple[np.ndarray, np.ndarray]:
    p = np.concatenate([rng.uniform(0, 3, N), [0.0, 0.0, 1.0, -1.0, 1.0]]).astype(dt)
    q = np.concatenate([rng.uniform(0, 3, N), [0.0, 1.0, 0.0, 1.0, -1.0]]).astype(dt)
    return p, q


# (name, inputs, ulps, floor) for mlax.scipy.special against jax.scipy.special: under jit
# those composed here; eagerly those that are mlax.lax's functions (tested under jit above).
# erfcx = exp(x^2) erfc(x) carries erfc's own difference from XLA's (~100 ulp far out in float64)
SPECIAL = [
    ("gammasgn", _wide, 0, 0.0), ("gamma", _wide, 512, 0.0), ("loggamma", _wide, 16, 1.0),
    ("beta", _pair_positive, 512, 0.0), ("betaln", _pair_positive, 32, 1.0), ("factorial", _wide, 512, 0.0),
    ("comb", _pair_comb, 256, 0.0), ("poch", _pair_poch, 512, 1.0), ("i0", _wide, 16, 0.0),
    ("i1", _wide, 16, 0.0), ("erfcx", _erfcx_inputs, 512, 0.0), ("dawsn", _wide, 8, 0.0),
    ("entr", _wide, 4, 0.0),
    ("xlogy", _pair_rel, 4, 0.0), ("xlog1py", _pair_rel, 4, 0.0), ("rel_entr", _pair_rel, 8, 1.0),
    ("kl_div", _pair_rel, 8, 1.0), ("boxcox", _pair_box, 16, 1.0), ("boxcox1p", _pair_box, 16, 1.0),
    ("logit", _unit, 4, 0.0), ("expit", _wide, 4, 0.0),
]
SPECIAL_OF_LAX = [
    ("gammaln", _wide, 16, 1.0), ("digamma", _wide, 16, 1.0), ("betainc", _triple_beta, 1024, 1e-3),
    ("gammainc", _pair_gamma, 512, 1e-3), ("gammaincc", _pair_gamma, 1024, 1e-3),
    ("zeta", _pair_zeta, 16, 0.0),
    ("polygamma", _pair_polygamma, 64, 1.0), ("i0e", _wide, 16, 0.0), ("i1e", _wide, 16, 0.0),
]


def _polygamma_int(module: Any) -> Callable[..., Any]:
    return lambda n, x: module.polygamma(n.astype(np.int32), x)


def _special(module: Any) -> Callable[[str], Any]:
    return lambda name: _polygamma_int(module) if name == "polygamma" else getattr(module, name)


# (differentiated arguments, their inputs) where jax defines the derivative (custom rules for
# lgamma, digamma, igamma, betainc in x, the Bessel functions, zeta, erfcx, dawsn, xlogy, poch)
GRADS: dict[str, GradRow] = {
    "lgamma": ((0,), uniform((0.3, 6))), "digamma": ((0,), uniform((0.3, 6))),
    "igamma": ((0, 1), uniform((0.3, 6), (0.3, 6))), "betainc": ((2,), uniform(2.5, 1.5, (0.05, 0.95))),
    "bessel_i0e": ((0,), uniform((-2.7, 3))), "bessel_i1e": ((0,), uniform((-2.7, 3))),
    "polygamma": ((1,), uniform(2.0, (0.3, 6))),
    "scipy zeta": ((0, 1), uniform((1.3, 7), (0.3, 6))),
    "erfcx": ((0,), uniform((-2.7, 3))), "dawsn": ((0,), uniform((-2.7, 3))),
    "xlogy": ((0, 1), uniform((0.3, 6), (0.3, 6))), "poch": ((0, 1), uniform((0.3, 6), (0.05, 0.95))),
    "gamma": ((0,), uniform((0.05, 0.95))),
}
LAX_NAMES = {row[0] for row in LAX + LAX_LOOPS}


def _zeta_interior(rng: np.random.Generator, dt: Any) -> tuple[np.ndarray, np.ndarray]:
    """_pair_zeta's random values: at its specials (x <= 1, q <= 0) the primal of jax's derivative
    rule (a series expansion) differs from its zeta's (lax.zeta's, as mlax's rule and function)."""
    return tuple(v[:N] for v in _pair_zeta(rng, dt))


# scipy's zeta (its own derivative rule) beside lax's (none in jax)
OWN = [*SPECIAL, ("scipy zeta", _zeta_interior, 16, 0.0)]


def _lax_or_special(lax_module: Any, special_module: Any) -> Callable[[str], Any]:
    def fn(name: str) -> Any:
        if name in LAX_NAMES:
            return getattr(lax_module, name)
        return _special(special_module)(name.removeprefix("scipy "))

    return fn


def test_special_functions(dtype: Any) -> None:
    """float32: mlax.lax's and mlax.scipy.special's own functions in one jit of vmap of
    value_and_grad, the first elements eagerly; float64: eagerly (the same programs but for
    the dtype); both: the scipy names of mlax.lax's functions eagerly."""
    ours, theirs = _lax_or_special(mlax_lax, mss), _lax_or_special(jax.lax, jss)
    if dtype == np.float32:
        check_table_with_grads(LAX + LAX_LOOPS + OWN, GRADS, ours, theirs, dtype, grad_ulps=512)
    else:
        check_table(LAX + LAX_LOOPS + OWN, ours, theirs, dtype, jit=False)
    check_table(SPECIAL_OF_LAX, _special(mss), _special(jss), dtype, jit=False)


@pytest.mark.slow
def test_scipy_special_functions(dtype: Any) -> None:
    """Long form: mlax.scipy.special's own functions under a plain jit."""
    check_table(SPECIAL, _special(mss), _special(jss), dtype)


@pytest.mark.slow
def test_special_function_grads(rng: np.random.Generator) -> None:
    """Long form: mlax.grad of a sum (outside jit) against jax.grad."""
    x = rng.uniform(0.3, 6, 12).astype(np.float32)
    y = rng.uniform(0.3, 6, 12).astype(np.float32)
    u = rng.uniform(0.05, 0.95, 12).astype(np.float32)

    shape_a, shape_b = np.full(12, 2.5, np.float32), np.full(12, 1.5, np.float32)

    def total(lib: Any, special: Any) -> Callable[..., Any]:
        def f(x: Any, y: Any, u: Any) -> Any:
            parts = [lib.lgamma(x), lib.digamma(y), lib.igamma(x, y),
                     lib.betainc(shape_a, shape_b, u),
                     lib.bessel_i0e(x - 3), lib.bessel_i1e(y - 3), lib.polygamma(np.float32(2), x),
                     special.zeta(x + 1, y), special.erfcx(x - 3), special.dawsn(y - 3),
                     special.xlogy(x, y), special.poch(x, u), special.gamma(u)]
            return sum(p.sum() * (i + 1) for i, p in enumerate(parts))

        return f

    expected = jax.grad(total(jax.lax, jss), argnums=(0, 1, 2))(x, y, u)
    actual = mlax.grad(total(mlax_lax, mss), argnums=(0, 1, 2))(x, y, u)
    for a, e in zip(actual, expected, strict=True):
        assert_close(a, e, 512, 1.0, "grad")


@pytest.mark.slow
def test_vmap_of_special_functions(rng: np.random.Generator) -> None:
    """Long form: vmap outside jit, with an unbatched argument."""
    a = rng.uniform(0.5, 5, (3, 4)).astype(np.float32)
    x = rng.uniform(0.1, 8, (3, 4)).astype(np.float32)
    assert_close(mlax.vmap(mlax_lax.igamma)(a + 1, x), jax.vmap(jax.lax.igamma)(a + 1, x), 256, 1e-3,
                 "igamma")
    s = np.float32(2.5)
    assert_close(mlax.vmap(mss.zeta, (None, 0))(s, x), jax.vmap(jss.zeta, (None, 0))(s, x), 16, 0.0, "zeta")


def test_lax_operand_rules() -> None:
    """Floats only, one dtype, rank-0 operands broadcast, half floats keep their dtype, the
    result weak only if every operand is: as jax.lax."""
    for fn in (mlax_lax.lgamma, jax.lax.lgamma):
        with pytest.raises(TypeError, match="does not accept dtype int32"):
            fn(np.int32(1))
    for module in (mlax_lax, jax.lax):
        with pytest.raises(TypeError, match="incompatible shapes"):
            module.igamma(np.ones(3, np.float32), np.ones(2, np.float32))
    for args in [(2.5,), (np.float16(2.5),)]:
        a, e = mlax_lax.lgamma(*args), jax.lax.lgamma(*args)
        assert (a.dtype, a.weak_type) == (e.dtype, e.weak_type)
    a, e = mlax_lax.igamma(2.0, np.ones(3, np.float32)), jax.lax.igamma(2.0, np.ones(3, np.float32))
    assert (a.shape, a.dtype, a.weak_type) == (e.shape, e.dtype, e.weak_type)
    assert_close(mlax_lax.betainc(np.float16(2), np.float16(3), np.float16(0.25)),
                 jax.lax.betainc(np.float16(2), np.float16(3), np.float16(0.25)), 1)


def test_scipy_special_arguments(rng: np.random.Generator) -> None:
    """Promotion of integers, static arguments and the errors jax raises."""
    for name in ("gamma", "gammaln", "i0", "erfcx", "entr"):
        a, e = getattr(mss, name)(np.arange(1, 4)), getattr(jss, name)(np.arange(1, 4))
        assert (a.dtype, a.shape) == (e.dtype, e.shape)
    assert_close(mss.multigammaln(np.float32(4.5), 3), jss.multigammaln(np.float32(4.5), 3), 16)
    assert_close(mss.bernoulli(12), jss.bernoulli(12), 64, 1.0)
    assert_close(mss.comb(np.float32(5), np.float32(2), repetition=True),
                 jss.comb(np.float32(5), np.float32(2), repetition=True), 16)
    x = rng.normal(size=(3, 4)).astype(np.float32)
    assert_close(mss.softmax(x, axis=1), jss.softmax(x, axis=1), 4)
    assert_close(mss.log_softmax(x), jss.log_softmax(x), 4, 1.0)
    for module in (mss, jss):
        with pytest.raises(ValueError, match="integer type"):
            module.polygamma(1.0, 2.0)
        with pytest.raises(NotImplementedError):
            module.zeta(2.0)
        with pytest.raises(NotImplementedError):
            module.factorial(3, exact=True)
        with pytest.raises(ValueError):
            module.bernoulli(-1)


def test_logsumexp_b_and_return_sign(rng: np.random.Generator) -> None:
    a = rng.normal(size=(3, 5)).astype(np.float32)
    b = rng.normal(size=(3, 5)).astype(np.float32)
    for kwargs in ({"b": b}, {"b": b, "axis": 1, "return_sign": True}, {"axis": 0, "keepdims": True}):
        for got, want in zip(as_tuple(mss.logsumexp(a, **kwargs)), as_tuple(jss.logsumexp(a, **kwargs)),
                             strict=True):
            assert_close(got, want, 8, 1.0, str(kwargs))
