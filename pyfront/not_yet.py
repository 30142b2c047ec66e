"""Names of jax's API that mlax lists but cannot compute yet.

A library that imports such a name should import; calling it raises NotImplementedError saying
what mlax lacks. The functions carry ``mlax_not_yet = <the reason>``, which docs/compatibility.md
reads to list them as "not yet", with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlax.errors import user_error


def not_yet(qualname: str, reason: str) -> Callable[..., Any]:
    """A function named after ``qualname`` (e.g. ``"mlax.scipy.linalg.svd"``) that raises
    NotImplementedError with ``reason`` whatever it is called with."""
    module, _, name = qualname.rpartition(".")

    def fn(*args: Any, **kwargs: Any) -> Any:
        raise user_error(NotImplementedError, f"{qualname} {reason}", qualname)

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = module
    fn.__doc__ = f"Not yet in mlax: {qualname} {reason}."
    fn.mlax_not_yet = reason  # type: ignore[attr-defined]
    return fn

