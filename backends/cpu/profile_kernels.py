"""`mlax-profile-kernels`: time each kernel of a native CPU program (``mlax.profiler``).

It runs last in the ``buffers`` stage (``mlax-cpu-pipeline{profile=1}``), where a program is a
sequence of kernels on buffers: each linalg op (a fused loop nest, which the ``loops`` stage
may split across threads), each library call (BLAS, LAPACK, FFT, host callbacks), each
whole-buffer copy, and each loop or conditional as a span around the kernels it runs. Every
kernel gets ``mlax_profile_begin()`` before it (a CLOCK_MONOTONIC reading in ns: libc's
``clock_gettime``, about 20 ns through the vDSO) and ``mlax_profile_end(index, start)`` after
it, which appends (index, start, end) to the process's event buffer: a slot taken by an atomic
increment of the row count, written while it is below the capacity (passes/abi.py names both
globals; backends/cpu/kernel_events.py defines them). No Python runs between kernels, and
the code between them is what it is without the pass.

The kernels are described on the module, indexed as the events are, in the attribute
``mlax.profile_kernels``: what each is (``elementwise``, ``reduction``, ``sgemm``, ``copy``,
``loop``...), the type it writes, the bytes of the buffers it reads and writes, and the
user's source lines its ops come from (a fused kernel names each distinct line of its body).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, func

from mlax.passes.abi import PROFILE_CAPACITY, PROFILE_COUNT, PROFILE_EVENTS, PROFILE_KERNELS_ATTRIBUTE
from mlax.passes.registry import ModulePass, PassFailure, register_pass
from mlax.passes.walk import ops_outside_linalg

BEGIN, END = "mlax_profile_begin", "mlax_profile_end"
_CLOCK_MONOTONIC = 1

# The recording, in the IR the rest of the `buffers` stage sees (inlined by LLVM at O3).
_RUNTIME = f"""
memref.global @{PROFILE_EVENTS} : memref<{PROFILE_CAPACITY}x3xi64>
memref.global @{PROFILE_COUNT} : memref<1xi64>
func.func private @clock_gettime(i32, memref<2xi64>) -> i32
func.func private @{BEGIN}() -> i64 {{
  %clock = arith.constant {_CLOCK_MONOTONIC} : i32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %giga = arith.constant 1000000000 : i64
  %time = memref.alloca() : memref<2xi64>
  %status = func.call @clock_gettime(%clock, %time) : (i32, memref<2xi64>) -> i32
  %seconds = memref.load %time[%c0] : memref<2xi64>
  %nanoseconds = memref.load %time[%c1] : memref<2xi64>
  %scaled = arith.muli %seconds, %giga : i64
  %now = arith.addi %scaled, %nanoseconds : i64
  return %now : i64
}}
func.func private @{END}(%kernel: i64, %start: i64) {{
  %end = func.call @{BEGIN}() : () -> i64
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1 : i64
  %capacity = arith.constant {PROFILE_CAPACITY} : i64
  %count = memref.get_global @{PROFILE_COUNT} : memref<1xi64>
  %events = memref.get_global @{PROFILE_EVENTS} : memref<{PROFILE_CAPACITY}x3xi64>
  %slot = memref.atomic_rmw addi %one, %count[%c0] : (i64, memref<1xi64>) -> i64
  %fits = arith.cmpi slt, %slot, %capacity : i64
  scf.if %fits {{
    %row = arith.index_cast %slot : i64 to index
    memref.store %kernel, %events[%row, %c0] : memref<{PROFILE_CAPACITY}x3xi64>
    memref.store %start, %events[%row, %c1] : memref<{PROFILE_CAPACITY}x3xi64>
    memref.store %end, %events[%row, %c2] : memref<{PROFILE_CAPACITY}x3xi64>
  }}
  return
}}
"""

_SPANS = {"scf.for": "loop", "scf.while": "while loop", "scf.if": "cond", "scf.parallel": "parallel loop"}
_NOT_KERNELS = ("linalg.yield", "linalg.index")


def _kind(op: ir.Operation) -> str | None:
    """What ``op`` is as a kernel, or None if it is not one."""
    name = op.name
    if name in _SPANS:
        return _SPANS[name]
    if name == "memref.copy":
        return "copy"
    if name == "func.call":
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        return None if callee in (BEGIN, END) else callee.removeprefix("mlax_")
    if not name.startswith("linalg.") or name in _NOT_KERNELS:
        return None
    if name != "linalg.generic":
        return name.removeprefix("linalg.")
    iterators = str(op.attributes["iterator_types"])
    return "reduction" if "reduction" in iterators else "elementwise"


def _buffer_bytes(t: ir.Type) -> int:
    if not isinstance(t, ir.MemRefType) or not t.has_static_shape:
        return 0
    element = t.element_type
    width = getattr(element, "width", None) or (2 * element.element_type.width
                                                if isinstance(element, ir.ComplexType) else 64)
    return math.prod(t.shape) * max(width, 8) // 8


def _origin_buffer(value: ir.Value) -> ir.Value:
    """The memref a library call's pointer argument was taken from (`mlax-linalg-to-blas`
    passes ``extract_aligned_pointer_as_index`` -> ``index_cast`` -> [``addi``] -> ``inttoptr``)."""
    while isinstance(value, ir.OpResult) and value.owner.name in (
            "llvm.inttoptr", "arith.index_cast", "arith.addi", "memref.extract_aligned_pointer_as_index"):
        value = value.owner.operands[0]
    return value


def _moved_bytes(op: ir.Operation) -> int:
    """The bytes of the distinct buffers ``op`` reads or writes (each counted once)."""
    if op.name in _SPANS:
        return 0
    buffers = {_origin_buffer(v) for v in op.operands}
    return sum(_buffer_bytes(b.type) for b in buffers)


def _written_type(op: ir.Operation) -> str:
    """The type of the buffer a kernel writes (its last memref operand), as ``f32[32,64]``."""
    memrefs = [_origin_buffer(v).type for v in op.operands]
    memrefs = [t for t in memrefs if isinstance(t, ir.MemRefType)]
    if not memrefs:
        return ""
    t = memrefs[-1]
    return f"{t.element_type}[{','.join(map(str, t.shape))}]"


def _file_lines(location: ir.Location, function: str = "") -> list[tuple[str, int, str]]:
    """The (file, line, enclosing name) of every file location in ``location``."""
    if location.is_a_file():
        return [(location.filename, location.start_line, function)]
    if location.is_a_name():
        return _file_lines(location.child_loc, function or location.name_str)
    if location.is_a_callsite():
        return _file_lines(location.callee, function)
    if location.is_a_fused():
        return [found for part in location.locations for found in _file_lines(part, function)]
    return []


def _source(op: ir.Operation) -> str:
    """The user's lines ``op`` comes from: its own, then its body's, each once, in order."""
    lines = _file_lines(op.location)
    if op.name.startswith("linalg.") and op.regions:
        for block in op.regions[0].blocks:
            for inner in block.operations:
                lines += _file_lines(inner.location)
    seen: dict[tuple[str, int], str] = {}
    for file, line, function in lines:
        seen.setdefault((file, line), function)
    return "; ".join(f"{file}:{line}" + (f" ({function})" if function else "")
                     for (file, line), function in seen.items())


def _wrap(op: ir.Operation, index: int) -> None:
    i64 = ir.IntegerType.get_signless(64)
    with op.location:
        start = func.CallOp([i64], BEGIN, [], ip=ir.InsertionPoint(op)).result
        after = ir.InsertionPoint.after(op)
        kernel = arith.ConstantOp(i64, index, ip=after).result
        func.CallOp([], END, [kernel, start], ip=after)


@register_pass
@dataclass
class ProfileKernels(ModulePass):
    """Record each kernel's start and end in the process's event buffer (mlax.profiler)."""

    argument = "mlax-profile-kernels"
    sees_mlax_ops = False
    summary = "time each kernel (linalg op, library call, copy, loop) into the profiler's event buffer"

    def run(self, module: ir.Operation) -> None:
        body = module.regions[0].blocks[0]
        if PROFILE_KERNELS_ATTRIBUTE in module.attributes or BEGIN in ir.SymbolTable(module):
            raise PassFailure(f"{self.argument}: the module's kernels are timed already", module.location)
        functions = [op.operation for op in body.operations
                     if op.operation.name == "func.func" and op.operation.regions[0].blocks]
        kernels = [op for function in functions for op in ops_outside_linalg(function)
                   if _kind(op) is not None]
        described = [ir.DictAttr.get({
            "kind": ir.StringAttr.get(_kind(op)), "type": ir.StringAttr.get(_written_type(op)),
            "bytes": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), _moved_bytes(op)),
            "source": ir.StringAttr.get(_source(op))}) for op in kernels]
        for index, op in enumerate(kernels):
            _wrap(op, index)
        runtime = ir.Module.parse(_RUNTIME, module.context)
        for op in runtime.body.operations:
            body.append(op.operation.clone())
        module.attributes[PROFILE_KERNELS_ATTRIBUTE] = ir.ArrayAttr.get(described)
