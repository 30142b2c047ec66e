"""mlax.Array: the immutable array mlax returns, backed by a read-only NumPy buffer or by the
device buffer of the XLA backend that computed it: a jax Array of one device, or one spread
over several (placed by ``mlax.device_put`` or computed by a partitioned program).

A device-backed Array keeps its buffer, so the next XLA program takes it as it is; it is read
on the host once, when NumPy, printing or an eager op first needs it (no copy on the CPU; a
sharded one is gathered). Its sharding API (``sharding``, ``devices()``, ``addressable_shards``,
...) is jax's, its objects jax's own (NamedSharding, SingleDeviceSharding, Shard); a host
buffer counts as one shard on ``mlax.devices()[0]``.

*Committed* (jax's word): an Array placed by ``device_put`` on a device or sharding, or produced
by a program for a mesh, says where the next program must run (``Array.committed``; jit takes
``Array.sharding`` of committed inputs); host arrays and one-device results are not.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from mlax.array_methods import ArrayMethods, ArrayType
from mlax.avals import Aval
from mlax.sharding_types import of_buffer


class _Deleted:
    """The buffer of a deleted Array: its type stays known, any use of its values raises."""

    __slots__ = ("shape", "dtype")
    sharding = None

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.shape, self.dtype = shape, dtype

    def _error(self) -> RuntimeError:
        return RuntimeError(f"Array has been deleted with shape={self.dtype.name}{list(self.shape)}.")

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise self._error()

    def is_deleted(self) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:
        raise self._error()


class Array(ArrayMethods, metaclass=ArrayType):
    """An immutable, concrete array (the counterpart of ``jax.Array``); tracers are instances
    too, as JAX's are of ``jax.Array``: ``type(x) is Array`` tells a concrete one."""

    __slots__ = ("_host", "_device", "_weak_type", "_committed", "__weakref__")  # weakref-able, as jax's
    __array_priority__ = 100

    def __init__(self, value: Any, weak_type: bool = False) -> None:
        """Copies ``value``: what the user passed stays theirs and unmodified."""
        value = np.array(value, copy=True)
        value.flags.writeable = False
        self._host: np.ndarray | None = value
        self._device: Any = None
        self._weak_type = bool(weak_type)
        self._committed = False

    @classmethod
    def _wrap(cls, value: np.ndarray, weak_type: bool = False) -> Array:
        """Take ownership of a freshly computed buffer without copying it."""
        array = cls.__new__(cls)
        value = np.asarray(value)
        if value.flags.writeable:
            value.flags.writeable = False
        array._host = value
        array._device = None
        array._weak_type = bool(weak_type)
        array._committed = False
        return array

    @classmethod
    def _wrap_device(cls, buffer: Any, weak_type: bool = False, committed: bool | None = None) -> Array:
        """Take ownership of an XLA device buffer (a jax.Array of one device or several).
        Unless told, it is committed when a program for a mesh made it (its sharding is a
        NamedSharding); a one-device program's result is not (it runs anywhere next)."""
        array = cls.__new__(cls)
        array._host = None
        array._device = buffer
        array._weak_type = bool(weak_type)
        if committed is None:
            from jax.sharding import NamedSharding

            committed = isinstance(buffer.sharding, NamedSharding)
        array._committed = committed
        return array

    @property
    def _value(self) -> np.ndarray:
        """The host buffer (read from the device on first use, zero-copy on the CPU)."""
        host = self._host
        if host is None:
            host = np.asarray(self._device)
            if host.flags.writeable:
                host = host.view()
                host.flags.writeable = False
            self._host = host
        return host

    @property
    def aval(self) -> Any:
        if self._device is None:
            return Aval(self.shape, self.dtype, self._weak_type)
        return Aval(self.shape, self.dtype, self._weak_type, of_buffer(self._xla_buffer))

    @property
    def shape(self) -> tuple[int, ...]:
        return (self._host if self._host is not None else self._device).shape

    @property
    def dtype(self) -> np.dtype:
        return (self._host if self._host is not None else self._device).dtype

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

    # -- deletion and donation (jax's Array API) ------------------------------------------------

    def is_deleted(self) -> bool:
        """Whether the buffer was deleted (``delete()``, or donated to a jitted call)."""
        if isinstance(self._device, _Deleted):
            return True
        return self._host is None and self._device is not None and bool(self._device.is_deleted())

    def delete(self) -> None:
        """Free the buffer: any later use raises RuntimeError, as jax's."""
        if self.is_deleted():
            return
        device = self._device
        self._host, self._device = None, _Deleted(self.shape, self.dtype)
        if device is not None:
            device.delete()

    def unsafe_buffer_pointer(self) -> int:
        """The address of the buffer's first byte (the host buffer, or the device buffer's). A
        host array that is a view of another's buffer (a reshape, a broadcast constant) gets a
        buffer of its own first, as every jax Array has: its own address, which a donation can
        hand on to an output (pyfront/aot.py)."""
        if self._host is None and self._device is not None and not isinstance(self._device, _Deleted):
            return int(self._device.unsafe_buffer_pointer())
        host = self._value
        if not host.flags.owndata or not host.flags.c_contiguous:
            host = np.array(host, order="C")
            host.flags.writeable = False
            self._host = host
        return int(host.ctypes.data)

    def block_until_ready(self) -> Array:
        if self._device is not None:
            self._device.block_until_ready()
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

    # --- devices and sharding (jax.Array's API) --------------------------------------------

    @property
    def _buffer(self) -> Any:
        """What a backend that takes device buffers is given: the device buffer where the value
        lives on a device (an XLA one, or the native GPU backend's), else the read-only host
        buffer. Executables see buffers, never Arrays."""
        return self._device if self._device is not None else self._host

    @property
    def _xla_buffer(self) -> Any:
        """The jax Array holding this one's value, or None: a host value, or a buffer of mlax's
        native GPU backend (backends/gpu/loader.DeviceBuffer, which has no jax sharding: jax
        cannot take it, NumPy reads it)."""
        return self._device if self._device is not None and self._device.sharding is not None else None

    @property
    def device(self) -> Any:
        """The device of a one-device array; the sharding of one over several (as jax's)."""
        if self._device is not None:
            return self._device.device
        return jax.devices()[0]  # jax's default device, as mlax.devices()[0]

    @property
    def sharding(self) -> Any:
        """jax's Sharding of the array: its buffer's, or SingleDeviceSharding(devices()[0])
        for a host array."""
        if self._device is not None:
            return self._device.sharding
        from jax.sharding import SingleDeviceSharding

        return SingleDeviceSharding(self.device)

    @property
    def committed(self) -> bool:
        """Whether the array is committed to its devices (module docstring)."""
        return self._committed

    def devices(self) -> set[Any]:
        return set(self.sharding.device_set)

    @property
    def is_fully_replicated(self) -> bool:
        return self._device is None or self._device.is_fully_replicated

    @property
    def is_fully_addressable(self) -> bool:
        return self._device is None or self._device.is_fully_addressable

    def _shards(self, shards: Any) -> list[Any]:
        """jax's Shards with their data as mlax Arrays (None where another process holds it)."""
        from jax import Shard

        out = []
        for shard in shards:
            data = None if shard.data is None else Array._wrap_device(shard.data, self._weak_type, True)
            out.append(Shard(shard.device, self.sharding, self.shape, data))
        return out

    @property
    def addressable_shards(self) -> list[Any]:
        """The shards this process holds: jax's Shard objects (device, index, replica_id,
        data), their data mlax Arrays."""
        if self._device is None:
            from jax import Shard

            return [Shard(self.device, self.sharding, self.shape, self)]
        return self._shards(self._device.addressable_shards)

    @property
    def global_shards(self) -> list[Any]:
        """Every shard of every process (data None for another process's)."""
        if self._device is None:
            return self.addressable_shards
        return self._shards(self._device.global_shards)

    def addressable_data(self, index: int) -> Array:
        return self.addressable_shards[index].data


def committed_sharding(x: Any) -> Any:
    """The sharding an argument commits a program to: ``x.sharding`` of a committed mlax
    Array (or a committed jax Array), else None (the program may run anywhere)."""
    if type(x) is Array:
        return x.sharding if x._committed else None
    import jax

    if isinstance(x, jax.Array) and getattr(x, "committed", False):
        return x.sharding
    return None
