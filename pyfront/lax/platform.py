"""mlax.lax platform_dependent and composite: jax's staging hooks, resolved at trace time.

mlax traces one program per jit backend, so platform_dependent picks its branch when it is
called, for the platform of ``mlax.config.backend`` ("cpu" for the native and interpreter
backends; the XLA backend's platform otherwise), where jax may defer the choice to
lowering. composite is a plain call of its decomposition: mlax has no composite op to keep
the name and version for a later compiler, and the decomposition is what XLA runs anyway.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from mlax.configuration import config
from mlax.core import Tracer
from mlax.errors import UnexpectedTracerError
from mlax.source_info import where


def _platform() -> str:
    backend = config.backend
    if backend in ("cpu", "interpreter"):
        return "cpu"
    if backend == "xla":
        import jax

        backend = jax.default_backend()
    return {"gpu": "cuda"}.get(backend, backend)


def platform_dependent(*args: Any, default: Callable[..., Any] | None = None,
                       **per_platform: Callable[..., Any]) -> Any:
    """``per_platform[platform](*args)`` for the platform mlax compiles for, else ``default(*args)``."""
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"mlax.lax.platform_dependent: the '{name}' branch must be a callable{where()}")
        if name == "gpu":
            raise ValueError(f"mlax.lax.platform_dependent: use 'cuda' or 'rocm', not 'gpu'{where()}")
    if default is not None and not callable(default):
        raise TypeError(f"mlax.lax.platform_dependent: the 'default' branch must be a callable{where()}")
    platform = _platform()
    branch = per_platform.get(platform, default)
    if branch is None:
        raise NotImplementedError(f"mlax.lax.platform_dependent: no branch for platform '{platform}' and no "
                                  f"default (branches: {sorted(per_platform)}){where()}")
    return branch(*args)


def composite(decomposition: Callable[..., Any], name: str, version: int = 0) -> Callable[..., Any]:
    """``decomposition`` as jax.lax.composite wraps it; the keyword arguments are its static
    attributes, so a traced value among them is an error (as in jax)."""
    @functools.wraps(decomposition)
    def call(*args: Any, **kwargs: Any) -> Any:
        traced = [k for k, v in kwargs.items() if isinstance(v, Tracer)]
        if traced:
            raise UnexpectedTracerError(f"mlax.lax.composite {name!r}: attribute(s) {traced} are traced "
                                        f"values; pass them as positional arguments instead{where()}")
        return decomposition(*args, **kwargs)

    return call


__all__ = ["composite", "platform_dependent"]
