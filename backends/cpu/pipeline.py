"""`mlax-cpu-pipeline`: mlax on tensors -> LLVM dialect for the host CPU, in named stages.

Each stage is a pipeline text and its IR can be printed on its own
(``jit(f).lower(x).as_text("loops")``, ``mlax-opt --pass-pipeline='builtin.module(
mlax-cpu-pipeline{to=buffers})'``):

- ``linalg``: derivative declarations get their bodies, a shard_map runs its per-device
  program as vmaps over the mesh axes (`mlax-simulate-devices`), cond/while/scan calls become scf ops
  on tensors calling their bodies, and calls are inlined; host callbacks become calls of the
  runtime's entry point (`mlax-lower-callbacks`); mlax ops become
  linalg/tensor/arith/math on tensors; elementwise producers are fused into their consumers;
  exp/log/tanh/erf... become polynomials in arith (vectorizable); float sums longer than a few
  hundred elements per accumulator become sums of blocks (`mlax-split-reductions`, accurate
  like XLA's tree reductions); ops that end a temporary's
  life move up to just after their operands (`mlax-schedule-for-memory`: a training step's
  parameter updates run as soon as each gradient exists).
- ``buffers``: the optimization barriers' identity calls are inlined (they kept `cse` from
  merging a rematerialized value with the forward one); each op that overwrites a shared fill
  gets its own (`mlax-private-fills`: no fill copied per gemm); one-shot bufferization across
  the function boundary; results become
  caller-allocated out-parameters written in place (``hoist-static-allocs``: no copy on
  return); temporaries are freed; f32/f64 matmuls become BLAS calls (beta = 0 in place of a
  zero fill); complex arithmetic becomes
  arith/math on the parts (``convert-complex-to-standard``, after generalizing: a named matmul's
  body must stay complex.mul/add; complex matmuls run as loops). Loops copy nothing per
  step: a scan's y is computed into its row of the stacked output (``eliminate-empty-tensors``)
  and a step's new carry is handed on (``allow-return-allocs-from-loops``; ``canonicalize``
  then folds loop results that are their init buffers, so they can become out-parameters, and
  ``inline`` inlines the deallocation's ``dealloc_helper``, whose dynamic memref arguments the
  bare-pointer convention cannot convert); each temporary is freed right after its last use
  (`mlax-early-dealloc`; the deallocation pipeline frees them at the end of their block); each
  kernel becomes a noinline function, one per kind called where each occurs (`mlax-outline-kernels`:
  LLVM compiles it once, and no function holds many loops).
- ``loops``: the remaining linalg ops become scf loops (LLVM's O3 loop vectorizer turns the
  innermost ones into SIMD code); the outermost loop of each big loop nest is split across
  OpenMP threads; buffers of i1 become buffers of bytes (NumPy's bools).
- ``llvm``: everything to the LLVM dialect; memref arguments are passed as bare pointers
  (all shapes are static), which keeps the call from Python to one pointer per buffer.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlax.backends.native.stages import BUFFERIZE, TO_FUSED_LINALG
from mlax.passes.registry import PassPipeline, last_stage, option, register_pass

CPU_STAGES: tuple[tuple[str, str], ...] = (
    ("linalg", f"{TO_FUSED_LINALG}, mlax-split-reductions, mlax-schedule-for-memory"),
    ("buffers", f"{BUFFERIZE}, linalg-generalize-named-ops, mlax-linalg-to-blas, "
                "convert-complex-to-standard, canonicalize, mlax-early-dealloc, mlax-outline-kernels"),
    ("loops", "convert-linalg-to-parallel-loops, mlax-parallel-loops, convert-scf-to-openmp, "
              "mlax-widen-bool-buffers, canonicalize"),
    ("llvm", "mlax-prefer-vector-width, expand-strided-metadata, lower-affine, convert-scf-to-cf, "
             "mlax-exact-libm-calls, convert-math-to-llvm, convert-math-to-libm, "
             "arith-emulate-unsupported-floats{source-types=bf16 target-type=f32}, "
             "mlax-expand-bf16, finalize-memref-to-llvm{use-aligned-alloc=1}, convert-complex-to-llvm, "
             "convert-arith-to-llvm, "
             "convert-index-to-llvm, convert-cf-to-llvm, "
             "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1}, convert-openmp-to-llvm, "
             "reconcile-unrealized-casts"),
)

@register_pass
@dataclass(frozen=True)
class CpuPipeline(PassPipeline):
    """The CPU backend's lowering, from mlax to the LLVM dialect, stage by stage."""

    argument = "mlax-cpu-pipeline"
    summary = "lower mlax to the LLVM dialect for the host CPU"

    to: str = last_stage(CPU_STAGES)
    blas: bool = option(True, "call BLAS gemm for f32/f64 matmuls (mlax-linalg-to-blas)")
    openmp: bool = option(True, "run big outermost parallel loops on OpenMP threads")
    outline: bool = option(True, "one function per kind of kernel, compiled once (mlax-outline-kernels)")
    profile: bool = option(False, "time each kernel into mlax.profiler's event buffer (mlax-profile-kernels)")

    @property
    def stages(self) -> tuple[tuple[str, str], ...]:
        """`CPU_STAGES` without the BLAS calls, OpenMP threads or outlined kernels the options
        turn off, and with each kernel timed when profiling."""
        dropped = ([] if self.blas else ["mlax-linalg-to-blas"]) + \
            ([] if self.openmp else ["convert-scf-to-openmp", "convert-openmp-to-llvm"]) + \
            ([] if self.outline else ["mlax-outline-kernels"])
        stages = []
        for name, text in CPU_STAGES:
            text = ", ".join(element for element in text.split(", ") if element not in dropped)
            if self.profile:  # each kernel timed before any is outlined (its body names its lines)
                text = text.replace("mlax-early-dealloc", "mlax-early-dealloc, mlax-profile-kernels")
            stages.append((name, text))
        return tuple(stages)
