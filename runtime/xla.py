"""The XLA backend: `mlax-stablehlo-pipeline`, then XLA through jaxlib's PJRT client.

The program is lowered to StableHLO in mlax's context, printed as text (its entry renamed
``main``, as XLA requires) and compiled by XLA for one device: the host CPU here, a GPU or TPU
wherever jaxlib has that platform. A call puts NumPy inputs on the device (mlax's own
read-only buffers without a copy where XLA can alias them, a user's buffers copied, so their
later changes never reach a running program), passes device buffers of earlier results as
they are, and returns device buffers: mlax Arrays keep them until read on the host (zero-copy
on the CPU). Donated arguments (``tf.aliasing_output``) let XLA reuse an input's buffer for an
output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mlir import ir

from mlax.array import Array
from mlax.configuration import config
from mlax.passes.pipeline import run_pipeline
from mlax.runtime import pjrt
from mlax.runtime.dumping import dump_path, run_dumped

ENTRY = "main"
PIPELINE = "mlax-stablehlo-pipeline"


def stablehlo_module(module: ir.Module, entry: str, donated: Sequence[int] = ()) -> ir.Module:
    """A copy of ``module`` lowered to StableHLO with ``entry`` renamed to ``main`` (another
    function already named ``main`` is renamed out of the way) and ``donated`` arguments
    marked for XLA to reuse."""
    copy = ir.Module.parse(module.operation.get_asm(enable_debug_info=True), module.context)
    with copy.context:
        if config.dump_dir:
            run_dumped(copy, PIPELINE, entry)
        else:
            run_pipeline(copy, PIPELINE)
        _rename_entry(copy, entry)
        _mark_donated(copy, donated)
    return copy


def _functions(module: ir.Module) -> dict[str, ir.Operation]:
    return {ir.StringAttr(op.attributes["sym_name"]).value: op
            for op in module.body.operations if op.operation.name == "func.func"}


def _rename_entry(module: ir.Module, entry: str) -> None:
    functions = _functions(module)
    if entry == ENTRY:
        return
    if ENTRY in functions:
        taken = set(functions)
        fresh = next(f"{ENTRY}_{i}" for i in range(len(taken) + 1) if f"{ENTRY}_{i}" not in taken)
        _rename(module, ENTRY, fresh)
    _rename(module, entry, ENTRY)


def _rename(module: ir.Module, old: str, new: str) -> None:
    function = _functions(module)[old]
    ir.SymbolTable.replace_all_symbol_uses(old, new, module.operation)
    function.operation.attributes["sym_name"] = ir.StringAttr.get(new)


def _mark_donated(module: ir.Module, donated: Sequence[int]) -> None:
    """``tf.aliasing_output`` is jax's spelling of "this input may become that output": XLA
    reuses the buffer of a donated argument for a result of the same type."""
    if not donated:
        return
    main = _functions(module)[ENTRY].opview
    function_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    free = list(range(len(function_type.results)))
    arg_attrs = [dict() for _ in function_type.inputs]
    for i in sorted(donated):
        match = next((r for r in free if function_type.results[r] == function_type.inputs[i]), None)
        if match is not None:
            free.remove(match)
            arg_attrs[i]["tf.aliasing_output"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), match)
    main.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in arg_attrs])


def stablehlo_text(module: ir.Module, entry: str, donated: Sequence[int] = ()) -> str:
    return stablehlo_module(module, entry, donated).operation.get_asm(enable_debug_info=True)


class XlaExecutable:
    """One program compiled by XLA for one device, called on mlax Arrays (whose device
    buffers it uses as they are) or NumPy arrays, returning device buffers."""

    takes_device_buffers = True

    def __init__(self, module: ir.Module, entry: str, device: pjrt.Device,
                 donated: Sequence[int] = ()) -> None:
        self.text = stablehlo_text(module, entry, donated)
        self.device = device
        self._executable = pjrt.compile(self.text, device)
        self._donated = frozenset(donated)
        if config.dump_dir:
            dump_path(entry, "stablehlo.mlir").write_text(self.text)
            dump_path(entry, "hlo.txt").write_text(self.optimized_hlo())

    def optimized_hlo(self) -> str:
        return pjrt.optimized_hlo(self._executable)

    def _buffer(self, i: int, x: Any) -> pjrt.DeviceArray:
        """An input as a buffer on this program's device: an mlax Array's device buffer as it
        is, its host buffer aliased (read-only and never changed, unless donated); anything
        else (a user's NumPy array) copied."""
        if isinstance(x, Array):
            if x._device is not None:
                if pjrt.device_of(x._device) != self.device:
                    return pjrt.copy_to(x._device, self.device)
                return x._device
            return pjrt.put(x._value, self.device, immutable=i not in self._donated)
        return pjrt.put(np.asarray(x), self.device, immutable=False)

    def __call__(self, inputs: Sequence[Any]) -> list[pjrt.DeviceArray]:
        return pjrt.execute(self._executable, [self._buffer(i, x) for i, x in enumerate(inputs)])
