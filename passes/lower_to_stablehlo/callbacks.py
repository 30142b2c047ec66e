"""Calls of `mlax.callback` declarations -> `stablehlo.custom_call @mlax_host_callback`.

XLA calls the target, which the runtime registers with XLA's CPU client
(mlax.backends.native.host_callbacks), through its typed FFI (``api_version = 4``): operand 0 is the
call's descriptor (a constant ``tensor<Nxi64>``: callback id and the call site's types), then
the callback's operands; the results are the custom call's. A debug or io callback has
``has_side_effect = true``, so XLA keeps it, and the debug (and ordered io) callbacks are
chained in program order by a token each returns and the next takes (a ``tensor<i8>`` past the
descriptor's counts, which the handler ignores), through calls and control flow too
(effect_order.py): XLA would otherwise reorder independent custom calls. A pure one has no side
effect (XLA may drop or merge it, as jax lets it), and one whose results are all unused is
erased here.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from mlax.dialect.callbacks import EFFECT_KINDS, callee_of
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes.abi import HOST_CALLBACK, checked_callback_declarations, encode_callback
from mlax.passes.lower_to_stablehlo.common import constant, hlo
from mlax.passes.lower_to_stablehlo.effect_order import EffectOrder, chained
from mlax.passes.walk import nested_ops

_API_VERSION_TYPED_FFI = 4


def lower_callbacks(module: ir.Operation) -> None:
    """Rewrite every call of a callback declaration into the custom call; erase the
    declarations."""
    declarations = checked_callback_declarations(module)
    order = EffectOrder(module, declarations)
    for call in nested_ops(module):
        if call.name != "func.call":
            continue
        if callee_of(call) not in declarations:
            order.call(call)
            continue
        fields = declarations[callee_of(call)][1].fields
        if fields["kind"] == "pure" and all(not list(r.uses) for r in call.results):
            call.erase()
            continue
        words = encode_callback(
            fields["id"],
            [TensorSpec.from_mlir(v.type) for v in call.operands],
            [TensorSpec.from_mlir(r.type) for r in call.results],
        )
        i64 = ir.IntegerType.get_signless(64)
        # debug and ordered io callbacks are chained in program order; every io one is an effect
        debug = chained(fields)
        with call.location, ir.InsertionPoint(call):
            descriptor = constant(np.asarray(words, np.int64), ir.RankedTensorType.get([len(words)], i64))
            after = order.before_effect(call) if debug else []
            token = [ir.RankedTensorType.get([], ir.IntegerType.get_signless(8))] if debug else []
            custom = hlo(
                "custom_call",
                [descriptor, *call.operands, *after],
                [*(r.type for r in call.results), *token],
                {
                    "call_target_name": ir.StringAttr.get(HOST_CALLBACK),
                    "has_side_effect": ir.BoolAttr.get(fields["kind"] in EFFECT_KINDS),
                    "api_version": ir.IntegerAttr.get(
                        ir.IntegerType.get_signless(32), _API_VERSION_TYPED_FFI
                    ),
                },
            )
        if debug:
            order.after_effect(call, custom.results[len(call.results)])
        for old, new in zip(call.results, list(custom.results)[: len(call.results)], strict=True):
            old.replace_all_uses_with(new)
        call.erase()
    order.finish()
    for declaration, _ in declarations.values():
        declaration.erase()


def add_result(function: ir.Operation) -> None:
    """Give a function with no results one (a constant ``tensor<i8>``): jax's dispatch drops a
    call with no results and no jax effects, which would drop the callbacks in it."""
    block = function.regions[0].blocks[0]
    terminator = list(block.operations)[-1]
    i8 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(8))
    with terminator.location, ir.InsertionPoint(terminator):
        token = constant(np.int8(0), i8)
        ir.Operation.create("func.return", operands=[*terminator.operands, token])
    terminator.erase()
    old = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(list(old.inputs), [i8]))
