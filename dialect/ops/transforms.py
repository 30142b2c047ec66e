"""Transformation ops: markers that the autodiff and batching passes consume.

`stop_gradient` and `optimization_barrier` are real ops. jvp, vjp, vmap, custom_jvp_call, custom_vjp_call and
checkpoint take operands of different types, which an IRDL variadic port cannot express
(it binds one type for all its operands), so they are function declarations carrying an
`mlax.<kind>` attribute instead; see dialect/transforms.py and docs/transforms.md.
"""

from __future__ import annotations

import numpy as np

from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec


def _infer_stop_gradient(x: TensorSpec) -> TensorSpec:
    return x


define_op(
    "stop_gradient", "(operand: T) -> (result: T)",
    elementwise=True, zero_derivative=True, complex=True,
    infer=_infer_stop_gradient,
    reference=lambda x: np.array(x, copy=True),
    weak_type="first",
    summary="Identity on values whose derivative is zero (JAX's `lax.stop_gradient`).",
    description="""
Returns `operand` unchanged, for any element type. Under differentiation it is a
constant: `mlax-autodiff` gives it a zero tangent and a zero cotangent, so nothing flows
back through it. Batching maps it elementwise (the batch dimension passes through).
Lowering passes treat it as the identity. `mlax-cleanup` never rewrites it to its
operand (a derivative pass may run later and needs the marker); it only folds
`stop_gradient` of a constant, which has no derivative anyway.
""",
)


define_op(
    "optimization_barrier", "(operand: T) -> (result: T)",
    elementwise=True, stablehlo="stablehlo.optimization_barrier", linear=(0,), complex=True,
    infer=lambda x: x,
    reference=lambda x: np.array(x, copy=True),
    weak_type="first",
    summary="Identity that no optimization looks through (JAX's `lax.optimization_barrier`).",
    description="""
Returns `operand` unchanged. Values computed from the result are never merged with values
computed the same way from the operand: reverse mode reads the residuals of a rematerialized
(`checkpoint`) region through barriers, so that CSE cannot fold the recomputation in the
backward pass into the forward values it replaces (which would keep them alive again). Its
tangent and cotangent go through a barrier too; batching maps it elementwise. The StableHLO
lowering is `stablehlo.optimization_barrier`; the linalg lowering is a call of a private
identity function, opaque to `cse` and elementwise fusion on tensors and inlined once the
program works on buffers. `mlax-cleanup` keeps it. jax's barrier takes a whole pytree at once;
mlax's takes one array (`mlax.lax.optimization_barrier` puts one on each leaf).
""",
)
