"""`mlax-gpu-pipeline`: mlax on tensors -> GPU kernels -> NVVM -> PTX in a ``gpu.binary``, in
named stages (``jit(f, backend="gpu").lower(x).as_text("gpu")``, ``mlax-opt --pass-pipeline=
'builtin.module(mlax-gpu-pipeline{to=gpu})'``):

- ``linalg``: the CPU pipeline's own stage (`mlax.passes.cpu_pipeline.CPU_STAGES`): one road
  from mlax to fused linalg on tensors for both native backends.
- ``buffers``: one-shot bufferization across the function boundary as on the CPU (the public
  function's arguments and results are memrefs the runtime owns on the device; results are
  out-parameters), with no BLAS calls and no OpenMP; library calls the linalg stage made
  (LAPACK, FFT, host callbacks) are refused here with the op's location
  (`mlax-check-gpu-mapped{mapped=false}`).
- ``gpu``: host code reads the device bytes its control flow decides on (a while_loop's or
  cond's predicate) through a copy to a host buffer, and the deallocation bookkeeping of loop
  carries becomes scalar host code (`mlax-gpu-host-reads`); reductions become the innermost
  dimensions of each linalg op (`mlax-gpu-reductions-inner`); host code with nothing parallel
  in it (a sum to a scalar, a cumulative sum's loop) is put in a one-iteration loop, a
  one-thread kernel
  (`mlax-gpu-serial-kernels`); every linalg op becomes an ``scf.parallel`` nest (reductions a
  sequential ``scf.for`` inside: one thread per output element); the contiguous dimension is
  put first (`mlax-gpu-coalesce`) so that tiling into blocks of ``block`` threads gives it
  ``threadIdx.x``; buffers of bools become buffers of bytes (`mlax-widen-bool-buffers`, as on
  the CPU: NumPy's layout, and LLVM refuses sub-byte loads); the nests are mapped to the grid
  and the block, turned into ``gpu.launch`` and outlined into one ``gpu.module`` per kernel,
  named as PTX allows (`mlax-gpu-kernel-names`: no ``.`` from the entry's ``jit.`` prefix);
  host temporaries, copies and constant arrays move to the device (`mlax-gpu-device-buffers`);
  anything left on the host that touches memory fails with its location
  (`mlax-check-gpu-mapped`).
- ``nvvm``: kernels to the NVVM dialect (``nvvm-attach-target`` names the chip; libdevice
  calls that are one PTX instruction become LLVM intrinsics again, `mlax-gpu-native-math`, the
  others are refused), host code to the LLVM dialect calling MLIR's CUDA runtime wrappers
  (``gpu-to-llvm``) on one stream per call (``gpu-async-region``); every buffer is one pointer.
- ``binary``: ``gpu-module-to-binary``: with ``format=isa`` the kernels are PTX text, which
  needs no CUDA installation (the driver JIT-compiles it); ``bin``/``fatbin`` need ptxas.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlax.passes.cpu_pipeline import BUFFERIZE, CPU_STAGES
from mlax.passes.registry import PassPipeline, option, register_pass

LINALG_STAGE = dict(CPU_STAGES)["linalg"]
STAGE_NAMES = ("linalg", "buffers", "gpu", "nvvm", "binary")
FORMATS = ("isa", "bin", "fatbin", "llvm", "offload")
# Every buffer is one pointer, on the host as in the kernels: all shapes are static.
_BARE = "use-bare-ptr-memref-call-conv=1"


@register_pass
@dataclass
class GpuPipeline(PassPipeline):
    """The GPU backend's lowering, from mlax to PTX/cubin kernels and host LLVM, stage by stage."""

    argument = "mlax-gpu-pipeline"
    summary = "lower mlax to GPU kernels for NVIDIA GPUs (stages: linalg, buffers, gpu, nvvm, binary)"

    to: str = option("binary", "the last stage to run: linalg, buffers, gpu, nvvm or binary")
    chip: str = option("sm_90", "the NVIDIA architecture the kernels are compiled for")
    features: str = option("+ptx80", "the PTX version feature (+ptxNN)")
    format: str = option("isa", "gpu.binary's format: isa (PTX text, no CUDA needed), bin or fatbin (ptxas)")
    block: tuple[int, ...] = option((32, 8), "threads per block along the outer parallel dimensions")

    @property
    def stages(self) -> tuple[tuple[str, str], ...]:  # type: ignore[override]
        tiles = ",".join(map(str, self.block))
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
                     f"nvvm-attach-target{{chip={self.chip} features={self.features} O=3}}, "
                     "convert-nvgpu-to-nvvm, convert-vector-to-scf, convert-scf-to-cf, convert-nvvm-to-llvm, "
                     f"convert-func-to-llvm{{{_BARE}}}, expand-strided-metadata, lower-affine, "
                     "convert-arith-to-llvm, convert-index-to-llvm, canonicalize, cse, "
                     f"gpu.module(convert-gpu-to-nvvm{{{_BARE}}}, canonicalize, cse, "
                     "reconcile-unrealized-casts), mlax-gpu-native-math, "
                     "gpu-to-llvm{use-bare-pointers-for-host=1 use-bare-pointers-for-kernels=1}, "
                     "convert-math-to-llvm, canonicalize, cse, reconcile-unrealized-casts, "
                     "mlax-check-gpu-mapped"),
            ("binary", f"gpu-module-to-binary{{format={self.format}}}"),
        )

    def elements_text(self) -> str:
        if self.to not in STAGE_NAMES:
            raise ValueError(f"{self.argument}: option 'to' must be one of {', '.join(STAGE_NAMES)}, "
                             f"got '{self.to}'")
        if self.format not in FORMATS:
            raise ValueError(f"{self.argument}: option 'format' must be one of {', '.join(FORMATS)}, "
                             f"got '{self.format}'")
        if not self.block or len(self.block) > 3 or min(self.block) < 1:
            raise ValueError(f"{self.argument}: option 'block' needs 1 to 3 positive sizes, got {self.block}")
        last = STAGE_NAMES.index(self.to)
        return ", ".join(text for _, text in self.stages[:last + 1])
