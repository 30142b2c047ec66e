"""`mlax-widen-bool-buffers`: buffers of i1 become buffers of i8 (one byte per bool, as NumPy).

LLVM 22's memref-to-LLVM lowering refuses loads and stores of element types narrower than a
byte (it asserts), and NumPy stores a bool per byte anyway. So once linalg has become loops,
every memref of i1 is retyped to i8: function arguments, allocations, views and globals
change type; a load of i1 becomes a load of i8 and a `trunci`, a store an `extui` and a
store. Only loads and stores see element values, so nothing else needs rewriting.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import nested_ops


def _is_bool(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).width == 1


def _widened(t: ir.Type) -> ir.Type | None:
    """memref<...xi1> -> memref<...xi8> (same shape, layout and memory space); else None."""
    if isinstance(t, ir.MemRefType) and _is_bool(ir.MemRefType(t).element_type):
        memref = ir.MemRefType(t)
        return ir.MemRefType.get(memref.shape, ir.IntegerType.get_signless(8), memref.layout,
                                 memref.memory_space)
    return None


def _retype(value: ir.Value) -> None:
    wide = _widened(value.type)
    if wide is not None:
        value.set_type(wide)


def _widen_function_type(op: ir.Operation) -> None:
    function_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
    inputs = [_widened(t) or t for t in function_type.inputs]
    results = [_widened(t) or t for t in function_type.results]
    op.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, results))


def _widen_global(op: ir.Operation) -> None:
    op.attributes["type"] = ir.TypeAttr.get(_widened(ir.TypeAttr(op.attributes["type"]).value))
    initial = op.attributes["initial_value"] if "initial_value" in op.attributes else None
    if isinstance(initial, ir.DenseIntElementsAttr) or (initial is not None and "dense" in str(initial)):
        dense = ir.DenseIntElementsAttr(initial)
        shape = ir.ShapedType(dense.type).shape
        if dense.is_splat:  # stays a splat: a global of any size costs one value
            i8 = ir.IntegerType.get_signless(8)
            byte = ir.IntegerAttr.get(i8, int(dense.get_splat_value().value) & 1)
            splat_type = ir.RankedTensorType.get(shape, i8)
            op.attributes["initial_value"] = ir.DenseElementsAttr.get_splat(splat_type, byte)
            return
        values = [int(dense[i]) for i in range(int(np.prod(shape)))]
        array = (np.array(values, dtype=np.int64) & 1).astype(np.int8).reshape(shape)
        op.attributes["initial_value"] = ir.DenseElementsAttr.get(array)


def _widen_access(op: ir.Operation) -> None:
    """Loads and stores of i1 move through an i8 element instead."""
    i1, i8 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(8)
    if op.name == "memref.load" and _is_bool(op.results[0].type):
        result = op.results[0]
        result.set_type(i8)
        with op.location, ir.InsertionPoint.after(op):
            narrow = arith.trunci(i1, result)
        result.replace_all_uses_except(narrow, narrow.owner.operation)
    elif op.name == "memref.store" and _is_bool(op.operands[0].type):
        with op.location, ir.InsertionPoint(op):
            op.operands[0] = arith.extui(i8, op.operands[0])


def _widen(op: ir.Operation) -> None:
    # Only func.func: an llvm.func's signature holds LLVM types, never a memref, so it has
    # nothing to widen (its body's memrefs, if any, are retyped below like any other).
    if op.name == "func.func" and "function_type" in op.attributes:
        _widen_function_type(op)
    elif op.name == "memref.global" and _widened(ir.TypeAttr(op.attributes["type"]).value):
        _widen_global(op)
    _widen_access(op)
    for region in op.regions:
        for block in region.blocks:
            for argument in block.arguments:
                _retype(argument)
    for result in op.results:
        _retype(result)


@register_pass
@dataclass
class WidenBoolBuffers(ModulePass):
    """Retype memref<...xi1> to memref<...xi8>; loads truncate, stores extend."""

    argument = "mlax-widen-bool-buffers"
    sees_mlax_ops = False
    summary = "store bools as bytes: memrefs of i1 become memrefs of i8"

    def run(self, module: ir.Operation) -> None:
        with ir.Location.unknown():  # for the types built on the way
            for op in nested_ops(module):
                _widen(op)
