"""The ahead-of-time form of a GPU program: kernels as PTX plus a launch plan, for machines with
an NVIDIA driver but without MLIR (the loader, runtime/gpu_loader.py, needs only NumPy).

    artifact = export_gpu(mlax.jit(f, backend="gpu").lower(x))   # jax.export's naming
    artifact.write("f.mlaxgpu")                                    # or save_gpu_artifact(lowered, path)

At the end of the pipeline's ``gpu`` stage the host code of the entry function is straight
line: device allocations, copies, constant arrays, views of buffers (expand/collapse shape),
and ``gpu.launch_func``s with constant grids whose operands are buffers or constants.
`launch_plan` writes that down as data (buffers with shapes, dtypes and sizes; alloc, free,
copy and launch steps); the module then goes through the ``nvvm`` and ``binary`` stages for the
PTX of each kernel module. Host code the plan cannot express (a loop or a branch on the host,
an op it does not know) is refused with a NotImplementedError naming the op at its location.

Kernel names are PTX identifiers already (`mlax-gpu-kernel-names` in the ``gpu`` stage).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
from mlir import ir

from mlax.dialect import dtypes
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes.buffer_abi import entry_symbol
from mlax.passes.gpu_pipeline import GpuPipeline
from mlax.passes.pipeline import reusable_stages, run_stage
from mlax.runtime.gpu import lower_for_gpu
from mlax.runtime.gpu_loader import FORMAT, SCALARS, VERSION, Artifact

# Host ops that only give another view of a buffer (the kernels read static offsets and
# strides from their argument types; bare pointers pass the buffer's start).
_VIEWS = ("memref.expand_shape", "memref.collapse_shape", "memref.cast", "memref.reinterpret_cast",
          "memref.subview")


def export_gpu(lowered: Any, chip: str = "sm_90", features: str = "+ptx80") -> Artifact:
    """The artifact of a ``jit(f, backend="gpu").lower(...)`` result, PTX for ``chip``."""
    module = lowered.mlir_module()
    with module.context:
        function = _public_function(module)
        entry = function.sym_name.value
        signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
        inputs = [TensorSpec.from_mlir(t) for t in signature.inputs]
        outputs = [TensorSpec.from_mlir(t) for t in signature.results]
        lower_for_gpu(module, to="gpu", entry=entry)
        plan, constants = launch_plan(module, entry_symbol(entry), inputs, outputs)
        stages = dict(GpuPipeline(chip=chip, features=features, format="isa").stages)
        for stage in reusable_stages(module.context, f"{stages['nvvm']}, {stages['binary']}"):
            run_stage(stage, module.operation)
        binaries = _ptx_by_module(module)
    names = sorted({step["module_name"] for step in plan["steps"] if step["op"] == "launch"})
    for step in plan["steps"]:
        if step["op"] == "launch":
            step["module"] = names.index(step.pop("module_name"))
    plan["modules"] = names
    plan["target"] = {"chip": chip, "features": features}
    ptx = [binaries[name] for name in names]
    _check_parameters(plan, ptx)
    return Artifact(plan, ptx, constants)


def save_gpu_artifact(lowered: Any, path: str | Path, chip: str = "sm_90") -> Artifact:
    """Write `export_gpu`'s artifact to ``path`` (a zip the loader reads) and return it."""
    artifact = export_gpu(lowered, chip=chip)
    artifact.write(path)
    return artifact


def _public_function(module: ir.Module) -> ir.OpView:
    public = [op for op in module.body.operations if op.operation.name == "func.func"
              and "sym_visibility" not in op.attributes and len(op.regions[0].blocks)]
    if len(public) != 1:
        raise ValueError(f"a GPU artifact needs one public function, found {len(public)}")
    return public[0]


def _host_ops(module: ir.Module) -> list[ir.Operation]:
    return [op.operation for f in module.body.operations if f.operation.name == "func.func"
            for block in f.regions[0].blocks for op in block.operations]


def _kernel_of(launch: ir.Operation) -> tuple[str, str]:
    """(gpu.module name, kernel name) of a ``gpu.launch_func``: ``@module::@kernel``."""
    module, kernel = re.fullmatch(r'@"?([^":]+)"?::@"?([^"]+)"?', str(launch.attributes["kernel"])).groups()
    return module, kernel


def _where(op: ir.Operation) -> str:
    """``file:line:col: error: `` for the op's (first) source location, as mlax's errors read."""
    found = re.search(r'"([^"]+)":(\d+):(\d+)', str(op.location))
    return f"{found.group(1)}:{found.group(2)}:{found.group(3)}: error: " if found else ""


def _refuse(op: ir.Operation, why: str) -> NotImplementedError:
    return NotImplementedError(f"{_where(op)}the GPU artifact cannot express {op.name} in host code: {why}; "
                               'run the program with jit(f, backend="gpu") or backend="xla" instead')


def _nbytes(memref: ir.MemRefType) -> int:
    itemsize = dtypes.from_mlir(memref.element_type).itemsize
    return int(np.prod(memref.shape, dtype=np.int64)) * itemsize


def _contiguous_offset(op: ir.Operation, value: ir.Value) -> int:
    """The byte offset of a buffer view that a copy reads or writes whole (row-major strides)."""
    memref = ir.MemRefType(value.type)
    strides, offset = memref.get_strides_and_offset()
    expected = [int(np.prod(memref.shape[i + 1:], dtype=np.int64)) for i in range(memref.rank)]
    if any(s != e for s, e, n in zip(strides, expected, memref.shape, strict=True) if n != 1):
        raise _refuse(op, f"a copy of a strided view ({memref})")
    return offset * dtypes.from_mlir(memref.element_type).itemsize


def _scalar(op: ir.Operation) -> tuple[str, int | float]:
    """A kernel argument that is a constant: (loader type, value)."""
    kind = "i64" if str(op.results[0].type) == "index" else str(op.results[0].type)
    if kind in SCALARS:
        attribute = ir.FloatAttr if kind.startswith("f") else ir.IntegerAttr
        return kind, attribute(op.attributes["value"]).value
    raise _refuse(op, f"a constant of type {kind} passed to a kernel")


def _global_array(module: ir.Module, op: ir.Operation) -> np.ndarray:
    name = ir.FlatSymbolRefAttr(op.attributes["name"]).value
    memref = ir.MemRefType(op.results[0].type)
    found = next(g for g in module.body.operations
                 if g.operation.name == "memref.global" and g.sym_name.value == name)
    values = ir.DenseElementsAttr(found.attributes["initial_value"])
    dtype = dtypes.from_mlir(memref.element_type)
    if values.is_splat:
        return np.full(memref.shape, np.asarray(values.get_splat_value().value, dtype), dtype)
    return np.array(values).astype(dtype, copy=False).reshape(memref.shape)


def launch_plan(module: ir.Module, entry: str, inputs: list[TensorSpec],
                outputs: list[TensorSpec]) -> tuple[dict[str, Any], list[np.ndarray]]:
    """The plan of ``entry``'s host code at the end of the ``gpu`` stage, and its constant
    arrays. ``inputs``/``outputs`` are the user's types (a bool buffer holds bytes)."""
    function = next(op for op in module.body.operations
                    if op.operation.name == "func.func" and op.sym_name.value == entry)
    block = function.regions[0].blocks[0]
    if len(block.arguments) != len(inputs) + len(outputs):
        raise ValueError(f"@{entry} has {len(block.arguments)} buffers, expected {len(inputs)} inputs "
                         f"and {len(outputs)} outputs")
    buffers: list[dict[str, Any]] = []
    where: dict[ir.Value, int] = {}  # a buffer or a view of it -> the buffer's index
    scalars: dict[ir.Value, tuple[str, int | float]] = {}
    constants: list[np.ndarray] = []
    steps: list[dict[str, Any]] = []

    def add(value: ir.Value, kind: str, dtype: Any, **extra: Any) -> int:
        memref = ir.MemRefType(value.type)
        buffers.append({"kind": kind, "shape": list(memref.shape), "dtype": np.dtype(dtype).name,
                        "nbytes": _nbytes(memref), **extra})
        where[value] = len(buffers) - 1
        return len(buffers) - 1

    for argument, spec in zip(block.arguments, [*inputs, *outputs], strict=True):
        add(argument, "input" if len(buffers) < len(inputs) else "output", spec.dtype)
    for op in (o.operation for o in block.operations):
        if any(len(region.blocks) for region in op.regions):
            raise _refuse(op, "the plan has no loops or branches")
        if op.name == "arith.constant":
            scalars[op.results[0]] = _scalar(op)
        elif op.name == "memref.get_global":
            constants.append(_global_array(module, op))
            add(op.results[0], "constant", constants[-1].dtype, constant=len(constants) - 1)
        elif op.name == "gpu.alloc":
            if len(op.operands):
                raise _refuse(op, "a dynamically sized or asynchronous allocation")
            element = dtypes.from_mlir(ir.MemRefType(op.results[0].type).element_type)
            steps.append({"op": "alloc", "buffer": add(op.results[0], "temporary", element)})
        elif op.name == "gpu.dealloc":
            steps.append({"op": "free", "buffer": where[op.operands[-1]]})
        elif op.name == "gpu.memcpy":
            dst, src = op.operands[-2], op.operands[-1]
            steps.append({"op": "copy", "dst": where[dst], "dst_offset": _contiguous_offset(op, dst),
                          "src": where[src], "src_offset": _contiguous_offset(op, src),
                          "nbytes": _nbytes(ir.MemRefType(op.operands[-1].type))})
        elif op.name in _VIEWS:
            if not ir.MemRefType(op.results[0].type).has_static_shape or len(op.operands) > 1:
                raise _refuse(op, "a view with dynamic sizes, strides or offsets")
            where[op.results[0]] = where[op.operands[0]]
        elif op.name == "gpu.launch_func":
            steps.append(_launch(op, where, scalars))
        elif op.name != "func.return":
            raise _refuse(op, "the plan has only device allocations, copies, views and kernel launches")
    plan = {"format": FORMAT, "version": VERSION, "entry": entry, "buffers": buffers,
            "constants": len(constants), "steps": steps}
    return plan, constants


def _launch(op: ir.Operation, where: dict[ir.Value, int],
            scalars: dict[ir.Value, tuple[str, int | float]]) -> dict[str, Any]:
    launch = op.opview
    if len(launch.asyncDependencies) or launch.clusterSizeX is not None:
        raise _refuse(op, "an asynchronous or clustered launch")

    def constant(value: ir.Value) -> int:
        if value not in scalars or scalars[value][0] != "i64":
            raise _refuse(op, "a grid or block size computed at run time")
        return int(scalars[value][1])

    arguments: list[Any] = []
    for value in launch.kernelOperands:
        if value in where:
            arguments.append(where[value])
        elif value in scalars:
            arguments.append(list(scalars[value]))
        else:
            raise _refuse(op, f"a kernel argument of type {value.type} computed on the host")
    module, kernel = _kernel_of(op)
    shared = launch.dynamicSharedMemorySize
    return {"op": "launch", "module_name": module, "kernel": kernel,
            "grid": [constant(v) for v in (launch.gridSizeX, launch.gridSizeY, launch.gridSizeZ)],
            "block": [constant(v) for v in (launch.blockSizeX, launch.blockSizeY, launch.blockSizeZ)],
            "shared": 0 if shared is None else constant(shared), "args": arguments}


def _ptx_by_module(module: ir.Module) -> dict[str, str]:
    """The PTX text of each ``gpu.binary`` (MLIR prints bytes outside ASCII's printable
    characters, and '"' and '\\', as ``\\XX``)."""
    found = {}
    for op in module.body.operations:
        if op.operation.name == "gpu.binary":
            text = re.search(r'assembly = "((?:[^"\\]|\\.)*)"', str(op.attributes["objects"])).group(1)
            raw = re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)
            found[op.sym_name.value] = raw.encode("latin-1").decode()
    return found


def _check_parameters(plan: dict[str, Any], ptx: list[str]) -> None:
    """Every launch passes as many bytes per parameter as its PTX entry declares (pointers and
    index values 8, an f32 4...): a plan out of step with its kernels fails here, not on a GPU."""
    sizes = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "f32": 4, "f64": 8}
    for step in (s for s in plan["steps"] if s["op"] == "launch"):
        entry = re.search(rf"\.entry {re.escape(step['kernel'])}\(([^)]*)\)", ptx[step["module"]])
        if entry is None:
            raise ValueError(f"the PTX of module {step['module']} has no entry {step['kernel']}")
        declared = [int(bits) // 8 for bits in re.findall(r"\.param \.[bfsu](\d+)", entry.group(1))]
        passed = [8 if isinstance(arg, int) else sizes[arg[0]] for arg in step["args"]]
        if declared != passed:
            raise ValueError(f"kernel {step['kernel']}: the plan passes parameters of {passed} bytes, "
                             f"its PTX declares {declared}")
