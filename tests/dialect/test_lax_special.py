"""mlax.lax.erfc and the composite inverse-trigonometric and hyperbolic functions (asin ...
atanh) against jax.lax: every half-precision value, float32 and float64 tails, random shapes,
NaN/inf/-0.0, eager and jitted, weak types, errors and the IR they emit.

XLA's CPU flushes subnormal floats to zero (f32, bf16) where the reference keeps them, so the
value tests leave out inputs whose exact result, or whose halving (asin's first step), is
subnormal; test_erfc_keeps_subnormal_results pins that difference down.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest
import scipy.special

import mlax
from mlax import lax
from tests.oracle import (
    FIXED_SHAPES,
    FLOAT_DTYPES,
    Case,
    assert_same,
    check_cases,
    random_array,
    random_shape,
)

BF16 = np.dtype(ml_dtypes.bfloat16)
# name -> (the exact function, in float64, and the (low, high) of random inputs).
FUNCTIONS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], tuple[float, float]]] = {
    "asin": (np.arcsin, (-1.2, 1.2)), "acos": (np.arccos, (-1.2, 1.2)), "atan": (np.arctan, (-40.0, 40.0)),
    "sinh": (np.sinh, (-12.0, 12.0)), "cosh": (np.cosh, (-12.0, 12.0)), "asinh": (np.arcsinh, (-1e3, 1e3)),
    "acosh": (np.arccosh, (0.5, 60.0)), "atanh": (np.arctanh, (-1.2, 1.2)),
    "erfc": (lambda x: np.asarray(np.frompyfunc(math.erfc, 1, 1)(x), np.float64), (-6.0, 10.0)),
}
# XLA's float32 erfc drifts up to ~34 ulp from the correctly rounded value in the far tail
# (exhaustively measured: 4.03e-6 relative at x = 8.585); elsewhere the oracle's few ulp hold.
RTOL = {"erfc": {np.dtype(np.float32): 5e-6}}


def _xla_representable(name: str, x: np.ndarray) -> np.ndarray:
    """The elements of ``x`` on which XLA's flushing of subnormals cannot show."""
    tiny = float(ml_dtypes.finfo(x.dtype).tiny)
    with np.errstate(all="ignore"):
        wide = x.astype(np.float64)
        exact = np.abs(FUNCTIONS[name][0](wide))
    ok_input = (wide == 0) | ~(np.abs(wide) < 2 * tiny)
    ok_result = ~((exact > 0) & (exact < 2 * tiny))
    return x[ok_input & ok_result]


def _tails(dtype: Any) -> np.ndarray:
    """Edge values of ``dtype``: specials, +-0, around +-1, tiny and huge magnitudes, the
    overflow points of sinh/cosh (log max) and of x * x (sqrt max), erfc's whole tail."""
    info = ml_dtypes.finfo(dtype)
    eps, big, log_max = float(info.eps), float(info.max), float(np.log(float(info.max)))
    around_one = [1 + k * eps for k in (-8, -2, -1, 1, 2, 8)] + [1 - 1e-3, 1 + 1e-3]
    magnitudes = [*around_one, 1.0, 0.5, 1e-3, 4 * float(info.tiny), 1e-30, 1e5, 1e30, big, 2.0, 3.0,
                  log_max - 0.5, log_max + 0.5, np.sqrt(big) / 2, np.sqrt(big), 2 * np.sqrt(big)]
    erfc_tail = np.linspace(-7.0, 28.0, 141)
    values = np.concatenate([[np.nan, np.inf, -np.inf, 0.0, -0.0], magnitudes, np.negative(magnitudes),
                             erfc_tail])
    with np.errstate(over="ignore"):
        return values.astype(dtype)


def _check(name: str, cases: list[Case]) -> None:
    fn, jax_fn = getattr(lax, name), getattr(jax.lax, name)
    check_cases(fn, jax_fn, [(_xla_representable(name, x),) for (x,) in cases], RTOL.get(name),
                signbits=True)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("dtype", [np.float16, BF16], ids=["f16", "bf16"])
def test_every_half_precision_value(name: str, dtype: Any) -> None:
    """All 65536 bit patterns (NaNs, infinities and -0.0 included)."""
    _check(name, [(np.arange(1 << 16, dtype=np.uint16).view(dtype),)])


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_tails_and_random_shapes(name: str, rng: np.random.Generator) -> None:
    """float32 edge values, and random values of every float dtype on random and degenerate shapes."""
    low, high = FUNCTIONS[name][1]
    cases: list[Case] = [(_tails(np.float32),)]
    for dtype in FLOAT_DTYPES:
        shapes = [random_shape(rng), random_shape(rng), *FIXED_SHAPES]
        cases += [(random_array(rng, shape, dtype, low, high),) for shape in shapes]
    _check(name, cases)


@pytest.mark.usefixtures("x64")
def test_float64() -> None:
    rng = np.random.default_rng(64)
    for name, (_, (low, high)) in FUNCTIONS.items():
        _check(name, [(_tails(np.float64),), (rng.uniform(low, high, 200),)])


def test_erfc_keeps_subnormal_results() -> None:
    """The reference rounds the exact erfc even where it is subnormal (XLA's CPU gives 0 there)."""
    x = np.array([9.2, 9.3, 9.4, 10.0], np.float32)
    exact = scipy.special.erfc(x.astype(np.float64)).astype(np.float32)
    assert np.all((exact > 0) & (exact < ml_dtypes.finfo(np.float32).tiny))
    for fn in (lax.erfc, mlax.jit(lax.erfc)):
        got = np.asarray(fn(x))
        np.testing.assert_array_equal(got, exact)
        np.testing.assert_allclose(got, np.asarray(jax.lax.erfc(x)), rtol=0,
                                   atol=float(ml_dtypes.finfo(np.float32).tiny))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_python_scalars_stay_weak(name: str) -> None:
    fn, jax_fn = getattr(lax, name), getattr(jax.lax, name)
    value = 1.5 if name == "acosh" else 0.25
    assert_same(fn(value), jax_fn(value))
    assert_same(mlax.jit(fn)(value), jax.jit(jax_fn)(value))
    x = np.float16(value)
    assert_same(mlax.jit(fn)(x), jax.jit(jax_fn)(x))


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("bad", [np.arange(3, dtype=np.int32), np.array([True]), 2],
                         ids=["int32", "bool", "py_int"])
def test_non_float_operands_are_rejected(name: str, bad: Any) -> None:
    """As jax.lax, no promotion: integers and booleans are a TypeError naming the function."""
    message = r"mlax\.erfc: operand must have floating-point" if name == "erfc" else (
        rf"mlax\.lax\.{name}: x must have a floating-point dtype, got")
    with pytest.raises(TypeError):
        getattr(jax.lax, name)(bad)
    for fn in (getattr(lax, name), mlax.jit(getattr(lax, name))):
        with pytest.raises(TypeError, match=message):
            fn(bad)


def test_composites_emit_primitives_only() -> None:
    """erfc is one op; the others are graphs of primitives, half floats widened once (in the
    function a custom_jvp call runs: its rule is jax's derivative, not the graph's)."""
    assert '"mlax.erfc"(%arg0) : (tensor<3xf32>) -> tensor<3xf32>' in mlax.make_mlir(lax.erfc)(
        np.ones(3, np.float32))
    for name in sorted(set(FUNCTIONS) - {"erfc"}):
        text = mlax.make_mlir(getattr(lax, name))(np.ones((2, 3), np.float16))
        assert f'"mlax.{name}"' not in text
        assert f"mlax.custom_jvp_call = {{callee = @{name}_real, jvp = @{name}_real_rule}}" in text, name
        body = text[text.index(f"func.func private @{name}_real("):]
        body = body[:body.index("func.func", 1)]
        assert body.count('"mlax.convert"') == 2, name
        assert '"mlax.log' in body or '"mlax.atan2"' in body or '"mlax.exp' in body
