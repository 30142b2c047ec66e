"""mlax.random: JAX's counter-based PRNG (threefry-2x32) written with mlax.lax operations.

``key`` returns typed key arrays (mlax.prng.PRNGKeyArray, dtype ``key<fry>``) and ``PRNGKey`` raw
``uint32[..., 2]`` data (JAX's legacy keys); every function takes either, and ``split`` /
``fold_in`` return the kind of key they were given. Every sampler follows ``jax.random`` (jax
0.10.2, ``jax_threefry_partitionable`` on) step for step, so bits, keys and integer samples
match JAX bit for bit and float samples up to the rounding of the transcendental functions they
use; the sorting samplers (``permutation``, ``choice``/``categorical`` without replacement) use
mlax's sort and top_k.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax, prng, random_impls
from mlax import numpy as mnp
from mlax.configuration import enable_custom_prng
from mlax.core import is_array_like
from mlax.errors import user_error
from mlax.numpy.util import asarray, normalize_axis
from mlax.random_arguments import concrete_shape

__all__ = [
    "PRNGKey", "bernoulli", "bits", "categorical", "choice", "clone", "fold_in", "gumbel", "key", "key_data",
    "key_dtype", "key_impl", "normal", "permutation", "randint", "split", "truncated_normal", "uniform",
    "wrap_key_data",
]

_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}
_U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


# -- the threefry-2x32 block cipher ---------------------------------------------------------

def _rotate_left(x: Any, d: int) -> Any:
    return lax.bitwise_or(lax.shift_left(x, d), lax.shift_right_logical(x, 32 - d))


def _threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """Threefry-2x32 with 20 rounds (Salmon et al. 2011), unrolled as jax's lowering: the
    uint32 words ``x1, x2`` hashed under the key words ``k1, k2`` (rank 0)."""
    ks = (k1, k2, lax.bitwise_xor(lax.bitwise_xor(k1, k2), 0x1BD11BDA))
    x1, x2 = lax.add(x1, ks[0]), lax.add(x2, ks[1])
    for i in range(5):
        for rotation in _ROTATIONS[i % 2]:
            x1 = lax.add(x1, x2)
            x2 = lax.bitwise_xor(x1, _rotate_left(x2, rotation))
        x1 = lax.add(x1, ks[(i + 1) % 3])
        x2 = lax.add(lax.add(x2, ks[(i + 2) % 3]), i + 1)
    return x1, x2


def _iota_2x32(shape: tuple[int, ...]) -> tuple[Any, Any]:
    """The row-major element index of ``shape`` as (high, low) uint32 words (jax's
    ``iota_2x32_shape``); the high word is 0 below 2**32 elements, the only sizes supported."""
    size = math.prod(shape)
    if size > 2**32:
        raise user_error(NotImplementedError, f"mlax.random: arrays of more than 2**32 elements (got {size})",
                         "shape")
    high = mnp.zeros(shape, _U32)
    return high, lax.reshape(lax.iota(_U32, size), shape)


def _hash_counters(key: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    k1, k2 = _key_words(key)
    return _threefry2x32(k1, k2, *_iota_2x32(shape))


def _key_words(key: Any) -> tuple[Any, Any]:
    return lax.index_in_dim(key, 0, keepdims=False), lax.index_in_dim(key, 1, keepdims=False)


# -- keys -----------------------------------------------------------------------------------

def _operand(name: str, argument: str, value: Any, dtype: Any = None) -> Any:
    """Argument ``argument`` of ``mlax.random.name`` as an array, checked to be array-like."""
    if not (is_array_like(value) or isinstance(value, (list, tuple))):
        raise user_error(TypeError, f"Value {value!r} of type {type(value).__name__} is not a valid mlax "
                         "array", f"{argument} of mlax.random.{name}")
    return asarray(value, dtype)


def _numbers(name: str, target: str, **values: Any) -> None:
    """JAX's error for a key array where a number is expected (``convert_element_type`` refuses
    key dtypes)."""
    for argument, value in values.items():
        if prng.is_key(value):
            raise user_error(ValueError, f"Cannot convert_element_type from {value.dtype} to {target}",
                             f"{argument} of mlax.random.{name}")


def _key_arg(name: str, key: Any, allow_batched: bool = False) -> tuple[Any, bool, Any]:
    """A key argument's uint32 data of shape (..., *key_shape) as an mlax value, whether it was
    a typed key array (mlax's or JAX's), for which split and fold_in return typed keys, and its
    key dtype (that of ``jax_default_prng_impl`` for raw keys)."""
    argument = f"key of mlax.random.{name}"
    if prng.is_key(key):
        data, typed, dtype = prng.key_data(key, argument), True, key.dtype
    else:
        data, typed, dtype = _operand(name, "key", key), False, prng.default_dtype()
        shape = prng.key_shape(dtype)
        if data.dtype != _U32 or tuple(data.shape[data.ndim - len(shape):]) != shape:
            raise user_error(TypeError, f"mlax.random.{name}: a key is a key array (mlax.random.key) or a "
                             f"uint32 array of shape (..., {', '.join(map(str, shape))}) (PRNGKey), got "
                             f"{data.dtype}{list(data.shape)}", argument)
    batch = tuple(data.shape[:data.ndim - len(prng.key_shape(dtype))])
    if not allow_batched and batch:
        raise user_error(ValueError, f"mlax.random.{name} accepts a single key, but was given a key array of "
                         f"shape {batch} != (). Use mlax.vmap for batching.", argument)
    return data, typed, dtype


def _check_key(name: str, key: Any) -> Any:
    """The data of a single key (typed or raw) to draw threefry bits from."""
    data, _, dtype = _key_arg(name, key)
    random_impls.threefry_only(dtype, name)
    return data


def _keys_like(data: Any, typed: bool, dtype: Any) -> Any:
    """New key data returned as the kind of key it was made from: typed keys stay typed, raw
    ones become typed under ``jax_enable_custom_prng`` (as jax's ``_return_prng_keys``)."""
    return prng.PRNGKeyArray._from_data(data, dtype) if typed or enable_custom_prng.value else data


def _seed_data(name: str, seed: Any, dtype: Any) -> Any:
    """The key data of an integer seed for keys of ``dtype`` (random_impls.py); threefry's are
    its high and low 32 bits (a 32-bit seed has a zero high word, and Python ints wrap to 32
    bits unless x64 is on, as in JAX)."""
    argument = f"seed of mlax.random.{name}"
    if prng.is_key(seed):
        raise user_error(TypeError, f"{name} accepts a scalar seed, but was given a PRNG key.", argument)
    if isinstance(seed, int):  # as jax: OverflowError beyond int64, then canonicalized
        if not -2**63 <= seed < 2**63:
            raise user_error(OverflowError, f"Python int {seed} too large to convert to int64", argument)
        seed = np.int64(seed)
    seed = _operand(name, "seed", seed)
    if seed.ndim:
        raise user_error(TypeError, f"{name} accepts a scalar seed, but was given an array of shape "
                         f"{seed.shape} != (). Use mlax.vmap for batching", argument)
    if not front_dtypes.issubdtype(seed.dtype, np.integer):
        raise user_error(TypeError, f"PRNG key seed must be an integer, got {seed.dtype}", argument)
    high = lax.convert_element_type(lax.shift_right_logical(seed, 32), _U32)
    low = lax.convert_element_type(seed, _U32)
    words = lax.concatenate([lax.reshape(high, (1,)), lax.reshape(low, (1,))], 0)
    return random_impls.seed(dtype, seed, words)


def PRNGKey(seed: Any, *, impl: Any = None) -> Any:
    """The raw key ``uint32[2]`` of an integer seed (JAX's legacy key); a typed key, as
    `key` gives, under ``jax_enable_custom_prng``."""
    key_dtype = prng.resolve_dtype(impl, None, "PRNGKey")
    data = _seed_data("PRNGKey", seed, key_dtype)
    return prng.PRNGKeyArray._from_data(data, key_dtype) if enable_custom_prng.value else data


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> prng.PRNGKeyArray:
    """A scalar key array (dtype ``key<fry>``) of an integer seed; its data is ``PRNGKey(seed)``."""
    key_dtype = prng.resolve_dtype(impl, dtype, "key")
    return prng.PRNGKeyArray._from_data(_seed_data("key", seed, key_dtype), key_dtype)


def key_data(keys: Any) -> Any:
    """The uint32 data of keys, of shape ``keys.shape + key_shape`` (raw keys are their own data)."""
    return _key_arg("key_data", keys, allow_batched=True)[0]


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> prng.PRNGKeyArray:
    """Key arrays around uint32 data of shape (..., *key_shape), as ``jax.random.wrap_key_data``."""
    key_dtype = prng.resolve_dtype(impl, dtype, "wrap_key_data")
    return prng.wrap_key_data(key_bits_array, key_dtype, "key_bits_array of mlax.random.wrap_key_data")


def key_dtype(impl_spec: Any = None) -> Any:
    """The key dtype of a PRNG implementation (jax's own, ``key<fry>`` for threefry2x32)."""
    return prng.resolve_dtype(impl_spec, None, "key_dtype")


def key_impl(keys: Any) -> str:
    """The name of the keys' PRNG implementation, as jax's."""
    return str(prng.impl_of(_key_arg("key_impl", keys, allow_batched=True)[2]).name)


def clone(key: Any) -> Any:
    """The key itself (mlax keys are immutable values; JAX's key-reuse checker is not modelled)."""
    _key_arg("clone", key, allow_batched=True)
    return key


def _split(key: Any, shape: tuple[int, ...]) -> Any:
    """``shape`` new keys: the hash of the counters 0, 1, ... (jax's fold-like split)."""
    bits1, bits2 = _hash_counters(key, shape)
    return lax.concatenate([lax.expand_dims(bits1, (len(shape),)),
                            lax.expand_dims(bits2, (len(shape),))], len(shape))


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """``num`` new keys (or a ``num``-shaped array of keys): typed keys of shape ``num`` for a
    typed key, raw data of shape ``(*num, 2)`` for a raw one."""
    data, typed, dtype = _key_arg("split", key)
    return _keys_like(random_impls.split(dtype, data, concrete_shape("split", num, "num")), typed, dtype)


def fold_in(key: Any, data: Any) -> Any:
    """A new key from ``key`` and a 32-bit integer ``data`` (an array's value wraps to uint32)."""
    key, typed, dtype = _key_arg("fold_in", key)
    _numbers("fold_in", "uint32", data=data)
    if isinstance(data, int) and not 0 <= data < 2**32:
        raise user_error(OverflowError, f"Python integer {data} out of bounds for uint32",
                         "data of mlax.random.fold_in")
    data = _operand("fold_in", "data", data, _U32 if isinstance(data, int) else None)
    if data.ndim:
        raise user_error(TypeError, f"mlax.random.fold_in accepts a scalar, but was given an array of shape "
                         f"{data.shape} != (). Use mlax.vmap for batching.", "data of mlax.random.fold_in")
    return _keys_like(random_impls.fold_in(dtype, key, lax.convert_element_type(data, _U32)), typed, dtype)


def _fold_in(key: Any, data: Any) -> Any:
    """threefry's fold_in: the hash of the counter ``data`` (uint32 scalar) under ``key``."""
    k1, k2 = _key_words(key)
    bits1, bits2 = _threefry2x32(k1, k2, mnp.zeros((1,), _U32), lax.reshape(data, (1,)))
    return lax.concatenate([bits1, bits2], 0)


# -- bits and floats ------------------------------------------------------------------------

def _random_bits(key: Any, bit_width: int, shape: tuple[int, ...]) -> Any:
    """Unsigned ``bit_width``-bit random integers of ``shape`` (jax's partitionable layout)."""
    bits1, bits2 = _hash_counters(key, shape)
    dtype = _UINT[bit_width]
    if bit_width == 64:
        high = lax.convert_element_type(bits1, dtype)
        return lax.bitwise_or(lax.shift_left(high, 32), lax.convert_element_type(bits2, dtype))
    return lax.convert_element_type(lax.bitwise_xor(bits1, bits2), dtype)


_KIND_NAMES = {np.floating: "a float", np.unsignedinteger: "an unsigned int",
               np.inexact: "a float or complex"}


def _user_dtype(name: str, dtype: Any, default: Any, kind: type) -> np.dtype:
    """The canonical ``dtype`` (``default`` when None), checked to be a ``kind``."""
    if prng.is_key_dtype(dtype):
        raise user_error(ValueError, f"dtype argument to `{name}` must be {_KIND_NAMES[kind]} dtype, got "
                         f"{dtype}", f"dtype of mlax.random.{name}")
    try:
        dtype = front_dtypes.canonicalize(default if dtype is None else dtype)
    except TypeError as err:
        raise user_error(TypeError, str(err), f"dtype of mlax.random.{name}") from None
    if not front_dtypes.issubdtype(dtype, kind):
        raise user_error(ValueError, f"dtype argument to `{name}` must be {_KIND_NAMES[kind]} dtype, got "
                         f"{dtype}", f"dtype of mlax.random.{name}")
    return dtype


def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Uniform random bits as unsigned integers (default uint32, uint64 under x64)."""
    key = _check_key("bits", key)
    dtype = _user_dtype("bits", dtype, np.uint64, np.unsignedinteger)
    return _random_bits(key, dtype.itemsize * 8, concrete_shape("bits", shape))


def _uniform(key: Any, shape: tuple[int, ...], dtype: np.dtype, minval: Any, maxval: Any) -> Any:
    """Random bits as the mantissa of a float in [1, 2), minus 1, scaled to [minval, maxval)."""
    finfo = mnp.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    rng_bits = nbits if nmant >= 8 else 8  # bfloat16: 8 bits for 7 mantissa bits
    uint_dtype = _UINT[nbits]
    random = lax.convert_element_type(_random_bits(key, rng_bits, shape), uint_dtype)
    one_bits = np.array(1.0, dtype).view(uint_dtype)
    float_bits = lax.bitwise_or(lax.shift_right_logical(random, rng_bits - nmant), one_bits)
    floats = lax.sub(lax.bitcast_convert_type(float_bits, dtype), 1.0)
    minval = mnp.broadcast_to(lax.convert_element_type(minval, dtype), shape)
    maxval = mnp.broadcast_to(lax.convert_element_type(maxval, dtype), shape)
    return lax.max(minval, lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval))


def uniform(key: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0) -> Any:
    """Uniform floats in ``[minval, maxval)`` (default float32, float64 under x64)."""
    key = _check_key("uniform", key)
    dtype = _user_dtype("uniform", dtype, np.float64, np.floating)
    shape = concrete_shape("uniform", shape)
    _numbers("uniform", dtype.name, minval=minval, maxval=maxval)
    _check_broadcast("uniform", shape, minval, maxval, kind=TypeError)  # jax's error comes from lax.mul
    return _uniform(key, shape, dtype, minval, maxval)


def _check_broadcast(name: str, shape: tuple[int, ...], *params: Any,
                     kind: type[Exception] = ValueError) -> None:
    """JAX's rule: parameter shapes must broadcast to exactly ``shape``."""
    param_shapes = [np.shape(p) if not hasattr(p, "shape") else p.shape for p in params]
    try:
        ok = np.broadcast_shapes(shape, *param_shapes) == shape
    except ValueError:
        ok = False
    if not ok:
        raise user_error(kind, f"{name} parameter shapes {param_shapes} must be broadcast-compatible with "
                         f"the shape argument {shape}, and broadcast to exactly that shape",
                         f"the parameters of mlax.random.{name}")


def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard normal floats: ``sqrt(2) * erf_inv(u)`` for ``u`` uniform in (-1, 1); complex
    ones as jax's: real and imaginary parts from the key's two halves, each of variance 1/2."""
    key = _check_key("normal", key)
    dtype = _user_dtype("normal", dtype, np.float64, np.inexact)
    if front_dtypes.issubdtype(dtype, np.complexfloating):
        key_re, key_im = split(key)
        real = np.array(0, dtype).real.dtype
        re = lax.convert_element_type(normal(key_re, shape, real), dtype)
        im = lax.convert_element_type(normal(key_im, shape, real), dtype)
        return lax.div(lax.add(re, lax.mul(np.array(1j, dtype), im)), np.array(np.sqrt(2), dtype))
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = _uniform(key, concrete_shape("normal", shape), dtype, lo, 1.0)
    return lax.mul(np.array(np.sqrt(2), dtype), lax.erf_inv(u))


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None,
                     dtype: Any = None) -> Any:
    """Standard normal floats restricted to the open interval (lower, upper), by inverting the
    CDF on a uniform sample of [erf(lower / sqrt 2), erf(upper / sqrt 2))."""
    key = _check_key("truncated_normal", key)
    dtype = _user_dtype("truncated_normal", dtype, np.float64, np.floating)
    _numbers("truncated_normal", dtype.name, lower=lower, upper=upper)
    if shape is None:
        shape = np.broadcast_shapes(np.shape(lower), np.shape(upper))
    else:
        shape = concrete_shape("truncated_normal", shape)
        _check_broadcast("truncated_normal", shape, lower, upper)
    sqrt2 = np.array(np.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lax.div(lower, sqrt2))
    b = lax.erf(lax.div(upper, sqrt2))
    out = lax.mul(sqrt2, lax.erf_inv(_uniform(key, shape, dtype, a, b)))
    low = lax.nextafter(lax.stop_gradient(lower), np.array(np.inf, dtype))
    high = lax.nextafter(lax.stop_gradient(upper), np.array(-np.inf, dtype))
    return mnp.clip(out, low, high)


def bernoulli(key: Any, p: Any = 0.5, shape: Sequence[int] | None = None, mode: str = "low") -> Any:
    """Booleans that are True with probability ``p``; ``mode="high"`` spends twice the bits to
    resolve probabilities below float epsilon."""
    if mode not in ("high", "low"):
        raise user_error(ValueError, f"got {mode=}, expected 'high' or 'low'",
                         "mode of mlax.random.bernoulli")
    key = _check_key("bernoulli", key)
    p = _operand("bernoulli", "p", p)
    if not front_dtypes.issubdtype(p.dtype, np.floating):
        raise user_error(TypeError, f"bernoulli probability `p` must have a floating dtype, got {p.dtype}.",
                         "p of mlax.random.bernoulli")
    if shape is None:
        shape = p.shape
    else:
        shape = concrete_shape("bernoulli", shape)
        _check_broadcast("bernoulli", shape, p)
    if mode == "low":
        return mnp.less(_uniform(key, shape, p.dtype, 0.0, 1.0), p)
    u1, u2 = _unstack(_uniform(key, (2, *shape), p.dtype, 0.0, 1.0))
    u2 = lax.mul(u2, 2.0 ** -mnp.finfo(p.dtype).nmant)
    return mnp.less(u2, mnp.subtract(p, u1))


def _unstack(x: Any) -> tuple[Any, Any]:
    return lax.index_in_dim(x, 0, keepdims=False), lax.index_in_dim(x, 1, keepdims=False)


def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None, mode: str | None = None) -> Any:
    """Standard Gumbel floats ``-log(-log(u))``; ``mode="high"`` (not "highest") as in JAX."""
    key = _check_key("gumbel", key)
    dtype = _user_dtype("gumbel", dtype, np.float64, np.floating)
    return _gumbel(key, concrete_shape("gumbel", shape), dtype, "low" if mode is None else mode)


def _gumbel(key: Any, shape: tuple[int, ...], dtype: np.dtype, mode: str) -> Any:
    info = mnp.finfo(dtype)
    if mode == "low":
        u = _uniform(key, shape, dtype, np.array(info.tiny, dtype), 1.0)
        return mnp.negative(mnp.log(mnp.negative(mnp.log(u))))
    if mode != "high":
        raise user_error(ValueError, f"Must provide valid mode for gumbel got: {mode}", "mode")
    high, low = _unstack(_uniform(key, (2, *shape), dtype, 0.0, 1.0))
    small = mnp.add(mnp.add(high, mnp.multiply(np.array(2.0 ** -info.nmant, dtype), low)),
                    np.array(info.tiny, dtype))
    x = mnp.where(mnp.greater_equal(high, 0.5), high, small)
    return mnp.negative(mnp.log(mnp.negative(mnp.log1p(mnp.negative(x)))))


# -- integers and discrete choices ----------------------------------------------------------

def _convert_and_clip_integer(val: Any, dtype: np.dtype) -> Any:
    """``val`` in integer ``dtype``, clipped to its range rather than wrapped."""
    val_info, info = mnp.iinfo(val.dtype), mnp.iinfo(dtype)
    low = np.array(max(info.min, val_info.min), val.dtype)
    high = np.array(min(info.max, val_info.max), val.dtype)
    return lax.convert_element_type(lax.clamp(low, val, high), dtype)


def _integer_bounds(val: Any) -> Any:
    val = asarray(val)
    return val if front_dtypes.issubdtype(val.dtype, np.integer) else mnp.astype(val, int)


def _randint(key: Any, shape: tuple[int, ...], minval: Any, maxval: Any, dtype: np.dtype) -> Any:
    """``minval + (2 * nbits random bits) mod span``: jax's modulus method, biased only when the
    span is not a power of two, and then by at most span / 2**nbits."""
    minval, maxval = _integer_bounds(minval), _integer_bounds(maxval)
    dtype_max = _convert_and_clip_integer(asarray(mnp.iinfo(dtype).max, dtype), maxval.dtype)
    maxval_out_of_range = mnp.broadcast_to(lax.gt(maxval, dtype_max), shape)
    minval = mnp.broadcast_to(_convert_and_clip_integer(minval, dtype), shape)
    maxval = mnp.broadcast_to(_convert_and_clip_integer(maxval, dtype), shape)
    nbits = mnp.iinfo(dtype).bits
    k1, k2 = _unstack(_split(key, (2,)))
    higher_bits, lower_bits = _random_bits(k1, nbits, shape), _random_bits(k2, nbits, shape)
    unsigned = _UINT[nbits]
    span = lax.convert_element_type(lax.sub(maxval, minval), unsigned)
    empty = lax.le(maxval, minval)  # then span 1: minval is returned
    span = lax.select(empty, mnp.ones(shape, unsigned), span)
    # maxval past the dtype's range: one more value; a span wrapping to 0 makes rem a no-op
    span = lax.select(lax.bitwise_and(maxval_out_of_range, lax.bitwise_not(empty)), lax.add(span, 1), span)
    multiplier = lax.rem(mnp.full(shape, 2 ** (nbits // 2), unsigned), span)  # 2**nbits mod span
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier), lax.rem(lower_bits, span))
    return lax.add(minval, lax.convert_element_type(lax.rem(offset, span), dtype))


def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Uniform integers in ``[minval, maxval)`` (default int32, int64 under x64); types
    narrower than 32 bits are sampled in int32 to reduce the modulus bias."""
    key = _check_key("randint", key)
    dtype = front_dtypes.canonicalize(int if dtype is None else dtype)
    if not front_dtypes.issubdtype(dtype, np.integer):
        raise user_error(TypeError, f"randint only accepts integer dtypes, got {dtype}",
                         "dtype of mlax.random.randint")
    shape = concrete_shape("randint", shape)
    _numbers("randint", dtype.name, minval=minval, maxval=maxval)
    _check_broadcast("randint", shape, minval, maxval)
    info = mnp.iinfo(dtype)
    if info.bits >= 32:
        return _randint(key, shape, minval, maxval, dtype)
    int32 = np.dtype(np.int32)
    minval = mnp.clip(mnp.astype(asarray(minval), int32), int(info.min), int(info.max))
    maxval = mnp.clip(mnp.astype(asarray(maxval), int32), int(info.min), int(info.max) + 1)
    return mnp.astype(_randint(key, shape, minval, maxval, int32), dtype)


def categorical(key: Any, logits: Any, axis: int = -1, shape: Sequence[int] | None = None,
                replace: bool = True, mode: str | None = None) -> Any:
    """Samples of the categorical distributions ``softmax(logits, axis)``: the argmax of
    ``logits`` plus Gumbel noise (the Gumbel-max trick)."""
    key = _check_key("categorical", key)
    _numbers("categorical", "a float dtype", logits=logits)
    logits = _operand("categorical", "logits", logits)
    axis = normalize_axis("mlax.random.categorical", axis, logits.ndim)
    batch_shape = logits.shape[:axis] + logits.shape[axis + 1:]
    if shape is None:
        shape = batch_shape
    else:
        shape = concrete_shape("categorical", shape)
        _check_broadcast("categorical", shape, np.empty(batch_shape))
    if not replace:  # jax's Gumbel top-k
        k = math.prod(shape[:len(shape) - len(batch_shape)])
        if k > logits.shape[axis]:
            raise user_error(ValueError, f"Number of samples without replacement ({k}) cannot exceed number "
                             f"of categories ({logits.shape[axis]}).", "shape of mlax.random.categorical")
        noisy = mnp.add(logits, _gumbel(key, logits.shape, logits.dtype, "low" if mode is None else mode))
        _, indices = lax.top_k(mnp.moveaxis(noisy, axis, -1), k)
        return lax.reshape(indices, shape, (indices.ndim - 1, *range(indices.ndim - 1)))
    prefix = shape[:len(shape) - len(batch_shape)]
    axis -= logits.ndim  # counted from the end: the sample dims are leading
    noise_shape = list(shape[len(prefix):])
    noise_shape.insert(axis % logits.ndim, logits.shape[axis])
    noise = _gumbel(key, (*prefix, *noise_shape), logits.dtype, "low" if mode is None else mode)
    return mnp.argmax(mnp.add(noise, lax.expand_dims(logits, tuple(range(len(prefix))))), axis=axis)


def _shuffle(key: Any, x: Any, axis: int) -> Any:
    """jax's _shuffle: sort ``x`` along ``axis`` by fresh random 32-bit keys, as many rounds as
    tjablin's heuristic (exponent 3) asks for ``x.size`` elements, so results match jax bit for bit."""
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(2**32 - 1)))
    for _ in range(rounds):
        key, subkey = _unstack(_split(key, (2,)))
        _, x = lax.sort_key_val(_random_bits(subkey, 32, x.shape), x, axis)
    return x


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of ``arange(x)`` or of ``x`` along ``axis`` (jax's sort by random keys;
    without ``independent`` every slice of an n-d ``x`` moves together)."""
    key = _check_key("permutation", key)
    x = _operand("permutation", "x", x)
    if not x.ndim:
        if not front_dtypes.issubdtype(x.dtype, np.integer):
            raise user_error(TypeError, "x must be an integer or at least 1-dimensional",
                             "x of mlax.random.permutation")
        normalize_axis("mlax.random.permutation", axis, 1)
        return _shuffle(key, mnp.arange(operator.index(x)), 0)
    axis = normalize_axis("mlax.random.permutation", axis, x.ndim)
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    order = _shuffle(key, mnp.arange(x.shape[axis], dtype=np.int32), 0)
    return lax.apply_permutation(x, lax.broadcast_in_dim(order, x.shape, (axis,)), axis)


def _take(a: Any, indices: Any, axis: int) -> Any:
    """``jnp.take(a, indices, axis)`` for in-range indices, without a gather op: the maximum
    along ``axis`` of ``a`` masked to its lowest value except at the index (exact for every
    value, NaN and -0.0 included)."""
    lead, n, tail, k = a.shape[:axis], a.shape[axis], a.shape[axis + 1:], indices.ndim
    out_shape = (*lead, *indices.shape, n, *tail)
    n_dim = len(lead) + k
    hit = lax.eq(lax.broadcast_in_dim(indices, out_shape, tuple(range(len(lead), n_dim))),
                 lax.broadcasted_iota(indices.dtype, out_shape, n_dim))
    a = lax.broadcast_in_dim(a, out_shape, (*range(len(lead)), *range(n_dim, len(out_shape))))
    if front_dtypes.issubdtype(a.dtype, np.floating):
        lowest = -np.inf
    else:
        lowest = False if a.dtype == np.bool_ else mnp.iinfo(a.dtype).min
    return mnp.max(lax.select(hit, a, mnp.full(out_shape, lowest, a.dtype)), axis=n_dim)


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None,
           axis: int = 0, mode: str | None = None) -> Any:
    """Random samples of ``a`` (or of ``arange(a)``) along ``axis``, uniformly or with
    probabilities ``p``, as jax: without replacement the head of a permutation, or with ``p``
    the Gumbel top-k trick (``mode`` is the Gumbel precision)."""
    key = _check_key("choice", key)
    if not isinstance(shape, Sequence):
        raise user_error(TypeError, f"shape argument of mlax.random.choice must be a sequence, got {shape}",
                         "shape of mlax.random.choice")
    shape = concrete_shape("choice", shape)
    arr = _operand("choice", "a", a)
    if arr.ndim == 0:
        n_inputs = operator.index(a)
    else:
        axis = normalize_axis("mlax.random.choice", axis, arr.ndim)
        n_inputs = arr.shape[axis]
    out_shape = shape if arr.ndim == 0 else arr.shape[:axis] + shape + arr.shape[axis + 1:]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return mnp.zeros(shape, arr.dtype)
    if n_inputs <= 0:
        raise user_error(ValueError, "a must be greater than 0 unless no samples are taken",
                         "a of mlax.random.choice")
    if not replace and n_draws > n_inputs:
        raise user_error(ValueError, f"Cannot take a larger sample (size {n_draws}) than population (size "
                         f"{n_inputs}) when 'replace=False'", "shape of mlax.random.choice")
    if p is None and not replace:
        perm = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)
        return mnp.reshape(lax.slice_in_dim(perm, 0, n_draws, axis=axis if arr.ndim else 0), out_shape)
    if p is None:
        ind = randint(key, shape, 0, n_inputs)
    else:
        p_arr = _operand("choice", "p", p)
        if not front_dtypes.issubdtype(p_arr.dtype, np.inexact):
            p_arr = mnp.astype(p_arr, front_dtypes.default_float())
        if p_arr.shape != (n_inputs,):
            raise user_error(ValueError, "p must be None or a 1D vector with the same size as a.shape[axis]. "
                             f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}.",
                             "p of mlax.random.choice")
        if not replace:  # the Gumbel top-k trick, as jax
            noise = _gumbel(key, (n_inputs,), p_arr.dtype, "low" if mode is None else mode)
            g = mnp.add(noise, mnp.log(p_arr))
            ind = mnp.astype(lax.top_k(g, n_draws)[1], int)
            result = ind if arr.ndim == 0 else _take(arr, ind, axis)
            return mnp.reshape(result, out_shape)
        p_cuml = mnp.cumsum(p_arr)
        total = lax.index_in_dim(p_cuml, n_inputs - 1, keepdims=False)
        r = mnp.multiply(total, mnp.subtract(1, _uniform(key, shape, p_cuml.dtype, 0.0, 1.0)))
        # searchsorted(p_cuml, r) on a nondecreasing p_cuml: how many entries lie below r
        below = mnp.less(p_cuml, lax.expand_dims(r, (len(shape),)))
        ind = mnp.sum(mnp.astype(below, int), axis=-1)
    result = ind if arr.ndim == 0 else _take(arr, ind, axis)
    return mnp.reshape(result, out_shape)


# The other distributions (mlax.random_distributions builds them on the functions above).
from mlax import random_distributions as _distributions  # noqa: E402
from mlax.random_distributions import *  # noqa: E402, F403

__all__ += _distributions.__all__

import jax.random as _jax_random  # noqa: E402

from mlax.out_sharding import accept_out_sharding as _accept_out_sharding  # noqa: E402

_accept_out_sharding(globals(), _jax_random, "mlax.random")
