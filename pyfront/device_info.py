"""mlax.devices(): the devices programs run on (the host CPU for now)."""

from __future__ import annotations

import platform
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Device:
    id: int
    platform: str
    device_kind: str

    def __repr__(self) -> str:
        return f"{self.platform.capitalize()}Device(id={self.id})"


_CPU = Device(0, "cpu", platform.processor() or platform.machine() or "cpu")


def devices(backend: str | None = None) -> list[Device]:
    return [_CPU]


def local_devices(backend: str | None = None) -> list[Device]:
    return devices(backend)


def device_count(backend: str | None = None) -> int:
    return len(devices(backend))


def default_backend() -> str:
    return "cpu"


def block_until_ready(x: Any) -> Any:
    """Wait for every array in the pytree ``x`` (mlax runs synchronously) and return it."""
    from jax import tree_util

    for leaf in tree_util.tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x


def device_get(x: Any) -> Any:
    """``x`` with every mlax (or jax) Array replaced by its host NumPy array, as
    ``jax.device_get``: read-only, without a copy where the array already lives on the host;
    other leaves (scalars, tracers) as they are."""
    import jax
    from jax import tree_util

    from mlax.array import Array

    def fetch(leaf: Any) -> Any:
        if type(leaf) is Array:
            return leaf._value
        if isinstance(leaf, jax.Array):
            return jax.device_get(leaf)
        return leaf

    return tree_util.tree_map(fetch, x)
