"""`mlax-gpu-pipeline`: mlax on tensors -> GPU kernels -> NVVM -> PTX in a ``gpu.binary``, in
named stages (``jit(f, backend="gpu").lower(x).as_text("gpu")``, ``mlax-opt --pass-pipeline=
'builtin.module(mlax-gpu-pipeline{to=gpu})'``); docs/gpu.md describes the kernels and runtime.

- ``linalg``: the CPU pipeline's stage but for `mlax-split-reductions` (the block reductions
  below already sum as trees) (`mlax.backends.native.stages.TO_FUSED_LINALG`:
  ``mlax-expand-transforms``, ``mlax-simulate-devices``, ``mlax-lower-control-flow`` (to
  ``scf``), ``mlax-inline``, ``mlax-lower-callbacks``, ``mlax-lower-to-linalg``,
  ``linalg-fuse-elementwise-ops``, ``mlax-approximate-math`` (math as polynomials),
  ``canonicalize``/``cse``, ``mlax-schedule-for-memory``): one road to fused linalg for both
  native backends.
- ``buffers``: the CPU's bufferization (`BUFFERIZE`: ``inline``, ``symbol-dce``,
  ``mlax-buffer-abi``, ``mlax-distinct-results``, ``mlax-private-fills``, ``eliminate-empty-tensors``,
  ``one-shot-bufferize`` across the function boundary, ``canonicalize``,
  ``buffer-results-to-out-params``, ``buffer-deallocation-pipeline``, ``inline``: the arguments
  and results are device buffers the runtime owns), ``convert-complex-to-standard``,
  ``canonicalize``; no BLAS calls, no OpenMP, named matmuls kept; library calls (LAPACK, FFT,
  host callbacks) are refused at their location (``mlax-check-gpu-mapped{mapped=false}``).
- ``gpu``: control flow's host loads of device bytes become copies to host buffers, the
  deallocation bookkeeping scalar host code (``mlax-gpu-host-reads``); reductions go innermost
  (``mlax-gpu-reductions-inner``); matmuls become tiled tensor-core or SIMT kernels
  (``mlax-gpu-matmul``); runs of row reductions and the ops around them (softmax, layer norm,
  sums to a scalar) one kernel each with block reductions (``mlax-gpu-row-kernels``); host code
  with nothing parallel in it a one-thread kernel (``mlax-gpu-serial-kernels``); the other
  linalg ops ``scf.parallel`` nests (``convert-linalg-to-parallel-loops``) with the contiguous
  dimension first (``mlax-gpu-coalesce``); bools become bytes (``mlax-widen-bool-buffers``, as
  on the CPU); elementwise nests move 16 bytes per thread where aligned (``mlax-gpu-vectorize``);
  nests are tiled into blocks of ``block`` threads with guarded edges
  (``scf-parallel-loop-tiling{no-min-max-bounds}``), mapped to the grid
  (``gpu-map-parallel-loops``) and turned into ``gpu.launch`` (``convert-parallel-loops-to-gpu``,
  ``lower-affine``); index computations and views with run-time offsets move into the kernels
  (``gpu-launch-sink-index-computations``, ``mlax-gpu-sink-views``: bare pointers carry no
  layout); kernels are outlined into one ``gpu.module`` each (``gpu-kernel-outlining``) with
  names PTX allows (``mlax-gpu-kernel-names``); host temporaries, copies and constant arrays move
  to the device (``mlax-gpu-device-buffers``); kernel arguments get ``noalias``/``readonly``
  where the host code proves it (``mlax-gpu-noalias``); after ``canonicalize`` and ``cse``,
  anything left on the host that touches device memory fails at its location
  (``mlax-check-gpu-mapped``).
- ``nvvm``: the host's gpu ops made asynchronous on a stream (``gpu-async-region``); the chip
  and PTX version (``nvvm-attach-target``); upstream's ``gpu-lower-to-nvvm-pipeline`` written
  out with bare pointers: ``convert-nvgpu-to-nvvm``, ``convert-vector-to-scf``, ``convert-scf-to-cf``,
  ``convert-nvvm-to-llvm``, ``convert-func-to-llvm``, ``expand-strided-metadata``,
  ``lower-affine``, ``convert-arith-to-llvm``, ``convert-index-to-llvm``, kernels through
  ``convert-gpu-to-nvvm`` (then ``reconcile-unrealized-casts``), host code through
  ``gpu-to-llvm`` (MLIR's CUDA runtime wrappers), ``convert-math-to-llvm``, with
  ``canonicalize``/``cse`` between; libdevice calls that are one PTX instruction become LLVM
  intrinsics again (``mlax-gpu-native-math``) and the others are refused
  (``mlax-check-gpu-mapped``).
- ``binary``: ``gpu-module-to-binary``: with ``format=isa`` the kernels are PTX text, which
  needs no CUDA installation (the driver JIT-compiles it); ``bin``/``fatbin`` need ptxas.

The runtime (backends/gpu/executable.py) runs the ``gpu`` stage's host code as a launch plan
(backends/gpu/plan.py) and takes only the kernels' PTX from the later stages.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from mlax.backends.native.stages import BUFFERIZE, TO_FUSED_LINALG
from mlax.passes.registry import PassPipeline, last_stage, option, register_pass

LINALG_STAGE = f"{TO_FUSED_LINALG}, mlax-schedule-for-memory"
FORMATS = ("isa", "bin", "fatbin", "llvm", "offload")
# Every buffer is one pointer, on the host as in the kernels: all shapes are static.
_BARE = "use-bare-ptr-memref-call-conv=1"


_LIBDEVICE = Path("cuda_nvcc", "nvvm", "libdevice", "libdevice.10.bc")


@functools.cache
def installed_libdevice() -> str | None:
    """CUDA's libdevice bitcode from the ``nvidia-cuda-nvcc-cu12`` wheel (``mlax[gpu]``), or None
    where it is not installed: kernels calling sin, pow, atan2... then cannot be built."""
    spec = importlib.util.find_spec("nvidia")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        if (Path(folder) / _LIBDEVICE).is_file():
            return str(Path(folder) / _LIBDEVICE)
    return None


@register_pass
@dataclass(frozen=True)
class GpuPipeline(PassPipeline):
    """The GPU backend's lowering, from mlax to PTX/cubin kernels and host LLVM, stage by stage."""

    argument = "mlax-gpu-pipeline"
    summary = "lower mlax to GPU kernels for NVIDIA GPUs"

    to: str = last_stage(("linalg", "buffers", "gpu", "nvvm", "binary"))
    chip: str = option("sm_90", "the NVIDIA architecture the kernels are compiled for")
    features: str = option("+ptx80", "the PTX version feature (+ptxNN)")
    format: str = option("isa", "gpu.binary's format: isa (PTX text, no CUDA needed), bin or fatbin (ptxas)")
    block: tuple[int, ...] = option((32, 8), "threads per block along the outer parallel dimensions")
    libdevice: str = option("auto", "CUDA's libdevice bitcode linked into the kernels (sin, pow, atan2...): "
                                    "auto (the nvidia-cuda-nvcc-cu12 wheel's, if installed), none, or a path")

    @property
    def libdevice_path(self) -> str | None:
        return installed_libdevice() if self.libdevice == "auto" else None if self.libdevice == "none" \
            else self.libdevice

    @property
    def stages(self) -> tuple[tuple[str, str], ...]:
        tiles = ",".join(map(str, self.block))
        library = self.libdevice_path
        link, linked = (f" l={library}", "true") if library else ("", "false")
        return (
            ("linalg", LINALG_STAGE),
            ("buffers", f"{BUFFERIZE}, convert-complex-to-standard, canonicalize, "
                        "mlax-check-gpu-mapped{mapped=false}"),
            ("gpu", "mlax-gpu-host-reads, mlax-gpu-reductions-inner, mlax-gpu-matmul, mlax-gpu-row-kernels, "
                    "mlax-gpu-serial-kernels, "
                    "func.func(convert-linalg-to-parallel-loops), mlax-gpu-coalesce, "
                    "mlax-widen-bool-buffers, mlax-gpu-vectorize, "
                    "func.func(scf-parallel-loop-tiling"
                    f"{{parallel-loop-tile-sizes={tiles} no-min-max-bounds=true}}, gpu-map-parallel-loops), "
                    "convert-parallel-loops-to-gpu, lower-affine, "
                    "gpu-launch-sink-index-computations, mlax-gpu-sink-views, gpu-kernel-outlining, "
                    "mlax-gpu-kernel-names, "
                    "mlax-gpu-device-buffers, mlax-gpu-noalias, "
                    "canonicalize, cse, mlax-check-gpu-mapped"),
            ("nvvm", "func.func(gpu-async-region), "
                     f"nvvm-attach-target{{chip={self.chip} features={self.features} O=3{link}}}, "
                     "convert-nvgpu-to-nvvm, convert-vector-to-scf, convert-scf-to-cf, convert-nvvm-to-llvm, "
                     f"convert-func-to-llvm{{{_BARE}}}, expand-strided-metadata, lower-affine, "
                     "convert-arith-to-llvm, convert-index-to-llvm, canonicalize, cse, "
                     f"gpu.module(convert-gpu-to-nvvm{{{_BARE}}}, canonicalize, cse, "
                     "reconcile-unrealized-casts), mlax-gpu-native-math, "
                     "gpu-to-llvm{use-bare-pointers-for-host=1 use-bare-pointers-for-kernels=1}, "
                     "convert-math-to-llvm, canonicalize, cse, reconcile-unrealized-casts, "
                     f"mlax-check-gpu-mapped{{libdevice={linked}}}"),
            ("binary", f"gpu-module-to-binary{{format={self.format}}}"),
        )

    def check_options(self) -> None:
        super().check_options()
        if self.format not in FORMATS:
            raise ValueError(f"{self.argument}: option 'format' must be one of {', '.join(FORMATS)}, "
                             f"got '{self.format}'")
        if self.libdevice not in ("auto", "none") and not Path(self.libdevice).is_file():
            raise ValueError(f"{self.argument}: option 'libdevice' must be auto, none or a file, "
                             f"got '{self.libdevice}'")
        if not self.block or len(self.block) > 3 or min(self.block) < 1:
            raise ValueError(f"{self.argument}: option 'block' needs 1 to 3 positive sizes, got {self.block}")
