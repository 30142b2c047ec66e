"""The Python modules MLIR's bindings load for an upstream dialect's op classes, where
``mlir.dialects``' own module costs more than mlax needs from it.

When Python first meets an op of a dialect (iterating a block, ``value.owner``), the bindings
import ``<prefix>.<dialect>`` for each prefix of their search list, to find the op's OpView
class. ``mlir.dialects.linalg`` also builds its OpDSL named-op library (YAML and every named
op's definition): ~70 ms, more than running the whole CPU pipeline on a small program, and a
first compile paid it in every process. `install` puts this package first in the search
list; its ``linalg`` registers the same op classes (``mlir.dialects._linalg_ops_gen``) without
the OpDSL library. Nothing else changes: a dialect without a module here is loaded from
``mlir.dialects`` as before, and ``import mlir.dialects.linalg`` still gives upstream's module
(whose op classes are the same objects).
"""

from __future__ import annotations

from mlir._mlir_libs import _mlir

PREFIX = __name__


def install() -> None:
    """Search this package before ``mlir.dialects`` (once per process)."""
    modules = list(_mlir.globals.dialect_search_modules)
    if PREFIX not in modules:
        _mlir.globals.dialect_search_modules = [PREFIX, *modules]
