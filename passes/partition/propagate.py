"""Sharding propagation: a partition spec for every value of an entry, from the few that are
given (argument and result specs, sharding constraints, shard_map in/out specs).

Each op of the entry becomes a `Node`: a factor mapping from the rule table (rules.py), a
constraint, a shard_map call, a control-flow call (its loop carries keep their sharding from
operand to result, both ways; its bodies are partitioned in turn by the rewrite), or an op
that runs replicated (the fallback: indexing ops, host callbacks). Propagation sweeps the
nodes forward and backward until nothing changes: at a factor node, the specs already known
decide the factors they shard (the first tensor seen wins a conflict; a whole dimension
decides nothing), and every operand or result still without a spec gets the one those
factors give it. A value keeps the first spec it gets; one that never gets any is
replicated. Where a producer and a consumer disagree, the rewrite (rewrite.py) reshards
between them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mlir import ir

from mlax.dialect import read_attributes
from mlax.dialect.attrs import Spec, read_spec
from mlax.dialect.callbacks import CALLBACK_KIND
from mlax.dialect.control_flow import CONTROL_FLOW_KINDS
from mlax.dialect.tensor_spec import TensorSpec
from mlax.dialect.transforms import Transform, read_transform
from mlax.passes.partition.factors import OpRule, absorb, has_sharding, normalize, project
from mlax.passes.partition.rules import FALLBACK, RULES, SPECIAL, UNSUPPORTED
from mlax.passes.registry import PassFailure

SHARD_MAP_KIND = "shard_map"
PASS_NAME = "mlax-partition"

# Node kinds.
RULE, FALLBACK_NODE, CONSTRAINT, SHARD_MAP = "rule", "fallback", "constraint", "shard_map"
CONTROL = "control"


@dataclass
class Node:
    """One op of the entry as partitioning sees it."""

    op: ir.Operation
    kind: str
    rule: OpRule | None = None
    constraint: Spec | None = None  # a sharding_constraint's spec
    shard_map: Transform | None = None  # the shard_map declaration a call calls
    construct: Transform | None = None  # the cond / while / scan declaration a call calls
    attrs: dict[str, Any] = field(default_factory=dict)

    @property
    def values(self) -> list[ir.Value]:
        """Operands, then results: the order of ``rule.tensors()``."""
        return [*self.op.operands, *self.op.results]


def fail(message: str, location: ir.Location | None) -> PassFailure:
    return PassFailure(f"{PASS_NAME}: {message}", location)


def _shape(value: ir.Value) -> tuple[int, ...]:
    return TensorSpec.from_mlir(value.type).shape


def classify(op: ir.Operation, lookup: Callable[[str], ir.Operation]) -> Node:
    """The node of one op of an entry (PassFailure at the op for what cannot be partitioned)."""
    if op.name == "func.call":
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        transform = read_transform(lookup(callee))
        if transform is not None and transform.kind == SHARD_MAP_KIND:
            return Node(op, SHARD_MAP, shard_map=transform)
        if transform is not None and transform.kind in CONTROL_FLOW_KINDS:
            return Node(op, CONTROL, construct=transform)
        if transform is not None and transform.kind not in (*CONTROL_FLOW_KINDS, CALLBACK_KIND):
            raise fail(f"the {transform.kind} declaration @{callee} must be resolved first (run "
                       "mlax-expand-transforms)", op.location)
        return Node(op, FALLBACK_NODE)  # a host callback, a public function
    if not op.name.startswith("mlax."):
        raise fail(f"cannot partition '{op.name}' (only mlax ops and calls)", op.location)
    name = op.name.removeprefix("mlax.")
    if name in UNSUPPORTED:
        raise fail(f"cannot partition {op.name}: {UNSUPPORTED[name]}", op.location)
    attrs = read_attributes(op)
    if name in SPECIAL:
        return Node(op, CONSTRAINT, constraint=read_spec(op.attributes["sharding"]), attrs=attrs)
    if name in FALLBACK:
        return Node(op, FALLBACK_NODE, attrs=attrs)
    if name not in RULES:
        raise fail(f"no sharding rule for {op.name}", op.location)
    rule = RULES[name](attrs, [_shape(v) for v in op.operands], [_shape(v) for v in op.results])
    return Node(op, FALLBACK_NODE if rule is None else RULE, rule=rule, attrs=attrs)


Specs = dict[ir.Value, Spec]


def _offer(specs: Specs, value: ir.Value, spec: Spec) -> bool:
    """Give ``value`` ``spec`` unless it has one (the first spec a value gets stays)."""
    if value in specs:
        return False
    specs[value] = spec
    return True


def _step(node: Node, specs: Specs, axis_size: Callable[[Sequence[str]], int]) -> bool:
    if node.kind == CONSTRAINT:
        return _offer(specs, node.op.operands[0], node.constraint)
    if node.kind == SHARD_MAP:
        fields = node.shard_map.fields
        pairs = [*zip(node.op.operands, fields["in_specs"], strict=True),
                 *zip(node.op.results, fields["out_specs"], strict=True)]
        return any([_offer(specs, v, s) for v, s in pairs])
    if node.kind == CONTROL:
        count = carried(node.construct, len(node.op.results))
        pairs = list(zip(node.op.operands, node.op.results, strict=False))[:count]
        return any([_offer(specs, b, specs[a]) for a, b in pairs if a in specs] +
                   [_offer(specs, a, specs[b]) for a, b in pairs if b in specs])
    if node.kind != RULE:
        return False
    rule = node.rule
    shardings: list[tuple[str, ...] | None] = [None] * len(rule.sizes)
    tensors = list(zip(rule.tensors(), node.values, strict=True))
    for dims, value in tensors:
        if value in specs:
            absorb(rule, dims, specs[value], shardings, axis_size)
    if not has_sharding(shardings):
        return False
    decided = normalize(rule, shardings, axis_size)
    open_values = [(dims, value) for dims, value in tensors if value not in specs]
    return any([_offer(specs, value, project(dims, decided)) for dims, value in open_values])


def carried(construct: Transform, num_results: int) -> int:
    """How many leading operands of a control-flow call are loop carries (its leading results
    too): a while's results are all carries, a scan's first num_carry, a cond has none."""
    if construct.kind == "scan":
        return construct.fields["num_carry"]
    return num_results if construct.kind == "while" else 0


def seed(nodes: Sequence[Node], specs: Specs) -> None:
    """Specs that no propagation may change: constraint results and shard_map results."""
    for node in nodes:
        if node.kind == CONSTRAINT:
            _offer(specs, node.op.results[0], node.constraint)
        elif node.kind == SHARD_MAP:
            for value, spec in zip(node.op.results, node.shard_map.fields["out_specs"], strict=True):
                _offer(specs, value, spec)


def propagate(nodes: Sequence[Node], specs: Specs, axis_size: Callable[[Sequence[str]], int]) -> None:
    """Sweep ``nodes`` forward and backward until no value gets a new spec (each sweep that
    changes something gives at least one value its spec, so this ends)."""
    changed = True
    while changed:
        changed = False
        for order in (nodes, list(reversed(nodes))):
            for node in order:
                changed |= _step(node, specs, axis_size)
