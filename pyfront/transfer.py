"""Putting data on devices: ``mlax.device_put``, jax's ``make_array_from_*`` constructors and
``with_sharding_constraint``, each the other's case (device_put of a traced value; the
constraint outside a trace).

Each is jax's own function, given mlax Arrays' buffers (their jax Arrays, or host buffers) and
PRNG keys' data, and its results wrapped as mlax Arrays, so the placements, the pytree-prefix
rules and the errors (a spec that does not divide a dimension: jax's ``ValueError``) are
jax's. An Array placed on a device or sharding is committed (mlax.array). A PartitionSpec is
read against mlax's context mesh (``mlax.set_mesh``). Inside a trace, ``device_put`` of a traced
value to a sharding is ``with_sharding_constraint``; to a device or None it is the identity.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax import tree_util
from jax.api_util import flatten_axes
from jax.sharding import NamedSharding, PartitionSpec, Sharding

from mlax import prng
from mlax.array import Array
from mlax.core import Tracer, abstractify, bind, current_trace
from mlax.errors import user_error
from mlax.sharding import as_named, context_mesh, placement, trace_module, use_program_mesh

__all__ = ["device_put", "make_array_from_callback", "make_array_from_process_local_data",
           "make_array_from_single_device_arrays", "with_sharding_constraint"]


def _is_leaf(x: Any) -> bool:
    return prng.is_key(x)


def _jax_value(leaf: Any) -> Any:
    """What jax's functions take for an mlax leaf: an Array's buffer, a key's data."""
    if type(leaf) is Array:
        return leaf._xla_buffer if leaf._xla_buffer is not None else leaf._value
    if prng.is_key(leaf):
        return _jax_value(leaf._base_array)
    return leaf


def _wrap(out: Any, like: Any) -> Any:
    """jax's result ``out`` for the mlax leaf ``like``: an mlax Array (keeping an Array's weak
    type), or a key over one."""
    if prng.is_key(like):
        return like._with(_wrap(out, like._base_array))
    weak = like._weak_type if type(like) is Array else bool(getattr(out, "weak_type", False))
    return Array._wrap_device(out, weak, committed=bool(out.committed))


def _is_where(x: Any) -> bool:
    return x is None or isinstance(x, (PartitionSpec, Sharding, jax.Device))


def _with_context_mesh(where: Any) -> Any:
    """A PartitionSpec leaf as a NamedSharding on mlax's context mesh (jax's own context mesh
    is never set by mlax); left as it is without one, for jax to reject."""
    if not isinstance(where, PartitionSpec):
        return where
    mesh = context_mesh()
    return where if mesh is None else NamedSharding(mesh, where)


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: Any = False,
               may_alias: Any = None) -> Any:
    """``jax.device_put``: ``x`` (a pytree of arrays, scalars, keys) on ``device`` (a Device, a
    Sharding, a PartitionSpec of the context mesh, None for the default device uncommitted, or a
    pytree of those that is a prefix of ``x``)."""
    device = tree_util.tree_map(_with_context_mesh, device, is_leaf=_is_where)
    src = tree_util.tree_map(_with_context_mesh, src, is_leaf=_is_where)
    leaves, tree = tree_util.tree_flatten(x, is_leaf=_is_leaf)
    if any(isinstance(leaf, Tracer) for leaf in leaves):
        return _traced(x, device)
    values = tree_util.tree_unflatten(tree, [_jax_value(leaf) for leaf in leaves])
    out = jax.device_put(values, device, src=src, donate=donate, may_alias=may_alias)
    outs = tree.flatten_up_to(out)
    return tree_util.tree_unflatten(tree, [_wrap(o, leaf) for o, leaf in zip(outs, leaves, strict=True)])


def _traced(x: Any, device: Any) -> Any:
    """device_put inside a trace: a sharding constrains the traced values, a device does nothing
    (mlax programs run where their inputs' shardings and the jit's say)."""
    def put(where: Any, sub: Any) -> Any:
        if isinstance(where, (NamedSharding, PartitionSpec)):
            return with_sharding_constraint(sub, where)
        return sub

    return tree_util.tree_map(put, device, x, is_leaf=_is_where)


def _host(value: Any) -> Any:
    """A callback's or a process's data for jax: mlax Arrays as their NumPy buffers."""
    if type(value) is Array or prng.is_key(value):
        return np.asarray(_jax_value(value))
    return value


def make_array_from_callback(shape: Sequence[int], sharding: Any, data_callback: Callable[[Any], Any],
                             dtype: Any = None) -> Array:
    """``jax.make_array_from_callback``: the global array of ``shape`` laid out by
    ``sharding``, each addressable shard ``data_callback(index)`` (NumPy or mlax arrays)."""
    out = jax.make_array_from_callback(tuple(shape), sharding, lambda index: _host(data_callback(index)),
                                       dtype)
    return Array._wrap_device(out, committed=True)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Any, arrays: Sequence[Any], *,
                                         dtype: Any = None) -> Array:
    """``jax.make_array_from_single_device_arrays``: the global array whose addressable shards
    are ``arrays`` (mlax or jax Arrays, each on its shard's device)."""
    buffers = [a._xla_buffer if type(a) is Array and a._xla_buffer is not None else
               jax.device_put(a._value) if type(a) is Array else a for a in arrays]
    out = jax.make_array_from_single_device_arrays(tuple(shape), sharding, buffers, dtype=dtype)
    return Array._wrap_device(out, committed=True)


def make_array_from_process_local_data(sharding: Any, local_data: Any, global_shape: Any = None) -> Any:
    """``jax.make_array_from_process_local_data``: global arrays from the part of the data this
    process holds (pytrees of shardings, data and shapes, as jax's)."""
    local = tree_util.tree_map(_host, local_data, is_leaf=_is_leaf)
    out = jax.make_array_from_process_local_data(sharding, local, global_shape)
    return tree_util.tree_map(lambda o: Array._wrap_device(o, committed=True), out)


# --- with_sharding_constraint: a device_put inside a trace -------------------------------------


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``jax.lax.with_sharding_constraint``: inside a traced program, the identity on every array
    of ``x`` that tells the partitioner each one's sharding (``shardings``: a Sharding or
    PartitionSpec, or a pytree of them that is a prefix of ``x``); outside one, a device_put."""
    leaves, tree = tree_util.tree_flatten(x)
    try:
        flat = flatten_axes("with_sharding_constraint shardings", tree, shardings)
    except ValueError as error:
        raise user_error(ValueError, str(error), "shardings of mlax.lax.with_sharding_constraint") from None
    trace = current_trace()
    out = []
    for i, (leaf, sharding) in enumerate(zip(leaves, flat, strict=True)):
        argument = f"shardings of mlax.lax.with_sharding_constraint (for leaf {i} of x)"
        named = as_named(sharding, "with_sharding_constraint", argument)
        if named is None:
            out.append(leaf)
            continue
        shape = abstractify(leaf).shape
        where = placement(named, shape, "One of with_sharding_constraint arguments", argument)
        if trace is None:
            out.append(device_put(leaf, named))
            continue
        use_program_mesh(trace_module(trace), where.mesh, "with_sharding_constraint")
        out.append(bind("sharding_constraint", leaf, sharding=where.spec))
    return tree_util.tree_unflatten(tree, out)
