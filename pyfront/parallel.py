"""mlax.pmap: jax's per-device map, built as jax 0.10.2 builds it: a shard_map over a 1-D mesh.

``pmap(f, axis_name)(x)`` with a mapped axis of size n runs on the first n devices (of
``devices=``, else of the process): the mesh has one axis named ``axis_name``, each mapped
argument is split along its mapped axis over it (in_specs ``P(None, ..., axis_name)``), the body
squeezes that axis away, calls ``f``, and puts an axis of size 1 back at each output's out_axes
(None: the output is replicated, ``P()``). The whole is a jit with the matching NamedShardings,
so its results are Arrays sharded over the devices; a mapped axis the device count does not
divide is jit's indivisible-sharding error, as in jax.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from jax import tree_util
from jax.api_util import flatten_axes
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from mlax import prng
from mlax.api import staged_jit
from mlax.caching import LRUCache
from mlax.configuration import config
from mlax.errors import check_callable, index_tuple, user_error
from mlax.lax import expand_dims, squeeze
from mlax.shard_mapping import shard_map

_DEFAULT_AXIS = "_internal_pmap_axis_name"  # jax's name for the axis of a pmap without axis_name


def _axes_to_pspec(axis_name: str, axis: int | None) -> PartitionSpec:
    return PartitionSpec() if axis is None else PartitionSpec(*([None] * axis), axis_name)


def _check_axes(axes: Any, name: str) -> None:
    if not all(type(a) is int for a in tree_util.tree_leaves(axes)):
        raise user_error(TypeError, f"pmap {name} must be an int, None, or (nested) container with those "
                         f"types as leaves, but got {axes}.", f"{name} of mlax.pmap")


def _mesh_devices(devices: Sequence[Any] | None, backend: str | None, size: int) -> list[Any]:
    import jax

    pool = list(devices) if devices is not None else list(jax.devices(backend) if backend else jax.devices())
    return pool[:size]


def _flat_in_axes(in_axes: Any, dyn_argnums: Sequence[int] | None, dyn_args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> list[int | None]:
    """in_axes per leaf of (dyn_args, kwargs) (keyword arguments mapped along axis 0), with
    jax's error when in_axes is not a prefix of the positional arguments."""
    if dyn_argnums is not None and isinstance(in_axes, tuple):
        in_axes = tuple(in_axes[i] for i in dyn_argnums)
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    try:
        return flatten_axes("pmap in_axes", tree_util.tree_structure((dyn_args, kwargs)), (in_axes, 0))
    except ValueError as error:
        raise user_error(ValueError, f"{error}\n\nThe 'full pytree' here is the tuple of arguments passed "
                         "positionally to the pmapped function, and the value of `in_axes` must be a tree "
                         "prefix of that tuple. But it was not a prefix.", "in_axes of mlax.pmap") from None


def _normalized(axis: int | None, leaf: Any, path: str) -> int | None:
    if axis is None:
        return None
    rank = np.ndim(leaf)
    if not -rank <= axis < rank:
        raise user_error(ValueError, f"pmap was requested to map its argument along axis {axis}, which "
                         f"implies that its rank should be at least {axis + 1 if axis >= 0 else -axis}, but "
                         f"is only {rank}", f"in_axes of mlax.pmap (for {path})")
    return axis % rank


def _squeezed(x: Any, axis: int) -> Any:
    """``x`` without its mapped ``axis`` (key arrays too: flax.nnx maps its Rngs' keys)."""
    return x.squeeze(axis) if prng.is_key(x) else squeeze(x, [axis])


def _expanded(x: Any, axis: int) -> Any:
    """``x`` with a mapped ``axis`` of size 1 inserted (key arrays too)."""
    if not prng.is_key(x):
        return expand_dims(x, [axis])
    axis = axis if axis >= 0 else axis + x.ndim + 1
    return x.reshape(*x.shape[:axis], 1, *x.shape[axis:])


def pmap(fun: Callable[..., Any] | None = None, axis_name: Any = None, *, in_axes: Any = 0, out_axes: Any = 0,
         static_broadcasted_argnums: int | Iterable[int] = (), devices: Sequence[Any] | None = None,
         backend: str | None = None, axis_size: int | None = None,
         donate_argnums: int | Iterable[int] = ()) -> Any:
    """Map ``fun`` over the leading (``in_axes``) axis of its arguments, one slice per device,
    as jax.pmap; collectives over ``axis_name`` communicate between the devices."""
    options = dict(axis_name=axis_name, in_axes=in_axes, out_axes=out_axes,
                   static_broadcasted_argnums=static_broadcasted_argnums, devices=devices, backend=backend,
                   axis_size=axis_size, donate_argnums=donate_argnums)
    if fun is None:
        return functools.partial(pmap, **options)
    check_callable(fun, "fun of mlax.pmap")
    if devices is not None and not devices:
        raise user_error(ValueError, "'devices' argument to pmap must be non-empty, or None.",
                         "devices of mlax.pmap")
    name = _DEFAULT_AXIS if axis_name is None else axis_name
    static = tuple(sorted(index_tuple(static_broadcasted_argnums or (), "static_broadcasted_argnums",
                                      "mlax.pmap")))
    donated = index_tuple(donate_argnums or (), "donate_argnums", "mlax.pmap")
    donated = tuple(d - sum(s < d for s in static) for d in donated if d not in static)  # jax's rebasing
    _check_axes(in_axes, "in_axes")
    _check_axes(out_axes, "out_axes")
    programs: LRUCache[Callable[..., Any]] = LRUCache(lambda: config.jit_cache_size)

    def program(in_tree: Any, flat_axes: tuple[int | None, ...], static_values: tuple[Any, ...],
                devices_used: list[Any], donate: tuple[int, ...]) -> Callable[..., Any]:
        mesh = Mesh(np.array(devices_used, dtype=object), (name,))
        in_specs = tuple(_axes_to_pspec(name, a) for a in flat_axes)
        out_specs = tree_util.tree_map(functools.partial(_axes_to_pspec, name), out_axes,
                                       is_leaf=lambda x: x is None)

        def body(*flat_args: Any) -> Any:
            leaves = [x if a is None else _squeezed(x, a) for x, a in zip(flat_args, flat_axes, strict=True)]
            dyn_args, kwargs = tree_util.tree_unflatten(in_tree, leaves)
            call_args = list(dyn_args)
            for position, value in zip(static, static_values, strict=True):
                call_args.insert(position, value)
            out = fun(*call_args, **kwargs)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            try:
                axes = flatten_axes("pmap out_axes", out_tree, out_axes)
            except ValueError as error:
                raise user_error(ValueError, str(error), "out_axes of mlax.pmap") from None
            out_leaves = [x if a is None else _expanded(x, a) for x, a in zip(out_leaves, axes, strict=True)]
            return tree_util.tree_unflatten(out_tree, out_leaves)

        body.__name__ = getattr(fun, "__name__", "pmapped")
        mapped = shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False)
        out_shardings = tree_util.tree_map(lambda p: NamedSharding(mesh, p), out_specs)
        return staged_jit(mapped, donate_argnums=donate,
                   in_shardings=tuple(NamedSharding(mesh, p) for p in in_specs),
                   out_shardings=out_shardings)

    def prepare(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, list[Any]]:
        """The jitted program for these arguments, and the flat arguments it takes."""
        if static and max(static) >= len(args):
            raise user_error(ValueError, f"pmapped function has static_broadcasted_argnums={static} but was "
                             f"called with only {len(args)} positional "
                             f"argument{'s' if len(args) > 1 else ''}. All static broadcasted arguments must "
                             "be passed positionally.",
                             "the arguments of mlax.pmap")
        dyn_argnums = [i for i in range(len(args)) if i not in static] if static else None
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static)
        static_values = tuple(args[i] for i in static)
        paths_leaves, in_tree = tree_util.tree_flatten_with_path((dyn_args, kwargs))
        leaves = [leaf for _, leaf in paths_leaves]
        axes = _flat_in_axes(in_axes, dyn_argnums, dyn_args, kwargs)
        axes = tuple(_normalized(a, leaf, tree_util.keystr(path))
                     for a, leaf, (path, _) in zip(axes, leaves, paths_leaves, strict=True))
        sizes = [np.shape(leaf)[a] for leaf, a in zip(leaves, axes, strict=True) if a is not None]
        if not sizes:
            raise user_error(ValueError, "pmap requires at least one argument with a mapped axis.",
                             "in_axes of mlax.pmap")
        if axis_size is not None and axis_size != sizes[0]:
            raise user_error(ValueError, f"Specified axis_size {axis_size} doesn't match received axis_size "
                             f"{sizes[0]}.", "axis_size of mlax.pmap")
        used = _mesh_devices(devices, backend, int(sizes[0]))
        counts = [len(tree_util.tree_leaves(a)) for a in dyn_args]
        starts = np.cumsum([0, *counts])
        donate = tuple(j for i in donated if 0 <= i < len(dyn_args) for j in range(starts[i], starts[i + 1]))
        key = (in_tree, axes, static_values, tuple(d.id for d in used), donate)
        try:
            hash(static_values)
        except TypeError:
            raise user_error(ValueError, "Non-hashable static arguments are not supported: the arguments of "
                             f"static_broadcasted_argnums={static} must be hashable",
                             "static_broadcasted_argnums of mlax.pmap") from None
        jitted = programs.get_or_create(key, lambda: program(in_tree, axes, static_values, used, donate))
        return jitted, leaves

    @functools.wraps(fun)
    def mapped(*args: Any, **kwargs: Any) -> Any:
        jitted, leaves = prepare(args, kwargs)
        return jitted(*leaves)

    def lower(*args: Any, **kwargs: Any) -> Any:
        """The jitted program's Lowered for these arguments (jax's ``pmap(f).lower``)."""
        jitted, leaves = prepare(args, kwargs)
        return jitted.lower(*leaves)

    mapped.lower = lower  # type: ignore[attr-defined]
    return mapped
