"""Rules for the collectives: StableHLO collectives over the module's `mlax.mesh`, as jax's
shard_map lowering emits them (jax/_src/lax/parallel.py).

A device's partition id is its linear index on the mesh (row-major, first mesh axis major:
dialect/sharding.py). A collective over `axes` runs within replica groups: the devices that
agree on every mesh axis NOT in `axes`, each group ordered by the linearized index over
`axes` in the op's order (the first named axis major), so block `j` of an all_gather is the
group's `j`-th device. Every collective carries jax's ``channel_handle<handle = 1, type = 1>``
(one id for all, as jax emits them) and, except all_to_all and collective_permute (which
jax gives none), `use_global_device_ids`: group entries are partition ids.

- psum / pmax / pmin: one `stablehlo.all_reduce` per tensor, its region adding (maximum,
  minimum) two scalars.
- all_gather / psum_scatter: `stablehlo.all_gather` / `stablehlo.reduce_scatter` (adding).
- all_to_all: `stablehlo.all_to_all` with split_count = axis_size.
- ppermute: `stablehlo.collective_permute`, each (source, destination) pair mapped through
  every group.
- axis_index: from `stablehlo.partition_id`: each axis's mesh coordinate is
  ``(id / stride) % size`` (stride: the product of the sizes of the later mesh axes),
  combined over `axes` in the op's order.

An op whose axes are not the module's mesh axes (or a module without a mesh: collectives of a
vmap are resolved by `mlax-batch` before lowering) fails with an error naming it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from mlir import ir

from mlax.dialect import read_attributes
from mlax.dialect.ops.collectives import REDUCE_KIND, pairs_of
from mlax.dialect.sharding import Mesh, ShardingError, module_mesh
from mlax.passes.lower_to_stablehlo.common import (
    Rule,
    constant,
    element_type,
    fail,
    hlo,
    scalar_reducer,
    value,
)

CHANNEL = "#stablehlo.channel_handle<handle = 1, type = 1>"
_COMBINE = {"sum": "add", "max": "maximum", "min": "minimum"}


def _mesh(op: ir.Operation) -> Mesh:
    """The mesh of the module ``op`` is in."""
    parent = op.parent
    while parent is not None and parent.name != "builtin.module":
        parent = parent.parent
    try:
        mesh = module_mesh(parent) if parent is not None else None
    except ShardingError as error:
        raise fail(op, str(error)) from None
    if mesh is None:
        raise fail(op, f"{op.name} needs the module's mlax.mesh to find its devices (collectives reach "
                       "StableHLO in shard_map bodies and partitioned programs; under vmap, mlax-batch "
                       "resolves them first)")
    return mesh


def replica_groups(mesh: Mesh, axes: Sequence[str]) -> list[list[int]]:
    """Partition ids grouped by their coordinates off ``axes``, each group in the linear order
    over ``axes`` (first axis major)."""
    groups: dict[tuple[int, ...], dict[int, int]] = {}
    for device in range(mesh.size):
        coords = mesh.coordinates(device)
        key = tuple(coords[a] for a in mesh.axis_names if a not in axes)
        position = 0
        for axis in axes:
            position = position * mesh.shape[axis] + coords[axis]
        groups.setdefault(key, {})[position] = device
    return [[group[i] for i in sorted(group)] for _, group in sorted(groups.items())]


def _checked(op: ir.Operation) -> tuple[Mesh, dict, list[list[int]]]:
    mesh = _mesh(op)
    attrs = read_attributes(op)
    axes = attrs["axes"]
    unknown = [a for a in axes if a not in mesh.shape]
    if unknown:
        raise fail(op, f"{op.name} over axes {list(axes)}: '{unknown[0]}' is not an axis of the module's "
                       f"mesh {mesh.describe()}")
    size = attrs.get("axis_size")
    if size is not None and size != mesh.axis_size(axes):
        raise fail(op, f"{op.name} has axis_size {size}, but axes {list(axes)} of the mesh "
                       f"{mesh.describe()} have {mesh.axis_size(axes)} devices")
    return mesh, attrs, replica_groups(mesh, axes)


def _groups_attr(groups: list[list[int]]) -> ir.DenseElementsAttr:
    return ir.DenseElementsAttr.get(np.asarray(groups, dtype=np.int64))


def _common(groups: list[list[int]], global_ids: bool = True) -> dict[str, ir.Attribute | str]:
    attrs: dict[str, ir.Attribute | str] = {"channel_handle": CHANNEL, "replica_groups": _groups_attr(groups)}
    if global_ids:
        attrs["use_global_device_ids"] = ir.UnitAttr.get()
    return attrs


def _i64(v: int) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(v))


def _all_reduce(op: ir.Operation) -> ir.Value:
    _, _, groups = _checked(op)
    x = op.operands[0]
    reduce = hlo("all_reduce", [x], op.results[0].type, _common(groups), regions=1)
    scalar_reducer(reduce, 0, element_type(x), _COMBINE[REDUCE_KIND[op.name.removeprefix("mlax.")]])
    return reduce.result


def _all_gather(op: ir.Operation) -> ir.Value:
    _, attrs, groups = _checked(op)
    return value("all_gather", [op.operands[0]], op.results[0].type,
                 {"all_gather_dim": _i64(attrs["dimension"]), **_common(groups)})


def _psum_scatter(op: ir.Operation) -> ir.Value:
    _, attrs, groups = _checked(op)
    x = op.operands[0]
    scatter = hlo("reduce_scatter", [x], op.results[0].type,
                  {"scatter_dimension": _i64(attrs["dimension"]), **_common(groups)}, regions=1)
    scalar_reducer(scatter, 0, element_type(x), "add")
    return scatter.result


def _all_to_all(op: ir.Operation) -> ir.Value:
    _, attrs, groups = _checked(op)
    return value("all_to_all", [op.operands[0]], op.results[0].type, {
        "split_dimension": _i64(attrs["split_dimension"]),
        "concat_dimension": _i64(attrs["concat_dimension"]),
        "split_count": _i64(attrs["axis_size"]), **_common(groups, global_ids=False)})


def _ppermute(op: ir.Operation) -> ir.Value:
    _, attrs, groups = _checked(op)
    pairs = pairs_of(attrs["pairs"])
    size = len(groups[0])
    if any(not (0 <= i < size) for pair in pairs for i in pair):
        raise fail(op, f"{op.name} pairs {pairs} name an index outside axes {list(attrs['axes'])} "
                       f"of size {size}")
    full = np.asarray([[g[s], g[d]] for g in groups for s, d in pairs], dtype=np.int64).reshape(-1, 2)
    return value("collective_permute", [op.operands[0]], op.results[0].type,
                 {"source_target_pairs": ir.DenseElementsAttr.get(full), "channel_handle": CHANNEL})


def _axis_index(op: ir.Operation) -> ir.Value:
    mesh, attrs, _ = _checked(op)
    i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    ui32 = ir.RankedTensorType.get([], ir.IntegerType.get_unsigned(32))
    device = value("convert", [value("partition_id", [], ui32)], i32)
    names = list(mesh.axis_names)
    index = None
    for axis in attrs["axes"]:
        stride = math.prod(mesh.axis_sizes[names.index(axis) + 1:])
        coordinate = value("remainder", [value("divide", [device, constant(stride, i32)], i32),
                                         constant(mesh.shape[axis], i32)], i32)
        if index is None:
            index = coordinate
        else:
            scaled = value("multiply", [index, constant(mesh.shape[axis], i32)], i32)
            index = value("add", [scaled, coordinate], i32)
    return index


RULES: dict[str, Rule] = {
    **{name: _all_reduce for name in REDUCE_KIND},
    "all_gather": _all_gather,
    "psum_scatter": _psum_scatter,
    "all_to_all": _all_to_all,
    "ppermute": _ppermute,
    "axis_index": _axis_index,
}
