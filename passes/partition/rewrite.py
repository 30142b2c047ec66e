"""The per-device rewrite of a propagated entry: local types, resharding, collectives.

The entry's block gets new arguments of the local types; each op is re-emitted before itself
in its per-device form, then the global ops and arguments are erased. Every value, once
emitted, holds its block under its propagated spec:

- a factor node takes its factor shardings from its results' specs, then (for reduction
  factors and factors its results do not decide) from its operands'; operands are
  resharded to what those shardings ask (reshard.py); the op runs on local shapes (attributes
  that spell shapes are localized by the rule); sharded reduction factors get the
  psum/pmax/pmin that completes them; a result whose spec the op cannot give directly is
  resharded to it;
- a fallback node gathers its operands whole, runs as it is, and slices its results;
- a constraint is a reshard of its operand; a shard_map call becomes a call of its
  per-device body on operands resharded to its in_specs, whose results have its out_specs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mlir import ir
from mlir.dialects import func

from mlax.dialect.attrs import Spec
from mlax.dialect.sharding import (
    PARTITIONED_ATTR,
    Mesh,
    local_type,
    replicated,
    set_arg_spec,
    set_result_spec,
)
from mlax.dialect.transforms import declare_transform
from mlax.passes.autodiff.emit import Emitter, spec
from mlax.passes.partition.factors import REDUCTIONS, absorb, local_shape, normalize, project
from mlax.passes.partition.propagate import CONSTRAINT, CONTROL, RULE, SHARD_MAP, Node, Specs, fail
from mlax.passes.partition.reshard import reshard
from mlax.passes.symbols import unique_name

# (body name, argument specs, result specs or None where free) -> (its per-device copy's name,
# the specs of that copy's results)
BodyPartitioner = Callable[[str, Sequence[Spec], Sequence[Spec | None]], tuple[str, list[Spec]]]


class Rewriter:
    """Emits the per-device form of one entry's nodes."""

    def __init__(self, mesh: Mesh, specs: Specs, bodies: BodyPartitioner) -> None:
        self.mesh = mesh
        self.specs = specs  # global value -> its spec
        self.bodies = bodies
        self.local: dict[ir.Value, ir.Value] = {}  # global value -> its per-device value

    def spec_of(self, value: ir.Value) -> Spec:
        return self.specs.get(value) or replicated(len(spec(value).shape))

    def operand(self, e: Emitter, value: ir.Value, target: Spec) -> ir.Value:
        return reshard(e, self.local[value], self.spec_of(value), target, self.mesh.axis_size)

    def finish(self, e: Emitter, results: Sequence[ir.Value], produced: Sequence[ir.Value],
               specs: Sequence[Spec]) -> None:
        """Map each global result to its per-device value, resharded to its propagated spec
        (a result propagation gave none keeps the one it was produced with)."""
        for result, value, have in zip(results, produced, specs, strict=True):
            self.specs.setdefault(result, have)
            self.local[result] = reshard(e, value, have, self.spec_of(result), self.mesh.axis_size)

    def emit(self, node: Node) -> None:
        op = node.op
        e = Emitter(ir.InsertionPoint(op), op.location)
        if node.kind == RULE:
            self._rule(e, node)
        elif node.kind == CONSTRAINT:
            self.local[op.results[0]] = self.operand(e, op.operands[0], node.constraint)
        elif node.kind == SHARD_MAP:
            self._shard_map(e, node)
        elif node.kind == CONTROL:
            self._control(e, node)
        else:
            self._fallback(e, node)

    def _rule(self, e: Emitter, node: Node) -> None:
        rule, op, axis_size = node.rule, node.op, self.mesh.axis_size
        shardings: list[tuple[str, ...] | None] = [None] * len(rule.sizes)
        for dims, value in zip(rule.results, op.results, strict=True):
            absorb(rule, dims, self.spec_of(value), shardings, axis_size)
        for dims, value in zip(rule.operands, op.operands, strict=True):
            absorb(rule, dims, self.spec_of(value), shardings, axis_size)
        decided = normalize(rule, shardings, axis_size)
        operands = [self.operand(e, v, project(dims, decided)) for dims, v in zip(rule.operands, op.operands,
                                                                                  strict=True)]
        shapes = [local_shape(rule, dims, decided, axis_size) for dims in rule.results]
        attrs = rule.localize(dict(node.attrs), shapes) if rule.localize else node.attrs
        outs = e.many(op.name.removeprefix("mlax."), *operands, **attrs)
        for out, shape in zip(outs, shapes, strict=True):
            if tuple(spec(out).shape) != shape:
                raise fail(f"the sharding rule of {op.name} gave a per-device result of type {out.type}, "
                           f"expected shape {shape}", op.location)
        for kind, collective in REDUCTIONS.items():
            axes = tuple(a for f, k in enumerate(rule.kinds) if k == kind for a in decided[f])
            if axes:
                outs = [e(collective, out, axes=axes) for out in outs]
        self.finish(e, op.results, outs, [project(dims, decided) for dims in rule.results])

    def _fallback(self, e: Emitter, node: Node) -> None:
        op = node.op
        operands = [self.operand(e, v, replicated(len(spec(v).shape))) for v in op.operands]
        if op.name == "func.call":
            with op.location:
                callee = ir.FlatSymbolRefAttr(op.attributes["callee"])
                call = func.CallOp([r.type for r in op.results], callee, operands, ip=e.point)
            outs = list(call.results)
        else:
            outs = e.many(op.name.removeprefix("mlax."), *operands, **node.attrs)
        self.finish(e, op.results, outs, [replicated(len(spec(r).shape)) for r in op.results])

    def _shard_map(self, e: Emitter, node: Node) -> None:
        op, fields = node.op, node.shard_map.fields
        operands = [self.operand(e, v, s) for v, s in zip(op.operands, fields["in_specs"], strict=True)]
        types = [local_type(r.type, s, self.mesh)
                 for r, s in zip(op.results, fields["out_specs"], strict=True)]
        with op.location:
            call = func.CallOp(types, fields["callee"], operands, ip=e.point)
        self.finish(e, op.results, list(call.results), fields["out_specs"])


    def _control(self, e: Emitter, node: Node) -> None:
        op, kind, fields = node.op, node.construct.kind, dict(node.construct.fields)
        operands = list(op.operands)
        module = op.parent
        while module.name != "builtin.module":
            module = module.parent
        if kind == "cond":
            args = operands[1:]
            arg_specs = [self.spec_of(v) for v in args]
            parts = [self.bodies(b, arg_specs, [None] * len(op.results)) for b in fields["branches"]]
            result_specs = _merged_branch_specs([specs for _, specs in parts], any(map(any, arg_specs)))
            for name, specs in parts:
                _reshard_returns(module, name, specs, result_specs, self.mesh)
            fields["branches"] = tuple(name for name, _ in parts)
            local = [self.operand(e, operands[0], replicated(0)),
                     *(self.operand(e, v, s) for v, s in zip(args, arg_specs, strict=True))]
        elif kind == "while":
            arg_specs = [self.spec_of(v) for v in operands]
            n = len(op.results)
            arg_specs[:n] = self._carried(fields["body"], arg_specs, n, [None] * n)
            fields["body"], result_specs = self.bodies(fields["body"], arg_specs, arg_specs[:n])
            fields["cond"], _ = self.bodies(fields["cond"], arg_specs, [replicated(0)])
            local = [self.operand(e, v, s) for v, s in zip(operands, arg_specs, strict=True)]
        else:
            nc, nk = fields["num_carry"], fields["num_consts"]
            nx = len(operands) - nc - nk
            outer = [self.spec_of(v) for v in operands]
            outer[nc:nc + nx] = [((), *s[1:]) for s in outer[nc:nc + nx]]  # whole along the scan
            inner = [*outer[:nc], *(s[1:] for s in outer[nc:nc + nx]), *outer[nc + nx:]]
            free = [None] * (len(op.results) - nc)
            inner[:nc] = outer[:nc] = self._carried(fields["body"], inner, nc, [None] * nc + free)
            fields["body"], body_specs = self.bodies(fields["body"], inner, [*outer[:nc], *free])
            result_specs = [*body_specs[:nc], *(((), *s) for s in body_specs[nc:])]
            local = [self.operand(e, v, s) for v, s in zip(operands, outer, strict=True)]
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        name = unique_name(module, f"{callee}_partitioned")
        declared = declare_transform(module, kind, name, loc=op.location, **fields)
        with op.location:
            call = func.CallOp(list(ir.FunctionType(declared.type).results), name, local, ip=e.point)
        self.finish(e, op.results, list(call.results), result_specs)


    def _carried(self, body: str, arg_specs: list[Spec], n: int,
                 free: list[None]) -> list[Spec]:
        """The specs a loop's ``n`` carries keep: each one's entering spec, unless it enters
        whole and the body makes it split (a constraint in the body, say), as jax's
        propagation through the loop would (one trial partitioning of the body tells; the pass
        erases the trial copy with everything else nothing reaches)."""
        _, made = self.bodies(body, arg_specs, free)
        return [m if not any(c) and any(m) else c for c, m in zip(arg_specs[:n], made[:n], strict=True)]


def _merged_branch_specs(branches: list[list[Spec]], split_operands: bool) -> list[Spec]:
    """The specs all branches of a cond return: per dimension, the axes every branch splits it
    over (else whole), as jax's propagation ends up. Where the operands are all whole, a branch
    returning a whole result knows nothing, so only the branches that split it count (a
    sharding constraint in one branch decides)."""
    merged = []
    for i in range(len(branches[0])):
        candidates = [b[i] for b in branches if split_operands or any(b[i])] or [branches[0][i]]
        merged.append(tuple(axes if all(c[d] == axes for c in candidates) else ()
                            for d, axes in enumerate(candidates[0])))
    return merged


def _reshard_returns(module: ir.Operation, name: str, have: Sequence[Spec], want: Sequence[Spec],
                     mesh: Mesh) -> None:
    """Make the per-device function ``name`` return its results under ``want`` specs."""
    if list(have) == list(want):
        return
    function = ir.SymbolTable(module)[name].operation
    terminator = list(function.regions[0].blocks[0].operations)[-1].operation
    e = Emitter(ir.InsertionPoint(terminator), terminator.location)
    values = [reshard(e, v, h, w, mesh.axis_size)
              for v, h, w in zip(terminator.operands, have, want, strict=True)]
    for i, v in enumerate(values):
        terminator.operands[i] = v
    signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    function.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(list(signature.inputs), [v.type for v in values]))


def rewrite_entry(function: ir.Operation, nodes: Sequence[Node], specs: Specs, mesh: Mesh,
                  result_specs: Sequence[Spec | None], bodies: BodyPartitioner) -> None:
    """Make ``function`` (whose ops are ``nodes``) per-device, in place (a result spec None:
    the one its value ends up with); ``bodies`` partitions the branch and loop bodies its
    control flow calls."""
    with function.location:  # types made here need a location
        _rewrite(function, nodes, specs, mesh, result_specs, bodies)


def _rewrite(function: ir.Operation, nodes: Sequence[Node], specs: Specs, mesh: Mesh,
             result_specs: Sequence[Spec | None], bodies: BodyPartitioner) -> None:
    block = function.regions[0].blocks[0]
    rewriter = Rewriter(mesh, specs, bodies)
    old_args = list(block.arguments)
    for argument in old_args:
        local = local_type(argument.type, rewriter.spec_of(argument), mesh)
        rewriter.local[argument] = block.add_argument(local, argument.location)
    for node in nodes:
        rewriter.emit(node)
    terminator = list(block.operations)[-1].operation
    e = Emitter(ir.InsertionPoint(terminator), terminator.location)
    result_specs = [s if s is not None else rewriter.spec_of(v)
                    for v, s in zip(terminator.operands, result_specs, strict=True)]
    returned = [rewriter.operand(e, v, s) for v, s in zip(terminator.operands, result_specs, strict=True)]
    with terminator.location:
        func.ReturnOp(returned, ip=ir.InsertionPoint(terminator))
    for op in reversed([node.op for node in nodes] + [terminator]):
        op.erase()
    arg_specs = [rewriter.spec_of(a) for a in old_args]
    for _ in old_args:
        block.erase_argument(0)
    with function.context:
        function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [a.type for a in block.arguments], [v.type for v in returned]))
        for i, s in enumerate(arg_specs):
            set_arg_spec(function, i, s)
        for i, s in enumerate(result_specs):
            set_result_spec(function, i, s)
        function.attributes[PARTITIONED_ATTR] = ir.UnitAttr.get()
