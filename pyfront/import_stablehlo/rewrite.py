"""The pass's rewrite: trace the importer on the entry's argument types, swap the module's body.

The walk reads this module's ops where they are (any context); the trace is built in the
front end's context of this thread and comes back as text, parsed into this module's
context. Programs that take or return 64-bit types are traced in jax's x64 mode (thread-local,
`jax.enable_x64`), since the pass has no other way to be told.
"""

from __future__ import annotations

import contextlib
import re

import jax
from mlir import ir

from mlax.core import Aval
from mlax.import_stablehlo.core import (
    LocatedError,
)
from mlax.import_stablehlo.table import problems
from mlax.passes.registry import PassFailure
from mlax.passes.walk import is_mlax, nested_ops
from mlax.stablehlo_import import ImportedFunction
from mlax.tracing import trace_function


def import_module(module: ir.Operation, entry: str) -> None:
    """Replace ``module``'s functions by the mlax program of its function ``entry``."""
    module = module.operation
    found = problems(module)
    if found:
        for problem in found:
            problem.location.emit_error(f"mlax-import-stablehlo: {problem.summary}")
        raise PassFailure("")
    try:
        function = ImportedFunction(None, entry, name=entry, module=module)
    except (TypeError, ValueError) as error:
        raise PassFailure(f"mlax-import-stablehlo: {str(error).splitlines()[0]}") from None
    avals = [Aval(spec.shape, spec.dtype) for spec in function.in_specs]
    names = [p for p in function.__signature__.parameters]
    try:
        with jax.enable_x64(True) if function.needs_x64 else contextlib.nullcontext():
            traced = trace_function(function, lambda tracers: (tuple(tracers), {}), avals, names)
            text = traced.module.operation.get_asm(enable_debug_info=True)
    except LocatedError as error:
        raise PassFailure(f"mlax-import-stablehlo: {error.summary}", error.location) from None
    except (TypeError, ValueError, NotImplementedError) as error:
        message = re.split(r"\n\s+at ", str(error))[0]
        raise PassFailure(f"mlax-import-stablehlo: {message}") from None
    imported = ir.Module.parse(text, module.context)
    _erase_dead_ops(imported.operation)
    body = module.regions[0].blocks[0]
    for op in list(body.operations):
        op.erase()
    with ir.InsertionPoint(body):
        for op in list(imported.body.operations):
            op.detach_from_parent()
            ir.InsertionPoint(body).insert(op)


def _erase_dead_ops(module: ir.Operation) -> None:
    """Drop the mlax ops whose results nothing uses (all mlax ops are pure): jax's values that
    only served the importer (a reduce's identity init, argmax's iota, a loop bound)."""
    for op in reversed(nested_ops(module)):
        if is_mlax(op) and op.results and not any(list(r.uses) for r in op.results):
            op.erase()
