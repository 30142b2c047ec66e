"""`mlax-linalg-to-blas`: f32/f64 matmuls on buffers become calls to an optimized BLAS gemm.

A loop nest from linalg reaches a small fraction of what a tuned gemm does (packing, register
blocking, threads), and NumPy already ships one (OpenBLAS, ILP64). After bufferization, each
``linalg.matmul`` / ``linalg.batch_matmul`` in default form (row-major (M,K)x(K,N), identity
layouts, non-empty static dims) becomes a call to ``@mlax_sgemm`` / ``@mlax_dgemm``: the
``cblas_?gemm`` signature with 64-bit integers, computing C = A*B + C (beta = 1 keeps the
zero fill or the accumulator the op had). The runtime binds those symbols to the BLAS
(mlax.runtime.blas). A batch becomes an scf.for of gemm calls on offset pointers.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, func, llvm, memref, scf

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import nested_ops

GEMM_SYMBOLS = {"f32": "mlax_sgemm", "f64": "mlax_dgemm"}
_ROW_MAJOR, _NO_TRANS = 101, 111


_DEFAULT_MAPS = {
    "linalg.matmul": "[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
                     "affine_map<(d0, d1, d2) -> (d0, d1)>]",
    "linalg.batch_matmul": "[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, "
                           "affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]",
}


def _gemm_operands(op: ir.Operation) -> list[ir.MemRefType] | None:
    """The operand memref types if ``op`` is a default-form matmul this pass handles."""
    if op.name not in _DEFAULT_MAPS:
        return None
    if "indexing_maps" in op.attributes and str(op.attributes["indexing_maps"]) != _DEFAULT_MAPS[op.name]:
        return None
    if "cast" in op.attributes or len(op.operands) != 3:
        return None
    types = []
    for value in op.operands:
        if not isinstance(value.type, ir.MemRefType):
            return None
        t = ir.MemRefType(value.type)
        if t.affine_map != ir.AffineMap.get_identity(t.rank) or not t.has_static_shape or 0 in t.shape:
            return None
        if str(t.element_type) not in GEMM_SYMBOLS:
            return None
        types.append(t)
    if len({str(t.element_type) for t in types}) != 1:
        return None
    return types


def _declare(module: ir.Operation, symbol: str, element: ir.Type) -> None:
    body = module.regions[0].blocks[0]
    for existing in body.operations:
        if existing.operation.name == "func.func" and \
                ir.StringAttr(existing.attributes["sym_name"]).value == symbol:
            return
    i32, i64, ptr = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64), llvm.PointerType.get()
    signature = ir.FunctionType.get([i32, i32, i32, i64, i64, i64, element, ptr, i64, ptr, i64, element,
                                     ptr, i64], [])
    with ir.InsertionPoint.at_block_begin(body), ir.Location.unknown():
        func.FuncOp(symbol, signature, visibility="private")


def _i64(value: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(64), value)


def _base_address(buffer: ir.Value) -> ir.Value:
    index = memref.extract_aligned_pointer_as_index(buffer)
    return arith.index_cast(ir.IntegerType.get_signless(64), index)


def _pointer(address: ir.Value) -> ir.Value:
    return llvm.inttoptr(llvm.PointerType.get(), address)


def _rewrite(op: ir.Operation, types: list[ir.MemRefType]) -> str:
    a, b, c = types
    element = a.element_type
    symbol = GEMM_SYMBOLS[str(element)]
    m, k = a.shape[-2:]
    n = b.shape[-1]
    element_bytes = ir.FloatType(element).width // 8
    i32 = ir.IntegerType.get_signless(32)
    with op.location, ir.InsertionPoint(op):
        one = arith.constant(element, ir.FloatAttr.get(element, 1.0))
        no_trans = arith.constant(i32, _NO_TRANS)
        size_m, size_n, size_k = _i64(m), _i64(n), _i64(k)
        fixed = [arith.constant(i32, _ROW_MAJOR), no_trans, no_trans, size_m, size_n, size_k, one]
        bases = [_base_address(v) for v in op.operands]

        def call(addresses: list[ir.Value]) -> None:
            pa, pb, pc = (_pointer(x) for x in addresses)
            func.CallOp([], symbol, [*fixed, pa, size_k, pb, size_n, one, pc, size_n])

        if op.name == "linalg.matmul":
            call(bases)
        else:
            index = ir.IndexType.get()
            loop = scf.ForOp(arith.constant(index, 0), arith.constant(index, a.shape[0]),
                             arith.constant(index, 1))
            with ir.InsertionPoint(loop.body):
                batch = arith.index_cast(ir.IntegerType.get_signless(64), loop.induction_variable)
                strides = [m * k, k * n, m * n]
                offsets = [arith.muli(batch, _i64(s * element_bytes)) for s in strides]
                call([arith.addi(base, offset) for base, offset in zip(bases, offsets, strict=True)])
                scf.YieldOp([])
    op.erase()
    return symbol


@register_pass
@dataclass
class LinalgToBlas(ModulePass):
    """Replace default-form f32/f64 linalg.matmul/batch_matmul on memrefs by BLAS gemm calls."""

    argument = "mlax-linalg-to-blas"
    summary = "rewrite f32/f64 linalg.matmul and batch_matmul on buffers into calls to BLAS gemm"

    def run(self, module: ir.Operation) -> None:
        # Decide on a snapshot first: erasing a matmul also erases the ops of its body.
        candidates = [(op, types) for op in nested_ops(module) if (types := _gemm_operands(op))]
        for op, types in candidates:
            _declare(module, _rewrite(op, types), types[0].element_type)
