"""``jax.experimental.shard_map.shard_map``: the older signature of mlax.shard_map, for code
written before jax 0.8 (mesh and specs positional, ``check_rep`` for ``check_vma``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlax.shard_mapping import shard_map as _shard_map


def shard_map(f: Callable[..., Any], mesh: Any, in_specs: Any, out_specs: Any, check_rep: bool = True,
              auto: frozenset[Any] = frozenset()) -> Callable[..., Any]:
    """``shard_map(f, mesh, in_specs, out_specs)``: as mlax.shard_map. ``auto`` (axes left to
    the partitioner) must be empty: every mesh axis is manual in mlax."""
    names = frozenset(mesh.axis_names) - frozenset(auto) if auto else frozenset()
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=check_rep,
                      axis_names=names)


__all__ = ["shard_map"]
