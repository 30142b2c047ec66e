"""``jax.debug_key_reuse`` (flax's tests turn jax's key-reuse checker off with it): mlax keeps
the option without checking key reuse, so the context manager takes False (jax's default, what
mlax does) silently and True with mlax's warning for an option it does not honour, as
``config.update`` does; the value reads back as jax's does."""

from __future__ import annotations

import warnings

import jax
import pytest

import mlax
from mlax import configuration
from mlax.configuration import UnhonouredOptionWarning


def test_off_is_taken_silently_and_reads_back() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for lib in (jax, mlax):
            with lib.debug_key_reuse(False):
                assert lib.config.jax_debug_key_reuse is False
            assert lib.config.jax_debug_key_reuse is False


def test_on_warns_that_mlax_does_not_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(configuration, "_warned", set())  # (it warns once per option and value)
    with pytest.warns(UnhonouredOptionWarning, match="does not check PRNG key reuse"):
        with mlax.debug_key_reuse(True):
            assert mlax.config.jax_debug_key_reuse is True
    assert mlax.config.jax_debug_key_reuse is False
