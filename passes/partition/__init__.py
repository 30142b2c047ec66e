"""`mlax-partition`: SPMD partitioning, the global program -> the per-device program.

The counterpart of XLA's GSPMD and of Shardy. Input: a module with an ``mlax.mesh`` whose
entry (each public function with a body that nothing calls) has global shapes, partition
specs on some arguments and results (``mlax.sharding``), maybe ``mlax.sharding_constraint``
ops and calls of ``mlax.shard_map`` declarations; run after `mlax-expand-transforms` and
`mlax-cleanup`. Steps:

1. calls of private functions are inlined (`mlax-inline`), so the entry is one block;
   sharding constraints in shard_map bodies (per-device already) are dropped, being the
   identity there;
2. propagation (propagate.py) gives every value of the entry a spec, from the factor
   mappings of the rule table (rules.py);
3. the rewrite (rewrite.py) makes the entry per-device: local types, resharding collectives
   (reshard.py) where producer and consumer disagree, psum/pmax/pmin for sharded reduction
   factors, shard_map calls as calls of their per-device bodies, control flow as constructs
   over per-device copies of their bodies, each partitioned by these same steps with the
   specs its call gives it. Every argument and result then carries its ``mlax.sharding``
   (unspecified results get the propagated spec, unspecified arguments are replicated) and
   the entry carries ``mlax.partitioned``; functions nothing reaches any more are erased.

A module without a mesh is left as it is. What cannot be partitioned is a PassFailure at the
op, never an assertion.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from mlax.dialect.sharding import (
    PARTITIONED_ATTR,
    ShardingError,
    arg_spec,
    check_spec,
    describe_spec,
    is_partitioned,
    module_mesh,
    replicated,
    result_spec,
    set_arg_spec,
    set_result_spec,
)
from mlax.dialect.tensor_spec import TensorSpec
from mlax.dialect.transforms import DeclarationError, read_kind, transform_declarations
from mlax.passes.inline import Inline
from mlax.passes.partition.propagate import (
    PASS_NAME,
    SHARD_MAP,
    SHARD_MAP_KIND,
    Node,
    Specs,
    classify,
    fail,
    propagate,
    seed,
)
from mlax.passes.partition.rewrite import rewrite_entry
from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.symbols import reachable_functions, unique_name
from mlax.passes.walk import nested_ops

# Declarations that may stay in a module being partitioned (the others must be resolved).
_KEPT_KINDS = ("cond", "while", "scan", "callback", SHARD_MAP_KIND)


def _functions(module: ir.Operation) -> dict[str, ir.Operation]:
    return {ir.StringAttr(op.attributes["sym_name"]).value: op.operation
            for op in module.regions[0].blocks[0].operations if op.operation.name == "func.func"}


def _callees(module: ir.Operation) -> set[str]:
    return {ir.FlatSymbolRefAttr(op.attributes["callee"]).value for op in nested_ops(module)
            if op.name == "func.call"}


def _is_public(function: ir.Operation) -> bool:
    return "sym_visibility" not in function.attributes or \
        ir.StringAttr(function.attributes["sym_visibility"]).value == "public"


def _check(mesh, spec, value_type: ir.Type, what: str, location: ir.Location) -> None:
    try:
        check_spec(spec, mesh, TensorSpec.from_mlir(value_type).shape, what)
    except ShardingError as error:
        raise fail(str(error), location) from None


def _drop_constraints(function: ir.Operation) -> None:
    """A sharding constraint in a per-device (shard_map) body is the identity."""
    for op in nested_ops(function):
        if op.name == "mlax.sharding_constraint":
            op.results[0].replace_all_uses_with(op.operands[0])
            op.erase()


def _partition_body(module: ir.Operation, mesh, functions: dict[str, ir.Operation], name: str,
                    arg_specs, result_specs) -> tuple[str, list]:
    """A per-device copy of the branch or loop body ``name`` given its argument specs and
    some result specs (None: free); its name and its results' specs."""
    new_name = unique_name(module, f"{name}_partitioned")  # before the copy duplicates the name
    copy = functions[name].clone(ip=ir.InsertionPoint(module.regions[0].blocks[0]))
    copy.attributes["sym_name"] = ir.StringAttr.get(new_name)
    functions[new_name] = copy
    for i, s in enumerate(arg_specs):
        set_arg_spec(copy, i, s)
    for i, s in enumerate(result_specs):
        set_result_spec(copy, i, s)
    _partition_entry(copy, mesh, functions)
    results = [result_spec(copy, i) for i in range(len(result_specs))]
    for i in range(len(arg_specs)):  # a body is no entry: its boundary specs were for this pass
        set_arg_spec(copy, i, None)
    for i in range(len(results)):
        set_result_spec(copy, i, None)
    del copy.attributes[PARTITIONED_ATTR]
    return new_name, results


def _partition_entry(function: ir.Operation, mesh, functions: dict[str, ir.Operation]) -> None:
    name = ir.StringAttr(function.attributes["sym_name"]).value
    block = function.regions[0].blocks[0]
    nodes: list[Node] = [classify(op.operation, functions.__getitem__) for op in list(block.operations)[:-1]]
    specs: Specs = {}
    for i, argument in enumerate(block.arguments):
        given = arg_spec(function, i)
        if given is not None:
            _check(mesh, given, argument.type, f"argument {i} of @{name}", argument.location)
        specs[argument] = given or replicated(len(TensorSpec.from_mlir(argument.type).shape))
    for node in nodes:
        if node.kind == SHARD_MAP:
            _check_shard_map(node, mesh)
        elif node.constraint is not None:
            _check(mesh, node.constraint, node.op.operands[0].type, f"the operand of {node.op.name}",
                   node.op.location)
    seed(nodes, specs)
    terminator = list(block.operations)[-1].operation
    given_results = [result_spec(function, i) for i in range(len(terminator.operands))]
    for i, (value, given) in enumerate(zip(terminator.operands, given_results, strict=True)):
        if given is not None:
            _check(mesh, given, value.type, f"result {i} of @{name}", terminator.location)
            specs.setdefault(value, given)
    propagate(nodes, specs, mesh.axis_size)
    results = [given if given is not None else specs.get(value)
               for value, given in zip(terminator.operands, given_results, strict=True)]
    module = function.parent
    rewrite_entry(function, nodes, specs, mesh, results,
                  lambda body, ins, outs: _partition_body(module, mesh, functions, body, ins, outs))


def _check_shard_map(node: Node, mesh) -> None:
    fields = node.shard_map.fields
    names, sizes = tuple(fields["axis_names"]), tuple(fields["axis_sizes"])
    if (names, sizes) != (mesh.axis_names, mesh.axis_sizes):
        raise fail(f"the shard_map @{node.shard_map.name} is over axes "
                   f"{dict(zip(names, sizes, strict=True))}, not the module's mesh {mesh.describe()}",
                   node.op.location)
    for i, (value, s) in enumerate(zip(node.op.operands, fields["in_specs"], strict=True)):
        _check(mesh, s, value.type, f"operand {i} of the shard_map @{node.shard_map.name} "
               f"(in_specs {describe_spec(s)})", node.op.location)


@register_pass
@dataclass
class Partition(ModulePass):
    """SPMD partitioning over the module's mesh: propagate shardings, insert collectives,
    rewrite the entry into its per-device program."""

    argument = PASS_NAME
    summary = ("SPMD partitioning: propagate shardings (one rule per op), insert resharding "
               "collectives, rewrite the entry to its per-device program")

    def run(self, module: ir.Operation) -> None:
        try:
            mesh = module_mesh(module)
        except ShardingError as error:
            raise fail(str(error), module.location) from None
        if mesh is None:
            return
        try:
            declarations = list(transform_declarations(module))
        except DeclarationError as error:
            raise fail(str(error), module.location) from None
        for declaration, transform in declarations:
            if transform.kind not in _KEPT_KINDS:
                raise fail(f"the {transform.kind} declaration @{transform.name} must be resolved first "
                           "(run mlax-expand-transforms)", declaration.location)
        Inline().run(module)
        functions = _functions(module)
        called = _callees(module)
        entries = [f for name, f in functions.items() if _is_public(f) and f.regions[0].blocks
                   and name not in called and not is_partitioned(f)]
        for function in functions.values():
            if (transform := read_kind(function, SHARD_MAP_KIND)) is not None:
                _drop_constraints(functions[transform.callee])
        for entry in entries:
            _partition_entry(entry, mesh, functions)
        reached = reachable_functions(module)
        for op in [o.operation for o in module.regions[0].blocks[0].operations]:
            if op.name == "func.func" and op not in reached:
                op.erase()
