"""The MLIR context mlax works in: upstream dialects plus `mlax`, loaded from IRDL."""

from __future__ import annotations

import threading

from mlir import ir
from mlir.dialects import irdl

from mlax.dialect.irdl_gen import IRDL_PATH

_local = threading.local()


def load_mlax_dialect(context: ir.Context) -> None:
    """Load dialect/mlax.irdl.mlir into ``context``."""
    with context:
        irdl.load_dialects(ir.Module.parse(IRDL_PATH.read_text()))


def make_context() -> ir.Context:
    """A fresh context with the mlax dialect loaded."""
    context = ir.Context()
    load_mlax_dialect(context)
    return context


def get_context() -> ir.Context:
    """The context of this thread, shared by tracing, passes and runtimes."""
    context = getattr(_local, "context", None)
    if context is None:
        context = _local.context = make_context()
    return context
