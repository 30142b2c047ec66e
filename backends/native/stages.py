"""The stages the native backends (CPU and GPU) share: mlax to fused linalg on tensors, and
the bufferization that makes a function of caller-owned buffers."""

from mlax.passes.cleanup import DEAD_CODE_ONLY

# The bufferization both native backends share (the GPU pipeline's `buffers` stage starts so).
BUFFERIZE = ("inline{default-pipeline=}, symbol-dce, mlax-buffer-abi, mlax-distinct-results, "
             "mlax-private-fills, eliminate-empty-tensors, "
             "one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops "
             "function-boundary-type-conversion=identity-layout-map}, "
             "canonicalize, buffer-results-to-out-params{hoist-static-allocs modify-public-functions}, "
             "buffer-deallocation-pipeline, inline")

# mlax to fused linalg on tensors, which both native backends share (calls whose results nothing
# reads and that have no effect are dropped first, as jax's DCE drops them; products stay
# `out + a * b` for the gemm passes: mlax-unfuse-contractions; each backend then orders the ops
# for memory; the CPU first splits long float reductions, which the GPU's block reductions
# already sum as trees).
TO_FUSED_LINALG = (f"mlax-expand-transforms, {DEAD_CODE_ONLY}, "
                   "mlax-simulate-devices, mlax-lower-control-flow, mlax-inline, "
                   "mlax-lower-callbacks, mlax-lower-to-linalg, canonicalize, linalg-fuse-elementwise-ops, "
                   "mlax-unfuse-contractions, mlax-approximate-math, canonicalize, cse")
