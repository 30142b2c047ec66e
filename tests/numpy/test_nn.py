"""mlax.nn and mlax.scipy.special against jax.nn and jax.scipy.special: values (eager and
jitted), dtypes and weak types, numerical stability on large inputs, options, errors."""

from __future__ import annotations

from typing import Any

import jax
import jax.scipy.special as jsp
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.nn as mnn
import mlax.scipy.special as msp
from tests.numpy.helpers import check_abstract, check_values, operand

BF16 = np.dtype(ml_dtypes.bfloat16)
ACTIVATIONS = ["relu", "relu6", "sigmoid", "softplus", "silu", "swish", "log_sigmoid", "elu", "leaky_relu",
               "celu", "selu", "hard_tanh", "hard_sigmoid", "hard_silu", "hard_swish", "soft_sign", "mish",
               "squareplus", "sparse_plus", "sparse_sigmoid", "identity", "tanh", "gelu"]
SPECIAL = ["erf", "erfc", "erfinv", "expit", "logit"]


def check_both(spell: Any, *args: Any, **kw: Any) -> None:
    """``check_values`` of one spelling, ``spell(lib)``, with lib = mlax and jax."""
    check_values(spell(mlax), spell(jax), *args, **kw)


@pytest.mark.parametrize("name", ACTIVATIONS)
@pytest.mark.parametrize("dtype", [np.float32, BF16, np.int8, float, int],
                         ids=["f32", "bf16", "i8", "py_float", "py_int"])
def test_activation(name: str, dtype: Any, rng: np.random.Generator) -> None:
    x = operand(rng, dtype, (2, 3, 4) if name in ("relu", "gelu", "softplus") else None)
    if np.dtype(type(x) if isinstance(x, (int, float)) else x.dtype).kind == "f" and name != "identity":
        # atol: 1 + tanh(...) and friends cancel, amplifying XLA's few-ulp tanh/exp differences
        check_values(getattr(mnn, name), getattr(jax.nn, name), x, atol=1e-6)
    else:  # integer inputs: the dtype (or the error) is the point
        check_abstract(getattr(mnn, name), getattr(jax.nn, name), x)


def test_activations_on_large_inputs() -> None:
    x = np.array([-1e4, -80.0, -20.0, -1e-3, 0.0, 1e-3, 20.0, 80.0, 1e4], np.float32)
    for name in ("sigmoid", "softplus", "log_sigmoid", "silu", "elu", "celu", "selu", "mish", "gelu"):
        check_values(getattr(mnn, name), getattr(jax.nn, name), x)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, BF16, np.int8, float, int],
                         ids=["f32", "f16", "bf16", "i8", "py_float", "py_int"])
def test_gelu_exact(dtype: Any, rng: np.random.Generator) -> None:
    """``x/2 erfc(-x/sqrt 2)``: NaN/inf included; integers promote to float."""
    shape = () if dtype in (float, int) else (3, 4)
    check_both(lambda m: lambda a: m.nn.gelu(a, approximate=False), operand(rng, dtype, shape or None))


def test_gelu_exact_tails() -> None:
    """Far left the exact gelu is a tiny negative number (erfc, not 1 + erf, which would be 0)."""
    x = np.array([-1e4, -13.0, -12.0, -9.0, -5.0, -1e-3, 0.0, -0.0, 1e-3, 5.0, 9.0, 1e4], np.float32)
    check_both(lambda m: lambda a: m.nn.gelu(a, approximate=False), x, rtol=5e-6)
    assert np.all(np.asarray(mnn.gelu(x[2:4], approximate=False)) < 0)


def test_activation_parameters(rng: np.random.Generator) -> None:
    x = operand(rng, np.float32, (3, 4))
    check_both(lambda m: lambda a: m.nn.elu(a, 0.5), x)
    check_both(lambda m: lambda a: m.nn.celu(a, 2.0), x)
    check_both(lambda m: lambda a: m.nn.leaky_relu(a, 0.2), x)
    check_both(lambda m: lambda a: m.nn.squareplus(a, 1.5), x)
    check_both(lambda m: lambda a: m.nn.glu(a, axis=1), x)
    check_both(lambda m: lambda a: m.nn.glu(a, axis=0), operand(rng, np.float32, (4, 1)))


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "logsumexp"])
@pytest.mark.parametrize("axis", [-1, 0, (0, 2), None])
def test_softmax_family(name: str, axis: Any, rng: np.random.Generator) -> None:
    x = operand(rng, np.float32, (2, 3, 4), specials=False) * 30  # large values: the max must be subtracted
    check_values(lambda a: getattr(mnn, name)(a, axis=axis), lambda a: getattr(jax.nn, name)(a, axis=axis), x,
                 rtol=1e-5, atol=1e-6)


@pytest.mark.filterwarnings("ignore:invalid value encountered in cast")  # JAX folds -inf to int
def test_softmax_edge_cases(rng: np.random.Generator) -> None:
    rows = np.array([[1e4, 0.0, -1e4], [-np.inf, 0.0, 1.0], [-np.inf] * 3, [np.nan, 1.0, 2.0]], np.float32)
    for name in ("softmax", "log_softmax", "logsumexp"):
        check_values(getattr(mnn, name), getattr(jax.nn, name), rows)
    mask = rng.random((3, 4)) < 0.7
    x = operand(rng, np.float32, (3, 4), specials=False)
    for name in ("softmax", "log_softmax"):
        check_both(lambda m, n=name: lambda a, w: getattr(m.nn, n)(a, axis=1, where=w), x, mask)
    check_both(lambda m: lambda a: m.nn.softmax(a), np.arange(6, dtype=np.int32).reshape(2, 3))
    check_both(lambda m: lambda a: m.nn.softmax(a), operand(rng, BF16, (2, 5), specials=False))


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis: int, rng: np.random.Generator) -> None:
    dtype = (np.int32, np.int8, np.uint8)[int(rng.integers(3))]
    labels = rng.integers(-1, 6, size=(2, 3)).astype(dtype)
    for out_dtype in (None, np.int8, bool, BF16):
        check_both(lambda m, d=out_dtype: lambda a: m.nn.one_hot(a, 5, dtype=d, axis=axis), labels)


def test_one_hot_scalar() -> None:
    check_both(lambda m: lambda a: m.nn.one_hot(a, 3), np.int32(2))


def test_standardize(rng: np.random.Generator) -> None:
    x = operand(rng, np.float32, (3, 5), specials=False)
    check_both(lambda m: lambda a: m.nn.standardize(a), x, rtol=1e-5, atol=1e-6)
    check_both(lambda m: lambda a: m.nn.standardize(a, axis=0, epsilon=1e-3), x, rtol=1e-5, atol=1e-6)
    mean, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    check_both(lambda m: lambda a, mu, v: m.nn.standardize(a, mean=mu, variance=v), x, mean, var, rtol=1e-5)


# --- scipy.special -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", SPECIAL)
@pytest.mark.parametrize("dtype", [np.float32, BF16, np.int32, float])
def test_special_functions(name: str, dtype: Any, rng: np.random.Generator) -> None:
    low, high = {"erfinv": (-1.0, 1.0), "logit": (0.0, 1.0)}.get(name, (-4.0, 4.0))
    x = operand(rng, dtype, (3, 4))
    if dtype in (np.float32, BF16):
        x = rng.uniform(low, high, size=(3, 4)).astype(dtype)
    check_values(getattr(msp, name), getattr(jsp, name), x, rtol=2e-5 if dtype == np.float32 else None)


def test_erfc_tails(rng: np.random.Generator) -> None:
    """erfc keeps its relative precision far right, where 1 - erf(x) would be 0."""
    x = np.concatenate([rng.uniform(-6, 9.1, 50), [-np.inf, -30.0, 12.0, 30.0, np.inf, np.nan, -0.0]])
    check_values(msp.erfc, jsp.erfc, x.astype(np.float32), rtol=5e-6)
    check_values(msp.erfc, jsp.erfc, x.astype(np.float16))
    check_values(msp.erfc, jsp.erfc, np.arange(-3, 8, dtype=np.int8))


@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_xlogy(name: str, rng: np.random.Generator) -> None:
    x = np.where(rng.random((3, 4)) < 0.3, 0.0, rng.uniform(-2, 2, (3, 4))).astype(np.float32)
    y = rng.choice(np.array([0.0, -1.0, 2.5, np.nan, np.inf, 0.5], np.float32), size=(4,))
    check_values(getattr(msp, name), getattr(jsp, name), x, y)
    check_values(getattr(msp, name), getattr(jsp, name), 0, 3)


def test_logsumexp_options(rng: np.random.Generator) -> None:
    a = operand(rng, np.float32, (2, 3, 4), specials=False) * 20
    b = rng.uniform(-1, 2, size=(3, 4)).astype(np.float32)
    b[0, 0] = 0.0
    for kw in ({"axis": 1, "keepdims": True}, {"axis": (0, 2)}, {}, {"axis": -1, "return_sign": True}):
        check_both(lambda m, kw=kw: lambda x: m.scipy.special.logsumexp(x, **kw), a, rtol=1e-5)
        check_both(lambda m, kw=kw: lambda x, y: m.scipy.special.logsumexp(x, b=y, **kw), a, b, rtol=1e-5)
    mask = rng.random((2, 3, 4)) < 0.5
    check_both(lambda m: lambda x, w: m.scipy.special.logsumexp(x, axis=2, where=w), a, mask, rtol=1e-5)
    check_both(lambda m: lambda x: m.scipy.special.logsumexp(x), np.arange(4, dtype=np.int32))
    check_both(lambda m: lambda x: m.scipy.special.logsumexp(x), np.full(3, -np.inf, np.float32))
    check_both(lambda m: lambda x: m.scipy.special.logsumexp(x), 2.0)


def test_errors() -> None:
    with pytest.raises(TypeError, match="logistic"):
        mnn.sigmoid(np.arange(3))
    with pytest.raises(ValueError, match="glu"):
        mnn.glu(np.ones((2, 3)))
    with pytest.raises(ValueError, match="one_hot.*out of bounds"):
        mnn.one_hot(np.arange(3), 4, axis=3)
    with pytest.raises(ValueError, match="logsumexp.*out of bounds"):
        msp.logsumexp(np.ones((2, 3)), axis=2)
    with pytest.raises(TypeError, match="xlogy requires ndarray"):
        msp.xlogy([1.0], 2.0)
