"""``jax.debug``'s sharding inspection on mlax values: ``visualize_array_sharding``,
``visualize_sharding`` and ``inspect_array_sharding``.

The drawing is jax's own ``visualize_sharding`` (tracing-free: a shape and a Sharding in, a
rich table out), so mlax prints the table jax prints. What mlax supplies is the sharding of a
value: a concrete Array's is its buffer's; a traced one's is known while tracing only where its
type gives it (explicit sharding: the type's spec on the mesh's devices; a value on no mesh in a
program on no mesh lies on one device). jax calls back when XLA has chosen (at compile time);
mlax calls back while tracing, which for a first call is the same moment to the user.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jax import tree_util
from jax.sharding import NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding

from mlax.array import Array
from mlax.core import Tracer
from mlax.device_info import devices
from mlax.dialect import sharding as ir_sharding
from mlax.errors import user_error
from mlax.sharding import concrete_for, trace_module
from mlax.sharding_types import entries, explicit, spec_of


def visualize_sharding(shape: Any, sharding: Sharding, *, use_color: bool = True, scale: float = 1.0,
                       min_width: int = 9, max_width: int = 80, color_map: Any = None) -> None:
    """``jax.debug.visualize_sharding``: draw how ``sharding`` splits an array of ``shape``
    (1 or 2 dimensions) over its devices, with jax's own drawing."""
    import jax

    jax.debug.visualize_sharding(shape, sharding, use_color=use_color, scale=scale, min_width=min_width,
                                 max_width=max_width, color_map=color_map)


def _traced_sharding(x: Any) -> Sharding:
    typed = x.aval.sharding
    if typed is not None and explicit(typed.mesh):
        mesh = concrete_for(typed.mesh)
        if mesh is not None:
            return NamedSharding(mesh, PartitionSpec(*entries(spec_of(typed, x.aval.ndim))))
    if typed is None and ir_sharding.module_mesh(trace_module(x.trace)) is None:
        return SingleDeviceSharding(devices()[0])
    raise user_error(NotImplementedError, "mlax knows a traced value's sharding while tracing only where its "
                     "type gives it (a mesh with Explicit axes, jax's explicit sharding); this value's is "
                     "chosen by mlax-partition later", "x of mlax.debug.inspect_array_sharding")


def sharding_of(x: Any) -> Sharding:
    """The sharding of an mlax Array (its buffer's), a traced value (module docstring), or a
    jax Array."""
    if isinstance(x, Tracer):
        return _traced_sharding(x)
    if type(x) is Array or hasattr(x, "sharding"):
        return x.sharding
    raise user_error(TypeError, f"inspect_array_sharding takes arrays, got {x!r} of type {type(x).__name__}",
                     "x of mlax.debug.inspect_array_sharding")


def inspect_array_sharding(value: Any, *, callback: Callable[[Sharding], None]) -> None:
    """``jax.debug.inspect_array_sharding``: call ``callback`` with the sharding of each array
    of the pytree ``value`` (while tracing, for a traced one)."""
    for leaf in tree_util.tree_leaves(value):
        callback(sharding_of(leaf))


def visualize_array_sharding(arr: Any, **kwargs: Any) -> None:
    """``jax.debug.visualize_array_sharding``: draw ``arr``'s sharding (jax's table)."""
    inspect_array_sharding(arr, callback=lambda sharding: visualize_sharding(arr.shape, sharding, **kwargs))


__all__ = ["inspect_array_sharding", "sharding_of", "visualize_array_sharding", "visualize_sharding"]
