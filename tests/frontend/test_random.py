"""mlax.random against jax.random: the same keys give the same bits and the same samples,
eagerly, under mlax.jit and under mlax.vmap over keys; gradients flow to the parameters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.random as jr
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
import mlax.random as mr
from tests.oracle import assert_same

SEEDS = (0, 1, -1, 42, 2**31 - 1, 2**32 + 5, np.int32(-7), np.uint32(4_000_000_000), np.int8(-3))
SHAPES = ((), (0,), (7,), (3, 5), (2, 0, 3), (2, 3, 3))
# Float samples past the bit tricks: XLA fuses uniform's `u * (maxval - minval) + minval`, mlax
# does not, and erf_inv's log1p differs from XLA's by an ulp now and then (docs/random.md).
CLOSE = {"rtol": 1e-6, "atol": 1e-6}
LOGITS = np.array([[0.1, 2.0, -1.0, 0.5], [1.0, 1.0, 1.0, 1.0], [-3.0, 0.0, 3.0, -np.inf]], np.float32)
P = np.array([0.125, 0.25, 0.5, 0.125], np.float32)  # a cumulative sum exact in any order
A = np.array([[0.0, np.nan, 2.0, 3.0], [4.0, -0.0, 6.0, np.inf], [8.0, 9.0, -np.inf, 11.0]], np.float32)


def assert_bits(actual: Any, expected: Any) -> None:
    """Same shape, dtype, weak type and bit pattern (NaN and -0.0 included)."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert (a.shape, a.dtype) == (e.shape, e.dtype)
    assert getattr(actual, "weak_type", False) == getattr(expected, "weak_type", False)
    if a.dtype.kind == "f" or a.dtype == ml_dtypes.bfloat16:
        a, e = a.view(f"u{a.itemsize}"), e.view(f"u{e.itemsize}")
    np.testing.assert_array_equal(a, e)


def _pair(seed: int) -> tuple[Any, Any]:
    return mr.PRNGKey(seed), jr.PRNGKey(seed)


def _compare(draw: Callable[[Any, Any], list[Any]], seeds: tuple[int, ...] = (0, 5),
             inexact: tuple[int, ...] = (), transform: Callable[..., Any] = lambda f: f) -> None:
    """``draw(mlax.random, key)`` (under ``transform``) against ``draw(jax.random, key)``, the
    latter in one jax.jit (one XLA compile instead of one per sampler): bit for bit, except
    the samples at positions ``inexact`` (see CLOSE)."""
    expected_fn = jax.jit(lambda k: draw(jr, k))
    actual_fn = transform(lambda k: draw(mr, k))
    for seed in seeds:
        key, jkey = _pair(seed)
        for i, (actual, expected) in enumerate(zip(actual_fn(key), expected_fn(jkey), strict=True)):
            if i in inexact:
                assert_same(actual, expected, **CLOSE)
            else:
                assert_bits(actual, expected)


def test_keys_from_seeds() -> None:
    for seed in SEEDS:
        expected = jr.PRNGKey(seed)
        assert_bits(mr.PRNGKey(seed), expected)
        assert_bits(mr.key_data(mr.key(seed)), jr.key_data(jr.key(seed)))
    assert_bits(mlax.jit(mr.PRNGKey)(np.int32(-5)), jr.PRNGKey(np.int32(-5)))
    assert_bits(mlax.vmap(mr.PRNGKey)(np.arange(4)), jax.vmap(jr.PRNGKey)(np.arange(4)))


def test_key_data_and_jax_keys() -> None:
    keys = mr.split(mr.PRNGKey(3), 4)
    assert_bits(mr.key_data(keys), keys)  # raw keys are their own data
    assert_bits(mr.key_data(mr.wrap_key_data(keys)), keys)
    # a JAX typed key is read as a typed key
    assert_bits(mr.key_data(mr.split(jr.key(3))), jr.key_data(jr.split(jr.key(3))))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_split_bits_uniform_normal(shape: tuple[int, ...]) -> None:
    _compare(lambda r, k: [r.split(k, shape), r.split(k, len(shape)), r.bits(k, shape), r.uniform(k, shape),
                           r.normal(k, shape)], seeds=(0, 2**32 + 5), inexact=(4,))


def test_narrow_dtypes() -> None:
    _compare(lambda r, k: [r.bits(k, (3, 5), np.uint8), r.bits(k, (3, 5), np.uint16),
                           r.uniform(k, (3, 5), np.float16), r.uniform(k, (3, 5), ml_dtypes.bfloat16)])


def test_fold_in() -> None:
    data = (0, 1, 2**31, 2**32 - 1, np.int64(-5), np.uint8(200), np.array(17, np.int32))
    _compare(lambda r, k: [r.fold_in(k, d) for d in data], seeds=(3,))
    key = mr.PRNGKey(3)
    batched = mlax.vmap(mr.fold_in, in_axes=(None, 0))(key, np.arange(5, dtype=np.int32))
    assert_bits(batched, mnp.stack([mr.fold_in(key, i) for i in range(5)]))


RANDINT_CASES = [  # spans of every kind: small, empty, past the dtype's range, the full range
    ((3, 5), np.array([0, 10, 100, -4, 7]), np.array([1000, 5, 101, 4, 2**31 - 1]), None),
    ((), 3, 9, np.int16), ((7,), 0, 256, np.uint8), ((4,), -(2**31), 2**31 - 1, np.int32),
    ((0, 2), 0, 3, None), ((3,), np.float32(-7.9), np.float32(12.2), np.uint32),
]


def test_randint() -> None:
    _compare(lambda r, k: [r.randint(k, *case) for case in RANDINT_CASES])


def test_bernoulli() -> None:
    cases = [(0.3, (3, 5)), (np.array([0.1, 0.5, 0.9], np.float32), None),
             (np.array([0.0, 1.0], np.float16), (3, 2))]
    _compare(lambda r, k: [r.bernoulli(k, p, shape, mode) for p, shape in cases for mode in ("low", "high")])


def test_categorical_and_gumbel() -> None:
    cases = [(-1, None), (0, (2, 4)), (-1, (2, 1, 3))]
    _compare(lambda r, k: [r.gumbel(k, (3, 4)), r.gumbel(k, (3, 4), mode="high"),
                           r.categorical(k, np.zeros(5, np.float32)),
                           *[r.categorical(k, LOGITS, axis, shape) for axis, shape in cases]], inexact=(0, 1))


def test_truncated_normal_and_uniform_bounds() -> None:
    cases = [(-1.0, 2.0, (3, 5)), (np.array([-1.0, 0.0, 1.0], np.float32), 3.0, None), (0.5, 0.6, (4,)),
             (-np.inf, 0.0, (5,))]
    high = np.arange(1, 6, dtype=np.float32)
    # XLA fuses `u * (high - low) + low` into a fused multiply-add: an ulp apart at most
    _compare(lambda r, k: [r.uniform(k, (3, 5), minval=-2.0, maxval=high),
                           *[r.truncated_normal(k, lower, upper, shape) for lower, upper, shape in cases]],
             inexact=tuple(range(len(cases) + 1)))


def test_choice() -> None:
    ints = np.arange(12, dtype=np.int32).reshape(3, 4)
    _compare(lambda r, k: [r.choice(k, 7, (3, 2)), r.choice(k, A, (5,), axis=1), r.choice(k, ints, (2, 2)),
                           r.choice(k, 4, (6,), p=P), r.choice(k, A, (2, 3), p=P, axis=1),
                           r.choice(k, A, (0,)), r.choice(k, 1, (1,), replace=False), r.permutation(k, 1),
                           r.permutation(k, A[:1])])


def test_permutation_and_choice_without_replacement() -> None:
    """jax's shuffle (sorts by random keys) and Gumbel top-k, bit for bit, eagerly and under jit."""
    ints = np.arange(12, dtype=np.int32).reshape(3, 4)
    def draw(r: Any, k: Any) -> list[Any]:
        return [r.permutation(k, 9), r.permutation(k, A, axis=1), r.permutation(k, ints, 0, True),
                r.permutation(k, A.reshape(-1)), r.choice(k, 5, (2,), replace=False),
                r.choice(k, A, (2,), replace=False, axis=1), r.choice(k, 4, (3,), replace=False, p=P),
                r.categorical(k, LOGITS, replace=False), r.categorical(k, LOGITS, 0, (3, 4), replace=False)]

    _compare(draw, seeds=(0, 7))
    _compare(lambda r, k: draw(r, k)[:2], seeds=(3,), transform=mlax.jit)


def _samplers(key: Any) -> list[Any]:
    """One sample of every mlax.random sampler; the normals last."""
    return [
        mr.split(key, (2, 3)), mr.fold_in(key, 7), mr.bits(key, (3, 5)),
        mr.uniform(key, (5,), ml_dtypes.bfloat16), mr.randint(key, (7,), 0, 256, np.uint8),
        mr.bernoulli(key, 0.3, (2, 3)), mr.categorical(key, LOGITS),
        mr.choice(key, A, (5,), axis=1), mr.choice(key, 4, (6,), p=P), mr.normal(key, (0, 3)),
        mr.truncated_normal(key, -1.0, 2.0, (5,)), mr.normal(key, (3,)),
    ]


def test_under_jit() -> None:
    """Compiled samples are the eager ones (checked against JAX above) bit for bit, except the
    normals: the compiled log1p inside erf_inv is a polynomial of its own (mlax-approximate-math)."""
    key, jkey = _pair(11)
    compiled, eager = mlax.jit(_samplers)(key), _samplers(key)
    for actual, expected in zip(compiled[:-2], eager[:-2], strict=True):
        assert_bits(actual, expected)
    assert_same(compiled[-2], eager[-2], **CLOSE)
    assert_same(compiled[-1], jr.normal(jkey, (3,)), **CLOSE)


def test_under_vmap_over_keys() -> None:
    """vmap over split keys draws what each key draws on its own."""
    keys = mr.split(mr.PRNGKey(12), 3)

    def draw(k: Any) -> list[Any]:
        return [mr.normal(k, (2,)), mr.randint(k, (3,), 0, 9), mr.uniform(k, ()), mr.split(k),
                mr.fold_in(k, 3), mr.categorical(k, LOGITS)]

    batched = mlax.vmap(draw)(keys)
    for i in range(3):
        for actual, expected in zip(batched, draw(keys[i]), strict=True):
            assert_same(actual[i], expected, **CLOSE)
    assert_bits(keys, jr.split(jr.PRNGKey(12), 3))


def test_grad_through_samples() -> None:
    key, jkey = _pair(13)
    x = np.array([0.5, -1.0, 2.0], np.float32)

    def loss(r: Any, x: Any, k: Any) -> Any:
        return (x * r.normal(k, (3,)) + r.uniform(k, (3,)) * x * x).sum()

    expected = jax.jit(jax.grad(lambda x, k: loss(jr, x, k)))(x, jkey)
    assert_same(mlax.grad(lambda x, k: loss(mr, x, k))(x, key), expected, **CLOSE)
    assert_same(mlax.jit(mlax.grad(lambda x, k: loss(mr, x, k)))(x, key), expected, **CLOSE)


def test_normal_of_key_zero() -> None:
    expected = jr.normal(jr.key(0), (3,))
    assert_same(mlax.random.normal(mlax.random.key(0), (3,)), expected, **CLOSE)
    assert_same(mlax.jit(lambda k: mlax.random.normal(k, (3,)))(mlax.random.key(0)), expected, **CLOSE)


@pytest.mark.parametrize("shape", [(), (3,), (2, 5)])
def test_complex_normal(shape: tuple[int, ...]) -> None:
    """Complex normal samples as jax's: parts from the key's two halves, each scaled by 1/sqrt 2."""
    _compare(lambda r, k: [r.normal(k, shape, np.complex64)], inexact=(0,))
    _compare(lambda r, k: [r.normal(k, shape, np.complex64)], inexact=(0,), transform=mlax.jit)
    assert mr.normal(mr.key(1), shape, np.complex64).dtype == np.complex64


def test_x64(x64: None) -> None:
    for seed in (-1, 2**40 + 3, np.int32(-7), np.uint64(2**63 + 5)):
        assert_bits(mr.PRNGKey(seed), jr.PRNGKey(seed))
    _compare(lambda r, k: [r.bits(k, (3, 5)), r.uniform(k, (3, 5)), r.uniform(k, (4,), np.float32),
                           r.randint(k, (7,), -(2**40), 2**50), r.normal(k, (7,))], seeds=(5,), inexact=(4,))
    _compare(lambda r, k: [r.bits(k, (4,))], seeds=(5,), transform=mlax.jit)


ERRORS = [
    (ValueError, "without replacement", lambda k: mr.categorical(k, LOGITS, shape=(5, 3), replace=False)),
    (ValueError, "single key", lambda k: mr.normal(mr.split(k), (3,))),
    (TypeError, "uint32 array", lambda k: mr.uniform(np.zeros(2, np.int32))),
    (TypeError, "uint32 array", lambda k: mr.split(np.zeros(3, np.uint32))),
    (OverflowError, "out of bounds", lambda k: mr.fold_in(k, -1)),
    (TypeError, "scalar", lambda k: mr.fold_in(k, np.arange(2))),
    (TypeError, "integer", lambda k: mr.PRNGKey(1.0)),
    (TypeError, "scalar seed", lambda k: mr.PRNGKey(np.arange(2))),
    (ValueError, "an unsigned int dtype", lambda k: mr.bits(k, (2,), np.int32)),
    (ValueError, "a float or complex dtype", lambda k: mr.normal(k, (2,), np.int32)),
    (TypeError, "integer dtypes", lambda k: mr.randint(k, (2,), 0, 3, np.float32)),
    (TypeError, "floating dtype", lambda k: mr.bernoulli(k, np.array([1, 0]))),
    (ValueError, "larger sample", lambda k: mr.choice(k, 3, (4,), replace=False)),
    (ValueError, "p must be", lambda k: mr.choice(k, 3, (2,), p=P)),
    (TypeError, "broadcast", lambda k: mr.uniform(k, (3,), minval=np.zeros(4, np.float32))),  # jax: TypeError
    (TypeError, "Shapes must be 1D sequences", lambda k: mr.normal(k, (2.5,))),
]


@pytest.mark.parametrize(("error", "match", "call"), ERRORS, ids=[f"{e.__name__}-{i}" for i, (e, _, _) in
                                                                  enumerate(ERRORS)])
def test_errors(error: type[Exception], match: str, call: Callable[[Any], Any]) -> None:
    with pytest.raises(error, match=match):
        call(mr.PRNGKey(0))


def test_module_attribute() -> None:
    assert "random" in dir(mlax) and mlax.random is mr
    assert isinstance(mr.uniform(mr.key(0), (2,)), mnp.ndarray)


def test_normal_tails_match_jax() -> None:
    """erf_inv is XLA's polynomial eagerly and compiled, so normals agree with JAX's to 2 ulp,
    tails included (a correctly rounded erf_inv differs from XLA's by up to ~90 ulp there)."""
    key, jkey = _pair(21)
    expected = np.asarray(jr.normal(jkey, (20000,)))
    for actual in (mr.normal(key, (20000,)), mlax.jit(lambda k: mr.normal(k, (20000,)))(key)):
        np.testing.assert_allclose(np.asarray(actual), expected, rtol=5e-7, atol=1e-7)
