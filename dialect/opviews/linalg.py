"""linalg's op classes, and the builders mlax uses, without upstream's OpDSL library.

``mlir.dialects.linalg`` defines ``fill`` through OpDSL and ``matmul``, ``batch_matmul`` and
``transpose`` as wrappers; these builders make the same ops the same way (the named op, its
body filled in by ``fill_builtin_region``), and return what upstream's return.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir._mlir_libs._mlirDialectsLinalg import fill_builtin_region
from mlir.dialects._linalg_enum_gen import *  # noqa: F403  (registers the enum attribute builders)
from mlir.dialects._linalg_ops_gen import *  # noqa: F403  (registers the op classes)
from mlir.dialects._linalg_ops_gen import BatchMatmulOp, FillOp, MatmulOp, TransposeOp
from mlir.dialects._ods_common import get_op_result_or_op_results, get_op_result_or_value

Operand = ir.Value | ir.Operation | ir.OpView


def _init(outs: Sequence[Operand]) -> tuple[ir.Value, list[ir.Type]]:
    if len(outs) != 1:
        raise ValueError(f"{outs=} must have length 1.")
    init = get_op_result_or_value(outs[0])
    return init, [init.type] if isinstance(init.type, ir.RankedTensorType) else []


def fill(value: Operand, *, outs: Sequence[Operand]) -> ir.Value | ir.OpResultList | ir.OpView:
    """``linalg.fill ins(value) outs(init)``: the filled tensor (or the op, on buffers)."""
    init, results = _init(outs)
    op = FillOp(results, [get_op_result_or_value(value)], [init])
    fill_builtin_region(op.operation)
    return get_op_result_or_op_results(op)


def _matmul_like(op_type: type, ins: Sequence[Operand], outs: Sequence[Operand],
                 indexing_maps: Sequence[ir.AffineMap] | None) -> ir.OpView:
    init, results = _init(outs)
    maps = None if indexing_maps is None else \
        ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in indexing_maps])
    op = op_type(result_tensors=results, inputs=[get_op_result_or_value(i) for i in ins], outputs=[init],
                 indexing_maps=maps)
    fill_builtin_region(op.operation)
    return op


def matmul(*ins: Operand, outs: Sequence[Operand],
           indexing_maps: Sequence[ir.AffineMap] | None = None) -> ir.Value | ir.OpResultList | ir.OpView:
    return get_op_result_or_op_results(_matmul_like(MatmulOp, ins, outs, indexing_maps))


def batch_matmul(*ins: Operand, outs: Sequence[Operand], indexing_maps: Sequence[ir.AffineMap] | None = None
                 ) -> ir.Value | ir.OpResultList | ir.OpView:
    return get_op_result_or_op_results(_matmul_like(BatchMatmulOp, ins, outs, indexing_maps))


def transpose(input: Operand, *, outs: Sequence[Operand], permutation: Sequence[int]) -> ir.OpView:
    """The ``linalg.transpose`` op (upstream's wrapper returns the op too)."""
    init, results = _init(outs)
    op = TransposeOp(result=results, input=get_op_result_or_value(input), init=init, permutation=permutation)
    fill_builtin_region(op.operation)
    return op
