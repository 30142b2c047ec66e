"""Differentiating through a shard_map: its JVP and transpose are shard_maps again (jax's
``_shard_map_jvp`` / ``_shard_map_transpose``), so the derivative still runs per device.

- JVP: a shard_map of the callee's `mlax.jvp`, each tangent with its primal's spec. Reverse
  mode's linearization (``split``) emits the primal shard_map and a tangent one that keeps
  only the tangent outputs (linear in the tangents), as for cond (control_flow.py).
- Transpose: a shard_map of the callee's `mlax.vjp` over the linear operands, taking the
  known operands and the result cotangents and giving the operands' cotangents. mlax does not
  type values by the mesh axes they vary over (jax's check_vma), so the transpose is jax's
  untyped one: a result cotangent is divided by the sizes of the mesh axes its out spec does
  not name (each device holds a copy, and the global function reads one), and an operand's
  cotangent is summed (psum) over the axes its in spec does not name (every device's use of a
  replicated operand contributes). With psum's transpose a psum, this gives jax's numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mlir import ir
from mlir.dialects import func

from mlax.dialect.shard_map import SHARD_MAP_KIND, shard_map_mesh
from mlax.dialect.sharding import Mesh, Spec, spec_axes
from mlax.passes.autodiff.control_flow import (
    JOINT_JVP_RULES,
    SPLIT_JVP_RULES,
    TRANSPOSE_RULES,
    Builder,
    function_type,
    span,
    tangent_values,
)
from mlax.passes.autodiff.emit import Emitter, MaybeValue
from mlax.passes.symbols import define_function


def _mesh_fields(fields: dict) -> dict:
    return {"axis_names": fields["axis_names"], "axis_sizes": fields["axis_sizes"]}


def _local_inputs(b: Builder, fields: dict) -> list[ir.Type]:
    return list(function_type(b.lookup(fields["callee"])).inputs)


def _joint_shard_map(b: Builder, name: str, fields: dict, operands: list[ir.Value],
                     tangents: list[MaybeValue]) -> tuple[list[ir.Value], list[MaybeValue]]:
    """One shard_map of the callee's jvp: (operands, tangents) -> (results, tangents)."""
    jvp = b.declare("jvp", fields["callee"], callee=fields["callee"])
    joint = b.declare(SHARD_MAP_KIND, jvp, callee=jvp, **_mesh_fields(fields),
                      in_specs=fields["in_specs"] * 2, out_specs=fields["out_specs"] * 2)
    results = b.call(joint, [*operands, *b.dense(tangents, operands)])
    half = len(results) // 2
    return results[:half], tangent_values(results[half:])


def _split_shard_map(b: Builder, name: str, fields: dict, operands: list[ir.Value],
                     tangents: list[MaybeValue]) -> tuple[list[ir.Value], list[MaybeValue]]:
    """The primal shard_map, and a tangent one whose callee keeps the jvp's tangent outputs."""
    outs = b.call(name, operands)
    n_in, n_out = len(operands), len(outs)
    jvp = b.declare("jvp", fields["callee"], callee=fields["callee"])
    tangent_body = b.adapter(f"{fields['callee']}_tangent", jvp, _local_inputs(b, fields) * 2,
                             range(2 * n_in), span(n_out, n_out))
    tangent = b.declare(SHARD_MAP_KIND, tangent_body, callee=tangent_body, **_mesh_fields(fields),
                        in_specs=fields["in_specs"] * 2, out_specs=fields["out_specs"])
    return outs, tangent_values(b.call(tangent, [*operands, *b.dense(tangents, operands)]))


def _unnamed(layout: Spec, mesh: Mesh) -> tuple[str, ...]:
    """The mesh axes a spec does not split over (a value is a copy along them)."""
    named = set(spec_axes(layout))
    return tuple(axis for axis in mesh.axis_names if axis not in named)


def _transpose_shard_map(b: Builder, fields: dict, op: ir.Operation, cts: list[MaybeValue],
                         known: list[MaybeValue], varying: object = None) -> list[MaybeValue]:
    """(``varying``, the typing of an enclosing checked body, does not reach into a nested
    shard_map, whose own axes are manual and untyped.)"""
    mesh = shard_map_mesh(fields)
    in_specs, out_specs = fields["in_specs"], fields["out_specs"]
    callee = fields["callee"]
    local_in = _local_inputs(b, fields)
    local_out = list(function_type(b.lookup(callee)).results)
    linear = [i for i, v in enumerate(known) if v is None]
    kept = [i for i, v in enumerate(known) if v is not None]
    vjp = b.declare("vjp", callee, callee=callee, argnums=tuple(linear))
    vjp_results = list(function_type(b.lookup(vjp)).results)

    def build(point: ir.InsertionPoint, params: list[ir.Value]) -> list[ir.Value]:
        e = Emitter(point, b.location)
        args: list[ir.Value | None] = [None] * len(local_in)
        for i, p in zip(kept, params, strict=False):
            args[i] = p
        full = [a if a is not None else e.zeros(local_in[i]) for i, a in enumerate(args)]
        out_cts = [_scaled(e, ct, 1 / mesh.axis_size(_unnamed(s, mesh)))
                   for ct, s in zip(params[len(kept):], out_specs, strict=True)]
        with b.location:
            call = func.CallOp(vjp_results, vjp, [*full, *out_cts], ip=point)
        in_cts = list(call.results)[len(local_out):]
        return [_summed(e, ct, _unnamed(in_specs[i], mesh), mesh)
                for ct, i in zip(in_cts, linear, strict=True)]

    arg_types = [local_in[i] for i in kept] + local_out
    body = define_function(b.module, f"{callee}_transpose", arg_types, b.location, build)
    transposed = b.declare(SHARD_MAP_KIND, body, callee=body, **_mesh_fields(fields),
                           in_specs=tuple(in_specs[i] for i in kept) + tuple(out_specs),
                           out_specs=tuple(in_specs[i] for i in linear))
    results = list(op.results)
    lin_cts = iter(b.call(transposed, [*(known[i] for i in kept), *b.dense(cts, results)]))
    return [next(lin_cts) if v is None else None for v in known]


def _scaled(e: Emitter, value: ir.Value, factor: float) -> ir.Value:
    return value if factor == 1 else e("mul", value, e.full(value, factor))


def _summed(e: Emitter, value: ir.Value, axes: Sequence[str], mesh: Mesh) -> ir.Value:
    if not axes or math.prod(mesh.shape[a] for a in axes) == 1:
        return value
    return e("psum", value, axes=tuple(axes))


SPLIT_JVP_RULES[SHARD_MAP_KIND] = _split_shard_map
JOINT_JVP_RULES[SHARD_MAP_KIND] = _joint_shard_map
TRANSPOSE_RULES[SHARD_MAP_KIND] = _transpose_shard_map
