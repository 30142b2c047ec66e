"""mlax.dtypes against jax.dtypes: promotion of mlax values with weak types (eagerly and on
tracers), canonicalization under x64, finfo/iinfo of every dtype mlax computes with, key
dtypes, float0; and jax.dtypes under install_as_jax is mlax's."""

from __future__ import annotations

from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.dtypes as mdt
import mlax.numpy as mnp

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint32, np.float16, ml_dtypes.bfloat16,
          np.float32]


def test_result_type_of_mlax_values(rng: np.random.Generator) -> None:
    """Pairs of random dtypes with weak and strong operands: the same result as jax's on jax values."""
    for _ in range(40):
        a, b = (DTYPES[i] for i in rng.integers(0, len(DTYPES), 2))
        for weak_scalar in (2, 2.5, True):
            ours = [mnp.asarray(np.ones(2, a)), mnp.asarray(np.ones(2, b)), weak_scalar]
            theirs = [jax.numpy.asarray(np.ones(2, a)), jax.numpy.asarray(np.ones(2, b)), weak_scalar]
            assert mdt.result_type(*ours) == jax.dtypes.result_type(*theirs)
            assert mdt.result_type(ours[0], weak_scalar, return_weak_type_flag=True) == \
                jax.dtypes.result_type(theirs[0], weak_scalar, return_weak_type_flag=True)


def test_result_type_on_tracers() -> None:
    seen = []
    mlax.jit(lambda x: seen.append(mdt.result_type(x, 1.5)) or x)(np.arange(3, dtype=np.int32))
    assert seen == [jax.dtypes.result_type(jax.numpy.arange(3, dtype=np.int32), 1.5)]


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.float64, np.complex128, np.float32, "bfloat16"])
def test_canonicalize_dtype(dtype: Any, x64: None) -> None:
    assert mdt.canonicalize_dtype(dtype) == jax.dtypes.canonicalize_dtype(dtype)


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.int8])
def test_canonicalize_dtype_narrows_without_x64(dtype: Any) -> None:
    assert mdt.canonicalize_dtype(dtype) == jax.dtypes.canonicalize_dtype(dtype)
    assert mdt.canonicalize_dtype(dtype).itemsize <= 4


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64])
def test_finfo(dtype: Any) -> None:
    ours, theirs = mdt.finfo(dtype), jax.dtypes.finfo(dtype)
    for field in ("eps", "max", "min", "tiny", "bits", "nmant", "nexp", "resolution"):
        assert getattr(ours, field) == getattr(theirs, field), field


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint32, np.int64])
def test_iinfo(dtype: Any) -> None:
    ours, theirs = mdt.iinfo(dtype), jax.dtypes.iinfo(dtype)
    assert (ours.min, ours.max, ours.bits) == (theirs.min, theirs.max, theirs.bits)


def test_issubdtype_keys_and_float0() -> None:
    key = mlax.random.key(0)
    assert mdt.issubdtype(key.dtype, mdt.prng_key)
    assert mdt.issubdtype(key.dtype, mdt.extended)
    assert not mdt.issubdtype(np.float32, mdt.prng_key)
    assert mdt.issubdtype(ml_dtypes.bfloat16, np.floating)
    assert mdt.float0 == jax.dtypes.float0
    assert mdt.scalar_type_of(mnp.ones(2, np.int32)) is int
    assert mdt.itemsize_bits(np.int8) == 8


def test_install_as_jax_status() -> None:
    from mlax import jax_modules

    for name in jax_modules.public_names(jax_modules.real_module("jax.dtypes")):
        assert jax_modules.status("jax.dtypes", name) == "mlax", name


def test_bfloat16_is_jax_s_scalar_type() -> None:
    """jax.dtypes.bfloat16 is a scalar type: calling it makes a scalar (equinox's tests do)."""
    value = float(np.random.default_rng(3).uniform(-4, 4))
    assert mdt.bfloat16 is jax.dtypes.bfloat16
    got, want = mdt.bfloat16(value), jax.dtypes.bfloat16(value)
    assert type(got) is type(want) and got == want
    assert np.dtype(mdt.bfloat16) == np.dtype(jax.dtypes.bfloat16)
    assert mnp.zeros(2, mdt.bfloat16).dtype == jax.numpy.zeros(2, jax.dtypes.bfloat16).dtype
    assert mdt.issubdtype(mdt.bfloat16, np.floating)
