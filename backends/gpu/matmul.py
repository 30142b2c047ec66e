"""`mlax-gpu-matmul`: each matmul of the ``buffers`` stage becomes one tiled ``gpu.launch``:
shared-memory tiles and tensor cores (``mma.sync``) for f32 (as TF32), f16 and bf16, a tiled
SIMT kernel (shared memory, a 4x4 register tile per thread, FMA) for f64, integers and f32 at
``f32-precision=highest``. The kernels are written in backends/gpu/matmul_kernels.py.

What the linalg stage makes of ``dot_general`` (passes/lower_to_linalg/contraction.py), on
buffers: a zero ``linalg.fill`` of the result, then ``linalg.matmul`` or
``linalg.batch_matmul`` whose indexing maps may read either operand transposed (``x @ w.T``,
``x.T @ w``: BLAS's transpose flags), or, where a reshape folded into the product (``x @ w``
with x of rank 3), a ``linalg.generic`` of body ``out + x * y`` whose rows, columns, K or
batch span several dimensions (`_analyse` reads any projected-permutation maps as batched
M x K by K x N matrices, `Operand` says where each logical index lives). f16 and bf16
operands are widened to f32 (temporaries filled by ``arith.extf`` kernels, or ``extf`` in the
generic's body) and the f32 result rounded back by a kernel; the pass reads and writes the
halves directly (the widening and rounding kernels and their buffers go) and runs the product
on the tensor cores with f32 accumulation. The zero fill becomes the accumulators' initial
value (no fill kernel); without it the kernel adds to the result's contents. A contraction of
another form (dynamic sizes, other maps or bodies, mixed types) is left to the
one-thread-per-element loops of ``convert-linalg-to-parallel-loops``.

Precision: jax on a GPU computes f32 dots at ``Precision.DEFAULT`` (and HIGH) with TF32 tensor
cores and at ``HIGHEST`` in true f32. The linalg stage copies a dot_general's precision onto its
product as ``mlax.precision`` (absent: DEFAULT); an f32 matmul with HIGHEST on either operand
runs the SIMT kernel (true f32), others TF32; ``f32-precision=highest`` gives every f32 matmul
true f32.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from mlax.backends.gpu.matmul_kernels import Matmul, Operand, mma_kernel, simt_kernel
from mlax.dialect.attrs import from_attribute
from mlax.passes.lower_to_linalg.contraction import PRECISION_ATTR
from mlax.passes.registry import ModulePass, option, register_pass
from mlax.passes.walk import nested_ops

_HALVES = ("f16", "bf16")
PRECISIONS = ("tf32", "highest")


def _positions(attribute: ir.Attribute) -> list[int] | None:
    results = ir.AffineMapAttr(attribute).value.results
    if not all(isinstance(e, ir.AffineDimExpr) for e in results):
        return None
    return [e.position for e in results]


# The default indexing maps of the named ops, over (m, n, k) and (b, m, n, k).
_NAMED_MAPS = {"linalg.matmul": [[0, 2], [2, 1], [0, 1]],
               "linalg.batch_matmul": [[0, 1, 3], [0, 3, 2], [0, 1, 2]]}
# A loop dimension's class from (in A, in B, in C, iterator), and its logical index per operand.
_CLASSES = {(True, True, True, "parallel"): "b", (True, False, True, "parallel"): "m",
            (False, True, True, "parallel"): "n", (True, True, False, "reduction"): "k"}
_LOGICAL = ({"b": "b", "m": "r", "k": "c"}, {"b": "b", "k": "r", "n": "c"}, {"b": "b", "m": "r", "n": "c"})


@dataclass(frozen=True)
class _Contraction:
    dims: tuple[tuple[tuple[str, int, int], ...], ...]  # per operand (A, B, C), see `Operand`
    extents: dict[str, int]  # b, m, n, k: each the product of its loop dimensions
    widened_from: str | None  # the half type the op's body widens both inputs from


def _maps(op: ir.Operation) -> list[list[int]] | None:
    """The operands' indexing maps as loop-dimension positions; None unless each is a
    projected permutation."""
    if "indexing_maps" not in op.attributes:
        return _NAMED_MAPS.get(op.name)
    maps = [_positions(m) for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    return None if any(m is None or len(set(m)) != len(m) for m in maps) else maps


def _iterators(op: ir.Operation, count: int) -> list[str]:
    if op.name != "linalg.generic":
        return ["parallel"] * (count - 1) + ["reduction"]
    return [str(t).split("<")[-1].rstrip(">") for t in ir.ArrayAttr(op.attributes["iterator_types"])]


def _product_sum(op: ir.Operation) -> tuple[bool, str | None]:
    """Whether a linalg.generic's body is ``out + x * y`` of its two inputs, and the half type
    it widens both from first (``arith.extf``), if any."""
    block = op.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    names = [o.name for o in ops]
    float_ = ["arith.mulf", "arith.addf", "linalg.yield"]
    if names not in (float_, ["arith.muli", "arith.addi", "linalg.yield"], ["arith.extf"] * 2 + float_):
        return False, None
    inputs = list(block.arguments)[:2]
    widened = ops[:-3]
    if widened:
        sources = [w.operands[0] for w in widened]
        if {str(v.type) for v in sources} not in ({"f16"}, {"bf16"}) or not _same_values(sources, inputs):
            return False, None
        inputs = [w.results[0] for w in widened]
    mul, add, done = ops[-3:]
    ok = (_same_values(list(mul.operands), inputs) and _same_values(list(add.operands), [block.arguments[2],
                                                                                          mul.results[0]])
          and done.operands[0] == add.results[0])
    return ok, str(widened[0].operands[0].type) if ok and widened else None


def _same_values(values: list[ir.Value], expected: list[ir.Value]) -> bool:
    """Whether ``values`` are the two ``expected`` values, in either order."""
    return len(values) == 2 and (values == expected or values == expected[::-1])


def _analyse(op: ir.Operation) -> _Contraction | None:
    """The contraction a linalg.matmul, batch_matmul or product-sum generic computes, as
    batched M x K by K x N matrices whose dimensions may each be several loop dimensions."""
    widened_from = None
    if op.name == "linalg.generic":
        if list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])) != [2, 1]:
            return None
        product, widened_from = _product_sum(op)
        if not product:
            return None
    maps = _maps(op)
    if maps is None:
        return None
    count = max(max(m, default=-1) for m in maps) + 1
    kinds = _iterators(op, count)
    sizes = {d: ir.MemRefType(v.type).shape[j] for v, m in zip(op.operands, maps, strict=True)
             for j, d in enumerate(m)}
    classes = {d: _CLASSES.get((d in maps[0], d in maps[1], d in maps[2], kinds[d])) for d in range(count)}
    if None in classes.values() or "k" not in classes.values():
        return None
    orders = {cls: [d for d in maps[0 if cls == "k" else 2] if classes[d] == cls] for cls in "bmnk"}
    strides, extents = {}, {}
    for cls, order in orders.items():
        extents[cls] = 1
        for d in reversed(order):
            strides[d] = extents[cls]
            extents[cls] *= sizes[d]
    dims = tuple(tuple((logical[classes[d]], strides[d], sizes[d]) for d in m)
                 for logical, m in zip(_LOGICAL, maps, strict=True))
    return _Contraction(dims, extents, widened_from)


def _highest(op: ir.Operation) -> bool:
    """Whether the dot this matmul came from asked for HIGHEST precision on either operand."""
    attributes = op.attributes
    return PRECISION_ATTR in attributes and "HIGHEST" in from_attribute("strs", attributes[PRECISION_ATTR])


def _element(value: ir.Value) -> str:
    return str(ir.MemRefType(value.type).element_type)


def _static(value: ir.Value) -> bool:
    return isinstance(value.type, ir.MemRefType) and ir.MemRefType(value.type).has_static_shape


def _writes_only_fresh_buffers(op: ir.Operation) -> bool:
    """``op`` allocates, or is a linalg op writing only buffers allocated in this function."""
    if op.name == "memref.alloc":
        return True
    if op.name != "linalg.generic":
        return False
    outputs = list(op.operands)[len(op.operands) - _output_count(op):]
    return all(isinstance(v, ir.OpResult) and v.owner.name == "memref.alloc" for v in outputs)


def _output_count(op: ir.Operation) -> int:
    return list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))[1]


def _is_zero(value: ir.Value) -> bool:
    if not isinstance(value, ir.OpResult) or value.owner.name != "arith.constant":
        return False
    attribute = value.owner.attributes["value"]
    if isinstance(attribute, ir.FloatAttr):
        return attribute.value == 0.0
    return isinstance(attribute, ir.IntegerAttr) and attribute.value == 0


def _zero_fill(op: ir.Operation, result: ir.Value) -> ir.Operation | None:
    """The ``linalg.fill`` of zero into ``result`` that precedes ``op`` with nothing between
    them that could write ``result`` (only new temporaries and kernels writing them)."""
    before = op.operation
    block_ops = [o.operation for o in op.operation.block.operations]
    for candidate in reversed(block_ops[:block_ops.index(before)]):
        if any(v == result for v in candidate.operands):
            fill = candidate.name == "linalg.fill" and _is_zero(candidate.operands[0])
            return candidate if fill else None
        if not _writes_only_fresh_buffers(candidate):
            return None
    return None


def _widening(value: ir.Value, op: ir.Operation) -> ir.Operation | None:
    """The kernel that fills the temporary ``value`` (read by ``op`` alone) with a half
    buffer widened to f32 (``linalg.generic`` of one ``arith.extf``, identity maps), found
    where nothing between it and ``op`` writes its source."""
    if not isinstance(value, ir.OpResult) or value.owner.name != "memref.alloc":
        return None
    users = [use.owner.operation for use in value.uses]
    writers = [u for u in users if u.name == "linalg.generic" and u.operands[len(u.operands) - 1] == value]
    others = [u for u in users if u not in writers and u != op.operation and u.name != "memref.dealloc"]
    if len(writers) != 1 or others or users.count(op.operation) != 1:
        return None
    widen = writers[0]
    body = [o.operation for o in widen.regions[0].blocks[0].operations]
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(widen.attributes["indexing_maps"])]
    if (len(widen.operands) != 2 or len(body) != 2 or body[0].name != "arith.extf"
            or _element(widen.operands[0]) not in _HALVES
            or any(m != ir.AffineMap.get_identity(m.n_dims) for m in maps)
            or widen.operands[0].type != ir.MemRefType.get(ir.MemRefType(value.type).shape,
                                                           ir.MemRefType(widen.operands[0].type).element_type)):
        return None
    if widen.block != op.operation.block:
        return None
    block_ops = [o.operation for o in op.operation.block.operations]
    start, end = block_ops.index(widen), block_ops.index(op.operation)
    source = widen.operands[0]
    for between in block_ops[start + 1:end]:
        if any(v == source for v in between.operands) and not _reads_only(between, source):
            return None
    return widen if start < end else None


def _narrowing(value: ir.Value, op: ir.Operation) -> ir.Operation | None:
    """The kernel right after ``op`` (deallocations aside) that rounds the f32 temporary
    ``value`` (written by ``op`` alone) to a half buffer: ``linalg.generic`` of one
    ``arith.truncf``, identity maps. The matmul kernel can store the rounded sums itself."""
    if _temporary(value) is None:
        return None
    block_ops = [o.operation for o in op.operation.block.operations]
    after = [o for o in block_ops[block_ops.index(op.operation) + 1:] if o.name != "memref.dealloc"]
    if not after or after[0].name != "linalg.generic":
        return None
    narrow = after[0]
    body = [o.operation for o in narrow.regions[0].blocks[0].operations]
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(narrow.attributes["indexing_maps"])]
    users = {use.owner.operation for use in value.uses} - {op.operation, narrow}
    if (len(narrow.operands) != 2 or narrow.operands[0] != value or len(body) != 2
            or body[0].name != "arith.truncf" or _element(narrow.operands[1]) not in _HALVES
            or any(m != ir.AffineMap.get_identity(m.n_dims) for m in maps)
            or any(u.name not in ("memref.dealloc", "linalg.fill") for u in users)):
        return None
    return narrow


def _reads_only(op: ir.Operation, value: ir.Value) -> bool:
    """Whether ``op`` uses ``value`` only as a linalg input."""
    if not op.name.startswith("linalg.") or "operandSegmentSizes" not in op.attributes:
        return False
    inputs = list(op.operands)[:len(op.operands) - _output_count(op)]
    return all(v != value or i < len(inputs) for i, v in enumerate(op.operands))


_VIEWS = ("memref.expand_shape", "memref.collapse_shape")


def _temporary(value: ir.Value) -> ir.Value | None:
    """The allocation ``value`` is, or is the only view of (a reshape); None otherwise."""
    if not isinstance(value, ir.OpResult):
        return None
    if value.owner.name in _VIEWS:
        source = value.owner.operands[0]
        users = [use.owner.operation.name for use in source.uses]
        if _temporary(source) is None or any(u not in ("memref.dealloc", *_VIEWS) for u in users) \
                or users.count(value.owner.name) != 1:
            return None
        return source
    return value if value.owner.name == "memref.alloc" else None


def _drop_temporary(buffer: ir.Value) -> None:
    """Erase an allocation (or a view of one) that only deallocations use any more."""
    root = _temporary(buffer)
    if root is None:
        return
    if buffer != root:
        if any(True for _ in buffer.uses):
            return
        buffer.owner.erase()
    users = [use.owner.operation for use in root.uses]
    if all(u.name == "memref.dealloc" for u in users):
        for user in users:
            user.erase()
        root.owner.erase()


@register_pass
@dataclass
class GpuMatmul(ModulePass):
    """linalg.matmul / batch_matmul on buffers -> one tiled gpu.launch (tensor cores or SIMT)."""

    argument = "mlax-gpu-matmul"
    sees_mlax_ops = False
    summary = "turn matmuls into shared-memory tiled kernels on tensor cores (mma.sync) or SIMT FMA"

    f32_precision: str = option("tf32", "f32 matmuls: tf32 (tensor cores, jax's DEFAULT on GPUs) or highest")

    def run(self, module: ir.Operation) -> None:
        if self.f32_precision not in PRECISIONS:
            raise ValueError(f"{self.argument}: option 'f32-precision' must be one of "
                             f"{', '.join(PRECISIONS)}, got '{self.f32_precision}'")
        # Rewrites erase other ops (fills, widening and narrowing generics), so analyse every
        # candidate before the first rewrite: an erased op must never be touched again.
        candidates = [op for op in nested_ops(module)
                      if op.name in ("linalg.matmul", "linalg.batch_matmul", "linalg.generic")
                      and op.parent.name == "func.func"]
        contractions = [(op, found) for op in candidates if (found := _analyse(op)) is not None]
        for op, found in contractions:
            with op.location:
                self._rewrite(op, found)

    def _rewrite(self, op: ir.Operation, found: _Contraction) -> None:
        if not all(map(_static, op.operands)):
            return
        a, b, c = op.operands
        if c == a or c == b:  # the kernel would read what other blocks write
            return
        element = _element(c)
        widened: list[ir.Operation | None] = [None, None]
        if found.widened_from is not None:
            kind = found.widened_from
        elif len({_element(v) for v in (a, b, c)}) != 1:
            return
        else:
            found_widenings = [_widening(v, op) for v in (a, b)]
            half = {_element(w.operands[0]) for w in found_widenings if w is not None}
            if all(found_widenings) and len(half) == 1:  # both folded, or neither
                widened = found_widenings
                kind = half.pop()
                a, b = (w.operands[0] for w in widened)
            elif element == "f32":
                kind = "simt" if self.f32_precision == "highest" or _highest(op) else "tf32"
            elif element == "f64" or isinstance(ir.MemRefType(c.type).element_type, ir.IntegerType):
                kind = "simt"
            else:
                return
        if kind in _HALVES and element != "f32":
            return
        fill = _zero_fill(op, c)
        narrow = _narrowing(c, op) if kind in _HALVES and fill is not None else None
        if narrow is not None:
            c = narrow.operands[1]
        a_, b_, c_ = (Operand(name, str(v.type), _element(v), dims)
                      for name, v, dims in zip("abc", (a, b, c), found.dims, strict=True))
        extents = found.extents
        mm = Matmul(a_, b_, c_, m=extents["m"], n=extents["n"], k=extents["k"], batch=extents["b"],
                    accumulate=fill is None)
        location = str(op.location)
        text = simt_kernel(mm, element, location) if kind == "simt" else mma_kernel(mm, kind, location)
        _instantiate(text, op, (a, b, c))
        temporaries = list(op.operands)
        op.erase()
        for done in (fill, narrow, *widened):
            if done is not None:
                done.erase()
        for temporary in temporaries if kind in _HALVES else ():
            _drop_temporary(temporary)


def _instantiate(text: str, op: ir.Operation, operands: tuple[ir.Value, ...]) -> None:
    """Parse the template function ``text`` and move its body (the launch) before ``op``,
    its arguments replaced by ``operands``."""
    template = ir.Module.parse(text, op.context)
    function = template.body.operations[0]
    block = function.regions[0].blocks[0]
    for argument, value in zip(block.arguments, operands, strict=True):
        argument.replace_all_uses_with(value)
    for inner in [o.operation for o in block.operations][:-1]:
        inner.move_before(op)
