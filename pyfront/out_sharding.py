"""jax's ``out_sharding=`` keyword, on every mlax function whose jax counterpart has it.

jax 0.10.2 gives ~60 creation, shape, contraction and random functions an ``out_sharding``
keyword, and libraries pass it (flax.nnx's Linear calls ``dot_general(..., out_sharding=None)``).
On one device the meaningful values are None and replicated shardings (flax passes
``jax.typeof(x).sharding``, a replicated NamedSharding on an empty mesh); anything that
partitions raises until sharding lands.
The keyword is added by reading jax's signatures, so it follows jax's API without a list here.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from typing import Any

from mlax.errors import user_error


def _has_out_sharding(fun: Any) -> bool:
    try:
        return "out_sharding" in inspect.signature(fun).parameters
    except (TypeError, ValueError):
        return False


def unpartitioned(sharding: Any) -> bool:
    """Whether a sharding or PartitionSpec leaves every dimension whole (None, P(), P(None, ...),
    or a fully replicated jax sharding): the one layout mlax's single device has."""
    from jax.sharding import PartitionSpec

    if sharding is None or getattr(sharding, "is_fully_replicated", False):
        return True
    return isinstance(sharding, PartitionSpec) and all(entry is None for entry in sharding)


def _accepting(fun: Callable[..., Any], api: str) -> Callable[..., Any]:
    @functools.wraps(fun)
    def call(*args: Any, out_sharding: Any = None, **kwargs: Any) -> Any:
        if not unpartitioned(out_sharding):
            raise user_error(NotImplementedError, f"{api}: out_sharding={out_sharding!r} partitions the "
                             "result, which mlax does not support yet (one device until sharding lands)",
                             f"out_sharding of {api}")
        return fun(*args, **kwargs)

    return call


def accept_out_sharding(namespace: dict[str, Any], jax_module: types.ModuleType, prefix: str) -> None:
    """Give the public functions in ``namespace`` (a module's globals) jax's ``out_sharding``
    keyword where ``jax_module``'s function of the same name has it and mlax's lacks it."""
    for name, fun in list(namespace.items()):
        if name.startswith("_") or isinstance(fun, type) or not callable(fun):
            continue
        if _has_out_sharding(getattr(jax_module, name, None)) and not _has_out_sharding(fun):
            namespace[name] = _accepting(fun, f"{prefix}.{name}")
