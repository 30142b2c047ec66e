"""Rules for qr, eigh and svd: calls to LAPACK (`?geqrf` or `?geqp3` + `?orgqr`, `?syevd`, `?gesdd`; for
complex matrices `?ungqr` and `?heevd`, whose eigenvalues and singular values are real).

The scheme of decompositions.py: operands copied into fresh buffers, one call per matrix of
the flattened batch, the buffers returned as tensors. The routines are LAPACKE's high-level C
interfaces of SciPy's OpenBLAS (`@mlax_sgeqrf` ... bound by mlax.backends.native.lapack), called with
LAPACK_ROW_MAJOR: LAPACKE transposes to and from column-major around the Fortran routine, so
the numbers are those of jax's column-major calls, and it sizes and allocates the workspaces
itself (a workspace query, then the call). Character flags (jobz, uplo) are i8 by value.

qr follows jax's `_qr_lowering`: geqrf (geqp3 with `pivoting`, from zero pivots, which are free
to move; its 1-based pivots made 0-based) leaves R above the diagonal and the reflectors below;
the reflectors (padded with zero columns to m x m for full tall matrices, the leading m x m
block of a wide one) go to orgqr, which expands them into Q in place; R is the upper triangle
(the leading n x n block for reduced tall matrices). eigh and svd make a matrix's results NaN
where the routine reports `info != 0`, as jax's lowering. Empty matrices make no calls: qr
gives the identity's columns, a zero R (and zero pivots), svd jax's `_empty_svd`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from mlir import ir
from mlir.dialects import arith, func, llvm, memref, tensor

from mlax.dialect.opviews import linalg
from mlax.passes.lower_to_linalg.common import Rule, generic, scalar
from mlax.passes.lower_to_linalg.library_calls import (
    ROW_MAJOR,
    address,
    as_tensor,
    bool_attr,
    declare,
    element_bytes,
    fold_batch,
    for_each_matrix,
    fresh_copy,
    int32,
    matrix_bytes,
    nan_scalar,
    per_matrix_maps,
    pointer_at,
    status_if_finite,
    type_letter,
    unfold_batch,
)

Keep = Callable[[ir.Value, ir.Value], ir.Value]


def _block(source: ir.Value, shape: list[int], keep: Keep | None = None) -> ir.Value:
    """A (count, rows, cols) tensor: ``source`` (count, R, C) where (i, j) is inside it and
    ``keep(i, j)`` holds, else zero (the source read at clamped indices, always in bounds)."""
    t = ir.RankedTensorType(source.type)
    element = t.element_type
    index = ir.IndexType.get()

    def body() -> ir.Value:
        b, i, j = (linalg.IndexOp(d).result for d in range(3))
        limits = [arith.constant(index, n - 1) for n in t.shape[1:]]
        value = tensor.extract(source, [b, arith.minsi(i, limits[0]), arith.minsi(j, limits[1])])
        inside = arith.andi(arith.cmpi(arith.CmpIPredicate.ule, i, limits[0]),
                            arith.cmpi(arith.CmpIPredicate.ule, j, limits[1]))
        if keep is not None:
            inside = arith.andi(inside, keep(i, j))
        return arith.select(inside, value, scalar(element, 0.0))

    return generic([], ir.RankedTensorType.get(shape, element), body)


def _identity(shape: list[int], element: ir.Type) -> ir.Value:
    """Ones where row == column on every (count, rows, cols) matrix, zeros elsewhere."""
    def body() -> ir.Value:
        same = arith.cmpi(arith.CmpIPredicate.eq, linalg.IndexOp(1).result, linalg.IndexOp(2).result)
        return arith.select(same, scalar(element, 1.0), scalar(element, 0.0))

    return generic([], ir.RankedTensorType.get(shape, element), body)


def _vectors(count: int, size: int, element: ir.Type) -> ir.Value:
    """A (count, size) buffer: one vector per matrix (taus, eigenvalues, singular values)."""
    return memref.alloc(ir.MemRefType.get([count, size], element), [], [])


def _nan_where_failed(value: ir.Value, info: ir.Value) -> ir.Value:
    """``value`` (count, ...) with every element of a matrix whose ``info`` (count,) != 0 NaN
    (``info`` a tensor: one `to_tensor` per buffer, as `restrict` requires)."""
    t = ir.RankedTensorType(value.type)

    def clean(x: ir.Value, status: ir.Value) -> ir.Value:
        failed = arith.cmpi(arith.CmpIPredicate.ne, status, int32(0))
        return arith.select(failed, nan_scalar(t.element_type), x)

    return generic([value, info], t, clean, per_matrix_maps(t.rank))


def _zeros(shape: list[int], element: ir.Type) -> ir.Value:
    return generic([], ir.RankedTensorType.get(shape, element), lambda: scalar(element, 0))


def _factor(op: ir.Operation, factors: ir.Value, taus: ir.Value, pivoting: bool) -> ir.Value | None:
    """`?geqrf` on every matrix of the (count, m, n) buffer ``factors`` (taus into ``taus``), or
    `?geqp3` from free (zero) pivots when ``pivoting``, which returns the pivots, made 0-based."""
    count, m, n = ir.MemRefType(factors.type).shape
    element = ir.MemRefType(factors.type).element_type
    i32, pointer = ir.IntegerType.get_signless(32), llvm.PointerType.get()
    # (buffer, bytes per matrix) of the arguments after the matrix and its leading dimension
    vectors = [(taus, min(m, n) * element_bytes(element))]
    if pivoting:
        pivots = fresh_copy(_zeros([count, n], i32))
        vectors.insert(0, (pivots, n * element_bytes(i32)))
    symbol = declare(op, f"mlax_{type_letter(element)}{'geqp3' if pivoting else 'geqrf'}",
                     [i32, i32, i32, pointer, i32, *[pointer] * len(vectors)], [i32])
    bases = [(address(b), size) for b, size in [(factors, m * n * element_bytes(element)), *vectors]]

    def one(matrix: ir.Value) -> None:
        a, *rest = (pointer_at(base, matrix, size) for base, size in bases)
        func.CallOp([i32], symbol, [int32(ROW_MAJOR), int32(m), int32(n), a, int32(n), *rest])

    for_each_matrix(count, one)
    if not pivoting:
        return None
    return generic([as_tensor(pivots)], ir.RankedTensorType.get([count, n], i32),
                   lambda p: arith.subi(p, int32(1)))


def _qr(op: ir.Operation) -> ir.Value:
    (operand,) = op.operands
    q_type, r_type = (r.type for r in op.results[:2])
    pivoting = bool_attr(op, "pivoting")
    x = fold_batch(operand, 2)
    count, m, n = ir.RankedTensorType(x.type).shape
    element = ir.RankedTensorType(x.type).element_type
    kq, k = ir.RankedTensorType(q_type).shape[-1], min(m, n)
    kr = ir.RankedTensorType(r_type).shape[-2]
    i32, pointer = ir.IntegerType.get_signless(32), llvm.PointerType.get()
    if 0 in (m, n, count):
        pivots = _zeros([count, n], i32) if pivoting else None
        outs = [_identity([count, m, kq], element), _zeros([count, kr, n], element)]
    else:
        expander = "ungqr" if isinstance(element, ir.ComplexType) else "orgqr"
        orgqr = declare(op, f"mlax_{type_letter(element)}{expander}",
                        [i32, i32, i32, i32, pointer, i32, pointer], [i32])
        taus = _vectors(count, k, element)
        factors = fresh_copy(x)
        pivots = _factor(op, factors, taus, pivoting)
        packed = as_tensor(factors)
        reflectors = fresh_copy(_block(packed, [count, m, kq]))
        q_base, q_bytes = address(reflectors), m * kq * element_bytes(element)
        taus_base, tau_bytes = address(taus), k * element_bytes(element)

        def expand(matrix: ir.Value) -> None:
            func.CallOp([i32], orgqr, [int32(ROW_MAJOR), int32(m), int32(kq), int32(k),
                                       pointer_at(q_base, matrix, q_bytes), int32(kq),
                                       pointer_at(taus_base, matrix, tau_bytes)])

        for_each_matrix(count, expand)
        upper = _block(packed, [count, kr, n], lambda i, j: arith.cmpi(arith.CmpIPredicate.ule, i, j))
        outs = [as_tensor(reflectors), upper]
    if pivoting:
        outs.append(pivots)
    outs = [unfold_batch(v, r.type) for v, r in zip(outs, op.results, strict=True)]
    for result, replacement in zip(op.results[1:], outs[1:], strict=True):
        result.replace_all_uses_with(replacement)
    return outs[0]


def _eigh(op: ir.Operation) -> ir.Value:
    (operand,) = op.operands
    v_type, w_type = (r.type for r in op.results)
    if 0 in ir.RankedTensorType(v_type).shape:
        op.results[1].replace_all_uses_with(tensor.empty(ir.RankedTensorType(w_type).shape,
                                                         ir.RankedTensorType(w_type).element_type))
        return operand
    x = fold_batch(operand, 2)
    count, n, _ = ir.RankedTensorType(x.type).shape
    element = ir.RankedTensorType(x.type).element_type
    real = ir.RankedTensorType(w_type).element_type
    i32, i8, pointer = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8), llvm.PointerType.get()
    routine = "heevd" if isinstance(element, ir.ComplexType) else "syevd"
    signature = [i32, i8, i8, i32, pointer, i32, pointer]
    syevd = declare(op, f"mlax_{type_letter(element)}{routine}", signature, [i32])
    values, info = _vectors(count, n, real), memref.alloc(ir.MemRefType.get([count], i32), [], [])
    vectors = fresh_copy(x)
    base, values_base = address(vectors), address(values)
    uplo = "L" if bool_attr(op, "lower") else "U"
    flags = [int32(ROW_MAJOR), arith.constant(i8, ord("V")), arith.constant(i8, ord(uplo)), int32(n)]

    def one(matrix: ir.Value) -> None:
        matrix_at = pointer_at(base, matrix, matrix_bytes(x.type))
        values_at = pointer_at(values_base, matrix, n * element_bytes(real))
        (status,) = func.CallOp([i32], syevd, [*flags, matrix_at, int32(n), values_at]).results
        memref.store(status, info, [matrix])

    for_each_matrix(count, one)
    status = as_tensor(info)
    op.results[1].replace_all_uses_with(unfold_batch(_nan_where_failed(as_tensor(values), status), w_type))
    return unfold_batch(_nan_where_failed(as_tensor(vectors), status), v_type)


def _svd(op: ir.Operation) -> ir.Value:
    (operand,) = op.operands
    s_type, u_type, vh_type = (r.type for r in op.results)
    full, vectors = bool_attr(op, "full_matrices"), bool_attr(op, "compute_uv")
    x = fold_batch(operand, 2)
    count, m, n = ir.RankedTensorType(x.type).shape
    element = ir.RankedTensorType(x.type).element_type
    k = min(m, n)
    u_shape = [count, *ir.RankedTensorType(u_type).shape[-2:]]
    vh_shape = [count, *ir.RankedTensorType(vh_type).shape[-2:]]
    if 0 in (m, n, count):
        s = tensor.empty([count, k], ir.RankedTensorType(s_type).element_type)
        u, vh = ((_identity(shape, element) if full and vectors else tensor.empty(shape, element))
                 for shape in (u_shape, vh_shape))
    else:
        s, u, vh = _gesdd(op, x, u_shape, vh_shape, "N" if not vectors else "A" if full else "S")
    op.results[1].replace_all_uses_with(unfold_batch(u, u_type))
    op.results[2].replace_all_uses_with(unfold_batch(vh, vh_type))
    return unfold_batch(s, s_type)


def _gesdd(op: ir.Operation, x: ir.Value, u_shape: list[int], vh_shape: list[int],
           jobz: str) -> tuple[ir.Value, ir.Value, ir.Value]:
    """s, u and vh of every matrix of ``x`` (count, m, n) from `?gesdd` (u, vh empty for jobz N)."""
    count, m, n = ir.RankedTensorType(x.type).shape
    element = ir.RankedTensorType(x.type).element_type
    real = element.element_type if isinstance(element, ir.ComplexType) else element
    k = min(m, n)
    i32, i8, pointer = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8), llvm.PointerType.get()
    gesdd = declare(op, f"mlax_{type_letter(element)}gesdd",
                     [i32, i8, i32, i32, pointer, i32, pointer, pointer, i32, pointer, i32], [i32])
    values, info = _vectors(count, k, real), memref.alloc(ir.MemRefType.get([count], i32), [], [])
    # jobz N touches neither u nor vh: both point at a one-element scratch buffer then.
    shapes = (u_shape, vh_shape) if jobz != "N" else ([1, 1, 1], [1, 1, 1])
    u, vh = (memref.alloc(ir.MemRefType.get(shape, element), [], []) for shape in shapes)
    work = fresh_copy(x)
    bases = [address(b) for b in (work, values, u, vh)]
    sizes = [matrix_bytes(x.type), k * element_bytes(real)] + [
        0 if jobz == "N" else math.prod(shape[1:]) * element_bytes(element) for shape in shapes]
    lead_u, lead_vh = (max(1, u_shape[-1]), n) if jobz != "N" else (1, n)
    flags = [int32(ROW_MAJOR), arith.constant(i8, ord(jobz)), int32(m), int32(n)]

    def one(matrix: ir.Value) -> None:
        a, s, u_at, vh_at = (pointer_at(base, matrix, size) for base, size in zip(bases, sizes, strict=True))
        status = status_if_finite(op, element, m, n, a, lambda: func.CallOp(
            [i32], gesdd, [*flags, a, int32(n), s, u_at, int32(lead_u), vh_at, int32(lead_vh)]).result)
        memref.store(status, info, [matrix])

    for_each_matrix(count, one)
    status = as_tensor(info)
    s = _nan_where_failed(as_tensor(values), status)
    if jobz == "N":
        return s, tensor.empty(u_shape, element), tensor.empty(vh_shape, element)
    return s, _nan_where_failed(as_tensor(u), status), _nan_where_failed(as_tensor(vh), status)


RULES: dict[str, Rule] = {"qr": _qr, "eigh": _eigh, "svd": _svd}
