"""mlax.Array: the immutable array mlax returns, backed by a read-only NumPy buffer."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax.array_methods import ArrayMethods


class Array(ArrayMethods):
    """An immutable, concrete array (the counterpart of ``jax.Array``)."""

    __slots__ = ("_value", "_weak_type")
    __array_priority__ = 100

    def __init__(self, value: Any, weak_type: bool = False) -> None:
        """Copies ``value``: what the user passed stays theirs and unmodified."""
        value = np.array(value, copy=True)
        value.flags.writeable = False
        self._value = value
        self._weak_type = bool(weak_type)

    @classmethod
    def _wrap(cls, value: np.ndarray, weak_type: bool = False) -> Array:
        """Take ownership of a freshly computed buffer without copying it."""
        array = cls.__new__(cls)
        value = np.asarray(value)
        if value.flags.writeable:
            value.flags.writeable = False
        array._value = value
        array._weak_type = bool(weak_type)
        return array

    @property
    def aval(self) -> Any:
        from mlax.core import Aval

        return Aval(self._value.shape, self._value.dtype, self._weak_type)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._value.shape

    @property
    def dtype(self) -> np.dtype:
        return self._value.dtype

    @property
    def weak_type(self) -> bool:
        return self._weak_type

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if copy:
            return np.array(self._value, dtype=dtype, copy=True)
        return self._value if dtype is None else self._value.astype(dtype)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._value.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._value.__dlpack_device__()

    def block_until_ready(self) -> Array:
        return self

    def item(self, *args: Any) -> Any:
        return self._value.item(*args)

    def tolist(self) -> Any:
        return self._value.tolist()

    def copy(self) -> Array:
        return Array(self._value.copy(), self._weak_type)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __int__(self) -> int:
        return int(self._value)

    def __float__(self) -> float:
        return float(self._value)

    def __complex__(self) -> complex:
        return complex(self._value)

    def __index__(self) -> int:
        if not np.issubdtype(self.dtype, np.integer) or self._value.ndim:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self._value)

    def __hash__(self) -> int:
        raise TypeError("unhashable type: 'mlax.Array'")

    def __format__(self, spec: str) -> str:
        return format(self._value, spec) if self._value.ndim == 0 else str(self)

    def __repr__(self) -> str:
        body = np.array2string(self._value, separator=", ", prefix="Array(")
        weak = ", weak_type=True" if self._weak_type else ""
        return f"Array({body}, dtype={self.dtype.name}{weak})"

    def __str__(self) -> str:
        return str(self._value)

    def __reduce__(self) -> Any:
        return (Array, (np.array(self._value), self._weak_type))

    @property
    def device(self) -> Any:
        from mlax.device_info import devices

        return devices()[0]
