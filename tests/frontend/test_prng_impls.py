"""PRNG implementations other than threefry2x32, as jax's (dm-haiku's random tests):
``jax_default_prng_impl`` / ``default_prng_impl("rbg")`` for raw keys and keys made without
``impl=``, rbg keys seeded, split and folded bit for bit as jax's, unsafe_rbg's seed, custom
implementations of ``jax.extend.random.define_prng_impl`` (their functions run on mlax values),
and jax's errors; the random bits of rbg (XLA's RngBitGenerator) are refused with the reason."""

from __future__ import annotations

from typing import Any

import jax
import jax.extend as jex
import numpy as np
import pytest

import mlax

LIBS = (jax, mlax)


def _same(ours: Any, theirs: Any) -> None:
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype


@pytest.mark.parametrize("seed", [0, 42, 2**31 + 7, -5])
def test_rbg_raw_keys_under_the_default_impl(seed: int) -> None:
    got = {}
    for lib in LIBS:
        with lib.default_prng_impl("rbg"):
            k = lib.random.PRNGKey(seed)
            got[lib] = (k, lib.random.split(k), lib.random.split(k, (2, 3)), lib.random.fold_in(k, 1234),
                        lib.jit(lambda k, lib=lib: lib.random.split(k, 5))(k))
    for ours, theirs in zip(got[mlax], got[jax], strict=True):
        _same(ours, theirs)
    assert got[mlax][0].shape == (4,)


def test_typed_rbg_and_unsafe_rbg_keys() -> None:
    got = {}
    for lib in LIBS:
        rbg = lib.random.key(11, impl="rbg")
        with lib.default_prng_impl("unsafe_rbg"):
            unsafe = lib.random.key(12)
        got[lib] = (rbg.dtype, lib.random.key_data(rbg), lib.random.key_data(lib.random.split(rbg, 3)),
                    lib.random.key_data(lib.random.fold_in(rbg, 9)), str(lib.random.key_impl(rbg)),
                    unsafe.dtype, lib.random.key_data(unsafe), lib.random.split(rbg, 3).shape,
                    lib.vmap(lambda k, lib=lib: lib.random.key_data(lib.random.fold_in(k, 3)))(
                        lib.random.split(rbg, 3)),
                    lib.random.key_data(lib.numpy.where(np.array([True, False]), lib.random.split(rbg),
                                                        lib.random.split(rbg)[::-1])))
    assert got[mlax][0] == got[jax][0] and got[mlax][5] == got[jax][5]
    assert got[mlax][4] == got[jax][4] == "rbg"
    assert got[mlax][7] == got[jax][7] == (3,)
    for i in (1, 2, 3, 6, 8, 9):
        _same(got[mlax][i], got[jax][i])


def test_default_impl_is_a_config_option() -> None:
    assert mlax.config.jax_default_prng_impl == "threefry2x32"
    with mlax.default_prng_impl("rbg"):
        assert mlax.config.jax_default_prng_impl == "rbg"
        assert mlax.random.key(0).dtype == jax.random.key_dtype("rbg")
    assert mlax.random.PRNGKey(0).shape == (2,)
    for lib in LIBS:
        with pytest.raises(ValueError, match="new enum value must be in"):
            lib.config.update("jax_default_prng_impl", "philox")


def test_key_data_of_the_wrong_shape_is_jax_error() -> None:
    data = np.arange(6, dtype=np.uint32).reshape(2, 3)
    for lib in LIBS:
        with pytest.raises(TypeError, match=r"expected key_data.shape to end with \(4,\)"):
            lib.random.wrap_key_data(data, impl="rbg")
    with mlax.default_prng_impl("rbg"), pytest.raises(TypeError, match="uint32 array of shape"):
        mlax.random.split(np.zeros(2, np.uint32))


@pytest.mark.parametrize("sampler", ["uniform", "normal", "bits"])
def test_rbg_random_bits_are_refused_with_the_reason(sampler: str) -> None:
    with pytest.raises(NotImplementedError, match="RngBitGenerator"):
        getattr(mlax.random, sampler)(mlax.random.key(1, impl="rbg"), (3,))
    with mlax.default_prng_impl("unsafe_rbg"), pytest.raises(NotImplementedError, match="RngBitGenerator"):
        mlax.random.split(mlax.random.PRNGKey(1))


@pytest.mark.parametrize("impl", ["threefry4x32", "philox2x32", "philox4x32"])
def test_jaxs_other_implementations_are_refused(impl: str) -> None:
    with pytest.raises(NotImplementedError, match=f"does not implement the {impl} PRNG"):
        mlax.random.key(0, impl=impl)
    with mlax.default_prng_impl(impl), pytest.raises(NotImplementedError, match=impl):
        mlax.random.PRNGKey(0)


def _custom(lib: Any, calls: list[str]) -> Any:
    lnp = lib.numpy

    def seed(s: Any) -> Any:
        calls.append("seed")
        return lnp.full((3,), s, np.uint32) * np.uint32(2654435761)

    def split(key: Any, shape: tuple[int, ...]) -> Any:
        calls.append("split")
        n = int(np.prod(shape))
        counters = lnp.arange(1, n + 1, dtype=np.uint32)[:, None]
        return lnp.reshape(key[None, :] * np.uint32(31) + counters, (*shape, 3))

    def fold_in(key: Any, data: Any) -> Any:
        calls.append("fold_in")
        return key ^ lnp.asarray(data, np.uint32)

    return jex.random.define_prng_impl(key_shape=(3,), seed=seed, split=split, fold_in=fold_in,
                                       random_bits=lambda key, bit_width, shape: lnp.zeros(shape, np.uint32),
                                       name="counter", tag="ctr")


def test_custom_implementation_runs_its_functions() -> None:
    got, calls = {}, {}
    for lib in LIBS:
        calls[lib] = []
        impl = _custom(lib, calls[lib])
        k = lib.random.key(7, impl=impl)
        data = lib.random.key_data
        got[lib] = (k.shape, k.dtype, data(k), data(lib.random.split(k, (2, 2))),
                    data(lib.random.fold_in(k, 5)), lib.random.split(k).shape)
    assert calls[mlax] == calls[jax]
    assert got[mlax][0] == got[jax][0] == ()
    assert str(got[mlax][1]) == str(got[jax][1]) == "key<ctr>"
    assert got[mlax][5] == got[jax][5] == (2,)
    for i in (2, 3, 4):
        _same(got[mlax][i], got[jax][i])
