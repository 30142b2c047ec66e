"""mlax.experimental: the counterparts of jax.experimental's names that carry tracing
(``io_callback``; ``shard_map``, the pre-0.8 home of ``jax.shard_map``; ``checkify``), loaded on first use."""

from __future__ import annotations

import importlib
from typing import Any

_SUBMODULES = ("checkify", "shard_map")
_ATTRIBUTES = {"io_callback": "mlax.callbacks"}


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"mlax.experimental.{name}")
    if name in _ATTRIBUTES:
        return getattr(importlib.import_module(_ATTRIBUTES[name]), name)
    raise AttributeError(f"module 'mlax.experimental' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*_SUBMODULES, *_ATTRIBUTES])
