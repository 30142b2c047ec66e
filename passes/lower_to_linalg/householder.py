"""Rules for geqrf, geqp3, householder_product, ormqr, hessenberg and tridiagonal: LAPACKE calls per
matrix.

The scheme of the other decompositions (library_calls.py): operands copied into fresh buffers,
one call per matrix of the flattened batch (an scf.for), the buffers read back as tensors. The
routines are LAPACKE's high-level interfaces (`@mlax_<t>geqrf`, `<t>geqp3`, `<t>orgqr` / `<t>ungqr`,
`<t>ormqr` / `<t>unmqr`, `<t>gehrd`, `<t>sytrd` / `<t>hetrd`, bound by mlax.backends.native.lapack) called
with LAPACK_ROW_MAJOR: LAPACKE transposes around the column-major routine and sizes the workspace
itself, so the numbers are those of jaxlib's column-major calls. As jax's lowerings, hessenberg and
tridiagonal make every result of a matrix NaN where the routine reports `info != 0`; geqrf, geqp3,
householder_product and ormqr have no such check (jaxlib's kernels return no `info` for them).
Empty matrices make no call.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import arith, func, llvm, memref

from mlax.passes.lower_to_linalg.common import Rule, generic
from mlax.passes.lower_to_linalg.library_calls import (
    ROW_MAJOR,
    address,
    as_tensor,
    bool_attr,
    declare,
    fold_batch,
    for_each_matrix,
    fresh_copy,
    int32,
    matrix_bytes,
    nan_scalar,
    per_matrix_maps,
    pointer_at,
    type_letter,
    unfold_batch,
)


def _shape(value: ir.Value) -> list[int]:
    return list(ir.RankedTensorType(value.type).shape)


def _element(value: ir.Value) -> ir.Type:
    """The element type of a tensor or buffer."""
    return ir.ShapedType(value.type).element_type


def _real(element: ir.Type) -> ir.Type:
    return ir.ComplexType(element).element_type if isinstance(element, ir.ComplexType) else element


def _alloc(shape: list[int], element: ir.Type) -> ir.Value:
    return memref.alloc(ir.MemRefType.get(shape, element), [], [])


def _bytes(buffer: ir.Value) -> int:
    """The size of one matrix (or vector) of a (count, ...) buffer."""
    t = ir.MemRefType(buffer.type)
    return matrix_bytes(ir.RankedTensorType.get(t.shape, t.element_type))


def _call_per_matrix(op: ir.Operation, routine: str, head: Sequence[ir.Value], buffers: Sequence[ir.Value],
                     leading: int, tail: Sequence[ir.Value] = (), info: ir.Value | None = None) -> None:
    """``routine(ROW_MAJOR, *head, matrix, leading, *tail buffers)`` on every matrix: the first of
    ``buffers`` is the matrix, the others (``tail``'s pointers) follow its leading dimension; the
    status goes to ``info`` (count,) if given."""
    i32, pointer = ir.IntegerType.get_signless(32), llvm.PointerType.get()
    count = ir.MemRefType(buffers[0].type).shape[0]
    symbol = declare(op, f"mlax_{type_letter(_element(buffers[0]))}{routine}",
                     [i32, *(h.type for h in head), pointer, i32, *[pointer] * (len(buffers) - 1),
                      *(t.type for t in tail)], [i32])
    bases = [(address(b), _bytes(b)) for b in buffers]

    def one(k: ir.Value) -> None:
        matrix, *others = (pointer_at(base, k, size) for base, size in bases)
        (status,) = func.CallOp([i32], symbol, [int32(ROW_MAJOR), *head, matrix, int32(leading),
                                                *others, *tail]).results
        if info is not None:
            memref.store(status, info, [k])

    if count and _bytes(buffers[0]):
        for_each_matrix(count, one)


def _checked(buffers: Sequence[ir.Value], info: ir.Value) -> list[ir.Value]:
    """The buffers as tensors, every element of a matrix whose ``info`` != 0 NaN (jax's selects)."""
    status = as_tensor(info)

    def read(buffer: ir.Value) -> ir.Value:
        t = ir.MemRefType(buffer.type)
        result = ir.RankedTensorType.get(t.shape, t.element_type)

        def clean(x: ir.Value, code: ir.Value) -> ir.Value:
            failed = arith.cmpi(arith.CmpIPredicate.ne, code, int32(0))
            return arith.select(failed, nan_scalar(t.element_type), x)

        return generic([as_tensor(buffer), status], result, clean, per_matrix_maps(t.rank))

    return [read(b) for b in buffers]


def _finish(op: ir.Operation, values: Sequence[ir.Value]) -> ir.Value:
    outs = [unfold_batch(v, r.type) for v, r in zip(values, op.results, strict=True)]
    for result, replacement in zip(op.results[1:], outs[1:], strict=True):
        result.replace_all_uses_with(replacement)
    return outs[0]


def _geqrf(op: ir.Operation) -> ir.Value:
    x = fold_batch(op.operands[0], 2)
    count, m, n = _shape(x)
    factors, taus = fresh_copy(x), _alloc([count, min(m, n)], _element(x))
    _call_per_matrix(op, "geqrf", [int32(m), int32(n)], [factors, taus], n)
    return _finish(op, [as_tensor(factors), as_tensor(taus)])


def _geqp3(op: ir.Operation) -> ir.Value:
    x, pivots = fold_batch(op.operands[0], 2), fold_batch(op.operands[1], 1)
    count, m, n = _shape(x)
    factors, pivots, taus = fresh_copy(x), fresh_copy(pivots), _alloc([count, min(m, n)], _element(x))
    _call_per_matrix(op, "geqp3", [int32(m), int32(n)], [factors, pivots, taus], n)
    return _finish(op, [as_tensor(factors), as_tensor(pivots), as_tensor(taus)])


def _householder_product(op: ir.Operation) -> ir.Value:
    a, taus = fold_batch(op.operands[0], 2), fold_batch(op.operands[1], 1)
    _, m, n = _shape(a)
    routine = "ungqr" if isinstance(_element(a), ir.ComplexType) else "orgqr"
    product = fresh_copy(a)
    sizes = [int32(m), int32(n), int32(_shape(taus)[1])]
    _call_per_matrix(op, routine, sizes, [product, fresh_copy(taus)], n)
    return _finish(op, [as_tensor(product)])


def _ormqr(op: ir.Operation) -> ir.Value:
    """``?ormqr(side, trans, m, n, k, a, lda, taus, c, ldc)``: m x n the shape of c, k the number
    of reflectors; row-major, a's leading dimension is its column count."""
    a, taus, c = fold_batch(op.operands[0], 2), fold_batch(op.operands[1], 1), fold_batch(op.operands[2], 2)
    (_, _, columns), (_, k), (_, m, n) = _shape(a), _shape(taus), _shape(c)
    if not (k and m and n):
        return op.operands[2]
    complex_input = isinstance(_element(a), ir.ComplexType)
    char = ir.IntegerType.get_signless(8)
    side = arith.constant(char, ord("L" if bool_attr(op, "left") else "R"))
    trans = arith.constant(char, ord(("C" if complex_input else "T") if bool_attr(op, "transpose") else "N"))
    product = fresh_copy(c)
    _call_per_matrix(op, "unmqr" if complex_input else "ormqr", [side, trans, int32(m), int32(n), int32(k)],
                     [fresh_copy(a), fresh_copy(taus), product], columns, tail=[int32(n)])
    return unfold_batch(as_tensor(product), op.results[0].type)


def _hessenberg(op: ir.Operation) -> ir.Value:
    x = fold_batch(op.operands[0], 2)
    count, n, _ = _shape(x)
    reduced, taus = fresh_copy(x), _alloc([count, n - 1], _element(x))
    info = _alloc([count], ir.IntegerType.get_signless(32))
    _call_per_matrix(op, "gehrd", [int32(n), int32(1), int32(n)], [reduced, taus], n, info=info)
    return _finish(op, _checked([reduced, taus], info))


def _tridiagonal(op: ir.Operation) -> ir.Value:
    x = fold_batch(op.operands[0], 2)
    count, n, _ = _shape(x)
    element = _element(x)
    complex_input = isinstance(element, ir.ComplexType)
    reduced = fresh_copy(x)
    d, e = _alloc([count, n], _real(element)), _alloc([count, n - 1], _real(element))
    taus = _alloc([count, n - 1], element)
    info = _alloc([count], ir.IntegerType.get_signless(32))
    uplo = arith.constant(ir.IntegerType.get_signless(8), ord("L" if bool_attr(op, "lower") else "U"))
    _call_per_matrix(op, "hetrd" if complex_input else "sytrd", [uplo, int32(n)], [reduced, d, e, taus], n,
                     info=info)
    return _finish(op, _checked([reduced, d, e, taus], info))


RULES: dict[str, Rule] = {"geqrf": _geqrf, "geqp3": _geqp3, "householder_product": _householder_product,
                          "ormqr": _ormqr, "hessenberg": _hessenberg, "tridiagonal": _tridiagonal}
