"""`mlax-lower-callbacks`: calls of `mlax.callback` declarations become calls of the host
entry point `mlax_host_callback(int64_t *record)` (the CPU road).

Runs on tensors, before `mlax-lower-to-linalg`. Each call becomes: freshly allocated
result buffers and, in a `memref.alloca_scope` (its stack space is freed at once, even inside
a loop), its operands' buffers (`bufferization.to_buffer`, read-only) and the record the
runtime reads: the call's descriptor words then the buffer addresses
(mlax.passes.abi says the format), passed by address to the entry point; the
results are the result buffers as tensors (`bufferization.to_tensor restrict`). The call is
an external function call, which every later pass keeps in order: nothing is known of its
effects. Booleans travel as bytes (NumPy's bools), converted with `mlax.convert` on each side.
A pure callback none of whose results is used is erased (jax drops it); debug and io callbacks
always stay. The declarations are erased; the runtime defines the entry point's address in the JIT.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import arith, bufferization, func, memref

from mlax.dialect import build
from mlax.dialect.callbacks import callee_of
from mlax.dialect.tensor_spec import TensorSpec
from mlax.dialect.transforms import Transform, verify_transforms
from mlax.passes.abi import HOST_CALLBACK, checked_callback_declarations, encode_callback
from mlax.passes.registry import ModulePass, PassFailure, register_pass
from mlax.passes.walk import nested_ops

ARGUMENT = "mlax-lower-callbacks"


def _i64(value: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(64), value)


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def _as_bytes(value: ir.Value) -> ir.Value:
    """A bool tensor as int8 (NumPy's bool buffers are bytes); anything else as it is."""
    if TensorSpec.from_mlir(value.type).dtype != np.bool_:
        return value
    (converted,) = build("convert", [value], {"new_dtype": np.dtype(np.int8)})
    return converted


def _memref_type(t: ir.Type) -> ir.MemRefType:
    tensor = ir.RankedTensorType(t)
    return ir.MemRefType.get(list(tensor.shape), tensor.element_type)


def _address(buffer: ir.Value) -> ir.Value:
    pointer = memref.extract_aligned_pointer_as_index(buffer)
    return arith.index_cast(ir.IntegerType.get_signless(64), pointer)


def lower_call(call: ir.Operation, transform: Transform) -> None:
    """Replace one call of a callback declaration by the host call (at the call)."""
    specs_in = [TensorSpec.from_mlir(v.type) for v in call.operands]
    specs_out = [TensorSpec.from_mlir(r.type) for r in call.results]
    if transform.fields["kind"] == "pure" and all(not list(r.uses) for r in call.results):
        call.erase()
        return
    with call.location, ir.InsertionPoint(call):
        operands = [_as_bytes(v) for v in call.operands]
        byte_types = [_as_bytes_type(s) for s in specs_out]
        results = [memref.alloc(_memref_type(t), [], []) for t in byte_types]
        words = encode_callback(transform.fields["id"], specs_in, specs_out)
        scope = memref.AllocaScopeOp([])
        with ir.InsertionPoint(scope.bodyRegion.blocks.append()):
            # In the scope, so that no two calls share one (CSE'd) to_buffer: bufferization sees
            # the operand read where its to_buffer is, and the call must come right after it.
            buffers = [bufferization.to_buffer(_memref_type(v.type), v, read_only=True) for v in operands]
            count = len(words) + len(buffers) + len(results)
            record = memref.alloca(ir.MemRefType.get([count], ir.IntegerType.get_signless(64)), [], [])
            values = [_i64(w) for w in words] + [_address(b) for b in (*buffers, *results)]
            for i, value in enumerate(values):
                memref.store(value, record, [_index(i)])
            func.CallOp([], HOST_CALLBACK, [_address(record)])
            memref.AllocaScopeReturnOp([])
        for result, buffer, t, spec in zip(call.results, results, byte_types, specs_out, strict=True):
            tensor = bufferization.to_tensor(t, buffer, restrict=True, writable=True)
            if spec.dtype == np.bool_:
                (tensor,) = build("convert", [tensor], {"new_dtype": np.dtype(np.bool_)})
            result.replace_all_uses_with(tensor)
    call.erase()


def _as_bytes_type(spec: TensorSpec) -> ir.Type:
    return TensorSpec(spec.shape, np.int8 if spec.dtype == np.bool_ else spec.dtype).to_mlir()


def _declare_entry(module: ir.Operation) -> None:
    if HOST_CALLBACK in ir.SymbolTable(module):
        return
    with module.location, ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]):
        func.FuncOp(
            HOST_CALLBACK, ir.FunctionType.get([ir.IntegerType.get_signless(64)], []), visibility="private"
        )


@register_pass
@dataclass
class LowerCallbacks(ModulePass):
    """Rewrite calls of mlax.callback declarations into calls of the host entry point."""

    argument = ARGUMENT
    summary = "lower calls of mlax.callback declarations to calls of the host callback entry point"

    def run(self, module: ir.Operation) -> None:
        if verify_transforms(module):  # each problem was emitted at its declaration
            raise PassFailure("")
        declarations = checked_callback_declarations(module)
        if not declarations:
            return
        _declare_entry(module)
        for call in nested_ops(module):
            if call.name == "func.call" and callee_of(call) in declarations:
                lower_call(call, declarations[callee_of(call)][1])
        for declaration, _ in declarations.values():
            declaration.erase()
