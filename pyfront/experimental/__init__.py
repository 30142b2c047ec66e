"""mlax.experimental: the counterparts of jax.experimental's modules that carry tracing
(``shard_map``, the pre-0.8 home of ``jax.shard_map``), loaded on first use."""

from __future__ import annotations

import importlib
from typing import Any

_SUBMODULES = ("shard_map",)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"mlax.experimental.{name}")
    raise AttributeError(f"module 'mlax.experimental' has no attribute {name!r}")
