"""The PRNG implementations behind mlax.random's keys, as jax's: how a key is seeded, split and
folded, by the implementation its dtype names (``jax.random.key_dtype(impl)``).

- ``threefry2x32`` (jax's default): mlax.random's threefry functions.
- ``rbg``: a uint32[4] key of two threefry halves, seeded with the threefry words twice, split
  and folded half by half with threefry (jax's ``_rbg_split`` / ``_rbg_fold_in``), so its keys
  match jax's bit for bit. Its random bits come from XLA's RngBitGenerator (an XLA op whose
  algorithm XLA picks per backend), which mlax does not compute: samplers refuse its keys.
- ``unsafe_rbg``: seeded as rbg; split and fold_in also use RngBitGenerator: refused.
- ``threefry4x32``, ``philox2x32``, ``philox4x32``: not implemented (refused).
- a custom implementation (``jax.extend.random.define_prng_impl``): its own Python functions,
  called on mlax values (they are written with ``jax.numpy``, mlax.numpy after
  ``mlax.install_as_jax()``).

Samplers draw bits with threefry2x32 only (:func:`threefry_only`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax, prng
from mlax.errors import user_error

_RNG_BIT_GENERATOR = ("{name} computes its {what} with XLA's RngBitGenerator, whose algorithm XLA picks per "
                      "backend, which mlax does not compute")
_BUILTIN = ("threefry2x32", "rbg", "unsafe_rbg")
_NOT_BUILT = ("threefry4x32", "philox2x32", "philox4x32")  # jax's other implementations


def _random() -> Any:
    import mlax.random as random  # (mlax.random imports this module)

    return random


def _refuse(impl: Any, what: str, api: str) -> None:
    raise user_error(NotImplementedError, f"mlax.random.{api} of {impl.name} keys: "
                     + _RNG_BIT_GENERATOR.format(name=impl.name, what=what), f"key of mlax.random.{api}")


def _checked(impl: Any, data: Any, shape: tuple[int, ...], api: str) -> Any:
    """A custom implementation's key data, checked to have its key shape after ``shape``."""
    data = lax.convert_element_type(data, np.uint32) if hasattr(data, "dtype") else data
    expected = (*shape, *impl.key_shape)
    if tuple(np.shape(data)) != expected:
        raise user_error(TypeError, f"the {api} function of PRNG implementation {impl.name} returned key "
                         f"data of shape {tuple(np.shape(data))}, expected {expected}", f"mlax.random.{api}")
    return data


def _impl(dtype: Any, api: str) -> Any:
    """The implementation of keys of ``dtype``; jax's own that mlax does not implement refused."""
    impl = prng.impl_of(dtype)
    if impl.name in _NOT_BUILT:
        raise user_error(NotImplementedError, f"mlax.random.{api}: mlax does not implement the {impl.name} "
                         "PRNG (threefry2x32 and rbg keys, and custom implementations, it does)",
                         f"key of mlax.random.{api}")
    return impl


def seed(dtype: Any, seed: Any, words: Any) -> Any:
    """The data of the key of ``seed`` (a checked integer scalar; ``words`` its threefry uint32[2])."""
    impl = _impl(dtype, "key")
    if impl.name == "threefry2x32":
        return words
    if impl.name in ("rbg", "unsafe_rbg"):
        return lax.concatenate([words, words], 0)
    return _checked(impl, impl.seed(seed), (), "key")


def split(dtype: Any, data: Any, shape: tuple[int, ...]) -> Any:
    """The data of ``shape`` new keys split from one key's ``data``."""
    impl = _impl(dtype, "split")
    if impl.name == "threefry2x32":
        return _random()._split(data, shape)
    if impl.name == "rbg":
        halves = [_random()._split(lax.slice(data, (i,), (i + 2,)), shape) for i in (0, 2)]
        return lax.concatenate(halves, len(shape))
    if impl.name == "unsafe_rbg":
        _refuse(impl, "split", "split")
    return _checked(impl, impl.split(data, shape), shape, "split")


def fold_in(dtype: Any, data: Any, value: Any) -> Any:
    """The data of the key folding the uint32 scalar ``value`` into one key's ``data``."""
    impl = _impl(dtype, "fold_in")
    if impl.name == "threefry2x32":
        return _random()._fold_in(data, value)
    if impl.name == "rbg":
        halves = [_random()._fold_in(lax.slice(data, (i,), (i + 2,)), value) for i in (0, 2)]
        return lax.concatenate(halves, 0)
    if impl.name == "unsafe_rbg":
        _refuse(impl, "fold_in", "fold_in")
    return _checked(impl, impl.fold_in(data, value), (), "fold_in")


def threefry_only(dtype: Any, api: str) -> None:
    """Samplers draw threefry2x32 bits: other keys are refused with the reason."""
    impl = _impl(dtype, api)
    if impl.name in ("rbg", "unsafe_rbg"):
        _refuse(impl, "random bits", api)
    if impl.name not in _BUILTIN:
        raise user_error(NotImplementedError, f"mlax.random.{api} draws threefry2x32 bits; keys of the "
                         f"custom PRNG implementation {impl.name} are made, split and folded only",
                         f"key of mlax.random.{api}")
