"""mlax.config: explicit, process-wide options, read here and nowhere deeper.

``x64`` mirrors JAX's ``jax_enable_x64``: mlax takes its dtype promotion rules from JAX,
and JAX is the test oracle, so both must agree on the 64-bit mode.
"""

from __future__ import annotations

import os
from typing import Any

import jax

_ALIASES = {"jax_enable_x64": "x64", "enable_x64": "x64", "mlax_enable_x64": "x64",
            "jax_platform_name": "backend"}


class Config:
    """Options: ``x64`` (bool), ``backend`` (default jit backend), ``dump_dir``."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {
            "x64": os.environ.get("MLAX_ENABLE_X64", "0") not in ("0", "", "false"),
            "backend": os.environ.get("MLAX_BACKEND", "interpreter"),
            "dump_dir": os.environ.get("MLAX_DUMP_DIR") or None,
        }
        jax.config.update("jax_enable_x64", self._values["x64"])

    def update(self, name: str, value: Any) -> None:
        key = _ALIASES.get(name, name)
        if key not in self._values:
            raise ValueError(f"unknown mlax config option {name!r}; known: {sorted(self._values)}")
        self._values[key] = value
        if key == "x64":
            jax.config.update("jax_enable_x64", bool(value))

    def __getattr__(self, name: str) -> Any:
        key = _ALIASES.get(name, name)
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def x64_enabled(self) -> bool:
        return bool(self._values["x64"])


config = Config()
