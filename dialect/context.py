"""The MLIR context mlax works in: upstream dialects plus `mlax`, loaded from IRDL."""

from __future__ import annotations

import threading

from mlir import ir
from mlir.dialects import irdl

from mlax.dialect import opviews
from mlax.dialect.irdl_gen import IRDL_PATH

_local = threading.local()
opviews.install()  # op classes of upstream dialects without what mlax does not use


def load_mlax_dialect(context: ir.Context) -> None:
    """Load dialect/mlax.irdl.mlir into ``context``."""
    with context:
        irdl.load_dialects(ir.Module.parse(IRDL_PATH.read_text()))


def make_context(allow_unregistered_dialects: bool = False) -> ir.Context:
    """A fresh context with the mlax dialect loaded. StableHLO lives in mlax's contexts as
    an unregistered dialect (its ops are made and printed generically), so a context that
    lowers to it or imports it must allow unregistered dialects; MLIR forbids changing that
    while a pass runs, hence the choice here."""
    context = ir.Context()
    context.allow_unregistered_dialects = allow_unregistered_dialects
    load_mlax_dialect(context)
    return context


def get_context() -> ir.Context:
    """The context of this thread, shared by tracing, passes and runtimes (the XLA backend's
    StableHLO included, so it allows unregistered dialects)."""
    context = getattr(_local, "context", None)
    if context is None:
        context = _local.context = make_context(allow_unregistered_dialects=True)
    return context
