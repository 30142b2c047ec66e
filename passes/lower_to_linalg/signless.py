"""The last step of `mlax-lower-to-linalg`: every unsigned integer type becomes signless.

arith, linalg and the LLVM conversions only take signless integers, but unsigned semantics
(divui, cmpi ult, uitofp, ...) are chosen from the mlax op's own types. So the rules build
their IR with the op's own types: unsigned scalars reach the element bodies, which pick
the unsigned arith variants by their type. Once every mlax op of the module is lowered,
this sweep retypes every value (op results, block arguments), every function type and
every typed attribute (arith.constant values) from uiN to iN with the same bits. Types
change in place, so there is nothing to cast at the seams and no
unrealized_conversion_cast is ever created.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from mlax.passes.lower_to_linalg.common import integer_attr, is_unsigned
from mlax.passes.walk import nested_ops


def signless(t: ir.Type) -> ir.Type:
    """``t`` with uiN (alone, as a tensor or memref element, in a function type) as iN."""
    if is_unsigned(t):
        return ir.IntegerType.get_signless(ir.IntegerType(t).width)
    if isinstance(t, ir.RankedTensorType):
        tensor = ir.RankedTensorType(t)
        element = signless(tensor.element_type)
        if element == tensor.element_type:
            return t
        return ir.RankedTensorType.get(tensor.shape, element, tensor.encoding, loc=ir.Location.unknown())
    if isinstance(t, ir.FunctionType):
        function = ir.FunctionType(t)
        return ir.FunctionType.get([signless(a) for a in function.inputs],
                                   [signless(r) for r in function.results])
    return t


def _signless_attribute(attr: ir.Attribute) -> ir.Attribute:
    """Integer, dense integer and type attributes of an unsigned type, retyped bit for bit."""
    if isinstance(attr, ir.TypeAttr):
        return ir.TypeAttr.get(signless(ir.TypeAttr(attr).value))
    if isinstance(attr, ir.IntegerAttr) and is_unsigned(attr.type):
        return integer_attr(signless(attr.type), ir.IntegerAttr(attr).value)
    if isinstance(attr, ir.DenseIntElementsAttr) and signless(attr.type) != attr.type:
        dense, target = ir.DenseIntElementsAttr(attr), signless(attr.type)
        if dense.is_splat:
            return ir.DenseElementsAttr.get_splat(target, _signless_attribute(dense.get_splat_value()))
        bits = np.asarray(dense)
        tensor = ir.RankedTensorType(target)
        return ir.DenseElementsAttr.get(bits.view(bits.dtype.str.replace("u", "i")),
                                        type=tensor.element_type, shape=tensor.shape)
    return attr


def make_signless(module: ir.Operation) -> None:
    """Retype every unsigned type under ``module`` (values, block arguments, attributes)."""
    for op in nested_ops(module):
        for result in op.results:
            result.set_type(signless(result.type))
        for region in op.regions:
            for block in region.blocks:
                for argument in block.arguments:
                    argument.set_type(signless(argument.type))
        for name in list(op.attributes):
            converted = _signless_attribute(op.attributes[name])
            if converted != op.attributes[name]:
                op.attributes[name] = converted
