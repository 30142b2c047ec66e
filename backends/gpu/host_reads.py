"""`mlax-gpu-host-reads`: the host code of control flow reads the few device bytes it decides on.

On the GPU road every buffer the program computes is in device memory, while a while_loop's
predicate, a cond's branch and the buffer-deallocation bookkeeping of loop carries are decided
by host code (``scf.while``/``scf.if``/``scf.for`` around the kernels). After bufferization
that host code holds two kinds of ``memref.load``:

- loads of the deallocation bookkeeping (``buffer-deallocation-pipeline`` lowers a
  ``bufferization.dealloc`` of several buffers to small host arrays of pointers and ownership
  bits, filled by stores and scanned by constant-trip ``scf.for`` loops). These arrays never
  meet a kernel: their loops are unrolled and each load takes the value last stored at its
  constant index, so the bookkeeping becomes scalar host code (pointer comparisons, ``andi``)
  deciding ``scf.if``s around deallocations; the arrays disappear.
- loads of device buffers (a predicate, an index computed on the device): each becomes a
  ``gpu.memcpy`` of just the element read into a host ``memref.alloca`` (made once at the
  function's entry, so a loop does not grow the stack) followed by the load of that copy. After
  ``gpu-async-region`` the copy is waited for before the load.

Loads that `mlax-gpu-serial-kernels` will put in a one-thread kernel (sequential loops) are
left alone: the pass runs before it and skips what it wraps. What stays unsupported (a store to
device memory from host code) is refused later by `mlax-check-gpu-mapped` at its location.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref

from mlax.backends.gpu.serial_kernels import _serial
from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import nested_ops

_SCRATCH_USES = ("memref.load", "memref.store", "memref.dealloc")
_UNROLL_LIMIT = 64  # iterations: the bookkeeping arrays hold one entry per buffer freed together


def _constant(value: ir.Value) -> int | None:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant":
        return None
    attribute = owner.operation.attributes["value"]
    return ir.IntegerAttr(attribute).value if isinstance(attribute, ir.IntegerAttr) else None


def _scratch(function: ir.Operation) -> set[ir.Value]:
    """Host arrays of addresses or ownership bits only loaded, stored and freed (never a
    kernel's operand): the deallocation bookkeeping."""
    found = set()
    for op in nested_ops(function):
        memref_type = ir.MemRefType(op.results[0].type) if op.name == "memref.alloc" else None
        if (memref_type and memref_type.has_static_shape and memref_type.rank == 1
                and str(memref_type.element_type) in ("index", "i1")):
            value = op.results[0]
            if all(use.owner.name in _SCRATCH_USES
                   and (use.owner.name != "memref.store" or use.operand_number == 1) for use in value.uses):
                found.add(value)
    return found


def _remap(op: ir.Operation, mapping: dict[ir.Value, ir.Value]) -> None:
    for inner in (op, *nested_ops(op)):
        for i, operand in enumerate(inner.operands):
            if operand in mapping:
                inner.operands[i] = mapping[operand]


def _unroll(loop: ir.Operation) -> None:
    """Replace the constant-trip ``scf.for`` ``loop`` by copies of its body, one per iteration."""
    lower, upper, step = (_constant(v) for v in list(loop.operands)[:3])
    body = loop.regions[0].blocks[0]
    carried = list(loop.operands)[3:]
    for iteration in range(lower, upper, step):
        with ir.InsertionPoint(loop), loop.location:
            mapping = {body.arguments[0]: arith.constant(ir.IndexType.get(), iteration)}
        mapping.update(zip(list(body.arguments)[1:], carried, strict=True))
        for op in list(body.operations)[:-1]:
            clone = op.operation.clone(ir.InsertionPoint(loop))
            _remap(clone, mapping)
            mapping.update(zip(op.operation.results, clone.results, strict=True))
        carried = [mapping.get(v, v) for v in body.operations[len(body.operations) - 1].operands]
    for result, value in zip(loop.results, carried, strict=True):
        result.replace_all_uses_with(value)
    loop.erase()


def _unrollable(op: ir.Operation, scratch: set[ir.Value]) -> bool:
    """A constant-trip host loop whose memory accesses all go to bookkeeping arrays."""
    if op.name != "scf.for":
        return False
    bounds = [_constant(v) for v in list(op.operands)[:3]]
    if None in bounds or bounds[2] <= 0 or (bounds[1] - bounds[0]) // bounds[2] > _UNROLL_LIMIT:
        return False
    inner = nested_ops(op)
    arrays = [o.operands[1 if o.name == "memref.store" else 0] for o in inner if o.name in _SCRATCH_USES]
    return (bool(arrays) and all(array in scratch for array in arrays)
            and not any(o.name.startswith(("linalg.", "gpu.")) or o.name == "memref.copy" for o in inner))


def _forward(block: ir.Block, scratch: set[ir.Value]) -> None:
    """Give each load of a bookkeeping array at constant indices the value last stored there."""
    stored: dict[tuple[ir.Value, tuple[int, ...]], ir.Value] = {}
    for op in [o.operation for o in block.operations]:
        if op.name in ("memref.load", "memref.store"):
            array = op.operands[1 if op.name == "memref.store" else 0]
            indices = tuple(_constant(v) for v in list(op.operands)[2 if op.name == "memref.store" else 1:])
            if array not in scratch or None in indices:
                continue
            if op.name == "memref.store":
                stored[array, indices] = op.operands[0]
            elif (array, indices) in stored:
                op.results[0].replace_all_uses_with(stored[array, indices])
                op.erase()


def _scalarize(function: ir.Operation) -> None:
    """Turn the deallocation bookkeeping arrays of ``function`` into scalar host code."""
    scratch = _scratch(function)
    if not scratch:
        return
    while loops := [op for op in nested_ops(function) if _unrollable(op, scratch)]:
        _unroll(loops[0])
    # The blocks first: forwarding erases loads, which a walk of every op would visit next.
    for block in [block for op in (function, *nested_ops(function)) for region in op.regions
                  for block in region.blocks]:
        _forward(block, scratch)
    for array in scratch:
        if all(use.owner.name != "memref.load" for use in array.uses):
            for use in list(array.uses):
                use.owner.erase()
            array.owner.erase()


def _on_host(op: ir.Operation, function: ir.Operation) -> bool:
    """Whether ``op`` stays host code: not in a linalg body, not in what serial kernels wrap."""
    parent = op.parent
    while parent != function:
        if parent.name.startswith("linalg.") or _serial(parent):
            return False
        parent = parent.parent
    return True


def _read_on_host(load: ir.Operation, entry: ir.Block, scratch: set[ir.Value]) -> None:
    """Copy the element ``load`` reads from device memory into a host buffer and load that."""
    source = load.operands[0]
    memref_type = ir.MemRefType(source.type)
    indices = list(load.operands)[1:]
    with load.location:
        with ir.InsertionPoint(entry.operations[0]):
            host = memref.alloca(ir.MemRefType.get([1] * memref_type.rank, memref_type.element_type), [], [])
        with ir.InsertionPoint(load):
            element = source
            if memref_type.rank:
                element = memref.subview(source, indices, [1] * memref_type.rank, [1] * memref_type.rank)
            gpu.memcpy(None, [], host, element)
            zero = [arith.constant(ir.IndexType.get(), 0) for _ in indices]
            value = memref.load(host, zero)
    load.results[0].replace_all_uses_with(value)
    load.erase()
    scratch.add(host)


@register_pass
@dataclass
class GpuHostReads(ModulePass):
    """Host loads of device memory -> a device-to-host copy of the element; bookkeeping -> scalars."""

    argument = "mlax-gpu-host-reads"
    sees_mlax_ops = False
    summary = "copy the device bytes host control flow reads to the host; scalarize deallocation bookkeeping"

    def run(self, module: ir.Operation) -> None:
        for function in module.regions[0].blocks[0].operations:
            function = function.operation
            if function.name != "func.func" or not len(function.regions[0].blocks):
                continue
            _scalarize(function)
            scratch = _scratch(function)
            for op in nested_ops(function):
                if op.name == "memref.load" and op.operands[0] not in scratch and _on_host(op, function):
                    _read_on_host(op, function.regions[0].blocks[0], scratch)


_VIEWS = ("memref.subview", "memref.reinterpret_cast", "memref.cast", "memref.expand_shape",
          "memref.collapse_shape")


def _dynamic_layout(value: ir.Value) -> bool:
    """A buffer view whose offset or strides are only known at run time (a loop's slice)."""
    if not isinstance(value.type, ir.MemRefType):
        return False
    strides, offset = ir.MemRefType(value.type).get_strides_and_offset()
    return ir.ShapedType.get_dynamic_stride_or_offset() in (*strides, offset)


def _rebuild_inside(launch: ir.Operation, value: ir.Value) -> ir.Value:
    """``value`` (a buffer with a run-time layout, not a view: a branch's result) rebuilt at the
    start of ``launch`` from its base buffer, offset and strides, taken on the host."""
    memref_type = ir.MemRefType(value.type)
    strides, offset = memref_type.get_strides_and_offset()
    with ir.InsertionPoint(launch), launch.location:
        metadata = memref.ExtractStridedMetadataOp(value)
    dynamic = ir.ShapedType.get_dynamic_stride_or_offset()
    host_strides = list(metadata.strides)
    with ir.InsertionPoint(launch.regions[0].blocks[0].operations[0]), launch.location:
        return memref.reinterpret_cast(
            memref_type, metadata.base_buffer, [metadata.offset] if offset == dynamic else [], [],
            [host_strides[i] for i, stride in enumerate(strides) if stride == dynamic],
            [offset], list(memref_type.shape), strides)


def _sink_views(launch: ir.Operation) -> None:
    """Recompute, inside ``launch``, the buffers with run-time layouts it uses: a view from its
    source and index operands, any other from its base buffer, offset and strides (bare
    pointers, the kernels' calling convention, have no room for a run-time layout)."""
    while True:
        inside = set(nested_ops(launch))
        outside = [(op, i) for op in inside for i, v in enumerate(op.operands) if _dynamic_layout(v)
                   and (isinstance(v.owner, ir.Block) or v.owner.operation not in inside)]
        if not outside:
            return
        value = outside[0][0].operands[outside[0][1]]
        if not isinstance(value.owner, ir.Block) and value.owner.name in _VIEWS:
            start = ir.InsertionPoint(launch.regions[0].blocks[0].operations[0])
            rebuilt = value.owner.operation.clone(start).results[0]
        else:
            rebuilt = _rebuild_inside(launch, value)
        for op, i in outside:
            if op.operands[i] == value:
                op.operands[i] = rebuilt


@register_pass
@dataclass
class GpuSinkViews(ModulePass):
    """Views with run-time offsets used in a gpu.launch are recomputed inside it."""

    argument = "mlax-gpu-sink-views"
    sees_mlax_ops = False
    summary = "recompute views with run-time offsets (a scan's slices) inside the kernels that use them"

    def run(self, module: ir.Operation) -> None:
        for op in nested_ops(module):
            if op.name == "gpu.launch":
                _sink_views(op)
