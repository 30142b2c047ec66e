"""The `mlax.shard_map` declaration: a per-device program over a mesh (jax's shard_map).

Like control flow (dialect/control_flow.py) a shard_map is a body-less private function whose
dictionary names its body; programs call it with `func.call` on GLOBAL values:

    func.func private @f_shard_map(tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
        attributes {mlax.shard_map = {callee = @f_body, axis_names = ["x", "y"],
                    axis_sizes = array<i64: 2, 2>, in_specs = [[["x"], []], [[]]],
                    out_specs = [[["x"], []]]}}

``callee`` is what each device runs: its types are the LOCAL ones, each dimension of a
declared type divided by the product of the sizes of the mesh axes its spec splits it over.
All mesh axes are manual inside the body (its collectives name them). A dimension an out
spec does not split is the same on every device (jax's check_vma proves it; mlax takes it as
a promise). ``check_vma`` (jax's, default true in the front end) types the body's values by
the axes they vary over, which changes what reverse mode INSIDE the body computes
(passes/autodiff/varying.py). The declaration stays through `mlax-expand-transforms` (jvp, vjp and vmap OF a
shard_map give new shard_maps, passes/*/shard_map.py); `mlax-partition` turns its calls into
calls of the per-device body and `mlax-simulate-devices` into nested vmaps over the mesh axes.
"""

from __future__ import annotations

from typing import Any

from mlir import ir

from mlax.dialect.sharding import Mesh, ShardingError, check_spec, describe_spec, global_type
from mlax.dialect.transforms import (
    KINDS,
    DeclarationError,
    FunctionTypes,
    Signature,
    Transform,
    make_kind,
    read_kind,
)

SHARD_MAP_KIND = "shard_map"


def shard_map_mesh(fields: dict[str, Any]) -> Mesh:
    """The mesh a declaration's axis_names and axis_sizes make (DeclarationError if malformed)."""
    try:
        return Mesh.of_axes(fields["axis_names"], fields["axis_sizes"])
    except ShardingError as error:
        message = str(error).replace("invalid mesh", "invalid axis_names / axis_sizes")
        raise DeclarationError(message) from None


def _count(field: str, specs: tuple, types: list[ir.Type], what: str) -> None:
    if len(specs) != len(types):
        raise DeclarationError(f"{field} has {len(specs)} spec(s) but the callee has {len(types)} {what}")


def _shard_map(values: dict[str, Any], types: FunctionTypes) -> dict[str, Signature]:
    """The declaration's types are the callee's, each scaled up by its spec."""
    mesh = shard_map_mesh(values)
    callee = types("callee")
    sides = []
    for field, tys, what in (("in_specs", list(callee.inputs), "arguments"),
                             ("out_specs", list(callee.results), "results")):
        specs = values[field]
        _count(field, specs, tys, what)
        side = []
        for i, (spec, t) in enumerate(zip(specs, tys, strict=True)):
            try:
                side.append(global_type(t, spec, mesh, f"{field}[{i}]"))
            except ShardingError as error:
                raise DeclarationError(str(error)) from None
        sides.append(side)
    return {"": (sides[0], sides[1])}


def check_declared_types(values: dict[str, Any], declared: ir.FunctionType) -> None:
    """The declaration's own (global) types fit its specs: ranks and divisibility, so that a
    bad size is named as such rather than as a type mismatch with the callee."""
    mesh = shard_map_mesh(values)
    for field, types in (("in_specs", list(declared.inputs)), ("out_specs", list(declared.results))):
        specs = values[field]
        if len(specs) != len(types):
            raise DeclarationError(f"{field} has {len(specs)} spec(s) but the declaration has {len(types)} "
                                   f"{'arguments' if field == 'in_specs' else 'results'}")
        for i, (spec, t) in enumerate(zip(specs, types, strict=True)):
            if not isinstance(t, ir.RankedTensorType):
                raise DeclarationError(f"{field}[{i}] is for a value of type {t}, not a ranked tensor")
            try:
                check_spec(spec, mesh, tuple(t.shape), f"{field}[{i}] ({t})")
            except ShardingError as error:
                raise DeclarationError(str(error)) from None


KINDS[SHARD_MAP_KIND] = make_kind(
    SHARD_MAP_KIND,
    "callee: symbol, axis_names: strs, axis_sizes: i64s, in_specs: specs, out_specs: specs, check_vma?: bool",
    _shard_map,
    "the callee's types with each dimension multiplied by the sizes of the mesh axes its spec names "
    "(the callee runs on every device, on its block)",
    check_declaration=check_declared_types,
)


def read_shard_map(op: ir.Operation | ir.OpView | None) -> Transform | None:
    """The shard_map ``op`` (a func.func) declares, or None."""
    return read_kind(op, SHARD_MAP_KIND)


def describe(fields: dict[str, Any]) -> str:
    """``in_specs=(P('x', None),) out_specs=(P(),)`` for messages."""
    ins = ", ".join(describe_spec(s) for s in fields["in_specs"])
    outs = ", ".join(describe_spec(s) for s in fields["out_specs"])
    return f"in_specs=({ins}) out_specs=({outs})"
