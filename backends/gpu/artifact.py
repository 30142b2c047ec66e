"""The ahead-of-time form of a GPU program: kernels as PTX plus a launch plan, for machines with
an NVIDIA driver but without MLIR (the loader, backends/gpu/loader.py, needs only NumPy).

    artifact = export_gpu(mlax.jit(f, backend="gpu").lower(x))   # jax.export's naming
    artifact.write("f.mlaxgpu")                                    # or save_gpu_artifact(lowered, path)

At the end of the pipeline's ``gpu`` stage the host code of the entry function allocates,
copies and views device buffers and launches kernels, inside host loops and branches whose
predicates are a few bytes read from device memory. `launch_plan` (backends/gpu/plan.py) writes
that down as data (buffers with shapes, dtypes and sizes; alloc, free, copy, launch, loop,
while and if steps, host scalars in registers); the module then goes through the ``nvvm`` and
``binary`` stages for the PTX of each kernel module. Host code the plan cannot express (an op
it does not know) is refused with a NotImplementedError naming the op at its location.

Kernel names are PTX identifiers already (`mlax-gpu-kernel-names` in the ``gpu`` stage).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mlir import ir

from mlax.backends.gpu import GPU
from mlax.backends.gpu.loader import Artifact, all_steps
from mlax.backends.gpu.pipeline import GpuPipeline
from mlax.backends.gpu.plan import launch_plan
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes.abi import entry_symbol
from mlax.passes.pipeline import reusable_stages, run_stage


def export_gpu(lowered: Any, chip: str = "sm_90", features: str = "+ptx80") -> Artifact:
    """The artifact of a ``jit(f, backend="gpu").lower(...)`` result, PTX for ``chip``."""
    module = lowered.mlir_module()
    with module.context:
        entry = _public_function(module).sym_name.value
    return module_artifact(module, entry, chip, features)


def module_artifact(module: ir.Module, entry: str, chip: str = "sm_90", features: str = "+ptx80") -> Artifact:
    """The artifact of ``module``'s function ``entry``, lowered in place (`export_gpu`'s, and the
    program that ``jit(f, backend="gpu")`` runs: backends/gpu/executable.py)."""
    with module.context:
        function = next(op for op in module.body.operations
                        if op.operation.name == "func.func" and op.sym_name.value == entry)
        signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
        inputs = [TensorSpec.from_mlir(t) for t in signature.inputs]
        outputs = [TensorSpec.from_mlir(t) for t in signature.results]
        GPU.lower(module, entry, "gpu")
        plan, constants = launch_plan(module, entry_symbol(entry), inputs, outputs)
        stages = dict(GpuPipeline(chip=chip, features=features, format="isa").stages)
        for stage in reusable_stages(module.context, f"{stages['nvvm']}, {stages['binary']}"):
            run_stage(stage, module.operation)
        binaries = _ptx_by_module(module)
    launches = [step for step in all_steps(plan["steps"]) if step["op"] == "launch"]
    names = sorted({step["module_name"] for step in launches})
    for step in launches:
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
    for step in (s for s in all_steps(plan["steps"]) if s["op"] == "launch"):
        entry = re.search(rf"\.entry {re.escape(step['kernel'])}\(([^)]*)\)", ptx[step["module"]])
        if entry is None:
            raise ValueError(f"the PTX of module {step['module']} has no entry {step['kernel']}")
        declared = [int(bits) // 8 for bits in re.findall(r"\.param \.[bfsu](\d+)", entry.group(1))]
        passed = [8 if isinstance(arg, int) else sizes[arg["type"] if isinstance(arg, dict) else arg[0]]
                  for arg in step["args"]]
        if declared != passed:
            raise ValueError(f"kernel {step['kernel']}: the plan passes parameters of {passed} bytes, "
                             f"its PTX declares {declared}")
