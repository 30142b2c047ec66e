"""mlax.config: explicit, process-wide options, read here and nowhere deeper.

``x64`` IS JAX's ``jax_enable_x64`` (read and written through): mlax takes its dtype
promotion rules from JAX, and JAX is the test oracle, so the two can never disagree on the
64-bit mode. ``MLAX_ENABLE_X64=1`` turns it on at import.
"""

from __future__ import annotations

import os
from typing import Any

import jax

_ALIASES = {"jax_enable_x64": "x64", "enable_x64": "x64", "mlax_enable_x64": "x64",
            "jax_platform_name": "backend"}


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


class Config:
    """Options: ``x64`` (bool), ``backend`` (default jit backend), ``dump_dir``, and the cache
    bounds (LRU sizes, as JAX bounds its caches): ``jit_cache_size`` traced signatures kept per
    jitted function (``MLAX_JIT_CACHE_SIZE``), ``compile_cache_size`` compiled programs kept
    by each backend in the whole process (``MLAX_COMPILE_CACHE_SIZE``)."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {
            "backend": os.environ.get("MLAX_BACKEND", "cpu"),
            "dump_dir": os.environ.get("MLAX_DUMP_DIR") or None,
            "jit_cache_size": _env_int("MLAX_JIT_CACHE_SIZE", 512),
            "compile_cache_size": _env_int("MLAX_COMPILE_CACHE_SIZE", 256),
        }
        if os.environ.get("MLAX_ENABLE_X64", "0").lower() not in ("0", "", "false"):
            jax.config.update("jax_enable_x64", True)

    def update(self, name: str, value: Any) -> None:
        key = _ALIASES.get(name, name)
        if key == "x64":
            jax.config.update("jax_enable_x64", bool(value))
            return
        if key not in self._values:
            known = sorted([*self._values, "x64"])
            raise ValueError(f"unknown mlax config option {name!r}; known: {known}")
        if key.endswith("_cache_size") and (not isinstance(value, int) or value < 1):
            raise ValueError(f"mlax config option {name!r} must be a positive int, got {value!r}")
        self._values[key] = value

    def __getattr__(self, name: str) -> Any:
        key = _ALIASES.get(name, name)
        if key == "x64":
            return self.x64_enabled
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def x64_enabled(self) -> bool:
        return bool(jax.config.jax_enable_x64)


config = Config()
