"""mlax.nn.dot_product_attention, log1mexp and logmeanexp against jax.nn: every mask kind,
bias, grouped-query heads, rank-3 inputs, bf16, the residual; eagerly, under mlax.jit and
mlax.vmap; gradients against jax.grad; jax's errors for bad shapes and dtypes."""

from __future__ import annotations

from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.nn as mnn
from tests.oracle import assert_same, check_against_jax, random_array

RNG = np.random.default_rng(23)
B, T, S, N, K, H = 2, 5, 6, 4, 2, 8


def arr(shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    return random_array(RNG, shape, dtype, -2.0, 2.0)


QKV = (arr((B, T, N, H)), arr((B, S, K, H)), arr((B, S, K, H)))
LENGTHS = {"query_seq_lengths": np.array([3, 5], np.int32),
           "key_value_seq_lengths": np.array([6, 2], np.int32)}
OPTIONS = [
    ("plain", {}),
    ("bias", {"bias": arr((1, N, T, S))}),
    ("mask", {"mask": RNG.random((B, 1, T, S)) < 0.7}),
    ("causal_scaled", {"is_causal": True, "scale": 0.3}),
    ("lengths", LENGTHS),
    ("window", {"local_window_size": (1, 2), "implementation": "xla"}),
    ("residual", {"return_residual": True, "is_causal": True, "bias": arr((B, 1, T, S))}),
]


@pytest.mark.parametrize("options", [o[1] for o in OPTIONS], ids=[o[0] for o in OPTIONS])
def test_attention(options: dict[str, Any]) -> None:
    def call(nn: Any) -> Any:
        return lambda q, k, v: nn.dot_product_attention(q, k, v, **options)

    check_against_jax(call(mnn), jax.jit(call(jax.nn)), *QKV, rtol=2e-5, atol=2e-6)


def test_attention_rank3_bf16_and_vmap() -> None:
    q, k, v = (x[0] for x in QKV)
    check_against_jax(mnn.dot_product_attention, jax.nn.dot_product_attention, q, k, v, rtol=2e-5, atol=2e-6)
    low = [x.astype(ml_dtypes.bfloat16) for x in QKV]
    fn = lambda nn: lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True)  # noqa: E731
    assert_same(mlax.jit(fn(mnn))(*low), jax.jit(fn(jax.nn))(*low), rtol=1e-2, atol=1e-2)
    assert_same(mlax.vmap(fn(mnn))(*QKV), jax.jit(jax.vmap(fn(jax.nn)))(*QKV), rtol=2e-5, atol=2e-6)


def test_attention_grad() -> None:
    bias = arr((1, N, T, S))

    def loss(nn: Any) -> Any:
        return lambda q, k, v: (nn.dot_product_attention(q, k, v, bias, is_causal=True, **LENGTHS) ** 2).sum()

    expected = jax.jit(jax.grad(loss(jax.nn), (0, 1, 2)))(*QKV)
    assert_same(mlax.grad(loss(mnn), (0, 1, 2))(*QKV), expected, rtol=1e-4, atol=1e-5)


ERRORS = [
    (ValueError, lambda q, k, v: (q, k, v[:, :-1])),  # value's shape differs from key's
    (ValueError, lambda q, k, v: (q[..., :-1], k, v)),  # head dims differ
    (ValueError, lambda q, k, v: (q[:, :, :3], k, v)),  # 3 query heads over 2 key heads
    (ValueError, lambda q, k, v: (q.astype(np.float16), k, v)),  # dtypes differ
]


@pytest.mark.parametrize(("error", "bend"), ERRORS)
def test_attention_errors(error: type[Exception], bend: Any) -> None:
    args = bend(*QKV)
    with pytest.raises(error):
        jax.nn.dot_product_attention(*args)
    with pytest.raises(error):
        mnn.dot_product_attention(*args)


def test_attention_mask_dtype_and_implementation() -> None:
    for nn in (jax.nn, mnn):
        with pytest.raises(ValueError, match="mask dtype"):
            nn.dot_product_attention(*QKV, mask=np.ones((1, 1, T, S), np.int32))
        with pytest.raises(ValueError, match="implementation"):
            nn.dot_product_attention(*QKV, implementation="pallas")


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_log1mexp(dtype: Any) -> None:
    spread = np.abs(arr((40,))) * 10.0 ** RNG.integers(-4, 2, 40)
    x = np.concatenate([spread, [0.0, np.log(2.0), 50.0, np.inf]])
    x = x.astype(dtype)
    check_against_jax(mnn.log1mexp, jax.nn.log1mexp, x, rtol=2e-6 if dtype == np.float32 else 2e-3)
    g32 = x.astype(np.float32)[1:-1] + np.float32(1e-3)
    expected = jax.grad(lambda v: jax.nn.log1mexp(v).sum())(g32)
    assert_same(mlax.grad(lambda v: mnn.log1mexp(v).sum())(g32), expected, rtol=1e-6)


def test_logmeanexp() -> None:
    x, where = arr((3, 4)) * 20, RNG.random((3, 4)) < 0.6
    for kwargs in ({}, {"axis": 1, "where": where}, {"axis": (0, 1), "keepdims": True}):
        def call(nn: Any, kwargs: dict[str, Any] = kwargs) -> Any:
            return lambda v: nn.logmeanexp(v, **kwargs)

        check_against_jax(call(mnn), call(jax.nn), x, rtol=1e-6)
    check_against_jax(mnn.logmeanexp, jax.nn.logmeanexp, np.arange(5, dtype=np.int32), rtol=1e-6)
