"""The XLA backend: `mlax-stablehlo-pipeline`, then XLA through jaxlib's PJRT client.

The program is lowered to StableHLO in mlax's context, printed as text (its entry renamed
``main``, as XLA requires) and compiled by XLA for one device: the host CPU here, a GPU or TPU
wherever jaxlib has that platform. Calls go through jax's own dispatch (runtime/pjrt.py):
device buffers of earlier results, mlax's host buffers and a caller's NumPy arrays pass as
they are (a call given NumPy arrays returns when its results are ready, so they are never read
after it returns), and results are device buffers, which mlax Arrays keep until
read on the host (zero-copy on the CPU). Donated arguments let XLA reuse an input's buffer for
an output (``tf.aliasing_output`` marks them in the stablehlo stage's text).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir

from mlax.array import Array
from mlax.configuration import config
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes.lower_to_stablehlo.callbacks import add_result
from mlax.passes.pipeline import reusable_stages, run_stage
from mlax.runtime import host_callbacks, pjrt
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
            for stage in reusable_stages(copy.context, PIPELINE):
                run_stage(stage, copy.operation)
        _rename_entry(copy, entry)
        _mark_donated(copy, donated)
    return copy


def _functions(module: ir.Module | ir.Operation) -> dict[str, ir.Operation]:
    return {ir.StringAttr(op.attributes["sym_name"]).value: op
            for op in module.operation.regions[0].blocks[0].operations if op.operation.name == "func.func"}


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


class XlaExecutable:
    """One program compiled by XLA for one device, called on mlax Arrays (whose device
    buffers it uses as they are) or NumPy arrays, returning device buffers.

    The call goes through jax's own C++ dispatch (`pjrt.jitted_program`): per call it costs
    what a ``jax.jit`` call costs, and NumPy inputs are placed as jax places them."""

    takes_device_buffers = True

    def __init__(self, module: ir.Module, entry: str, device: pjrt.Device,
                 donated: Sequence[int] = ()) -> None:
        self._callbacks = host_callbacks.callbacks_of(module)  # held while the program lives
        if self._callbacks:
            host_callbacks.register_xla_target()
        lowered = stablehlo_module(module, entry, donated)
        self._token = bool(self._callbacks) and not len(_entry_type(lowered, ENTRY).results)
        if self._token:
            with lowered.context, ir.Location.unknown():
                add_result(_functions(lowered)[ENTRY])
        self.text = lowered.operation.get_asm(enable_debug_info=True)
        self.device = device
        function_type = _entry_type(lowered, ENTRY)
        specs = [TensorSpec.from_mlir(t) for t in (*function_type.inputs, *function_type.results)]
        avals = [(spec.shape, spec.dtype) for spec in specs]
        n = len(function_type.inputs)
        self._call = pjrt.jitted_program(self.text, avals[:n], avals[n:], device, donated)
        self._compiled = pjrt.compile_jitted(self._call, avals[:n])
        self._several_devices = pjrt.device_count() > 1  # else every buffer is on ``device``
        if config.dump_dir:
            dump_path(entry, "stablehlo.mlir").write_text(self.text)
            dump_path(entry, "hlo.txt").write_text(self.optimized_hlo())

    def optimized_hlo(self) -> str:
        return self._compiled.as_text()

    def __call__(self, inputs: Sequence[Any]) -> Sequence[pjrt.DeviceArray]:
        """Run the program on mlax Arrays (their device buffers, moved to this device if need
        be, or their host buffers) and a caller's NumPy arrays. jax's dispatch aliases a NumPy
        argument (no copy) while the asynchronous program runs, so a call given one returns
        only when the results are ready: changing the argument afterwards cannot change them.
        Calls on mlax Arrays alone return at once."""
        args: list[Any] = []
        given_numpy = False
        for x in inputs:
            if type(x) is not Array:
                given_numpy = True
                args.append(x)
            elif x._device is None:
                args.append(x._value)
            elif self._several_devices and pjrt.device_of(x._device) != self.device:
                args.append(pjrt.copy_to(x._device, self.device))
            else:
                args.append(x._device)
        try:
            outs = self._compiled(*args)
        except pjrt.JaxRuntimeError as error:
            raise pjrt.XlaError(str(error)) from None
        if given_numpy or self._callbacks:  # a callback's error is known once the program is done
            for out in outs:
                out.block_until_ready()
        if self._callbacks:
            host_callbacks.raise_pending(self._callbacks)
        return outs[:-1] if self._token else outs


def _entry_type(module: ir.Module | ir.Operation, entry: str) -> ir.FunctionType:
    function = _functions(module)[entry]
    return ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
