"""`mlax-gpu-row-kernels`: each run of ops over the same rows (backends/gpu/row_runs.py: row
reductions, their fills, the elementwise ops around them: a softmax, a layer norm, row sums, a
sum to a scalar) becomes ONE ``gpu.launch`` with block reductions.

Before it a row reduction was a fill kernel and one thread per row looping over the row, a sum
to a scalar one thread, a softmax six kernels. Rows longer than a warp get a block each (up to
256 threads, 1024 for a single row) striding over the row, so a warp reads consecutive
elements; a reduction is each thread's partial value, then ``gpu.all_reduce`` with the op's
own kind (``convert-gpu-to-nvvm`` lowers it to ``shfl.sync.bfly``, shared memory and
``bar.sync``). Rows of at most 32 get a power-of-two group of lanes each, several rows per
block, and a butterfly of ``gpu.shuffle xor``. A long reduction to a scalar is two launches
(block partials, then one block). Every op walks a row with the same threads, so an element of
an NR x L buffer is only ever touched by one thread; a value per row (a reduction's result, a
fill, an op over the rows) stays in registers, later ops read it there, and the row's first
thread stores it once at the end (after a ``gpu.barrier`` when the kernel also read its old
value). Narrow types cross threads in 32 bits; a thread without elements holds the combiner's
identity; the combiner itself is the op's own (maximumf stays NaN-propagating).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf

from mlax.backends.gpu.row_runs import (
    COMBINERS,
    SCALAR_BLOCK,
    VIEWS,
    Access,
    RowOp,
    Run,
    pattern,
    runs,
    windows,
)
from mlax.passes.registry import ModulePass, register_pass

_WARP = 32
_ROW_BLOCK = 256  # threads per block for rows (8 warps); a single row (a scalar) gets 1024


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def _reduction(op: RowOp) -> tuple[str, ir.Type, bool]:
    """A reduction's gpu.all_reduce kind, the type it is carried in, and whether it is signed."""
    kind = COMBINERS[op.combiner.name]
    return kind, _wide(op.combiner.result.type), kind in ("maxsi", "minsi")


def _wide(t: ir.Type) -> ir.Type:
    """The type a reduction is carried in across threads: shuffles move 32 or 64 bits."""
    if isinstance(t, (ir.F16Type, ir.BF16Type)):
        return ir.F32Type.get()
    if isinstance(t, ir.IntegerType) and ir.IntegerType(t).width < 32:
        return ir.IntegerType.get_signless(32)
    return t


def _convert(value: ir.Value, to: ir.Type, signed: bool) -> ir.Value:
    """``value`` widened to or narrowed from its reduction type ``to`` (no-op when equal)."""
    if value.type == to:
        return value
    if isinstance(to, ir.IntegerType):
        if ir.IntegerType(to).width < ir.IntegerType(value.type).width:
            return arith.trunci(to, value)
        return arith.extsi(to, value) if signed else arith.extui(to, value)
    if isinstance(to, ir.F32Type):
        return arith.extf(to, value)
    return arith.truncf(to, value)


def _identity(kind: str, t: ir.Type) -> ir.Value:
    """The value ``kind`` leaves unchanged: what a thread with no element of the row holds."""
    if isinstance(t, ir.IntegerType):
        width = ir.IntegerType(t).width
        values = {"add": 0, "or": 0, "xor": 0, "maxui": 0, "mul": 1, "and": -1, "minui": -1,
                  "maxsi": -(1 << (width - 1)), "minsi": (1 << (width - 1)) - 1}
        return arith.constant(t, ir.IntegerAttr.get(t, values[kind]))
    values = {"add": -0.0, "mul": 1.0, "maximumf": -math.inf, "minimumf": math.inf,
              "maxnumf": math.nan, "minnumf": math.nan}
    return arith.constant(t, values[kind])


def _combine(op: RowOp, t: ir.Type, element: ir.Value, accumulator: ir.Value) -> ir.Value:
    """The op's combiner on ``t``, operands in the order of its body. Its fastmath flags are
    kept unless they promise no NaN or infinity (the identities are -inf, NaN...); integer
    overflow flags go (threads combine in another order than the CPU's loop)."""
    comb = op.combiner
    operands = [accumulator, element] if op.accumulator_first else [element, accumulator]
    attributes = {name: comb.attributes[name] for name in comb.attributes
                  if name == "fastmath" and not any(f in str(comb.attributes[name])
                                                    for f in ("nnan", "ninf", "fast>"))}
    return ir.Operation.create(comb.name, results=[t], operands=operands, attributes=attributes).result


def _expr(expr: ir.AffineExpr, dims: list[ir.Value]) -> ir.Value:
    if isinstance(expr, ir.AffineDimExpr):
        return dims[ir.AffineDimExpr(expr).position]
    if isinstance(expr, ir.AffineConstantExpr):
        return _index(ir.AffineConstantExpr(expr).value)
    for kind, build in ((ir.AffineAddExpr, arith.addi), (ir.AffineMulExpr, arith.muli),
                        (ir.AffineFloorDivExpr, arith.divui), (ir.AffineModExpr, arith.remui)):
        if isinstance(expr, kind):
            binary = kind(expr)
            return build(_expr(binary.lhs, dims), _expr(binary.rhs, dims))
    raise NotImplementedError(f"mlax-gpu-row-kernels: affine expression {expr}")


def _delinearize(value: ir.Value, sizes: list[int]) -> list[ir.Value]:
    """Row-major indices of the linear ``value`` over ``sizes``."""
    dims: list[ir.Value] = []
    for k in range(len(sizes) - 1, -1, -1):
        if sizes[k] == 1:
            dims.append(_index(0))
        elif k == 0 or math.prod(sizes[:k]) == 1:
            dims.append(value)
        else:
            dims.append(arith.remui(value, _index(sizes[k])))
            value = arith.divui(value, _index(sizes[k]))
    return dims[::-1]


def _inside(view: ir.Value, local: dict[ir.Value, ir.Value], anchor: ir.Operation) -> ir.Value:
    """``view`` rebuilt in the kernel (before ``anchor``, its first op) from its buffer: the
    kernel then takes each buffer once, and mlax-gpu-noalias can mark it ``noalias`` (two views
    of one buffer as two arguments get nothing)."""
    if isinstance(view.owner, ir.Block) or view.owner.operation.name not in VIEWS:
        return view
    if view not in local:
        source = _inside(view.owner.operation.operands[0], local, anchor)
        with ir.InsertionPoint(anchor):
            clone = view.owner.operation.clone()
        clone.operands[0] = source
        local[view] = clone.results[0]
    return local[view]


def _shape(run: Run) -> tuple[int, int]:
    """(threads along a row, rows per block). Rows longer than a warp: a block of up to 256
    threads per row (1024 for a single row) striding over it; shorter rows: a power-of-two group
    of lanes per row, several rows per block (up to 256 threads, whole warps)."""
    if run.length > _WARP:
        limit = SCALAR_BLOCK if run.rows == 1 else _ROW_BLOCK
        return min(limit, -(-run.length // _WARP) * _WARP), 1
    lanes = 1 << (run.length - 1).bit_length()
    return lanes, min(_ROW_BLOCK // lanes, -(-run.rows * lanes // _WARP) * _WARP // lanes)


class _Kernel:
    """The body of a run's gpu.launch, op after op."""

    def __init__(self, run: Run, arguments: list[ir.Value], lanes: int, per_block: int) -> None:
        self.run, self.lanes, self.per_block = run, lanes, per_block
        self.anchor = _index(0).owner.operation  # views of the buffers are rebuilt before it
        self.tx = arguments[3]
        row = arguments[0]
        if per_block > 1:
            row = arith.addi(arith.muli(arguments[0], _index(per_block)), arguments[4])
        self.valid: ir.Value | None = None
        self.end = _index(run.length)
        if run.rows % per_block:  # the last block's extra rows compute nothing and store nothing
            self.valid = arith.cmpi(arith.CmpIPredicate.ult, row, _index(run.rows))
            row = arith.select(self.valid, row, _index(run.rows - 1))
            self.end = arith.select(self.valid, self.end, _index(0))
        self.row = row
        self.start, self.step = self.tx, _index(lanes)
        self.partials: tuple[ir.Value, int] | None = None  # (buffer, blocks) of a split reduction
        self.values: dict[ir.Value, ir.Value] = {}      # buffer -> this row's value, held in registers
        self.loaded: set[ir.Value] = set()              # row buffers read from memory
        self.stores: dict[ir.Value, tuple[RowOp, Access]] = {}
        self.views: dict[ir.Value, ir.Value] = {}

    def where(self, access: Access, dims: list[ir.Value]) -> tuple[ir.Value, list[ir.Value]]:
        """The kernel's view of ``access``'s buffer and the indices of its element at ``dims``."""
        return _inside(access.view, self.views, self.anchor), [_expr(e, dims) for e in access.amap.results]

    def load(self, access: Access, dims: list[ir.Value]) -> ir.Value:
        return memref.load(*self.where(access, dims))

    def store(self, value: ir.Value, access: Access, dims: list[ir.Value]) -> None:
        memref.store(value, *self.where(access, dims))

    def row_dims(self, op: RowOp) -> list[ir.Value]:
        """The op's loop indices for this row, its reduced/column ones 0."""
        return _delinearize(self.row, op.sizes[:op.split]) + [_index(0)] * (len(op.sizes) - op.split)

    def row_value(self, op: RowOp, access: Access) -> ir.Value:
        if access.root not in self.values:
            self.values[access.root] = self.load(access, self.row_dims(op))
            self.loaded.add(access.root)
        return self.values[access.root]

    def emit(self, op: RowOp) -> None:
        with op.op.location:
            if op.kind == "rows":
                self.emit_rows(op)
            else:
                self.emit_loop(op)

    def arguments(self, op: RowOp, dims: list[ir.Value] | None) -> dict[ir.Value, ir.Value]:
        """Block argument -> value: row values from registers, elements loaded (``dims`` None:
        only the row values, outside the loop)."""
        if op.op.name in ("linalg.fill", "memref.copy"):
            return {}
        body = op.op.regions[0].blocks[0]
        mapping = {}
        for argument, access in zip(body.arguments, (*op.inputs, op.output), strict=False):
            if access is op.output and op.kind == "reduce" or not list(argument.uses):
                continue
            if pattern(op, access, self.run.rows, self.run.length) == "row":
                mapping[argument] = self.row_value(op, access)
            elif dims is not None:
                mapping[argument] = self.load(access, dims)
        return mapping

    def body(self, op: RowOp, mapping: dict[ir.Value, ir.Value], dims: list[ir.Value]) -> ir.Value:
        """Clone the op's body (the combiner of a reduction left out): the value it yields."""
        if op.op.name == "linalg.fill":
            return op.op.operands[0]
        if op.op.name == "memref.copy":
            source = op.inputs[0]
            if pattern(op, source, self.run.rows, self.run.length) == "row":
                return self.row_value(op, source)
            return self.load(source, dims)
        body = op.op.regions[0].blocks[0]
        operations = list(body.operations)
        for inner in operations[:-1]:
            if op.combiner is not None and inner.operation == op.combiner:
                continue
            if inner.name == "linalg.index":
                mapping[inner.result] = dims[ir.IntegerAttr(inner.attributes["dim"]).value]
                continue
            clone = inner.operation.clone()
            for k, operand in enumerate(inner.operands):
                if operand in mapping:
                    clone.operands[k] = mapping[operand]
            for old, new in zip(inner.results, clone.results, strict=False):
                mapping[old] = new
        if op.combiner is not None:
            out = body.arguments[len(body.arguments) - 1]
            element = next(v for v in op.combiner.operands if v != out)
            return mapping.get(element, element)
        yielded = operations[-1].operands[0]
        return mapping.get(yielded, yielded)

    def emit_rows(self, op: RowOp) -> None:
        dims = self.row_dims(op)
        value = self.body(op, self.arguments(op, dims), dims)
        self.values[op.output.root] = value
        self.stores[op.output.root] = (op, op.output)

    def emit_loop(self, op: RowOp) -> None:
        """A loop of the row's threads over its columns: a store per element, or a reduction."""
        if op.combiner is None:
            self.loop(op, None)
            return
        kind, wide, signed = _reduction(op)
        init = self.row_value(op, op.output)
        if self.partials is None:
            partial = self.loop(op, _identity(kind, wide))
        else:  # the second launch of a long reduction to a scalar: over the blocks' partials
            partials, blocks = self.partials
            loop = scf.ForOp(self.tx, _index(blocks), _index(self.lanes), [_identity(kind, wide)])
            with ir.InsertionPoint(loop.body):
                value = memref.load(partials, [loop.induction_variable])
                scf.YieldOp([_combine(op, wide, value, loop.inner_iter_args[0])])
            partial = loop.results[0]
        result = _combine(op, wide, self.across(kind, op, wide, partial), _convert(init, wide, signed))
        self.values[op.output.root] = _convert(result, op.combiner.result.type, signed)
        self.stores[op.output.root] = (op, op.output)

    def loop(self, op: RowOp, identity: ir.Value | None) -> ir.Value | None:
        """The threads' strided loop over the row: each element stored (a map), or combined into
        the thread's partial value (a reduction, which starts from ``identity``)."""
        rows = self.arguments(op, None)
        loop = scf.ForOp(self.start, self.end, self.step, [] if identity is None else [identity])
        with ir.InsertionPoint(loop.body):
            column = loop.induction_variable
            dims = _delinearize(self.row, op.sizes[:op.split]) + _delinearize(column, op.sizes[op.split:])
            value = self.body(op, {**rows, **self.arguments(op, dims)}, dims)
            if identity is None:
                self.store(value, op.output, dims)
                scf.YieldOp([])
                return None
            kind, wide, signed = _reduction(op)
            scf.YieldOp([_combine(op, wide, _convert(value, wide, signed), loop.inner_iter_args[0])])
        return loop.results[0]

    def across(self, kind: str, op: RowOp, wide: ir.Type, partial: ir.Value) -> ir.Value:
        """The threads' partial values of a row combined: gpu.all_reduce over the block, or a
        butterfly of shuffles within each row's group of lanes (every lane gets the result)."""
        if self.per_block == 1:
            return gpu.AllReduceOp(partial, op=ir.Attribute.parse(f"#gpu<all_reduce_op {kind}>"),
                                   uniform=True).result
        i32 = ir.IntegerType.get_signless(32)
        offset = self.lanes // 2
        while offset:
            shuffled = gpu.ShuffleOp(partial, arith.constant(i32, offset), arith.constant(i32, _WARP),
                                     ir.Attribute.parse("#gpu<shuffle_mode xor>")).results[0]
            partial = _combine(op, wide, shuffled, partial)
            offset //= 2
        return partial

    def finish(self) -> None:
        """Store each row value the run wrote, from the row's first thread."""
        if not self.stores:
            return
        if self.loaded & set(self.stores):  # another thread may still read the old value
            gpu.BarrierOp()
        first = arith.cmpi(arith.CmpIPredicate.eq, self.tx, _index(0))
        if self.valid is not None:
            first = arith.andi(first, self.valid)
        branch = scf.IfOp(first)
        with ir.InsertionPoint(branch.then_block):
            for root, (op, access) in self.stores.items():
                self.store(self.values[root], access, self.row_dims(op))
            scf.YieldOp([])


def _launch(blocks: int, lanes: int, per_block: int) -> tuple[gpu.LaunchOp, list[ir.Value]]:
    one = _index(1)
    launch = gpu.LaunchOp((_index(blocks), one, one), (_index(lanes), _index(per_block), one))
    block = launch.regions[0].blocks[0]
    return launch, list(block.arguments)


def _emit(run: Run) -> None:
    """The run as one launch, or (a long reduction to a scalar) two: ``split`` blocks each
    reduce a grid-strided share of the elements to a partial value, then one block reduces the
    partials and runs the rest of the run."""
    last = run.ops[-1].op
    lanes, per_block = _shape(run)
    with ir.InsertionPoint(last), last.location:
        partials = None
        if run.split:
            reduction = next(op for op in run.ops if op.reduction)
            kind, wide, _ = _reduction(reduction)
            partials = (memref.alloc(ir.MemRefType.get([run.split], wide), [], []), run.split)
            launch, arguments = _launch(run.split, SCALAR_BLOCK, 1)
            with ir.InsertionPoint(launch.regions[0].blocks[0]), reduction.op.location:
                kernel = _Kernel(run, arguments, SCALAR_BLOCK, 1)
                kernel.row = _index(0)
                kernel.start = arith.addi(arith.muli(arguments[0], _index(SCALAR_BLOCK)), arguments[3])
                kernel.step = _index(run.split * SCALAR_BLOCK)
                total = kernel.across(kind, reduction, wide, kernel.loop(reduction, _identity(kind, wide)))
                branch = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, arguments[3], _index(0)))
                with ir.InsertionPoint(branch.then_block):
                    memref.store(total, partials[0], [arguments[0]])
                    scf.YieldOp([])
                gpu.TerminatorOp()
            lanes = min(SCALAR_BLOCK, -(-run.split // _WARP) * _WARP)
        launch, arguments = _launch(-(-run.rows // per_block), lanes, per_block)
        with ir.InsertionPoint(launch.regions[0].blocks[0]):
            kernel = _Kernel(run, arguments, lanes, per_block)
            kernel.partials = partials
            for op in run.ops:
                kernel.emit(op)
            kernel.finish()
            gpu.TerminatorOp()
        if partials is not None:
            memref.dealloc(partials[0])
    for op in run.ops:
        op.op.erase()


@register_pass
@dataclass
class GpuRowKernels(ModulePass):
    """Fuse runs of row reductions and row-wise elementwise ops into one block-reduction kernel."""

    argument = "mlax-gpu-row-kernels"
    sees_mlax_ops = False
    summary = "run row reductions (and the elementwise ops around them: softmax, layernorm) as one kernel " \
              "per run, a block per row, reductions across threads (gpu.all_reduce, shuffles)"

    def run(self, module: ir.Operation) -> None:
        for op in module.regions[0].blocks[0].operations:
            if op.operation.name == "func.func":
                for block in op.regions[0].blocks:
                    for window in windows(block):
                        for run in runs(window):
                            _emit(run)
