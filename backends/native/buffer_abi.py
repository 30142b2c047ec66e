"""`mlax-buffer-abi`: public functions on tensors take the calling convention of the CPU runtime.

The runtime calls a compiled function with one bare pointer per buffer: the caller's input
arrays, then freshly allocated outputs (backends/cpu/pipeline.py). Before bufferization, each
public func.func states what that implies:

- inputs belong to the caller: ``bufferization.writable = false`` (otherwise one-shot
  bufferization may update an input in place, e.g. for ``tensor.insert_slice``);
- no buffer overlaps a buffer that is written: ``llvm.noalias`` on arguments and results
  (results become out-parameters with the attribute), so LLVM may keep accumulators in
  registers and vectorize;
- a buffer with no elements is typed ``tensor<0xT>`` at the boundary and replaced inside by
  ``tensor.empty`` of its real type: the bare-pointer convention refuses types such as
  ``memref<2x0xf32>`` (their strides do not look canonical) and nothing reads or writes
  such a buffer anyway;
- the function is renamed ``@jit.<name>`` (`entry_symbol`): compiled symbols share one
  namespace with the C functions the code calls, and a user function named ``erfc``,
  ``malloc`` or ``sgemm`` must not capture those calls;
- a module whose code keeps state between executions defines `RELEASE_FUNCTION`, which the
  runtime calls before it unlinks the code.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func, tensor

from mlax.passes.abi import entry_symbol
from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import nested_ops

_INPUT_ATTRIBUTES = {"bufferization.writable": False, "llvm.noalias": True}
_RESULT_ATTRIBUTES = {"llvm.noalias": True}


def _is_empty_multi_dim(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType) and 0 in t.shape and list(t.shape) != [0]


def _flat(t: ir.Type) -> ir.Type:
    return ir.RankedTensorType.get([0], ir.RankedTensorType(t).element_type) if _is_empty_multi_dim(t) else t


def _dictionary(values: dict[str, bool]) -> ir.DictAttr:
    return ir.DictAttr.get({name: ir.BoolAttr.get(False) if value is False else ir.UnitAttr.get()
                            for name, value in values.items()})


def _apply(function: ir.Operation) -> None:
    block = function.regions[0].blocks[0]
    function_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    with function.location:
        for argument in block.arguments:
            if _is_empty_multi_dim(argument.type):
                with ir.InsertionPoint.at_block_begin(block):
                    local = tensor.empty(argument.type.shape, argument.type.element_type)
                argument.replace_all_uses_with(local)
                argument.set_type(_flat(argument.type))
        for op in block.operations:
            if isinstance(op.operation.opview, func.ReturnOp):
                for i, value in enumerate(op.operands):
                    if _is_empty_multi_dim(value.type):
                        with ir.InsertionPoint(op):
                            op.operands[i] = tensor.empty([0], value.type.element_type)
        tensors = [isinstance(t, ir.RankedTensorType) for t in function_type.inputs]
        function.attributes["arg_attrs"] = ir.ArrayAttr.get(
            [_dictionary(_INPUT_ATTRIBUTES if is_tensor else {}) for is_tensor in tensors])
        function.attributes["res_attrs"] = ir.ArrayAttr.get([_dictionary(_RESULT_ATTRIBUTES)
                                                             for _ in function_type.results])
        function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [_flat(t) for t in function_type.inputs], [_flat(t) for t in function_type.results]))
        name = ir.StringAttr(function.attributes["sym_name"]).value
        ir.SymbolTable.replace_all_symbol_uses(name, entry_symbol(name), function.parent)
        function.attributes["sym_name"] = ir.StringAttr.get(entry_symbol(name))


def _is_public_definition(op: ir.Operation) -> bool:
    if op.name != "func.func" or not op.regions[0].blocks:
        return False
    visibility = op.attributes["sym_visibility"] if "sym_visibility" in op.attributes else None
    return visibility is None or ir.StringAttr(visibility).value == "public"


@register_pass
@dataclass
class BufferAbi(ModulePass):
    """Mark public functions' tensors as caller-owned and non-overlapping, flatten empty ones,
    and move the functions out of the C namespace."""

    argument = "mlax-buffer-abi"
    sees_mlax_ops = False
    summary = "state the runtime's calling convention on public functions before bufferization"

    def run(self, module: ir.Operation) -> None:
        for op in nested_ops(module):
            if _is_public_definition(op):
                _apply(op)
