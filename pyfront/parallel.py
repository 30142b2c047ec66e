"""mlax.pmap: jax's per-device map, which needs several devices (the sharding issue).

The name exists so that libraries which collect jax's transformations at import (equinox
lists ``jax.pmap`` among them) import on mlax; calling it raises a clear error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlax.errors import user_error


def pmap(fun: Callable[..., Any] | None = None, *args: Any, **kwargs: Any) -> Any:
    """Not yet: mlax runs on one device until devices and sharding land."""
    raise user_error(NotImplementedError, "mlax.pmap is not implemented yet: mlax has one device until "
                     "devices and sharding (Mesh, shard_map, pmap) land; use mlax.vmap to map over a "
                     "batch on one device", "fun of mlax.pmap")
