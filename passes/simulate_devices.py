"""`mlax-simulate-devices`: run a shard_map's per-device program on one device, as nested
vmaps over the mesh axes (what jax's shard_map does under `jax.vmap` semantics).

The backends that run one device (interpreter, cpu, `mlax-run`) compute a shard_map's global
result by giving its declaration a body: each operand is cut into its blocks, laid out with
one leading dimension per mesh axis its spec names (mesh order), and the callee runs under
one `mlax.vmap` per mesh axis (outermost first) whose `axis_name` is that axis, so its
collectives become ops over the lanes (passes/batching/rules_collectives.py). An operand an
axis does not split is unbatched at that axis' vmap (every lane sees all of it). Each
result comes back with every mesh axis as a leading dimension; an axis its out spec does not
name is one where the lanes agree (the declaration's promise), so lane 0 is taken, and the
named ones are folded back into the dimensions they split. The vmaps are resolved at once,
so the pass leaves no declaration behind; run it after `mlax-expand-transforms` (the
derivatives and vmaps OF a shard_map are shard_maps again, passes/*/shard_map.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mlir import ir
from mlir.dialects import func

from mlax.dialect import read_attributes
from mlax.dialect.ops.collectives import COLLECTIVES
from mlax.dialect.shard_map import read_shard_map, shard_map_mesh
from mlax.dialect.sharding import Mesh, Spec
from mlax.dialect.transforms import ATTR_PREFIX, Transform
from mlax.passes.expand_transforms import HANDLERS, Resolver, load_handlers
from mlax.passes.registry import ModulePass, PassFailure, register_pass
from mlax.passes.symbols import CallSite, reachable_functions
from mlax.passes.walk import nested_ops

if TYPE_CHECKING:
    from mlax.passes.autodiff.emit import Emitter

ARGUMENT = "mlax-simulate-devices"


def _mentioned(layout: Spec, mesh: Mesh) -> list[str]:
    """The mesh axes a spec names, in mesh order (the order of the leading lane dimensions)."""
    named = {axis for entry in layout for axis in entry}
    return [axis for axis in mesh.axis_names if axis in named]


def _split_dims(layout: Spec, mesh: Mesh, local: tuple[int, ...]) -> tuple[list[int], list[str]]:
    """The global value reshaped so that each dimension is (its axes' sizes..., local size): the
    shape, and the name of each dimension ("" for a local one)."""
    shape, names = [], []
    for axes, size in zip(layout, local, strict=True):
        for axis in axes:
            shape.append(mesh.shape[axis])
            names.append(axis)
        shape.append(size)
        names.append("")
    return shape, names


def to_lanes(e: Emitter, value: ir.Value, layout: Spec, mesh: Mesh, local: tuple[int, ...]) -> ir.Value:
    """A global value as (one dimension per mesh axis ``layout`` names, mesh order) + local block."""
    shape, names = _split_dims(layout, mesh, local)
    split = e("reshape", value, shape=tuple(shape)) if len(shape) != len(local) else value
    order = [names.index(axis) for axis in _mentioned(layout, mesh)]
    order += [i for i, n in enumerate(names) if not n]
    return e("transpose", split, permutation=tuple(order)) if order != list(range(len(order))) else split


def from_lanes(e: Emitter, value: ir.Value, layout: Spec, mesh: Mesh, local: tuple[int, ...]) -> ir.Value:
    """The inverse of `to_lanes` for a result that has every mesh axis as a leading dimension:
    lane 0 of the axes ``layout`` does not name, the others folded back into their dimensions."""
    from mlax.passes.autodiff.emit import spec

    k = len(mesh.axis_names)
    mentioned = _mentioned(layout, mesh)
    if len(mentioned) < k:  # take lane 0 of the others
        full = spec(value).shape
        limits = [full[i] if axis in mentioned else 1 for i, axis in enumerate(mesh.axis_names)]
        value = e("slice", value, start_indices=(0,) * len(full), limit_indices=(*limits, *full[k:]),
                  strides=(1,) * len(full))
        value = e("reshape", value, shape=(*(mesh.shape[a] for a in mentioned), *local))
    shape, names = _split_dims(layout, mesh, local)
    lane_dims = {axis: i for i, axis in enumerate(mentioned)}
    locals_ = iter(range(len(mentioned), len(mentioned) + len(local)))
    order = [lane_dims[n] if n else next(locals_) for n in names]
    if order != list(range(len(order))):
        value = e("transpose", value, permutation=tuple(order))
    if len(shape) == len(local):
        return value
    return e("reshape", value, shape=tuple(math.prod(shape[i] for i in group) for group in _groups(names)))


def _groups(names: list[str]) -> list[list[int]]:
    """The positions of each global dimension in a `_split_dims` shape (its axes, then its block)."""
    groups, current = [], []
    for i, n in enumerate(names):
        current.append(i)
        if not n:
            groups.append(current)
            current = []
    return groups


def _body(site: CallSite, transform: Transform, operands: list[ir.Value]) -> list[ir.Value]:
    """The global results of the shard_map ``transform`` on ``operands``, simulated."""
    from mlax.passes.autodiff.emit import Emitter, spec

    fields = transform.fields
    mesh = shard_map_mesh(fields)
    callee = ir.FunctionType(ir.TypeAttr(site.lookup(fields["callee"]).attributes["function_type"]).value)
    in_local = [tuple(spec(t).shape) for t in callee.inputs]
    out_local = [tuple(spec(t).shape) for t in callee.results]
    e = Emitter(site.point, site.location)
    lanes = [to_lanes(e, v, s, mesh, local)
             for v, s, local in zip(operands, fields["in_specs"], in_local, strict=True)]
    target = fields["callee"]
    for axis, size in reversed(list(zip(mesh.axis_names, mesh.axis_sizes, strict=True))):
        in_axes = tuple(0 if axis in _mentioned(s, mesh) else -1 for s in fields["in_specs"])
        target = site.declare("vmap", f"{fields['callee']}_{axis}", callee=target, in_axes=in_axes,
                              out_axes=(0,) * len(out_local), axis_size=size, axis_name=axis)
    results = site.call(target, lanes)
    return [from_lanes(e, r, s, mesh, local)
            for r, s, local in zip(results, fields["out_specs"], out_local, strict=True)]


def simulate(resolver: Resolver, declaration: ir.Operation, transform: Transform) -> None:
    """Give the shard_map ``declaration`` its simulated body (it becomes a plain function)."""
    del declaration.attributes[ATTR_PREFIX + transform.kind]
    with declaration.location:
        block = declaration.opview.add_entry_block()
    site = CallSite(declaration.parent, ir.InsertionPoint(block), declaration.location, resolver.lookup)
    results = _body(site, transform, list(block.arguments))
    with declaration.location:
        func.ReturnOp(results, ip=ir.InsertionPoint(block))


def _check_bound(module: ir.Operation) -> None:
    """A collective left in the program after the simulation names an axis nothing binds."""
    for function in reachable_functions(module):
        for op in nested_ops(function):
            if op.name.startswith("mlax.") and op.name.removeprefix("mlax.") in COLLECTIVES:
                axes = ", ".join(repr(a) for a in read_attributes(op)["axes"])
                raise PassFailure(f"{ARGUMENT}: {op.name} over {axes}, which no shard_map or vmap around it "
                                  f"binds (unbound axis name)", op.location)


@register_pass
@dataclass
class SimulateDevices(ModulePass):
    """Run every shard_map as nested vmaps over its mesh axes (one device computes all)."""

    argument = ARGUMENT
    summary = "give shard_map declarations bodies: nested vmaps over the mesh axes (the one-device road)"

    def run(self, module: ir.Operation) -> None:
        resolver = None
        while True:  # a shard_map inside a shard_map's body comes out of the vmaps as a new one
            pending = [(op, t) for op in [o.operation for o in module.regions[0].blocks[0].operations]
                       if (t := read_shard_map(op)) is not None and not op.regions[0].blocks]
            if not pending:
                _check_bound(module)
                return
            if resolver is None:  # the vmaps it declares are resolved by passes/batching
                load_handlers()
                resolver = Resolver(module, tuple(HANDLERS), self.argument)
            for declaration, transform in pending:
                simulate(resolver, declaration, transform)
