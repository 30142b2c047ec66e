"""Argument handling shared by mlax.numpy: asarray, dtype promotion, shape broadcasting."""

from __future__ import annotations

import operator
import sys
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax, prng
from mlax.array import Array
from mlax.array_methods import ArrayMethods
from mlax.configuration import numpy_rank_promotion
from mlax.core import Tracer, abstractify, is_array_like, to_numpy
from mlax.source_info import where


def is_traced_or_array(x: Any) -> bool:
    return isinstance(x, ArrayMethods)  # Arrays and tracers; not key arrays (isinstance Array too)


def asarray(a: Any, dtype: Any = None, copy: bool | None = None, order: str | None = None) -> Any:
    """``jnp.asarray``: Arrays and tracers pass through; nested lists may contain tracers."""
    if prng.is_key(a) and (dtype is None or prng.is_key_dtype(dtype)):
        return a  # typed keys stay keys, as jax's
    dtype = user_dtype("asarray", dtype)
    if not is_traced_or_array(a) and hasattr(type(a), "__jax_array__"):
        a = a.__jax_array__()  # as jax's (flax.nnx's Variables: their NumPy conversion is eager only)
    if is_traced_or_array(a):
        return a if dtype is None else lax.convert_element_type(a, dtype)
    if isinstance(a, (list, tuple)) and any(_contains_traced(e) for e in a):
        from mlax.numpy.manipulation import stack

        return stack([asarray(e, dtype) for e in a])
    if front_dtypes.is_python_scalar(a):
        dt = dtype or front_dtypes.python_scalar_dtype(a)
        return Array._wrap(np.asarray(a, dtype=dt), dtype is None and not isinstance(a, bool))
    try:
        value = np.asarray(a)
    except ValueError as err:  # a ragged nested sequence
        raise ValueError(f"mlax.numpy.asarray: {err}{where()}") from None
    if value.dtype == object:
        raise TypeError(f"mlax.numpy.asarray: cannot convert {type(a).__name__} to an array{where()}")
    if dtype is None:
        dtype = user_dtype("asarray", value.dtype)
    return Array(value.astype(dtype, copy=False))


def _contains_traced(x: Any) -> bool:
    if isinstance(x, (list, tuple)):
        return any(_contains_traced(e) for e in x)
    return is_traced_or_array(x)


def array(object: Any, dtype: Any = None, copy: bool = True, ndmin: int = 0) -> Any:
    """``jnp.array``: as asarray (a Python scalar stays weakly typed, as in JAX), plus ``ndmin``;
    with ``copy`` (the default) an Array given is copied, as jax's (donating one leaves the other)."""
    out = asarray(object, dtype)
    if copy and out is object and type(out) is Array:
        out = out.copy()
    if ndmin > out.ndim:
        out = lax.broadcast_in_dim(out, (1,) * (ndmin - out.ndim) + out.shape,
                                   tuple(range(ndmin - out.ndim, ndmin)))
    return out


def promote_dtypes(*args: Any, adjust: Any = None) -> list[Any]:
    """Convert every argument to JAX's result type of all of them (weak-type aware), or to
    ``adjust(result type)``; shapes are left alone."""
    try:
        dtype, weak = front_dtypes.result_type(*args, return_weak_type_flag=True)
    except TypeError as err:  # an operand of a dtype mlax does not compute with (float8...)
        raise TypeError(f"{err}{where()}") from None
    dtype = adjust(dtype) if adjust else dtype
    return [lax.convert_element_type(asarray(a), dtype, weak_type=weak) for a in args]


def promote_dtypes_inexact(*args: Any) -> list[Any]:
    """``promote_dtypes`` to the inexact type of the result type (``to_inexact_dtype``)."""
    return promote_dtypes(*args, adjust=to_inexact_dtype)


def broadcast_shapes_or_raise(fname: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy's broadcast of ``shapes`` (counted here: ``np.broadcast_shapes`` stops at 32 dimensions)."""
    rank = max((len(s) for s in shapes), default=0)
    result = [1] * rank
    for shape in shapes:
        for i, d in enumerate(shape, start=rank - len(shape)):
            if d != 1 and result[i] not in (1, d):
                shown = " and ".join(str(tuple(s)) for s in shapes)
                raise ValueError(f"{fname}: shapes {shown} are incompatible for broadcasting{where()}")
            if d != 1:
                result[i] = d
    return tuple(result)


def broadcast_to_shape(x: Any, shape: tuple[int, ...]) -> Any:
    """NumPy broadcasting of ``x`` to ``shape`` (trailing dimensions align)."""
    x = asarray(x)
    if x.shape == tuple(shape):
        return x
    lead = len(shape) - x.ndim
    if lead < 0:
        raise ValueError(f"cannot broadcast shape {x.shape} to {tuple(shape)}{where()}")
    return lax.broadcast_in_dim(x, shape, tuple(range(lead, len(shape))))


def promote_args(fname: str, *args: Any) -> list[Any]:
    """Promote dtypes and broadcast shapes as NumPy/JAX do for elementwise functions."""
    check_arraylike(fname, *args)
    _reject_keys(fname, args)
    return _broadcast_promoted(fname, promote_dtypes(*args))


def _reject_keys(fname: str, args: Sequence[Any]) -> None:
    """jax's TypeError for key arrays given to numeric functions (which take no keys)."""
    if any(prng.is_key(a) for a in args):
        dtypes = ", ".join(str(front_dtypes.dtype_and_weak(a)[0]) if not prng.is_key(a) else str(a.dtype)
                           for a in args)
        raise TypeError(f"{fname} does not accept dtype{'s' if len(args) > 1 else ''} {dtypes}.{where()}")


def _broadcast_promoted(fname: str, promoted: list[Any]) -> list[Any]:
    shapes = [abstractify(a).shape for a in promoted]
    if numpy_rank_promotion.value != "allow":
        check_rank_promotion(fname, shapes)
    shape = broadcast_shapes_or_raise(fname, *shapes)
    return [broadcast_to_shape(a, shape) for a in promoted]


# Modules between a caller and the function whose arguments are broadcast: operators, ufunc calls and
# custom derivatives (jnp functions with a custom_jvp).
_DISPATCH_MODULES = frozenset({"mlax.numpy.util", "mlax.array_methods", "mlax.array", "mlax.numpy.ufuncs",
                               "mlax.custom_derivatives"})


def _module_of(frame: Any) -> str:
    return frame.f_globals.get("__name__", "")


def _called_from_outside_mlax() -> bool:
    """Whether the elementwise function broadcasting its arguments (the first frame above this
    module) was called, directly or through an operator or ufunc, by code outside mlax."""
    frame = sys._getframe(1)
    while frame is not None and _module_of(frame) == __name__:
        frame = frame.f_back
    frame = frame.f_back if frame is not None else None  # the function's caller
    while frame is not None and _module_of(frame) in _DISPATCH_MODULES:
        frame = frame.f_back
    module = _module_of(frame) if frame is not None else ""
    return not (module == "mlax" or module.startswith("mlax."))


def check_vectorize_rank_promotion(shapes: list[tuple[int, ...]], loop_ranks: list[int],
                                   signature: str | None) -> None:
    """jax's rank promotion check of ``jnp.vectorize``'s arguments: their loop (non-core)
    ranks, of the arguments that are not scalars, differ."""
    mode = numpy_rank_promotion.value
    if mode == "allow" or len(set(loop_ranks)) < 2 or not _called_from_outside_mlax():
        return
    message = (f"operands with shapes {shapes} require rank promotion for jnp.vectorize function with "
               f"signature {signature}. Set the jax_numpy_rank_promotion config option to 'allow' to disable "
               "this message; for more information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
    if mode == "warn":
        warnings.warn(message, stacklevel=3)
    else:
        raise ValueError(message)


def check_rank_promotion(fname: str, shapes: Sequence[tuple[int, ...]]) -> None:
    """jax's ``jax_numpy_rank_promotion`` check, with its warning ("warn") and ValueError
    ("raise"): arrays of different non-zero ranks broadcast by an elementwise function. As jax
    checks what its users ask for and writes its own functions rank-clean, the check applies
    where the function (or the operator, or the ufunc) is called from outside mlax; broadcasts
    inside mlax's implementations are mlax's own business."""
    mode = numpy_rank_promotion.value
    if mode == "allow" or len({len(s) for s in shapes if s}) < 2 or not _called_from_outside_mlax():
        return
    shown = " ".join(map(str, (tuple(s) for s in shapes)))
    if mode == "warn":
        warnings.warn(f"Following NumPy automatic rank promotion for {fname} on shapes {shown}. Set the "
                      "jax_numpy_rank_promotion config option to 'allow' to disable this warning; for more "
                      "information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html.",
                      stacklevel=2)
    else:
        raise ValueError(f"Operands could not be broadcast together for {fname} on shapes {shown} and with "
                         "the config option jax_numpy_rank_promotion='raise'. For more information, see "
                         "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


def promote_args_inexact(fname: str, *args: Any) -> list[Any]:
    """As promote_args, but to the inexact type of the promoted type (``to_inexact_dtype``).

    Each argument converts straight to that type, as in jnp: ``(uint32, -3)`` gives -3.0, not
    the float of -3 wrapped to uint32."""
    return _promote_with(fname, args, to_inexact_dtype)


def _promote_with(fname: str, args: tuple[Any, ...], adjust: Any) -> list[Any]:
    """Convert every argument to ``adjust(result type)`` (weak as the promotion), then broadcast."""
    check_arraylike(fname, *args)
    _reject_keys(fname, args)
    return _broadcast_promoted(fname, promote_dtypes(*args, adjust=adjust))


def to_inexact_dtype(dtype: Any) -> np.dtype:
    """JAX's inexact type for a dtype: booleans and integers up to 32 bits become float32 (even
    with x64), 64-bit integers the default float type; inexact types stay."""
    dtype = np.dtype(dtype)
    if front_dtypes.issubdtype(dtype, np.inexact):
        return dtype
    return front_dtypes.default_float() if dtype.itemsize == 8 else np.dtype(np.float32)


def concrete(x: Any) -> np.ndarray:
    return to_numpy(x)


def normalize_axis(fname: str, axis: Any, ndim: int) -> int:
    """A static axis in ``[-ndim, ndim)`` as a non-negative int (NumPy's AxisError otherwise)."""
    if isinstance(axis, Tracer):
        raise TypeError(f"{fname}: axis must be a static integer, got a traced value{where()}")
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{fname}: axis must be an integer, got {axis!r}{where()}") from None
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(f"{fname}: axis {axis} is out of bounds for array of dimension "
                                      f"{ndim}{where()}")
    return axis % ndim


def normalize_axes(fname: str, axes: Any, ndim: int) -> tuple[int, ...]:
    """One axis or a sequence of distinct axes, each normalized by ``normalize_axis``."""
    if isinstance(axes, range):  # as jax's index tuples
        axes = tuple(axes)
    if not isinstance(axes, (tuple, list)):
        axes = (axes,)
    out = tuple(normalize_axis(fname, a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"{fname}: repeated axis in {tuple(axes)}{where()}")
    return out


def static_int_array(fname: str, what: str, value: Any) -> np.ndarray:
    """A concrete int or (nested) sequence of ints as an int64 NumPy array; tracers raise clearly."""
    if _contains_tracer(value):
        raise TypeError(f"{fname}: {what} must be static (concrete) integers, got a traced value{where()}")
    array = np.asarray(to_numpy(value) if isinstance(value, Array) else value)
    if array.dtype == object or (array.size and array.dtype.kind not in "iu"):
        raise TypeError(f"{fname}: {what} must be integers, got {value!r}{where()}")
    return array.astype(np.int64)


def static_ints(fname: str, what: str, value: Any) -> tuple[int, ...]:
    """A concrete int or sequence of ints, flattened to a tuple (see ``static_int_array``)."""
    return tuple(int(v) for v in static_int_array(fname, what, value).reshape(-1))


def _contains_tracer(x: Any) -> bool:
    if isinstance(x, (list, tuple)):
        return any(_contains_tracer(e) for e in x)
    return isinstance(x, Tracer)


def check_arraylike(fname: str, *args: Any) -> None:
    """jnp functions take arrays and scalars only (a list is a TypeError, as in JAX), and objects
    that give an array by ``__jax_array__`` (flax.nnx's Variables)."""
    for i, arg in enumerate(args):
        if not is_array_like(arg) and not hasattr(type(arg), "__jax_array__"):
            raise TypeError(f"mlax.numpy.{fname} requires ndarray or scalar arguments, got "
                            f"{type(arg).__name__} at position {i}{where()}")


def const_like(x: Any, value: Any, weak: str | bool = "scalar") -> Any:
    """``value`` in the dtype and shape of ``x``. Its weak type follows the jnp helper being
    mirrored, since it decides the result's weak type: ``"scalar"`` (``lax._const``: weak iff
    ``x`` is a weak scalar), ``"like"`` (``lax.full_like``: weak iff ``x`` is weak),
    ``"never"`` (a NumPy constant), or an explicit bool."""
    aval = abstractify(x)
    rules = {"scalar": aval.weak_type and not aval.shape, "like": aval.weak_type, "never": False}
    is_weak = weak if isinstance(weak, bool) else rules[weak]
    constant = Array._wrap(np.array(value).astype(aval.dtype), is_weak)
    return lax.broadcast_in_dim(constant, aval.shape, ())


def user_dtype(fname: str, dtype: Any) -> np.dtype | None:
    """A dtype argument canonicalised as jnp does (float64 -> float32 unless x64); None stays."""
    if dtype is None:
        return None
    try:
        return front_dtypes.canonicalize(np.dtype(dtype))
    except TypeError as err:
        raise TypeError(f"mlax.numpy.{fname}: {err}{where()}") from None


def promote_args_numeric(fname: str, *args: Any) -> list[Any]:
    """As promote_args, with booleans promoted to int32 (jnp's ``promote_args_numeric``)."""
    return _promote_with(fname, args, lambda d: np.dtype(np.int32) if d == np.bool_ else d)


def slice_axis(x: Any, axis: int, start: int, stop: int, step: int = 1) -> Any:
    """``x[..., start:stop:step, ...]`` on one axis (0 <= start <= stop <= size), via lax.slice."""
    if (start, stop, step) == (0, x.shape[axis], 1):
        return x
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, stop, step
    return lax.slice(x, starts, limits, strides)
