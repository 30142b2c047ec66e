"""Argument handling shared by mlax.numpy: asarray, dtype promotion, shape broadcasting."""

from __future__ import annotations

from typing import Any

import numpy as np
from mlax import dtypes as front_dtypes
from mlax import lax
from mlax.array import Array
from mlax.core import Tracer, abstractify, to_numpy, with_weak_type
from mlax.source_info import where


def is_traced_or_array(x: Any) -> bool:
    return isinstance(x, (Array, Tracer))


def asarray(a: Any, dtype: Any = None, copy: bool | None = None, order: str | None = None) -> Any:
    """``jnp.asarray``: Arrays and tracers pass through; nested lists may contain tracers."""
    if dtype is not None:
        dtype = front_dtypes.canonicalize(np.dtype(dtype))
    if is_traced_or_array(a):
        return a if dtype is None else lax.convert_element_type(a, dtype)
    if isinstance(a, (list, tuple)) and any(_contains_traced(e) for e in a):
        from mlax.numpy.manipulation import stack

        return stack([asarray(e, dtype) for e in a])
    if isinstance(a, front_dtypes.PYTHON_SCALARS):
        dt = dtype or front_dtypes.python_scalar_dtype(a)
        return Array._wrap(np.asarray(a, dtype=dt), dtype is None and not isinstance(a, bool))
    value = np.asarray(a)
    if value.dtype == object:
        raise TypeError(f"mlax.numpy.asarray: cannot convert {type(a).__name__} to an array{where()}")
    if dtype is None:
        dtype = _default_dtype_of(value)
    return Array(value.astype(dtype, copy=False))


def _default_dtype_of(value: np.ndarray) -> np.dtype:
    return front_dtypes.canonicalize(value.dtype)


def _contains_traced(x: Any) -> bool:
    if isinstance(x, (list, tuple)):
        return any(_contains_traced(e) for e in x)
    return is_traced_or_array(x)


def array(object: Any, dtype: Any = None, copy: bool = True, ndmin: int = 0) -> Any:
    out = asarray(object, dtype)
    if isinstance(object, front_dtypes.PYTHON_SCALARS) and dtype is None:
        out = with_weak_type(out, False)
    if ndmin > out.ndim:
        out = lax.broadcast_in_dim(out, (1,) * (ndmin - out.ndim) + out.shape,
                                   tuple(range(ndmin - out.ndim, ndmin)))
    return out


def promote_dtypes(*args: Any) -> list[Any]:
    """Convert every argument to JAX's result type of all of them (weak-type aware)."""
    dtype, weak = front_dtypes.result_type(*args, return_weak_type_flag=True)
    return [lax.convert_element_type(asarray(a), dtype, weak_type=weak) for a in args]


def broadcast_shapes_or_raise(fname: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        shown = " and ".join(str(tuple(s)) for s in shapes)
        raise ValueError(f"{fname}: shapes {shown} are incompatible for broadcasting{where()}") from None


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
    promoted = promote_dtypes(*args)
    shape = broadcast_shapes_or_raise(fname, *(abstractify(a).shape for a in promoted))
    return [broadcast_to_shape(a, shape) for a in promoted]


def promote_args_inexact(fname: str, *args: Any) -> list[Any]:
    """As promote_args, then to the default float type if the result is not inexact."""
    promoted = promote_args(fname, *args)
    if promoted and not front_dtypes.issubdtype(promoted[0].dtype, np.inexact):
        weak = all(abstractify(a).weak_type for a in promoted)
        promoted = [lax.convert_element_type(a, front_dtypes.default_float(), weak_type=weak)
                    for a in promoted]
    return promoted


def concrete(x: Any) -> np.ndarray:
    return to_numpy(x)
