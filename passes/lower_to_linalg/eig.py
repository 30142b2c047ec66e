"""Rule for eig: LAPACKE `?geev` per matrix, then its real storage unpacked into complex values.

As the other decompositions (decompositions.py: the operand copied into a fresh buffer, one call
per matrix of the flattened batch in an scf.for), with LAPACK_ROW_MAJOR (LAPACKE transposes). For
a real matrix `?geev` returns the eigenvalues as real and imaginary parts (`wr`, `wi`) and the
eigenvectors as real columns, a conjugate pair j, j+1 (wi[j] > 0) stored as the real part in column
j and the imaginary part in column j+1; one linalg.generic per result rebuilds the complex values
(tensor.extract at the partner column) and makes a matrix NaN where `info != 0`, as jaxlib does.
A complex matrix calls `?geev` of its type, whose results are complex already (only the NaN
clean-up follows). Each eigenvector set is computed only if the op asks for it (jobvl/jobvr 'N'
otherwise, with a 1x1 dummy buffer).
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import arith, func, llvm, memref, tensor
from mlir.dialects import complex as cplx

from mlax.dialect.opviews import linalg
from mlax.passes.lower_to_linalg.common import Rule, generic, scalar
from mlax.passes.lower_to_linalg.decompositions import (
    _ROW_MAJOR,
    _address,
    _as_tensor,
    _at,
    _bytes,
    _copy,
    _declare,
    _flag,
    _fold,
    _for_each,
    _i32,
    _per_matrix_maps,
    _prefix,
    _unfold,
)


def _nan_unless_ok(value: ir.Value, status: ir.Value) -> ir.Value:
    failed = arith.cmpi(arith.CmpIPredicate.ne, status, _i32(0))
    return arith.select(failed, scalar(value.type, complex(math.nan, math.nan)), value)


def _unpack(packed: ir.Value, wi: ir.Value, info: ir.Value, result_type: ir.Type) -> ir.Value:
    """The complex eigenvectors (count, n, n) of ``packed`` (geev's real columns)."""
    element = ir.RankedTensorType(result_type).element_type
    index = ir.IndexType.get()
    one = arith.constant(index, 1)

    def body(status: ir.Value) -> ir.Value:
        b, r, c = (linalg.IndexOp(d).result for d in range(3))
        imag = tensor.extract(wi, [b, c])
        zero = scalar(imag.type, 0.0)
        first = arith.cmpf(arith.CmpFPredicate.OGT, imag, zero)  # v_c = P[:, c] + i P[:, c+1]
        second = arith.cmpf(arith.CmpFPredicate.OLT, imag, zero)  # v_c = P[:, c-1] - i P[:, c]
        real_col = arith.select(second, arith.subi(c, one), c)
        imag_col = arith.select(first, arith.addi(c, one), c)
        re = tensor.extract(packed, [b, r, real_col])
        im = tensor.extract(packed, [b, r, imag_col])
        im = arith.select(first, im, arith.select(second, arith.negf(im), zero))
        return _nan_unless_ok(cplx.create_(element, re, im), status)

    return generic([info], result_type, body, [_per_matrix_maps(3)[1]])


def _eig(op: ir.Operation) -> ir.Value:
    (operand,) = op.operands
    x = _fold(operand, 2)
    count, n, _ = ir.RankedTensorType(x.type).shape
    operand_element = ir.RankedTensorType(x.type).element_type
    real_input = not isinstance(operand_element, ir.ComplexType)
    element = ir.RankedTensorType(op.results[0].type).element_type
    left, right = _flag(op, "compute_left_eigenvectors"), _flag(op, "compute_right_eigenvectors")
    i32, i8, pointer = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8), llvm.PointerType.get()
    values_count = 2 if real_input else 1  # wr and wi, or w
    symbol = _declare(op, f"mlax_{_prefix(operand_element)}geev",
                      [i32, i8, i8, i32, pointer, i32, *[pointer] * values_count, pointer, i32, pointer, i32],
                      [i32])

    def buffer(shape: list[int]) -> ir.Value:
        return memref.alloc(ir.MemRefType.get(shape, operand_element), [], [])

    matrix = _copy(x)
    values = [buffer([count, n]) for _ in range(values_count)]
    vl, vr = (buffer([count, n, n] if wanted else [1, 1, 1]) for wanted in (left, right))
    info = memref.alloc(ir.MemRefType.get([count], i32), [], [])
    matrix_bytes = _bytes(x.type)
    vector_bytes = matrix_bytes // n if n else 0
    vector_strides = (matrix_bytes if wanted else 0 for wanted in (left, right))
    strides = [matrix_bytes, *[vector_bytes] * values_count, *vector_strides]
    bases = [_address(b) for b in (matrix, *values, vl, vr)]
    jobs = [arith.constant(i8, ord("V" if wanted else "N")) for wanted in (left, right)]

    def one(k: ir.Value) -> None:
        a, *w, l_, r_ = (_at(base, k, stride) for base, stride in zip(bases, strides, strict=True))
        (status,) = func.CallOp([i32], symbol, [
            _i32(_ROW_MAJOR), *jobs, _i32(n), a, _i32(n), *w, l_, _i32(n if left else 1),
            r_, _i32(n if right else 1)]).results
        memref.store(status, info, [k])

    if count and n:
        _for_each(count, one)
    info_tensor = _as_tensor(info)
    same, per_matrix = _per_matrix_maps(2)
    values_type = ir.RankedTensorType.get([count, n], element)
    vectors_type = ir.RankedTensorType.get([count, n, n], element)
    wanted = [b for b, flag in ((vl, left), (vr, right)) if flag]
    if real_input:
        wi = _as_tensor(values[1])
        eigenvalues = generic([_as_tensor(values[0]), wi, info_tensor], values_type,
                              lambda re, im, status: _nan_unless_ok(cplx.create_(element, re, im), status),
                              [same, same, per_matrix])
        vectors = [_unpack(_as_tensor(b), wi, info_tensor, vectors_type) for b in wanted]
    else:
        eigenvalues = generic([_as_tensor(values[0]), info_tensor], values_type, _nan_unless_ok,
                              [same, per_matrix])
        vectors = [generic([_as_tensor(b), info_tensor], vectors_type, _nan_unless_ok, _per_matrix_maps(3))
                   for b in wanted]
    outs = [_unfold(v, r.type) for v, r in zip([eigenvalues, *vectors], op.results, strict=True)]
    for result, replacement in zip(op.results[1:], outs[1:], strict=True):
        result.replace_all_uses_with(replacement)
    return outs[0]


RULES: dict[str, Rule] = {"eig": _eig}
