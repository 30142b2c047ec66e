"""Shared entry point of the generated-docs tools (gen_autodiff_doc, gen_batching_doc)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def write_doc(path: Path, render: Callable[[], str]) -> int:
    """Write ``render()`` to ``path`` and say so; the exit status of the tool."""
    path.write_text(render())
    print(f"wrote {path}")
    return 0
