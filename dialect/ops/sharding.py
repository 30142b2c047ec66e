"""Sharding ops: `mlax.sharding_constraint`, jax's `lax.with_sharding_constraint`.

The one op of the sharding vocabulary that is an op (shard_map is a declaration,
dialect/shard_map.py; meshes and argument specs are attributes, dialect/sharding.py). It
is the identity on values; what it says is for `mlax-partition`: its result must have the
partition spec `sharding` over the module's mesh. One-device backends never see it as
more than the identity.
"""

from __future__ import annotations

import numpy as np

from mlax.dialect.attrs import Spec
from mlax.dialect.ops.common import op_value_error
from mlax.dialect.registry import define_op
from mlax.dialect.sharding import describe_spec, spec_axes
from mlax.dialect.tensor_spec import TensorSpec


def _infer_sharding_constraint(x: TensorSpec, *, sharding: Spec) -> TensorSpec:
    """The operand's type; the spec has one entry per dimension and each axis at most once
    (whether the axes are the mesh's and divide the shape is the module's check,
    dialect/sharding.py, since an op does not see the module's mesh)."""
    if len(sharding) != x.ndim:
        raise op_value_error("sharding_constraint", f"sharding {describe_spec(sharding)} has {len(sharding)} "
                             f"entries but the operand has rank {x.ndim} (one entry per dimension)")
    axes = spec_axes(sharding)
    repeated = sorted({a for a in axes if axes.count(a) > 1})
    if repeated:
        raise op_value_error("sharding_constraint", f"sharding {describe_spec(sharding)} uses mesh axis "
                             f"'{repeated[0]}' more than once")
    return x


define_op(
    "sharding_constraint", "(operand: T) -> (result: T)",
    linear=(0,), complex=True,
    infer=_infer_sharding_constraint,
    reference=lambda x, *, sharding: np.array(x, copy=True),
    attributes={"sharding": "spec"},
    weak_type="first",
    summary="Identity on values whose result must have the partition spec `sharding` "
            "(jax's `lax.with_sharding_constraint`).",
    description="""
`sharding` is a partition spec (`[["x"], []]`: dimension 0 split over mesh axis `x`,
dimension 1 not split) over the module's `mlax.mesh`, one entry per dimension, each axis at
most once. The value is unchanged. `mlax-partition` makes its result have that sharding
(inserting the collectives a reshard needs) and removes the op. Under differentiation it is
linear (the tangent gets the same constraint) and its transpose constrains the cotangent;
batching keeps the spec with the batch dimension unsplit. Lowerings without a mesh (linalg,
StableHLO on one device) treat it as the identity.
""",
)
