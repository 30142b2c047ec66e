"""mlax.numpy host-side input/output: the NumPy functions jax.numpy passes through (save, savez,
array_repr, array_str), NumPy readers whose result becomes an mlax array (load, frombuffer,
fromstring, from_dlpack), and fromfile/fromiter, which jax refuses (they consume their input,
so are not pure) with the same NotImplementedError. None of these can be traced."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from mlax.numpy.util import asarray
from mlax.source_info import where

__all__ = ["array_repr", "array_str", "from_dlpack", "frombuffer", "fromfile", "fromiter", "fromstring",
           "load", "save", "savez"]

# jnp's own names for these are NumPy's functions; they format or write via __array__.
array_repr = np.array_repr
array_str = np.array_str
save = np.save
savez = np.savez


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """``jnp.load``: ``np.load``, an array result as an mlax array (2-byte void data, how NumPy
    stores bfloat16, read as bfloat16); an unsupported dtype or an archive stays NumPy's."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray):
        if out.dtype == "V2":
            out = out.view(ml_dtypes.bfloat16)
        try:
            out = asarray(out)
        except TypeError:
            pass
    return out


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Any:
    """``jnp.frombuffer``: ``np.frombuffer`` as an mlax array (a copy, in the canonical dtype)."""
    return asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """``jnp.fromstring``: ``np.fromstring`` of text (``sep`` is required) as an mlax array."""
    return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """``jnp.from_dlpack``: an array from an object with ``__dlpack__`` on the host (mlax's one
    device); mlax arrays copy it (they never alias a buffer the producer can write)."""
    if not hasattr(x, "__dlpack__") or not hasattr(x, "__dlpack_device__"):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods.")
    if copy is False:
        raise ValueError(f"mlax.numpy.from_dlpack: copy=False is not possible: mlax copies the buffer"
                         f"{where()}")
    return asarray(np.array(np.from_dlpack(x)))


def _impure(name: str) -> Any:
    def fn(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f"mlax.numpy.{name}() is not implemented because it may be non-pure and thus unsafe for use "
            f"with JIT and other transformations (as jnp.{name}). Consider using "
            f"mlax.numpy.asarray(np.{name}(...)) instead.")

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``jnp.{name}``: not provided, as in jax (it consumes its input); use np.{name}."
    return fn


fromfile = _impure("fromfile")
fromiter = _impure("fromiter")
