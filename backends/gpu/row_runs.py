"""Runs of linalg ops over the same rows, for `mlax-gpu-row-kernels` (backends/gpu/row_kernels.py).

A run is a sequence of consecutive ops in a function's body (only constants, views and
allocations between them) that share a row space of NR rows of L elements, the reduced
dimensions innermost (`mlax-gpu-reductions-inner`): row reductions whose body is ``yield
comb(f(inputs), out)`` (``comb`` in `COMBINERS`, ``out`` used nowhere else), the fills and
copies of their buffers, and elementwise ops over NR x L elements or over NR. A buffer the run
writes must be walked by all of its ops in row order (`pattern`: element ``row*L + col``,
"full", or element ``row``, "row"): one row's elements are then touched by one block only, and
each element of a "full" buffer by one thread. A buffer the run only reads may be read in any
pattern, except by a reduction (a matmul or a column sum is not a row reduction). What this
module does not recognise is not part of any run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mlir import ir

# A reduction's combiner op -> its gpu.all_reduce kind.
COMBINERS = {"arith.addf": "add", "arith.addi": "add", "arith.mulf": "mul", "arith.muli": "mul",
             "arith.maximumf": "maximumf", "arith.minimumf": "minimumf", "arith.maxnumf": "maxnumf",
             "arith.minnumf": "minnumf", "arith.maxsi": "maxsi", "arith.minsi": "minsi",
             "arith.maxui": "maxui", "arith.minui": "minui", "arith.andi": "and", "arith.ori": "or",
             "arith.xori": "xor"}
# Host ops that may stand between the ops of a run (no memory is read or written).
_BETWEEN = ("arith.constant", "memref.expand_shape", "memref.collapse_shape", "memref.alloc")
_ROOTS = ("memref.alloc", "memref.get_global")
VIEWS = ("memref.expand_shape", "memref.collapse_shape")
SCALAR_BLOCK = 1024
SPLIT = 1 << 16  # a reduction to a scalar of this many elements takes two launches


def _root(view: ir.Value) -> ir.Value | None:
    """The buffer ``view`` is a reshape of; None when it may alias another one (a subview...)."""
    while not isinstance(view.owner, ir.Block) and view.owner.operation.name in VIEWS:
        view = view.owner.operation.operands[0]
    if isinstance(view.owner, ir.Block) or view.owner.operation.name in _ROOTS:
        return view
    return None


def _contiguous(t: ir.Type) -> bool:
    """A row-major buffer (no strided layout, no offset)."""
    if not isinstance(t, ir.MemRefType):
        return False
    layout = ir.MemRefType(t).affine_map
    return layout == ir.AffineMap.get_identity(layout.n_dims)


def _strides(sizes: list[int]) -> list[int]:
    return [math.prod(sizes[d + 1:]) for d in range(len(sizes))]


def _coefficients(amap: ir.AffineMap, shape: list[int]) -> list[int] | None:
    """The element offset of ``amap``'s access as coefficients of the loop dimensions (None unless
    every result is a dimension or the constant 0)."""
    coefficients = [0] * amap.n_dims
    for expr, stride in zip(amap.results, _strides(shape), strict=False):
        if isinstance(expr, ir.AffineDimExpr):
            coefficients[ir.AffineDimExpr(expr).position] += stride
        elif not (isinstance(expr, ir.AffineConstantExpr) and ir.AffineConstantExpr(expr).value == 0):
            return None
    return coefficients


@dataclass
class Access:
    view: ir.Value
    root: ir.Value
    amap: ir.AffineMap
    write: bool


@dataclass
class RowOp:
    """A linalg op a row kernel can run: its loop sizes, accesses and (for a reduction) combiner."""

    op: ir.Operation
    sizes: list[int]
    parallel: int                 # leading parallel dimensions
    inputs: list[Access]
    output: Access
    combiner: ir.Operation | None = None
    accumulator_first: bool = False  # comb(out, x) rather than comb(x, out)
    kind: str = ""                # "reduce", "map" (over P x R) or "rows" (over P), set by _fit
    split: int = 0                # how many leading dimensions make the row index

    @property
    def reduction(self) -> bool:
        return self.parallel < len(self.sizes)


def _body_ok(op: ir.Operation) -> bool:
    return all(not inner.regions and (inner.name.startswith(("arith.", "math."))
                                      or inner.name in ("linalg.index", "linalg.yield"))
               for inner in op.regions[0].blocks[0].operations)


def _combiner(op: ir.Operation) -> ir.Operation | None:
    """The op of ``yield comb(x, out)``, ``out`` used there only; else None."""
    body = op.regions[0].blocks[0]
    out = body.arguments[len(body.arguments) - 1]
    yielded = body.operations[len(body.operations) - 1].operands[0]
    if isinstance(yielded.owner, ir.Block) or yielded.owner.operation.name not in COMBINERS:
        return None
    comb = yielded.owner.operation
    uses = list(out.uses)
    if len(uses) != 1 or uses[0].owner != comb or comb.operands[0] == comb.operands[1]:
        return None
    kind = comb.result.type
    if not (isinstance(kind, (ir.F32Type, ir.F64Type, ir.F16Type, ir.BF16Type))
            or (isinstance(kind, ir.IntegerType) and ir.IntegerType(kind).width in (1, 8, 16, 32, 64))):
        return None
    return comb


def _access(view: ir.Value, amap: ir.AffineMap, write: bool) -> Access | None:
    root = _root(view)
    if root is None or not _contiguous(view.type) or not _contiguous(root.type) \
            or not all(map(_supported, amap.results)):
        return None
    return Access(view, root, amap, write)


def _parse(op: ir.Operation) -> RowOp | None:
    """``op`` as a row-kernel op, or None when it is not one this pass knows."""
    if op.name == "linalg.fill":
        out = op.operands[1]
        if not isinstance(out.type, ir.MemRefType):
            return None
        shape = list(ir.MemRefType(out.type).shape)
        output = _access(out, ir.AffineMap.get_identity(len(shape)), True)
        return output and RowOp(op, shape, len(shape), [], output)
    if op.name == "memref.copy":  # bufferization's copy of a row buffer (a shared fill)
        source, target = op.operands
        if not isinstance(target.type, ir.MemRefType) or source.type != target.type:
            return None
        shape = list(ir.MemRefType(target.type).shape)
        identity = ir.AffineMap.get_identity(len(shape))
        accesses = [_access(source, identity, False), _access(target, identity, True)]
        return None if None in accesses else RowOp(op, shape, len(shape), accesses[:1], accesses[1])
    if op.name != "linalg.generic" or len(op.results) or not _body_ok(op):
        return None
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    operands = list(op.operands)
    if len(maps) != len(operands) or not all(isinstance(v.type, ir.MemRefType) for v in operands):
        return None
    kinds = [str(t).split("<")[-1].rstrip(">") for t in ir.ArrayAttr(op.attributes["iterator_types"])]
    parallel = kinds.index("reduction") if "reduction" in kinds else len(kinds)
    if any(k != "parallel" for k in kinds[:parallel]) or any(k != "reduction" for k in kinds[parallel:]):
        return None
    n_outputs = int(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[1])
    if n_outputs != 1:
        return None
    sizes: list[int | None] = [None] * len(kinds)
    for value, amap in zip(operands, maps, strict=False):
        for expr, extent in zip(amap.results, ir.MemRefType(value.type).shape, strict=False):
            if isinstance(expr, ir.AffineDimExpr):
                sizes[ir.AffineDimExpr(expr).position] = extent
    if any(s is None or s < 0 for s in sizes):
        return None
    accesses = [_access(v, m, k == len(operands) - 1)
                for k, (v, m) in enumerate(zip(operands, maps, strict=True))]
    if any(a is None for a in accesses):
        return None
    parsed = RowOp(op, sizes, parallel, accesses[:-1], accesses[-1])
    if parsed.reduction:
        parsed.combiner = _combiner(op)
        body = op.regions[0].blocks[0]
        parsed.accumulator_first = parsed.combiner is not None and \
            parsed.combiner.operands[0] == body.arguments[len(body.arguments) - 1]
        if parsed.combiner is None or any(a.root == parsed.output.root for a in parsed.inputs):
            return None
    return parsed


def _fit(op: RowOp, rows: int, length: int) -> bool:
    """Whether ``op`` runs over ``rows`` rows of ``length`` (sets its kind and row split)."""
    sizes = op.sizes
    if op.reduction:
        op.kind, op.split = "reduce", op.parallel
        return math.prod(sizes[:op.parallel]) == rows and math.prod(sizes[op.parallel:]) == length
    total = math.prod(sizes)
    if total == rows:
        op.kind, op.split = "rows", len(sizes)
        return True
    if total != rows * length:
        return False
    op.kind = "map"
    op.split = next((k for k in range(len(sizes) + 1) if math.prod(sizes[:k]) == rows), -1)
    return op.split >= 0


def pattern(op: RowOp, access: Access, rows: int, length: int) -> str:
    """How ``access`` walks its buffer: "full" (element ``row*L + col``), "row" (element ``row``)
    or "other"."""
    coefficients = _coefficients(access.amap, list(ir.MemRefType(access.view.type).shape))
    if coefficients is None:
        return "other"
    count = math.prod(ir.MemRefType(access.view.type).shape)
    big = [d for d, s in enumerate(op.sizes) if s != 1]
    full = _strides(op.sizes)
    row = _strides(op.sizes[:op.split]) + [0] * (len(op.sizes) - op.split)
    if count == rows * length and all(coefficients[d] == full[d] for d in big):
        return "full"
    if count == rows and all(coefficients[d] == row[d] for d in big):
        return "row"
    return "other"


@dataclass
class Run:
    """Ops sharing a row space, and how each buffer they touch is walked."""

    rows: int
    length: int
    ops: list[RowOp] = field(default_factory=list)
    patterns: dict[ir.Value, set[str]] = field(default_factory=dict)
    written: set[ir.Value] = field(default_factory=set)

    @property
    def split(self) -> int:
        """Blocks of the first of two launches (a long reduction to a scalar); 0: one launch."""
        if self.rows != 1 or self.length < SPLIT:
            return 0
        return min(-(-self.length // (SCALAR_BLOCK * 8)), SCALAR_BLOCK)

    def add(self, op: RowOp) -> bool:
        """Add ``op`` if the buffers the run writes stay walked in one row order; else False."""
        if not _fit(op, self.rows, self.length):
            return False
        if self.split and (op.kind == "map" or op.kind == "reduce" and (
                any(o.reduction for o in self.ops)
                or any(a.root in self.written for a in op.inputs))):
            return False  # two launches: the first reads only what the run does not write
        patterns = {k: set(v) for k, v in self.patterns.items()}
        written = set(self.written)
        for access in (*op.inputs, op.output):
            patterns.setdefault(access.root, set()).add(pattern(op, access, self.rows, self.length))
            if access.write:
                written.add(access.root)
        if pattern(op, op.output, self.rows, self.length) != ("full" if op.kind == "map" else "row"):
            return False
        # A reduction reads whole rows (and row values): not a matmul or a column reduction.
        if op.kind == "reduce" and any(pattern(op, a, self.rows, self.length) == "other" for a in op.inputs):
            return False
        if any(len(patterns[r]) != 1 or "other" in patterns[r] for r in written):
            return False
        self.ops.append(op)
        self.patterns, self.written = patterns, written
        return True


def runs(ops: list[RowOp]) -> list[Run]:
    """Runs of ``ops`` (consecutive candidates) around each row reduction."""
    found: list[Run] = []
    i = 0
    while i < len(ops):
        first = next((j for j in range(i, len(ops)) if ops[j].reduction), None)
        if first is None:
            break
        rows, length = math.prod(ops[first].sizes[:ops[first].parallel]), \
            math.prod(ops[first].sizes[ops[first].parallel:])
        if length < 2:
            i = first + 1
            continue
        start = first
        # Before the first reduction only fills join (an elementwise op there keeps its own
        # vectorized 2-D kernel, mlax-gpu-vectorize).
        while start > i and ops[start - 1].op.name in ("linalg.fill", "memref.copy") \
                and _fit(ops[start - 1], rows, length):
            start -= 1
        run, end = Run(rows, length), start
        while end < len(ops) and run.add(ops[end]):
            end += 1
        if end <= first:  # the run broke before its reduction: go on after the op that broke it
            i = end + 1 if end < first else (first if start < first else first + 1)
            continue
        found.append(run)
        i = end
    return found


def _supported(expr: ir.AffineExpr) -> bool:
    """Whether the kernel can compute ``expr`` (dimensions, constants, +, *, floordiv, mod)."""
    if isinstance(expr, ir.AffineDimExpr) or isinstance(expr, ir.AffineConstantExpr):
        return True
    for kind in (ir.AffineAddExpr, ir.AffineMulExpr, ir.AffineFloorDivExpr, ir.AffineModExpr):
        if isinstance(expr, kind):
            return _supported(kind(expr).lhs) and _supported(kind(expr).rhs)
    return False


def windows(block: ir.Block) -> list[list[RowOp]]:
    """The ops of ``block`` a run may hold, in groups of consecutive ones with nothing between
    them that touches memory (runs never cross an op outside these groups)."""
    found: list[list[RowOp]] = [[]]
    for op in block.operations:
        op = op.operation
        parsed = _parse(op) if op.name.startswith("linalg.") or op.name == "memref.copy" else None
        if parsed is not None:
            found[-1].append(parsed)
        elif op.name not in _BETWEEN and found[-1]:
            found.append([])
    return [w for w in found if w]
