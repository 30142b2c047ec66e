"""Rules for ops that make or move values: constant, iota, broadcast_in_dim, stop_gradient and
sharding_constraint (the identity), optimization_barrier (an opaque identity call)."""

from __future__ import annotations

import numpy as np
from mlir import ir
from mlir.dialects import arith, func
from mlir.dialects import complex as cplx

from mlax.dialect.attrs import dense_attribute, dense_elements, dense_to_numpy
from mlax.dialect.opviews import linalg
from mlax.passes.lower_to_linalg.common import Rule, generic, is_complex, is_float, scalar, width
from mlax.passes.symbols import define_function

BARRIER_PREFIX = "__mlax_optimization_barrier"


def _constant(op: ir.Operation) -> ir.Value:
    """arith.constant; a complex constant is built from its parts (arith.constant does not take
    complex elements): a splat from one complex.constant, the others from two real tensors."""
    attr = dense_attribute(op, "value")
    result = ir.RankedTensorType(op.results[0].type)
    if not is_complex(result.element_type):
        return arith.constant(result, attr)
    if attr.is_splat:
        real, imag = (ir.FloatAttr(p).value for p in ir.ArrayAttr(attr.get_splat_value()))
        return generic([], result, lambda: scalar(result.element_type, complex(real, imag)))
    values = dense_to_numpy(attr)
    part_type = ir.RankedTensorType.get(result.shape, ir.ComplexType(result.element_type).element_type)
    real, imag = (arith.constant(part_type, dense_elements(np.ascontiguousarray(p)))
                  for p in (values.real, values.imag))
    return generic([real, imag], result, lambda re, im: cplx.create_(result.element_type, re, im))


def _iota(op: ir.Operation) -> ir.Value:
    """Count in i64 (from linalg.index) and convert: narrow integers wrap, floats round once,
    complex values get the float count and imaginary part 0."""
    dimension = ir.IntegerAttr(op.attributes["dimension"]).value
    t = ir.RankedTensorType(op.results[0].type).element_type

    def body() -> ir.Value:
        i64 = ir.IntegerType.get_signless(64)
        count = arith.index_cast(i64, linalg.IndexOp(dimension).result)
        if is_complex(t):
            part = ir.ComplexType(t).element_type
            return cplx.create_(t, arith.sitofp(part, count), scalar(part, 0.0))
        if is_float(t):
            return arith.sitofp(t, count)
        return count if width(t) == 64 else arith.trunci(t, count)

    return generic([], op.results[0].type, body)


def _broadcast_in_dim(op: ir.Operation) -> ir.Value:
    """Operand dimension i reads result dimension broadcast_dimensions[i], or index 0 where the
    operand has size 1 and the result does not (the size-1 dimension is replicated)."""
    (operand,) = op.operands
    result = ir.RankedTensorType(op.results[0].type)
    dims = ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"])
    in_shape = ir.RankedTensorType(operand.type).shape
    exprs = [ir.AffineConstantExpr.get(0) if in_shape[i] == 1 and result.shape[d] != 1
             else ir.AffineDimExpr.get(d) for i, d in enumerate(dims)]
    return generic([operand], result, lambda x: x, maps=[ir.AffineMap.get(result.rank, 0, exprs)])


def _optimization_barrier(op: ir.Operation) -> ir.Value:
    """A call of a private identity function (one per type): `cse` and elementwise fusion do
    not look into calls, so what is computed from the result stays apart from what is computed
    the same way from the operand. The CPU pipeline inlines these calls once `cse` has run."""
    (operand,) = op.operands
    module = op.parent
    while module.name != "builtin.module":
        module = module.parent
    base = BARRIER_PREFIX + "_" + "".join(c if c.isalnum() else "_" for c in str(operand.type))
    table = ir.SymbolTable(module)
    name = base if base in table else define_function(module, base, [operand.type], op.location,
                                                      lambda point, args: args)
    return func.CallOp([operand.type], name, [operand]).result


RULES: dict[str, Rule] = {
    "constant": _constant,
    "iota": _iota,
    "broadcast_in_dim": _broadcast_in_dim,
    "stop_gradient": lambda op: op.operands[0],
    "optimization_barrier": _optimization_barrier,
    # Without a mesh a layout means nothing (mlax-partition removes it where there is one).
    "sharding_constraint": lambda op: op.operands[0],
}
