"""`mlax-linalg-to-blas`: f32/f64/complex contractions on buffers become calls to a BLAS gemm.

A loop nest from linalg reaches a small fraction of what a tuned gemm does (packing, register
blocking, threads), and NumPy already ships one (OpenBLAS, ILP64). After bufferization and
`linalg-generalize-named-ops`, a ``linalg.generic`` is a gemm when:

- its body is ``out + a * b`` (f32, f64, complex<f32> or complex<f64> throughout: arith.mulf/addf
  or complex.mul/add, before convert-complex-to-standard) over two inputs and one output;
- each loop dimension is a batch (in a, b and the output), M (a and output), N (b and output)
  or K (a and b, a reduction) dimension;
- on dense row-major buffers (possibly slices at an offset), a's dimensions read (batch, M, K)
  or (batch, K, M), b's (batch, K, N) or (batch, N, K), the output's (batch, M, N), with each
  group in the same order everywhere, so every group is one contiguous run of a row-major
  matrix.

Such an op (also what ``linalg.matmul``/``batch_matmul`` and reshaped N-d contractions become
after elementwise fusion) is replaced by ``@mlax_sgemm`` / ``@mlax_dgemm`` / ``@mlax_cgemm`` /
``@mlax_zgemm`` calls, declared with the ``cblas_?gemm`` signature with 64-bit integers:
row-major, a transpose flag per operand, alpha = 1 and beta = 1 (so the accumulator the op had
is kept; for complex types, pointers to module-level constants); products below
`SERIAL_BELOW` multiply-adds and bigger batches call ``@mlax_?gemm_batch``
(``cblas_?gemm_batch_strided``: on the calling thread for a count of one, else threaded over the
gemms), serial batches as an scf.for over the flattened batch on offset pointers. Where the
output was just filled with zeros and nothing reads or writes it between the fill and the gemm
(every product's init, once `mlax-private-fills` gave each its own), the fill is erased and the
gemm gets beta = 0: BLAS writes C without reading it, which saves a pass over the buffer (a
256x1024 f32 output: 1 MB written for nothing). The runtime binds the symbols to the BLAS
(mlax.backends.native.blas). Ops with empty dimensions,
other types or layouts are left for loops.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, func, llvm, memref, scf

from mlax.backends.native.blas import BATCH_SYMBOLS, GEMM_SYMBOLS
from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.symbols import declare_function
from mlax.passes.walk import blocks_outside_linalg, nested_ops

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
# Below this many multiply-adds (batch x M x N x K) a product runs on one thread. OpenBLAS's
# threads split one gemm and meet once per block of K; when a thread waits for a core (another
# process on it) every meeting waits a time slice: on this 2-core machine under load a
# 100x100x2560 gemm took 136 ms threaded (median of 30) against 0.50 ms on one thread, and quiet
# threads save at most ~0.2 ms below this size (0.54 against 0.92 ms at 1024x256x256, 2**26).
SERIAL_BELOW = 1 << 25
# The batch routines run a gemm of at most this many multiply-adds through OpenBLAS's
# small-matrix kernels, which crash when called so (NumPy 2.4's OpenBLAS 0.3.31): such gemms call
# the plain routine, which runs them on one thread anyway below 2**18 (its threshold).
_SMALL_MATRIX = 100 * 100 * 100


@dataclass
class Gemm:
    """A contraction as one gemm per batch element: C[b] (MxN) += op(A[b]) op(B[b])."""

    batch: int
    m: int
    n: int
    k: int
    transpose_a: bool
    transpose_b: bool
    element: ir.Type


def _dims(map_attr: ir.Attribute) -> list[int] | None:
    """The loop dimensions an indexing map reads, in order, if it is a projected permutation."""
    affine_map = ir.AffineMapAttr(map_attr).value
    dims = []
    for expr in affine_map.results:
        if not isinstance(expr, ir.AffineDimExpr):
            return None
        dims.append(ir.AffineDimExpr(expr).position)
    return dims


_MULTIPLY_ACCUMULATE = (["arith.mulf", "arith.addf", "linalg.yield"],
                        ["complex.mul", "complex.add", "linalg.yield"])


def _is_multiply_accumulate(op: ir.Operation) -> bool:
    block = op.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    if [o.name for o in ops] not in _MULTIPLY_ACCUMULATE:
        return False
    a, b, out = block.arguments
    mul, add, yield_ = ops
    return ({mul.operands[0], mul.operands[1]} == {a, b} and a != b
            and {add.operands[0], add.operands[1]} == {out, mul.results[0]}
            and yield_.operands[0] == add.results[0])


def _row_major(value: ir.Value) -> ir.MemRefType | None:
    """The type of a buffer laid out as a dense row-major array: the identity layout, or a
    strided one with exactly those strides and any offset (a slice of a stacked array, as
    loops over scans read)."""
    if not isinstance(value.type, ir.MemRefType):
        return None
    t = ir.MemRefType(value.type)
    if not t.has_static_shape:
        return None
    dense = [math.prod(t.shape[i + 1:]) for i in range(t.rank)]
    if t.get_strides_and_offset()[0] != dense:
        return None
    return t


def _split(dims: list[int], first: set[int], second: set[int]) -> tuple[list[int], list[int]] | None:
    """``dims`` as the ``first``-group run followed by the ``second``-group run, or None."""
    cut = len([d for d in dims if d in first])
    head, tail = dims[:cut], dims[cut:]
    return (head, tail) if set(head) == first and set(tail) == second else None


def match_gemm(op: ir.Operation) -> Gemm | None:
    """The gemm a linalg.generic on buffers computes, or None if it is not one."""
    if op.name != "linalg.generic" or len(op.operands) != 3 or not _is_multiply_accumulate(op):
        return None
    types = [_row_major(v) for v in op.operands]
    if None in types or len({str(t.element_type) for t in types}) != 1:
        return None
    element = types[0].element_type
    if str(element) not in GEMM_SYMBOLS or any(0 in t.shape for t in types):
        return None
    maps = [_dims(m) for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if None in maps:
        return None
    a, b, c = maps
    batch = [d for d in c if d in a and d in b]
    m_dims = [d for d in c if d in a and d not in b]
    n_dims = [d for d in c if d in b and d not in a]
    k_dims = [d for d in a if d in b and d not in c]
    loops = len(ir.ArrayAttr(op.attributes["iterator_types"]))
    if sorted(batch + m_dims + n_dims + k_dims) != list(range(loops)) or c != batch + m_dims + n_dims:
        return None
    if a[:len(batch)] != batch or b[:len(batch)] != batch:
        return None
    a_rest, b_rest = a[len(batch):], b[len(batch):]
    a_groups = _split(a_rest, set(m_dims), set(k_dims))
    a_transposed = _split(a_rest, set(k_dims), set(m_dims))
    b_groups = _split(b_rest, set(k_dims), set(n_dims))
    b_transposed = _split(b_rest, set(n_dims), set(k_dims))
    a_ok = (a_groups and a_groups == (m_dims, a_groups[1])) or (a_transposed and a_transposed[1] == m_dims)
    b_ok = (b_groups and b_groups[1] == n_dims) or (b_transposed and b_transposed[0] == n_dims)
    k_order_a = [d for d in a_rest if d in k_dims]
    k_order_b = [d for d in b_rest if d in k_dims]
    if not a_ok or not b_ok or k_order_a != k_order_b:
        return None
    size = {d: types[0].shape[i] for i, d in enumerate(a)} | {d: types[1].shape[i] for i, d in enumerate(b)}
    return Gemm(batch=math.prod(size[d] for d in batch), m=math.prod(size[d] for d in m_dims),
                n=math.prod(size[d] for d in n_dims), k=math.prod(size[d] for d in k_dims),
                transpose_a=not a_groups, transpose_b=not b_groups, element=element)


_RESHAPES = ("memref.expand_shape", "memref.collapse_shape")
_VIEWS = (*_RESHAPES, "memref.subview", "memref.cast", "memref.reinterpret_cast")
_CALLS = ("func.call", "llvm.call")


def _is_zero_fill(op: ir.Operation) -> bool:
    """A linalg.generic (a generalized linalg.fill) writing the float constant 0 everywhere."""
    if op.name != "linalg.generic" or len(op.operands) != 2:
        return False
    value = op.operands[0]
    block = op.regions[0].blocks[0]
    ops = [o.operation for o in block.operations]
    if len(ops) != 1 or ops[0].operands[0] != block.arguments[0]:
        return False
    if not isinstance(value, ir.OpResult) or value.owner.name != "arith.constant":
        return False
    constant = value.owner.attributes["value"]
    return isinstance(constant, ir.FloatAttr) and ir.FloatAttr(constant).value == 0.0


def _source(buffer: ir.Value, through: tuple[str, ...]) -> ir.Value:
    """The buffer that ``buffer`` is a view of, through the view ops ``through``."""
    while isinstance(buffer, ir.OpResult) and buffer.owner.name in through:
        buffer = buffer.owner.operands[0]
    return buffer


def _aliases(root: ir.Value) -> set[ir.Value]:
    """``root`` and every view derived from it."""
    found, pending = {root}, [root]
    while pending:
        for use in pending.pop().uses:
            owner = use.owner.operation
            if owner.name in _VIEWS and owner.results[0] not in found:
                found.add(owner.results[0])
                pending.append(owner.results[0])
    return found


def _used_values(op: ir.Operation) -> set[ir.Value]:
    """The values ``op`` reads, its regions included (a generic's body may load a buffer)."""
    return set(op.operands) | {v for nested in nested_ops(op) for v in nested.operands}


def zero_fills(block: ir.Block, gemms: set[ir.Operation]) -> dict[ir.Operation, ir.Operation]:
    """gemm -> the zero fill of its output that beta = 0 replaces: the last op of ``block``
    before the gemm that reads or writes the output's allocation (or any view of it; taking a
    view is neither), if it fills the output itself or a reshape of it (the same elements) and
    no call comes between them."""
    ops = [op.operation for op in block.operations]
    if not gemms.intersection(ops):
        return {}
    used = [_used_values(op) for op in ops]
    found = {}
    for position, op in enumerate(ops):
        if op not in gemms:
            continue
        aliases = _aliases(_source(op.operands[2], _VIEWS))
        for earlier in reversed(range(position)):
            if ops[earlier].name in _CALLS:  # may write the output through an escaped pointer
                break
            if used[earlier] & aliases and ops[earlier].name not in _VIEWS:
                fill = ops[earlier]
                if _is_zero_fill(fill) and \
                        _source(fill.operands[1], _RESHAPES) == _source(op.operands[2], _RESHAPES):
                    found[op] = fill
                break
    return found


def _gemm_type(element: ir.Type, batched: bool) -> ir.FunctionType:
    """cblas_?gemm with 64-bit integers: order, trans a, trans b, M, N, K, alpha, A, lda, B, ldb,
    beta, C, ldc (cgemm/zgemm take alpha and beta by pointer); cblas_?gemm_batch_strided adds each
    matrix's stride after its leading dimension, and the count."""
    i32, i64, ptr = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(64), llvm.PointerType.get()
    scale = ptr if isinstance(element, ir.ComplexType) else element
    strides = [i64] if batched else []
    return ir.FunctionType.get([i32, i32, i32, i64, i64, i64, scale, ptr, i64, *strides, ptr, i64, *strides,
                                scale, ptr, i64, *strides, *strides], [])


def _element_bytes(element: ir.Type) -> int:
    if isinstance(element, ir.ComplexType):
        return 2 * ir.FloatType(ir.ComplexType(element).element_type).width // 8
    return ir.FloatType(element).width // 8


def _one(module: ir.Operation, element: ir.Type) -> ir.Value:
    """1 as gemm's alpha and beta: a float constant, or for complex types the address of a
    module-level constant 1 + 0i (a `memref.global`, added once)."""
    if not isinstance(element, ir.ComplexType):
        return arith.constant(element, ir.FloatAttr.get(element, 1.0))
    part = ir.ComplexType(element).element_type
    buffer = ir.MemRefType.get([2], part)
    name = f"mlax_complex_one_{part}"
    if name not in ir.SymbolTable(module):
        with ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]), ir.Location.unknown():
            memref.GlobalOp(name, ir.TypeAttr.get(buffer), sym_visibility="private", constant=True,
                            initial_value=ir.Attribute.parse(f"dense<[1.0, 0.0]> : tensor<2x{part}>"))
    return _pointer(_base_address(memref.get_global(buffer, name), _element_bytes(part)))


def _i64(value: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(64), value)


def _base_address(buffer: ir.Value, element_bytes: int) -> ir.Value:
    """The address of element 0 of ``buffer`` (its allocation's aligned pointer plus its offset)."""
    index = memref.extract_aligned_pointer_as_index(buffer)
    if ir.MemRefType(buffer.type).get_strides_and_offset()[1] != 0:
        offset = memref.ExtractStridedMetadataOp(buffer).results[1]
        index = arith.addi(index, arith.muli(offset, arith.constant(ir.IndexType.get(), element_bytes)))
    return arith.index_cast(ir.IntegerType.get_signless(64), index)


def _pointer(address: ir.Value) -> ir.Value:
    return llvm.inttoptr(llvm.PointerType.get(), address)


def _rewrite(module: ir.Operation, op: ir.Operation, gemm: Gemm, zero_fill: ir.Operation | None) -> str:
    """Replace ``op`` by gemm calls: one threaded gemm, one batch call threaded over its gemms,
    or, below `SERIAL_BELOW`, batch calls of one gemm each (on this thread; small gemms call
    the plain routine); with ``zero_fill`` (a real type's), erase it and pass beta = 0. Returns
    the callee."""
    element_bytes = _element_bytes(gemm.element)
    i32 = ir.IntegerType.get_signless(32)
    size = gemm.m * gemm.n * gemm.k
    serial = gemm.batch * size < SERIAL_BELOW
    batched = size > _SMALL_MATRIX and (serial or gemm.batch > 1)
    symbol = (BATCH_SYMBOLS if batched else GEMM_SYMBOLS)[str(gemm.element)]
    with op.location, ir.InsertionPoint(op):
        one = _one(module, gemm.element)
        beta = one if zero_fill is None else zero_fill.operands[0]
        size_m, size_n, size_k = _i64(gemm.m), _i64(gemm.n), _i64(gemm.k)
        flags = {flag: arith.constant(i32, flag) for flag in {_TRANS if t else _NO_TRANS
                                                              for t in (gemm.transpose_a, gemm.transpose_b)}}
        trans_a = flags[_TRANS if gemm.transpose_a else _NO_TRANS]
        trans_b = flags[_TRANS if gemm.transpose_b else _NO_TRANS]
        lda = size_m if gemm.transpose_a else size_k
        ldb = size_k if gemm.transpose_b else size_n
        fixed = [arith.constant(i32, _ROW_MAJOR), trans_a, trans_b, size_m, size_n, size_k, one]
        bases = [_base_address(v, element_bytes) for v in op.operands]
        strides = [gemm.m * gemm.k, gemm.k * gemm.n, gemm.m * gemm.n]

        def call(addresses: list[ir.Value], count: int) -> None:
            pa, pb, pc = (_pointer(x) for x in addresses)
            if not batched:
                func.CallOp([], symbol, [*fixed, pa, lda, pb, ldb, beta, pc, size_n])
                return
            sa, sb, sc = (_i64(s) for s in strides)
            func.CallOp([], symbol, [*fixed, pa, lda, sa, pb, ldb, sb, beta, pc, size_n, sc, _i64(count)])

        if gemm.batch == 1 or (batched and not serial):
            call(bases, gemm.batch)
        else:
            index = ir.IndexType.get()
            loop = scf.ForOp(arith.constant(index, 0), arith.constant(index, gemm.batch),
                             arith.constant(index, 1))
            with ir.InsertionPoint(loop.body):
                batch = arith.index_cast(ir.IntegerType.get_signless(64), loop.induction_variable)
                offsets = [arith.muli(batch, _i64(s * element_bytes)) for s in strides]
                call([arith.addi(base, offset) for base, offset in zip(bases, offsets, strict=True)], 1)
                scf.YieldOp([])
    op.erase()
    if zero_fill is not None:
        zero_fill.erase()
    return symbol


@register_pass
@dataclass
class LinalgToBlas(ModulePass):
    """Replace f32/f64/complex gemm-shaped linalg.generic ops on row-major buffers by BLAS gemm calls."""

    argument = "mlax-linalg-to-blas"
    sees_mlax_ops = False
    summary = "rewrite f32/f64/complex contractions (linalg.generic on buffers) into calls to BLAS gemm"

    def run(self, module: ir.Operation) -> None:
        # Decide on a snapshot first: erasing an op also erases the ops of its body.
        candidates = {op: gemm for op in nested_ops(module) if (gemm := match_gemm(op))}
        fills = {gemm: fill for block in blocks_outside_linalg(module)
                 for gemm, fill in zero_fills(block, set(candidates)).items()}
        for op, gemm in candidates.items():
            symbol = _rewrite(module, op, gemm, fills.get(op))
            declare_function(module, symbol, _gemm_type(gemm.element, symbol in BATCH_SYMBOLS.values()))
