"""mlax.pmap: jax's per-device map, which needs several devices (the sharding issue).

The name exists so that libraries which look at jax's transformations at import import on
mlax (equinox takes ``type(jax.pmap(lambda x: x))``): wrapping a function works, calling the
result raises a clear error.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from mlax.errors import check_callable, user_error


def pmap(fun: Callable[..., Any] | None = None, *args: Any, **kwargs: Any) -> Any:
    """Not yet: mlax runs on one device until devices and sharding land."""
    if fun is None:
        return functools.partial(pmap, *args, **kwargs)
    check_callable(fun, "fun of mlax.pmap")

    @functools.wraps(fun)
    def mapped(*call_args: Any, **call_kwargs: Any) -> Any:
        raise user_error(NotImplementedError, "mlax.pmap is not implemented yet: mlax has one device until "
                         "devices and sharding (Mesh, shard_map, pmap) land; use mlax.vmap to map over a "
                         "batch on one device", "the function mapped by mlax.pmap")

    return mapped


pmap.mlax_not_yet = True  # type: ignore[attr-defined]  # listed as "not yet" in docs/compatibility.md
