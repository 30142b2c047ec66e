"""A partitioned program as one XLA program for its mesh (manual SPMD, as jax's shard_map).

`mlax-partition` leaves a per-device entry (``mlax.partitioned``: local shapes, a partition
spec on every argument and result) in a module whose ``mlax.mesh`` names the devices. XLA runs
such a body on N devices as jax runs a ``shard_map``: ``main`` takes and returns GLOBAL arrays
laid out by the specs, enters a region where every mesh axis is manual (each device sees its
block), calls the body there and leaves the region with the body's results as the blocks of
the global results. Two spellings of that boundary exist, one per jax partitioner, and the one
jax uses in this process is written (what ``jax.jit(jax.shard_map(...)).lower(...)`` prints):

- Shardy (jax's default): an ``sdy.mesh`` symbol, ``sdy.sharding`` on main's arguments and
  results, and ``sdy.manual_computation`` around the body call;
- GSPMD (``jax_use_shardy_partitioner=False``): ``mhlo.sharding`` strings on main's arguments
  and results (``{devices=[2,1,2]<=[4] last_tile_dim_replicate}``), and custom calls
  ``@Sharding`` + ``@SPMDFullToShardShape`` into ``{manual}``, ``@SPMDShardToFullShape`` out.

The collectives of the body carry replica groups of partition ids, the devices' linear mesh
indices (mlax-lower-to-stablehlo), so the program is compiled for the mesh's devices in
row-major order, as the NamedShardings of its arguments and results say.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from mlir import ir

from mlax.backends.xla import pjrt
from mlax.dialect import sharding as ir_sharding
from mlax.dialect.attrs import Spec

BODY = "mlax_spmd_body"
MESH_SYMBOL = "mlax_mesh"


@dataclass(frozen=True)
class MeshProgram:
    """The global signature of a partitioned entry: its mesh, the specs of its arguments and
    results, and their global types."""

    mesh: ir_sharding.Mesh
    in_specs: tuple[Spec, ...]
    out_specs: tuple[Spec, ...]
    in_types: tuple[ir.RankedTensorType, ...]
    out_types: tuple[ir.RankedTensorType, ...]

    def placement(self) -> pjrt.Placement:
        """The jax NamedShardings of the arguments and results, over the mesh's devices."""
        mesh = jax_mesh(self.mesh)
        return pjrt.Placement(tuple(named_sharding(mesh, s) for s in self.in_specs),
                              tuple(named_sharding(mesh, s) for s in self.out_specs))


def jax_mesh(mesh: ir_sharding.Mesh) -> object:
    """The jax Mesh of the dialect's mesh: its devices found by id, row-major."""
    import jax

    devices = np.array(pjrt.devices_by_id(mesh.device_ids), dtype=object).reshape(mesh.axis_sizes)
    types = tuple(jax.sharding.AxisType[t] for t in mesh.axis_types) if mesh.axis_types else None
    return jax.sharding.Mesh(devices, mesh.axis_names, axis_types=types)


def named_sharding(mesh: object, spec: Spec) -> object:
    """jax's NamedSharding of a dialect spec on a jax mesh, its PartitionSpec written as jax
    writes the shardings it infers (a shard_map's results): trailing whole dimensions left out,
    except on a mesh with an Explicit axis, whose shardings are types (one entry per dimension)."""
    import jax

    entries = [None if not axes else axes[0] if len(axes) == 1 else tuple(axes) for axes in spec]
    explicit = any(t == jax.sharding.AxisType.Explicit for t in mesh.axis_types)  # type: ignore[attr-defined]
    while entries and entries[-1] is None and not explicit:
        entries.pop()
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*entries))


def _functions(module: ir.Module) -> dict[str, ir.Operation]:
    return {ir.StringAttr(op.attributes["sym_name"]).value: op.operation
            for op in module.body.operations if op.operation.name == "func.func"}


def _signature(function: ir.Operation) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)


def is_partitioned(module: ir.Module, entry: str) -> bool:
    """Whether ``entry`` of ``module`` is a per-device entry for the module's mesh."""
    function = _functions(module).get(entry)
    return function is not None and ir_sharding.is_partitioned(function)


def mesh_program(module: ir.Module, entry: str) -> MeshProgram:
    """The global signature of the partitioned ``entry``; ShardingError if its specs do not
    fit the mesh (a spec naming an axis the mesh lacks, a missing mesh)."""
    function = _functions(module)[entry]
    mesh = ir_sharding.module_mesh(module)
    if mesh is None:
        raise ir_sharding.ShardingError(f"@{entry} is partitioned but the module has no "
                                        f"{ir_sharding.MESH_ATTR}")
    signature = _signature(function)

    def side(types: Sequence[ir.Type], read: Any, what: str) -> tuple[tuple[Spec, ...], tuple[ir.Type, ...]]:
        specs, globals_ = [], []
        for i, t in enumerate(types):
            rank = ir.RankedTensorType(t).rank
            spec = read(function, i) or ir_sharding.replicated(rank)
            specs.append(spec)
            globals_.append(ir_sharding.global_type(t, spec, mesh, f"{what} {i} of @{entry}"))
        return tuple(specs), tuple(globals_)

    with module.context, ir.Location.unknown():
        in_specs, in_types = side(signature.inputs, ir_sharding.arg_spec, "argument")
        out_specs, out_types = side(signature.results, ir_sharding.result_spec, "result")
    return MeshProgram(mesh, in_specs, out_specs, in_types, out_types)


def wrap_for_mesh(module: ir.Module, entry: str, main: str) -> MeshProgram:
    """Make ``module`` (StableHLO, ``entry`` partitioned) the N-device program XLA runs: the
    entry becomes the private body ``mlax_spmd_body`` and a new ``main`` takes and returns the
    global arrays (module docstring). Returns the program's global signature."""
    program = mesh_program(module, entry)
    functions = _functions(module)
    body = functions[entry]
    body_name = next(n for n in (BODY, *(f"{BODY}_{i}" for i in range(len(functions)))) if n not in functions)
    with module.context, ir.Location.unknown():
        _clean_body(body, module, body_name)
        for attribute in (ir_sharding.MESH_ATTR, "mlax.mesh_source"):
            if attribute in module.operation.attributes:
                del module.operation.attributes[attribute]
        i32 = ir.IntegerType.get_signless(32)
        module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(i32, program.mesh.size)
        module.operation.attributes["mhlo.num_replicas"] = ir.IntegerAttr.get(i32, 1)
        make_main = _shardy_main if pjrt.uses_shardy() else _gspmd_main
        make_main(module, program, _signature(body), body_name, main)
    return program


def _clean_body(body: ir.Operation, module: ir.Module, name: str) -> None:
    """The entry as a private function ``name`` without mlax's attributes (XLA's are on main)."""
    old = ir.StringAttr(body.attributes["sym_name"]).value
    ir.SymbolTable.replace_all_symbol_uses(old, name, module.operation)
    body.attributes["sym_name"] = ir.StringAttr.get(name)
    body.attributes["sym_visibility"] = ir.StringAttr.get("private")
    for attribute in (ir_sharding.PARTITIONED_ATTR, "arg_attrs", "res_attrs"):
        if attribute in body.attributes:
            del body.attributes[attribute]


def _new_main(module: ir.Module, program: MeshProgram, name: str, arg_attrs: list[dict[str, ir.Attribute]],
              res_attrs: list[dict[str, ir.Attribute]]) -> tuple[ir.Operation, ir.Block]:
    from mlir.dialects import func

    with ir.InsertionPoint.at_block_begin(module.body):
        main = func.FuncOp(name, ir.FunctionType.get(list(program.in_types), list(program.out_types)))
    main.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in arg_attrs])
    main.attributes["res_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in res_attrs])
    block = main.add_entry_block()
    return main.operation, block


def _call_body(body: str, body_type: ir.FunctionType, operands: Sequence[ir.Value]) -> list[ir.Value]:
    from mlir.dialects import func

    return list(func.CallOp(list(body_type.results), ir.FlatSymbolRefAttr.get(body), list(operands)).results)


def _return(values: Sequence[ir.Value]) -> None:
    from mlir.dialects import func

    func.ReturnOp(list(values))


# --- Shardy ------------------------------------------------------------------------------------


def _sdy_sharding(spec: Spec) -> str:
    dims = ", ".join("{" + ", ".join(f'"{a}"' for a in axes) + "}" for axes in spec)
    return f"<@{MESH_SYMBOL}, [{dims}]>"


def _shardy_main(module: ir.Module, program: MeshProgram, body_type: ir.FunctionType, body: str,
                 name: str) -> None:
    def attrs(specs: Sequence[Spec]) -> list[dict[str, ir.Attribute]]:
        return [{"sdy.sharding": ir.Attribute.parse(f"#sdy.sharding{_sdy_sharding(s)}")} for s in specs]

    def per_value(specs: Sequence[Spec]) -> ir.Attribute:
        return ir.Attribute.parse("#sdy.sharding_per_value<[" + ", ".join(map(_sdy_sharding, specs)) + "]>")

    _, block = _new_main(module, program, name, attrs(program.in_specs), attrs(program.out_specs))
    mesh = program.mesh
    axes = ", ".join(f'"{a}"={s}' for a, s in zip(mesh.axis_names, mesh.axis_sizes, strict=True))
    with ir.InsertionPoint.at_block_begin(module.body):  # before main, which names it
        ir.Operation.create("sdy.mesh", attributes={
            "sym_name": ir.StringAttr.get(MESH_SYMBOL), "mesh": ir.Attribute.parse(f"#sdy.mesh<[{axes}]>")})
    manual = ", ".join(f'"{a}"' for a in mesh.axis_names)
    with ir.InsertionPoint(block):
        region_op = ir.Operation.create(
            "sdy.manual_computation", results=list(program.out_types), operands=list(block.arguments),
            attributes={"in_shardings": per_value(program.in_specs),
                        "out_shardings": per_value(program.out_specs),
                        "manual_axes": ir.Attribute.parse(f"#sdy<manual_axes{{{manual}}}>")},
            regions=1)
        _return(list(region_op.results))
    inner = region_op.regions[0].blocks.append(*body_type.inputs)
    with ir.InsertionPoint(inner):
        results = _call_body(body, body_type, list(inner.arguments))
        ir.Operation.create("sdy.return", operands=results)


# --- GSPMD -------------------------------------------------------------------------------------


def _custom_call(target: str, operand: ir.Value, result: ir.Type, sharding: str) -> ir.Value:
    return ir.Operation.create("stablehlo.custom_call", results=[result], operands=[operand], attributes={
        "call_target_name": ir.StringAttr.get(target), "backend_config": ir.StringAttr.get(""),
        "mhlo.sharding": ir.StringAttr.get(sharding)}).result


def _gspmd_main(module: ir.Module, program: MeshProgram, body_type: ir.FunctionType, body: str,
                name: str) -> None:
    placement = program.placement()
    ins = [pjrt.hlo_sharding_text(s, t.rank)
           for s, t in zip(placement.inputs, program.in_types, strict=True)]
    outs = [pjrt.hlo_sharding_text(s, t.rank)
            for s, t in zip(placement.outputs, program.out_types, strict=True)]

    def attrs(texts: Sequence[str]) -> list[dict[str, ir.Attribute]]:
        return [{"mhlo.sharding": ir.StringAttr.get(t)} for t in texts]

    _, block = _new_main(module, program, name, attrs(ins), attrs(outs))
    with ir.InsertionPoint(block):
        local = []
        for argument, text, t in zip(block.arguments, ins, body_type.inputs, strict=True):
            annotated = _custom_call("Sharding", argument, argument.type, text)
            local.append(_custom_call("SPMDFullToShardShape", annotated, t, "{manual}"))
        results = _call_body(body, body_type, local)
        full = []
        for value, text, t in zip(results, outs, program.out_types, strict=True):
            annotated = _custom_call("Sharding", value, value.type, "{manual}")
            full.append(_custom_call("SPMDShardToFullShape", annotated, t, text))
        _return(full)
