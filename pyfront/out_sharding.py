"""jax's ``out_sharding=`` keyword, on every mlax function whose jax counterpart has it.

jax 0.10.2 gives ~60 creation, shape, contraction and random functions an ``out_sharding``
keyword, and libraries pass it (flax.nnx's Linear calls ``dot_general(..., out_sharding=None)``).
A sharding given there lays the result out and types it (mlax.explicit_sharding): jax's rule
for the op is not asked where it would be ambiguous, the result is resharded to it. None, a
NamedSharding on an empty mesh (flax passes ``jax.typeof(x).sharding``) and, without a
context mesh, a PartitionSpec naming no axis leave the function as it is.
The keyword is added by reading jax's signatures, so it follows jax's API without a list here.
"""

from __future__ import annotations

import functools
import inspect
import types
from collections.abc import Callable
from typing import Any

from mlax.explicit_sharding import like_sharding, with_out_sharding
from mlax.sharding import context_mesh


def _has_out_sharding(fun: Any) -> bool:
    try:
        return "out_sharding" in inspect.signature(fun).parameters
    except (TypeError, ValueError):
        return False


def unpartitioned(sharding: Any) -> bool:
    """Whether ``out_sharding`` asks for nothing: None, a sharding on an empty mesh or of one
    device, a PartitionSpec of no axes without a context mesh."""
    from jax.sharding import NamedSharding, PartitionSpec

    if sharding is None:
        return True
    if isinstance(sharding, NamedSharding):
        return sharding.mesh.empty
    if isinstance(sharding, PartitionSpec):
        return context_mesh() is None and all(entry is None for entry in sharding)
    return bool(getattr(sharding, "is_fully_replicated", False)) and len(sharding.device_set) <= 1


def _like_source(signature: inspect.Signature | None, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """For ``zeros_like(a, ...)`` and kin: ``a`` where its sharding is the result's (jax's
    default: no ``shape``, ``device`` or ``out_sharding`` given), else None."""
    if signature is None:
        return None
    try:
        bound = signature.bind_partial(*args, **kwargs).arguments
    except TypeError:
        return None
    if bound.get("shape") is not None or bound.get("device") is not None:
        return None
    return bound.get("a")


def _accepting(fun: Callable[..., Any], api: str) -> Callable[..., Any]:
    like = inspect.signature(fun) if api.endswith("_like") else None

    @functools.wraps(fun)
    def call(*args: Any, out_sharding: Any = None, **kwargs: Any) -> Any:
        if unpartitioned(out_sharding):
            source = _like_source(like, args, kwargs)
            if source is None:
                return fun(*args, **kwargs)
            return like_sharding(fun(*args, **kwargs), source)
        return with_out_sharding(fun, args, kwargs, out_sharding, api)

    return call


def accept_out_sharding(namespace: dict[str, Any], jax_module: types.ModuleType, prefix: str) -> None:
    """Give the public functions in ``namespace`` (a module's globals) jax's ``out_sharding``
    keyword where ``jax_module``'s function of the same name has it and mlax's lacks it."""
    for name, fun in list(namespace.items()):
        if name.startswith("_") or isinstance(fun, type) or not callable(fun):
            continue
        if _has_out_sharding(getattr(jax_module, name, None)) and not _has_out_sharding(fun):
            namespace[name] = _accepting(fun, f"{prefix}.{name}")
