"""Programs whose values cannot fit in this machine's memory, refused before they run.

Hand-written IR can give a value any static shape: ``tensor<1099511627776xf32>`` is 4 TiB.
The interpreter holds every value as a NumPy array and the CPU backend gives each tensor it
does not fuse away a buffer (``malloc`` in the compiled code, which does not check it), so
such a program would fail deep in an allocator, crash, or grow until the machine runs out.
Before either runs a program, every tensor the program makes (each op result and function
argument) is checked against the memory this process may have at all (the machine's physical
memory, or a lower address-space limit), and the first that exceeds it is reported at the op
that makes it: `ProgramTooLargeError`, a MemoryError that carries the op's location.

NumPy also caps the rank of an array at 64 (MLIR, XLA and jax have no such limit): a value of
higher rank that must be a NumPy array (any value of the interpreter, an argument or result of
the CPU backend) is refused the same way, with `NumpyRankError` (a ValueError, as NumPy's).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable

import numpy as np
from mlir import ir

from mlax.dialect import dtypes
from mlax.passes.walk import nested_ops

try:
    import resource
except ImportError:  # not on Unix: the physical memory alone
    resource = None  # type: ignore[assignment]


class ProgramTooLargeError(MemoryError):
    """A value of the program is larger than this process's memory can ever be; ``location``
    is the op that makes it (or the function that takes it)."""

    def __init__(self, message: str, location: ir.Location) -> None:
        super().__init__(message)
        self.location = location


# The most dimensions a NumPy array may have.
NUMPY_MAX_RANK = 64


class NumpyRankError(ValueError):
    """A value that must be a NumPy array has more dimensions than NumPy allows; ``location``
    is the op that makes it (or the function that takes or returns it)."""

    def __init__(self, message: str, location: ir.Location) -> None:
        super().__init__(message)
        self.location = location


def check_numpy_rank(t: ir.Type, what: str, location: ir.Location, holder: str) -> None:
    """NumpyRankError at ``location`` if a value of type ``t`` has more dimensions than NumPy
    allows (``holder`` says what needs it as a NumPy array)."""
    if isinstance(t, ir.RankedTensorType) and t.rank > NUMPY_MAX_RANK:
        raise NumpyRankError(f"{what} has rank {t.rank}, but {holder} holds it as a NumPy array, which "
                             f"has at most {NUMPY_MAX_RANK} dimensions", location)


def memory_limit() -> int:
    """Bytes this process can ever hold: physical memory, or the address-space limit if lower."""
    limit = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    if resource is not None:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            limit = min(limit, soft)
    return limit


def tensor_bytes(t: ir.Type) -> int | None:
    """The bytes a ranked tensor of static shape holds (booleans one byte each), else None."""
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
        return None
    try:
        itemsize = np.dtype(dtypes.from_mlir(t.element_type)).itemsize
    except TypeError:  # an element type mlax has no dtype for: no less than a byte
        itemsize = 1
    return math.prod(t.shape) * itemsize


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def check_type_fits(t: ir.Type, what: str, location: ir.Location, limit: int | None = None) -> None:
    """ProgramTooLargeError at ``location`` if a value of type ``t`` cannot fit."""
    size = tensor_bytes(t)
    limit = memory_limit() if limit is None else limit
    if size is not None and size > limit:
        raise ProgramTooLargeError(f"{what} is {t} ({_size(size)}), more than this process can hold "
                                   f"({_size(limit)} of memory)", location)


def values_of(op: ir.Operation, skip_unused: bool = False) -> list[tuple[str, ir.Type]]:
    """(what, type) of each value ``op`` makes: its results (``skip_unused``: those used), or
    for a function its arguments."""
    types: Iterable[tuple[str, ir.Type]]
    if op.name == "func.func":
        function_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        name = ir.StringAttr(op.attributes["sym_name"]).value
        types = [(f"argument {i} of @{name}", t) for i, t in enumerate(function_type.inputs)]
    else:
        maker = op.name
        if op.name == "func.call":
            maker = f"the call of @{ir.FlatSymbolRefAttr(op.attributes['callee']).value}"
        types = [(f"result {i} of {maker}" if len(op.results) > 1 else f"the result of {maker}", r.type)
                 for i, r in enumerate(op.results) if not skip_unused or not _unused(r)]
    return list(types)


def check_op_fits(op: ir.Operation, limit: int | None = None, skip_unused: bool = False) -> None:
    """ProgramTooLargeError at ``op`` if one of its results (``skip_unused``: one that is used),
    or (for a function) one of its arguments, cannot fit."""
    limit = memory_limit() if limit is None else limit
    for what, t in values_of(op, skip_unused):
        check_type_fits(t, what, op.location, limit)


def _unused(value: ir.Value) -> bool:
    return next(iter(value.uses), None) is None


def check_program_fits(root: ir.Operation, limit: int | None = None, skip_unused: bool = False) -> None:
    """ProgramTooLargeError at the first op under ``root`` (a module or a function) that makes
    a value which cannot fit (``skip_unused``: leaving out results nothing uses, which a
    compiler removes)."""
    limit = memory_limit() if limit is None else limit
    for op in [root.operation, *nested_ops(root.operation)]:
        check_op_fits(op, limit, skip_unused)
