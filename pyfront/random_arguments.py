"""Argument checks shared by the samplers of mlax.random_distributions and
mlax.random_rejection, with jax.random's rules and error types: one key, a float (or int)
dtype, a concrete shape, parameters that broadcast to exactly that shape and that cast safely
to the dtype. Keys are checked through the public ``mlax.random.key_data``, so raw and typed
keys are both accepted and nothing here depends on how mlax.random stores a key."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from jax.dtypes import TypePromotionError

from mlax import dtypes as front_dtypes
from mlax import lax, prng
from mlax.core import is_array_like
from mlax.errors import CONCRETIZATION_ERRORS, user_error
from mlax.numpy.util import asarray, to_inexact_dtype

_KINDS = {np.floating: "a float", np.integer: "an int", np.inexact: "a float or complex"}


def single_key(name: str, key: Any) -> Any:
    """``key``, checked to be one key (not a batch of keys), as jax's ``_check_prng_key``."""
    from mlax.random import key_data  # mlax.random's samplers check their arguments here

    data = key_data(key)
    rank = data.ndim - len(prng.key_shape(key.dtype if prng.is_key(key) else prng.default_dtype()))
    if rank:
        raise user_error(ValueError, f"{name} accepts a single key, but was given a key array of shape "
                         f"{tuple(data.shape[:rank])} != (). Use mlax.vmap for batching.",
                         f"key of mlax.random.{name}")
    return key


def sample_dtype(name: str, dtype: Any, kind: type = np.floating, default: Any = np.float64,
                 message_name: str | None = None) -> np.dtype:
    """The canonical ``dtype`` (``default`` when None: float32, or float64 under x64), checked
    to be a ``kind`` (``kind=None`` checks nothing, as for rademacher)."""
    try:
        dtype = front_dtypes.canonicalize(default if dtype is None else dtype)
    except TypeError as err:
        raise user_error(TypeError, str(err), f"dtype of mlax.random.{name}") from None
    if kind is not None and not front_dtypes.issubdtype(dtype, kind):
        raise user_error(ValueError, f"dtype argument to `{message_name or name}` must be {_KINDS[kind]} "
                         f"dtype, got {dtype}", f"dtype of mlax.random.{name}")
    return dtype


def concrete_shape(name: str, shape: Any, argument: str = "shape") -> tuple[int, ...]:
    """A shape argument as jax's ``canonicalize_shape`` reads it: an int or a sequence of ints."""
    dims = (shape,) if isinstance(shape, int) else shape
    try:
        dims = tuple(operator.index(d) for d in dims)
    except CONCRETIZATION_ERRORS:
        raise
    except TypeError:
        raise user_error(TypeError, "Shapes must be 1D sequences of concrete values of integer type, got "
                         f"{shape!r}.", f"{argument} of mlax.random.{name}") from None
    if any(d < 0 for d in dims):
        raise user_error(ValueError, f"mlax.random.{name}: shape {dims} has a negative dimension",
                         f"{argument} of mlax.random.{name}")
    return dims


def param_shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def broadcast_param_shapes(name: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise user_error(ValueError, f"Incompatible shapes for broadcasting: shapes={list(shapes)}",
                         f"the parameters of mlax.random.{name}") from None


def check_shape(name: str, shape: tuple[int, ...], *param_shapes: tuple[int, ...]) -> None:
    """jax's ``_check_shape``: the parameter shapes must broadcast to exactly ``shape``."""
    if param_shapes:
        result = broadcast_param_shapes(name, shape, *param_shapes)
        if result != shape:
            raise user_error(ValueError, f"{name} parameter shapes must be broadcast-compatible with shape "
                             "argument, and the result of broadcasting the shapes must equal the shape "
                             f"argument, but got result {result} for shape argument {shape}.",
                             f"the parameters of mlax.random.{name}")


def sample_shape(name: str, shape: Any, *params: Any) -> tuple[int, ...]:
    """jax's ``_check_broadcast_shapes``: ``shape`` checked against the parameters, or (None)
    the parameters' broadcast shape."""
    shapes = [param_shape(p) for p in params]
    if shape is None:
        return broadcast_param_shapes(name, *shapes) if shapes else ()
    shape = concrete_shape(name, shape)
    check_shape(name, shape, *shapes)
    return shape


def check_safe_cast(name: str, dtype: np.dtype, *params: Any) -> None:
    """jax's ``_check_all_safe_to_cast``: each parameter must promote to ``dtype`` unchanged
    (a weakly typed Python scalar always does; a float64 array does not cast to float32)."""
    for p in params:
        p = p if is_array_like(p) else asarray(p)
        p_dtype = front_dtypes.dtype_and_weak(p)[0]
        if p_dtype != dtype and front_dtypes.result_type(p, dtype) != dtype:
            raise TypePromotionError(f"In arguments to {name}, cannot safely cast argument of type {p_dtype} "
                                     f"to {dtype}")


def check_arraylike(name: str, *params: Any) -> None:
    """jax's ``check_arraylike``: parameters must be arrays or scalars, not lists."""
    for i, p in enumerate(params):
        if not is_array_like(p):
            raise user_error(TypeError, f"{name} requires ndarray or scalar arguments, got "
                             f"{type(p).__name__} at position {i}.", f"the parameters of mlax.random.{name}")


def promote_inexact(*params: Any) -> list[Any]:
    """jax's ``promote_dtypes_inexact``: the parameters in their common inexact dtype (weak if
    all are), shapes unchanged."""
    dtype, weak = front_dtypes.result_type(*params, return_weak_type_flag=True)
    return [lax.convert_element_type(asarray(p), to_inexact_dtype(dtype), weak_type=weak) for p in params]
