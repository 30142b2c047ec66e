"""mlax.config: the x64 switch is JAX's, so dtype rules always agree with the oracle."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp


def test_default_is_32_bit() -> None:
    assert not mlax.config.x64
    assert mnp.asarray(np.arange(3)).dtype == np.int32
    assert mnp.asarray(np.ones(2)).dtype == np.float32
    assert mnp.asarray(1.5).dtype == jnp.asarray(1.5).dtype


def test_x64_mode(x64: None) -> None:
    assert mlax.config.x64 and jax.config.jax_enable_x64
    assert mnp.asarray(np.ones(2)).dtype == np.float64
    assert mnp.asarray(np.arange(3)).dtype == np.int64
    x = mnp.asarray(np.ones(2))
    out = mlax.jit(lambda v: v * 2.0)(x)
    assert out.dtype == np.float64


def test_aliases_and_unknown_option(x64: None) -> None:
    mlax.config.update("jax_enable_x64", False)
    assert not mlax.config.x64
    with pytest.raises(ValueError, match="Unrecognized config option: no_such_option"):
        mlax.config.update("no_such_option", 1)
