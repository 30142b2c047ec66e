"""`mlax-gpu-vectorize`: each thread of an elementwise kernel moves 16 bytes at a time.

After ``convert-linalg-to-parallel-loops`` and `mlax-gpu-coalesce`, an all-parallel linalg op
(an elementwise chain, a broadcast, a convert, a select, a fill) is an ``scf.parallel`` nest
whose first dimension, the one ``threadIdx.x`` gets, walks the buffers' contiguous dimension,
one element per iteration: scalar ``ld.global``/``st.global``. This pass lets each iteration
handle ``V`` consecutive elements instead: the first dimension runs over ``N / V`` and thread
``x`` touches elements ``V*x .. V*x+V-1`` (consecutive threads, consecutive vectors: a warp's
accesses stay coalesced). Every access that walks that dimension becomes a ``vector.load`` or
``vector.store`` with its alignment stated, which PTX writes ``ld.global.v4.b32`` (``.nc``
when the kernel argument is read-only and ``noalias``, `mlax-gpu-noalias`); an access that does
not depend on it (a scalar per row, a broadcast) is one scalar load for the ``V`` elements;
the scalar code between them is repeated once per element (NVPTX scalarizes vector arithmetic
anyway, and this way every op, math functions included, keeps its scalar lowering).

``V`` is 16 bytes over the widest element moved (4 for f32/i32, 8 for f16/bf16, 2 for f64, 16
for bools, which are bytes by then), halved while it does not divide ``N`` (down to 2). A nest
is rewritten only when this is provably right, else it keeps the scalar path:

- its body is straight-line loads, stores and pure scalar ops (no loop, no branch: a reduction
  keeps one thread per output element);
- every access either has the first dimension's index as its last index and no other index
  depending on it (contiguous), or no index depending on it at all; a transposed operand (the
  dimension at another position) or a shifted one (``x[i + 1]``) keeps the nest scalar;
- every buffer accessed contiguously has a static strided layout with unit inner stride whose
  offset and outer strides are multiples of ``V`` elements, and comes from an allocation
  known to be aligned: an argument of the public function (the runtime's device buffers:
  cuMemAlloc gives 256 bytes, cuMemAllocAsync memory suited to any type), an allocation of
  host code or a constant array (both ``gpu.alloc`` later), through views that keep the base
  pointer (subview, expand/collapse_shape, cast, reinterpret_cast, transpose). With
  bare-pointer kernel arguments the kernel receives that base pointer and adds the layout's
  static offset, so the whole address is a multiple of ``V`` elements. Anything else
  (``memref.view``, a loop-carried buffer) is not proved aligned.

A size ``V`` does not divide keeps the scalar path rather than a vector body and a scalar
tail: in a row-major buffer the rows after the first then start at unaligned addresses, so a
per-row vector body could not be aligned either.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, scf, vector

from mlax.backends.gpu.coalesce import outermost_parallel_loops
from mlax.passes.registry import ModulePass, register_pass

VECTOR_BYTES = 16
# Ops that only read their operands; with memref.load/store they are all a vectorized body holds.
_PURE_PREFIXES = ("arith.", "math.", "index.")
_PURE_OPS = ("affine.apply",)
# Views whose result addresses the same allocation from the same base pointer.
VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast",
         "memref.reinterpret_cast", "memref.transpose")
# Ops whose result is a buffer of its own, aligned to at least VECTOR_BYTES on the device.
ALLOCATIONS = ("memref.alloc", "gpu.alloc", "memref.get_global")


def buffer_root(value: ir.Value) -> ir.Value | None:
    """The allocation ``value`` views from its base pointer: the result of an allocation op, an
    argument of a public function (a buffer the runtime owns); None when unknown."""
    while True:
        if isinstance(value, ir.BlockArgument):
            owner = value.owner.owner.operation
            public = (owner.name == "func.func" and "sym_visibility" not in owner.attributes
                      and value.owner == owner.regions[0].blocks[0])
            return value if public else None
        op = value.owner.operation
        if op.name in ALLOCATIONS:
            return value
        if op.name not in VIEWS:
            return None
        value = op.operands[0]


def _constant(value: ir.Value) -> int | None:
    if isinstance(value, ir.OpResult) and value.owner.operation.name == "arith.constant":
        attribute = value.owner.operation.attributes["value"]
        return ir.IntegerAttr(attribute).value if isinstance(attribute, ir.IntegerAttr) else None
    return None


def _element_bytes(t: ir.Type) -> int | None:
    """Bytes of a vectorizable element type (ints and floats of 8 to 64 bits), else None."""
    width = None
    if isinstance(t, ir.IntegerType):
        width = ir.IntegerType(t).width
    elif isinstance(t, ir.FloatType):
        width = ir.FloatType(t).width
    return width // 8 if width in (8, 16, 32, 64) else None


def _aligned(memref: ir.Value, lanes: int) -> bool:
    """Whether every access at inner index ``lanes * k`` of ``memref`` is ``lanes``-element aligned."""
    if buffer_root(memref) is None:
        return False
    t = ir.MemRefType(memref.type)
    strides, offset = t.get_strides_and_offset()
    # A dimension of size 1 is always at index 0: its stride adds nothing.
    outer = [s for s, size in zip(strides[:-1], t.shape[:-1], strict=True) if size != 1]
    return strides[-1] == 1 and all(not t.is_dynamic_stride_or_offset(s) and s % lanes == 0
                                    for s in (offset, *outer))


@dataclass
class _Nest:
    """A nest to vectorize: its first dimension's size and the accesses along it, in body order."""

    loop: ir.Operation
    size: int
    contiguous: list[ir.Operation]  # loads and stores whose last index is the first dimension


def _analyse(loop: ir.Operation) -> _Nest | None:
    """The nest's contiguous accesses, or None when it is not a straight-line elementwise body."""
    rank = len(loop.operands) // 3
    lower, upper, step = (loop.operands[k * rank] for k in range(3))
    size = _constant(upper)
    body = loop.regions[0].blocks[0]
    if len(loop.results) or _constant(lower) != 0 or _constant(step) != 1 or not size \
            or body.operations[len(body.operations) - 1].operands:
        return None
    inner = body.arguments[0]
    varying = {inner}  # values that depend on the first dimension's index
    contiguous = []
    for op in [op.operation for op in body.operations][:-1]:
        access = op.name in ("memref.load", "memref.store")
        if op.regions or not (access or op.name.startswith(_PURE_PREFIXES) or op.name in _PURE_OPS):
            return None
        if not access:
            if any(v in varying for v in op.operands):
                varying.update(op.results)
            continue
        memref = _memref(op)
        indices = list(op.operands)[list(op.operands).index(memref) + 1:]
        if any(index in varying for index in indices[:-1]):
            return None  # the dimension at another position: a transposed operand
        if indices and indices[-1] == inner and _element_bytes(ir.MemRefType(memref.type).element_type):
            contiguous.append(op)
            varying.update(op.results)
        elif (indices and indices[-1] in varying) or op.name == "memref.store":
            return None  # a shifted index, an unsupported element type, or one place stored to by all
    return _Nest(loop, size, contiguous) if contiguous else None


def _memref(op: ir.Operation) -> ir.Value:
    """The buffer a memref.load or memref.store accesses."""
    return op.operands[0 if op.name == "memref.load" else 1]


def _lanes(nest: _Nest) -> int | None:
    """The largest lane count (16 bytes over the widest element, halved) that fits every access."""
    memrefs = [_memref(op) for op in nest.contiguous]
    widest = max(_element_bytes(ir.MemRefType(m.type).element_type) for m in memrefs)
    lanes = VECTOR_BYTES // widest
    while lanes >= 2:
        if nest.size % lanes == 0 and all(_aligned(m, lanes) for m in memrefs):
            return lanes
        lanes //= 2
    return None


class _Lanes:
    """The old body's values in the new one: ``count`` values each, one per lane (the same value
    in every lane where it does not depend on the vectorized index)."""

    def __init__(self, old: ir.Block, new: ir.Block, count: int, count_value: ir.Value) -> None:
        self.count = count
        self.base = arith.muli(new.arguments[0], count_value)  # the vector's first element
        self.inner = old.arguments[0]
        self.indices = {0: self.base}  # lane -> base + lane, made when some op uses it
        self.values = {old_arg: [new_arg] * count
                       for old_arg, new_arg in zip(old.arguments[1:], new.arguments[1:], strict=True)}

    def of(self, value: ir.Value, lane: int) -> ir.Value:
        """``value`` (of the old body, or defined above it) in ``lane``."""
        if value == self.inner:
            if lane not in self.indices:
                self.indices[lane] = arith.addi(self.base, arith.constant(ir.IndexType.get(), lane))
            return self.indices[lane]
        return self.values[value][lane] if value in self.values else value

    def uniform(self, op: ir.Operation) -> bool:
        """Whether ``op``'s operands are the same in every lane (one copy of it serves all)."""
        return all(v != self.inner and all(x == self.values[v][0] for x in self.values[v])
                   for v in op.operands if v == self.inner or v in self.values)

    def copy(self, op: ir.Operation) -> None:
        """Clone ``op`` once per lane (once when uniform) with the lanes' operands."""
        copies = []
        for lane in range(1 if self.uniform(op) else self.count):
            operands = [self.of(v, lane) for v in op.operands]
            clone = op.clone()
            for i, v in enumerate(operands):
                clone.operands[i] = v
            copies.append(clone)
        for i, result in enumerate(op.results):
            self.values[result] = [copies[lane % len(copies)].results[i] for lane in range(self.count)]

    def access(self, op: ir.Operation) -> None:
        """A contiguous memref.load/store as one aligned vector.load/store of the lanes' elements."""
        memref = _memref(op)
        element = ir.MemRefType(memref.type).element_type
        indices = [self.of(v, 0) for v in list(op.operands)[list(op.operands).index(memref) + 1:-1]]
        indices.append(self.base)
        alignment = self.count * _element_bytes(element)
        vector_type = ir.VectorType.get([self.count], element)
        if op.name == "memref.load":
            loaded = vector.load(vector_type, memref, indices, alignment=alignment)
            self.values[op.results[0]] = _elements(loaded, self.count)
        else:
            elements = [self.of(op.operands[0], k) for k in range(self.count)]
            stored = vector.from_elements(vector_type, elements)
            vector.store(stored, memref, indices, alignment=alignment)


def _elements(loaded: ir.Value, count: int) -> list[ir.Value]:
    """The ``count`` elements of a loaded vector. Bytes are taken out of 32-bit words: LLVM's
    NVPTX back end splits a byte vector whose elements are extracted into one load per byte,
    while a vector of words stays one ``ld.global.v4.b32`` (little-endian: byte k is bits 8k..)."""
    element = ir.VectorType(loaded.type).element_type
    if not (isinstance(element, ir.IntegerType) and ir.IntegerType(element).width == 8 and count % 4 == 0):
        return [vector.extract(loaded, [], [k]) for k in range(count)]
    i32 = ir.IntegerType.get_signless(32)
    words = vector.bitcast(ir.VectorType.get([count // 4], i32), loaded)
    elements = []
    for w in range(count // 4):
        word = vector.extract(words, [], [w])
        for k in range(4):
            shifted = arith.shrui(word, arith.constant(i32, 8 * k)) if k else word
            elements.append(arith.trunci(element, shifted))
    return elements


def _vectorize(nest: _Nest, lanes: int) -> None:
    """Rebuild the nest with its first dimension over vectors of ``lanes`` elements."""
    loop = nest.loop
    rank = len(loop.operands) // 3
    index = ir.IndexType.get()
    old = loop.regions[0].blocks[0]
    with ir.InsertionPoint(loop), loop.location:
        bounds = [list(loop.operands[k * rank:(k + 1) * rank]) for k in range(3)]
        bounds[1][0] = arith.constant(index, nest.size // lanes)
        lanes_value = arith.constant(index, lanes)
        new = scf.ParallelOp([], *bounds, [])
        body = new.region.blocks.append(*[index] * rank)
        with ir.InsertionPoint(body):
            terminator = scf.ReduceOp([], 0)
    with ir.InsertionPoint(terminator), loop.location:
        values = _Lanes(old, body, lanes, lanes_value)
        for op in [op.operation for op in old.operations][:-1]:
            with op.location:  # the user's line, as the scalar access had
                if op in nest.contiguous:
                    values.access(op)
                else:
                    values.copy(op)
    loop.erase()


@register_pass
@dataclass
class GpuVectorize(ModulePass):
    """Elementwise parallel nests: each iteration moves a 16-byte vector along the contiguous dimension."""

    argument = "mlax-gpu-vectorize"
    sees_mlax_ops = False
    summary = "give each GPU thread of an elementwise nest an aligned vector of consecutive elements"

    def run(self, module: ir.Operation) -> None:
        for loop in outermost_parallel_loops(module):  # each rebuilt one goes with its body
            if "mapping" not in loop.attributes:
                nest = _analyse(loop)
                lanes = _lanes(nest) if nest else None
                if lanes:
                    _vectorize(nest, lanes)
