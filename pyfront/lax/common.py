"""Operand handling shared by the mlax.lax wrappers."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax.array import Array
from mlax.array_methods import ArrayMethods
from mlax.core import abstractify, as_jax_array, to_numpy, with_weak_type

Operand = Any


def operand(x: Operand, dtype: Any = None) -> Operand:
    """An Array or Tracer for ``x``; a Python scalar takes ``dtype`` (when given) and stays weak;
    an object giving an array by ``__jax_array__`` (flax.nnx's Variables), that array."""
    x = as_jax_array(x)
    if isinstance(x, ArrayMethods):  # Arrays and tracers (not key arrays, though isinstance Array)
        return x
    if front_dtypes.is_python_scalar(x):
        weak = not isinstance(x, bool)
        dt = np.dtype(dtype) if dtype is not None else front_dtypes.python_scalar_dtype(x)
        return Array._wrap(np.asarray(x, dtype=dt), weak)
    return Array._wrap(to_numpy(x))


def operands_like(*xs: Operand) -> list[Operand]:
    """Lax's rule for mixing Python scalars with arrays: scalars take the arrays' dtype."""
    target = next((abstractify(x).dtype for x in xs
                   if not front_dtypes.is_python_scalar(x)), None)
    return [operand(x, target) for x in xs]


def reject_bool(name: str, *xs: Operand) -> None:
    """jax's dtype rule of add and mul (and the scatters built on them): numbers, not booleans,
    which jnp turns into logical or/and before they reach lax."""
    for position, x in enumerate(xs):
        if abstractify(x).dtype == np.bool_:
            raise TypeError(f"{name} does not accept dtype bool at position {position}. Accepted dtypes at "
                            f"position {position} are subtypes of integer, floating, complexfloating.")


__all__ = ["operand", "operands_like", "reject_bool", "with_weak_type"]
