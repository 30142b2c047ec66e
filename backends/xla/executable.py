"""The XLA backend: `mlax-stablehlo-pipeline`, then XLA through jaxlib's PJRT client.

The program is lowered to StableHLO in mlax's context, printed as text (its entry renamed
``main``, as XLA requires) and compiled by XLA for one device: the host CPU here, a GPU or TPU
wherever jaxlib has that platform. Calls go through jax's own dispatch (backends/xla/pjrt.py):
device buffers of earlier results, mlax's host buffers and a caller's NumPy arrays pass as
they are (a call given NumPy arrays returns when its results are ready, so they are never read
after it returns), and results are device buffers, which mlax Arrays keep until
read on the host (zero-copy on the CPU). Donated arguments let XLA reuse an input's buffer for
an output (``tf.aliasing_output`` marks them in the stablehlo stage's text).

A module whose entry `mlax-partition` made per-device (``mlax.partitioned``, after the
pipeline's "partitioned" stage) is compiled for the devices of its ``mlax.mesh`` instead
(backends/xla/sharded.py): it takes and returns global jax Arrays laid out as the specs say,
inputs placed on (or resharded to) those layouts first, and its results are committed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
from mlir import ir

from mlax.backends.dumping import dump_path, lower
from mlax.backends.native import host_callbacks
from mlax.backends.xla import XlaBackend, pjrt
from mlax.backends.xla import sharded as xla_sharded
from mlax.configuration import config
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes.lower_to_stablehlo.callbacks import add_result
from mlax.passes.lower_to_stablehlo.lapack_calls import TARGET_PREFIX as LAPACK_TARGET_PREFIX

ENTRY = "main"


def lower_for_xla(module: ir.Module, entry: str, donated: Sequence[int] = (),
                  to: str | None = None) -> tuple[ir.Module, xla_sharded.MeshProgram | None]:
    """A copy of ``module`` lowered to StableHLO with ``entry`` renamed to ``main`` (another
    function already named ``main`` is renamed out of the way) and ``donated`` arguments
    marked for XLA to reuse. A partitioned entry (`mlax-partition`'s per-device program)
    becomes the body of an N-device ``main`` (backends/xla/sharded.py), whose global signature
    comes back too (None for a one-device program). ``to`` stops after that stage of the
    pipeline (mlax IR, nothing renamed, for the stages before "stablehlo")."""
    copy = ir.Module.parse(module.operation.get_asm(enable_debug_info=True), module.context)
    with copy.context:
        lower(copy, XlaBackend.options.textual() if to is None
              else dataclasses.replace(XlaBackend.options, to=to).textual(), entry)
        if to not in (None, "stablehlo"):
            return copy, None
        program = None
        if xla_sharded.is_partitioned(copy, entry):
            _free_entry_name(copy, entry)
            program = xla_sharded.wrap_for_mesh(copy, entry, ENTRY)
        else:
            _rename_entry(copy, entry)
        _mark_donated(copy, donated)
    return copy, program


def module_text(module: ir.Module, debug_info: bool) -> str:
    """The text XLA reads. Printed as verified: MLIR takes the unregistered
    ``sdy.manual_computation`` of a program for a mesh for a symbol table, so the call of the
    body inside it would not verify in mlax's context (jax's, which knows sdy, reads it)."""
    return module.operation.get_asm(enable_debug_info=debug_info, assume_verified=True)


def _functions(module: ir.Module | ir.Operation) -> dict[str, ir.Operation]:
    return {ir.StringAttr(op.attributes["sym_name"]).value: op
            for op in module.operation.regions[0].blocks[0].operations if op.operation.name == "func.func"}


def _rename_entry(module: ir.Module, entry: str) -> None:
    if entry == ENTRY:
        return
    _free_entry_name(module, entry)
    _rename(module, entry, ENTRY)


def _free_entry_name(module: ir.Module, entry: str) -> None:
    """Rename a function ``main`` other than ``entry`` out of the way of the program's main."""
    functions = _functions(module)
    if ENTRY in functions and entry != ENTRY:
        taken = set(functions)
        fresh = next(f"{ENTRY}_{i}" for i in range(len(taken) + 1) if f"{ENTRY}_{i}" not in taken)
        _rename(module, ENTRY, fresh)


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
    arg_attrs = [_entries(d) for d in ir.ArrayAttr(main.attributes["arg_attrs"])] if (
        "arg_attrs" in main.attributes) else [{} for _ in function_type.inputs]
    for i in sorted(donated):
        match = next((r for r in free if function_type.results[r] == function_type.inputs[i]), None)
        if match is not None:
            free.remove(match)
            arg_attrs[i]["tf.aliasing_output"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), match)
    main.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in arg_attrs])


def _entries(attr: ir.Attribute) -> dict[str, ir.Attribute]:
    d = ir.DictAttr(attr)
    return {d[i].name: d[i].attr for i in range(len(d))}


class XlaExecutable:
    """One program compiled by XLA for one device, or for the devices of its mesh (a
    partitioned entry), called on mlax Arrays (whose device buffers it uses as they are, moved
    or resharded where the program wants them elsewhere) or NumPy arrays, returning device
    buffers (jax Arrays; for a mesh, global arrays with the results' NamedShardings).

    The call goes through jax's own C++ dispatch (`pjrt.jitted_program`): per call it costs
    what a ``jax.jit`` call costs, and NumPy inputs are placed as jax places them."""

    takes_device_buffers = True

    def __init__(self, module: ir.Module, entry: str, device: pjrt.Device,
                 donated: Sequence[int] = ()) -> None:
        with host_callbacks.registered_meanwhile() as added:  # by rules traced at pass time
            lowered, program = lower_for_xla(module, entry, donated)
        self._callbacks = [*host_callbacks.callbacks_of(module), *added]  # held while the program lives
        if self._callbacks:
            host_callbacks.register_xla_target()
        if program is not None and self._callbacks:
            raise NotImplementedError(f"@{entry}: host callbacks (pure_callback, debug.print) in a program "
                                      "partitioned over several devices are not supported by mlax yet")
        self._token = bool(self._callbacks) and not len(_entry_type(lowered, ENTRY).results)
        if self._token:
            with lowered.context, ir.Location.unknown():
                add_result(_functions(lowered)[ENTRY])
        self.text = module_text(lowered, debug_info=True)
        if f'"{LAPACK_TARGET_PREFIX}' in self.text:
            pjrt.initialize_lapack()
        function_type = _entry_type(lowered, ENTRY)
        specs = [TensorSpec.from_mlir(t) for t in (*function_type.inputs, *function_type.results)]
        avals = [(spec.shape, spec.dtype) for spec in specs]
        n = len(function_type.inputs)
        self.placement = program.placement() if program is not None else None
        if self.placement is not None:
            device = pjrt.devices_by_id(program.mesh.device_ids[:1])[0]  # its platform is the program's
            self._targets: tuple[Any, ...] = self.placement.inputs
        else:
            self._targets = (pjrt.single_device(device),) * n
        self.device = device
        # host values pass as they are unless a shard lives in another process (mlax.distributed)
        self._local = all(t.is_fully_addressable for t in self._targets)
        self._call = pjrt.jitted_program(self.text, avals[:n], avals[n:], device, donated, self.placement)
        self._compiled = pjrt.compile_jitted(self._call, avals[:n])
        self._several_devices = pjrt.device_count() > 1  # else every buffer is on ``device``
        if config.dump_dir:
            dump_path(entry, "stablehlo.mlir").write_text(self.text)
            dump_path(entry, "hlo.txt").write_text(self.optimized_hlo())

    def optimized_hlo(self) -> str:
        return self._compiled.as_text()

    def __call__(self, inputs: Sequence[Any]) -> Sequence[pjrt.DeviceArray]:
        """Run the program on device buffers (moved to the program's devices or resharded as
        its arguments' shardings say if need be) and host buffers. jax's dispatch aliases a
        NumPy argument (no copy) while the asynchronous program runs, so a call given a
        writable one (the caller's own) returns only when the results are ready: changing the
        argument afterwards cannot change them. Calls on device buffers and read-only host
        buffers (mlax Arrays') return at once."""
        args: list[Any] = []
        given_numpy = False
        for x, target in zip(inputs, self._targets, strict=True):
            if isinstance(x, pjrt.DeviceArray):
                buffer, host = x, None
            else:  # a host buffer, or one of the native GPU backend's, which NumPy reads
                buffer, host = None, np.asarray(x)
                given_numpy |= host.flags.writeable  # the caller's own array, not an Array's
            if buffer is None:
                args.append(host if self._local else pjrt.place(host, target))
            elif self._several_devices and not pjrt.is_on(buffer, target):
                args.append(pjrt.copy_to(buffer, target))
            else:
                args.append(buffer)
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
