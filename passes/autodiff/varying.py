"""Which mesh axes a value varies over inside a shard_map body (jax's check_vma types), for
reverse mode taken INSIDE the body.

jax types every value in a ``check_vma=True`` shard_map by the set of mesh axes along which
it may differ between devices ("varying manual axes"): an argument varies over the axes its
in spec names; an op's result over the union of its operands' (jax inserts a ``pvary`` where an
operand varies over fewer); psum/pmax/pmin make their axes invariant; axis_index varies over
its axes. That typing changes what grad computes there: the cotangent reaching an operand
that varies over fewer axes than its op is summed over the difference (the transpose of
``pvary`` is psum), and psum's own transpose is the identity. So ``grad`` of a loss over a
replicated parameter gives the gradient summed over the devices, as in jax.

`annotate_varying` runs before the transformations are resolved: it walks every checked
shard_map's callee and records, on each `mlax.vjp` declaration called there, the axes each of
its primal operands varies over (field ``varying``); `emit_vjp` then types the values it
linearizes (`op_varying`) and applies the two rules. Control flow is typed from its bodies
(`construct_varying`: loop carries to a fixpoint), and the vjps of the bodies its transpose
declares get their arguments' axes too, so the rules apply inside them.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir

from mlax.dialect import read_attributes
from mlax.dialect.attrs import to_attribute
from mlax.dialect.ops.collectives import COLLECTIVES, REDUCE_KIND
from mlax.dialect.shard_map import SHARD_MAP_KIND
from mlax.dialect.sharding import spec_axes
from mlax.dialect.transforms import ATTR_PREFIX, Transform, read_kind, read_transform

Varying = frozenset[str]
NONE: Varying = frozenset()


def op_varying(op: ir.Operation, operands: Sequence[Varying]) -> tuple[Varying, list[Varying]]:
    """The axes ``op`` computes over (its operands raised to them first) and its results' axes."""
    working = NONE.union(*operands)
    name = op.name.removeprefix("mlax.")
    if op.name.startswith("mlax.") and name in COLLECTIVES:
        axes = frozenset(read_attributes(op)["axes"])
        working |= axes
        if name in REDUCE_KIND:
            return working, [working - axes] * len(op.results)
    return working, [working] * len(op.results)


def as_specs(varying: Sequence[Varying]) -> tuple[tuple[tuple[str, ...]], ...]:
    """The ``varying`` field's form: one one-entry spec per operand (its axes, sorted)."""
    return tuple((tuple(sorted(v)),) for v in varying)


def from_specs(specs: Sequence[Sequence[Sequence[str]]]) -> list[Varying]:
    return [frozenset(a for entry in s for a in entry) for s in specs]


def _callee_name(op: ir.Operation) -> str:
    return ir.FlatSymbolRefAttr(op.attributes["callee"]).value


def _analyze(function: ir.Operation, args: Sequence[Varying], table: ir.SymbolTable,
             depth: int = 0) -> list[Varying]:
    """The axes each result of ``function`` varies over, annotating the vjps it calls."""
    block = function.regions[0].blocks[0]
    varying = dict(zip(block.arguments, args, strict=True))
    for op in [o.operation for o in block.operations]:
        ins = [varying[v] for v in op.operands]
        if op.name == "func.return":
            return ins
        outs = _call(op, ins, table, depth) if op.name == "func.call" else op_varying(op, ins)[1]
        varying.update(zip(op.results, outs, strict=True))
    return []


def _call(op: ir.Operation, ins: list[Varying], table: ir.SymbolTable, depth: int) -> list[Varying]:
    target = table[_callee_name(op)].operation
    union = NONE.union(*ins)
    transform = read_transform(target)
    if depth > 64 or (transform is None and not target.regions[0].blocks):
        return [union] * len(op.results)
    if transform is None:
        return _analyze(target, ins, table, depth + 1)
    if transform.kind == "vjp":
        return _annotate_vjp(target, transform, ins, table, depth)
    if transform.kind == "jvp":
        half = len(ins) // 2
        outs = _analyze(table[transform.callee].operation, ins[:half], table, depth + 1)
        return outs + outs
    if transform.kind in ("custom_jvp_call", "custom_vjp_call", "checkpoint"):
        return _analyze(table[transform.callee].operation, ins, table, depth + 1)
    if transform.kind in ("cond", "while", "scan"):
        return construct_varying(transform.kind, transform.fields, ins, table, depth + 1)
    return [union] * len(op.results)  # vmap, callbacks, a nested shard_map


def _annotate_vjp(target: ir.Operation, transform: Transform, ins: list[Varying], table: ir.SymbolTable,
                  depth: int) -> list[Varying]:
    callee = table[transform.callee].operation
    n_in = len(ir.FunctionType(ir.TypeAttr(callee.attributes["function_type"]).value).inputs)
    primals = ins[:n_in]
    attr = ir.DictAttr(target.attributes[ATTR_PREFIX + "vjp"])
    entries = {attr[i].name: attr[i].attr for i in range(len(attr))}
    entries["varying"] = to_attribute("specs", as_specs(primals))
    target.attributes[ATTR_PREFIX + "vjp"] = ir.DictAttr.get(entries)
    outs = _analyze(callee, primals, table, depth + 1)
    return outs + [primals[a] for a in transform.fields["argnums"]]


def _loop(body: ir.Operation, carry: list[Varying], rest: list[Varying], table: ir.SymbolTable,
          depth: int) -> tuple[list[Varying], list[Varying]]:
    """A loop's carries (grown to a fixpoint: a carry varies if it enters varying or the body
    makes it) and the body's results on them."""
    while True:
        outs = _analyze(body, [*carry, *rest], table, depth)
        grown = [c | o for c, o in zip(carry, outs, strict=False)]
        if grown == carry:
            return carry, outs
        carry = grown


def scan_body_varying(fields: dict, operands: Sequence[Varying], table: ir.SymbolTable,
                      depth: int = 0) -> tuple[list[Varying], list[Varying]]:
    """The axes a scan body's arguments vary over, and its results'."""
    nc = fields["num_carry"]
    carry, _ = _loop(table[fields["body"]].operation, list(operands[:nc]), list(operands[nc:]), table, depth)
    args = [*carry, *operands[nc:]]
    return args, _analyze(table[fields["body"]].operation, args, table, depth)


def construct_varying(kind: str, fields: dict, operands: Sequence[Varying], table: ir.SymbolTable,
                      depth: int = 0) -> list[Varying]:
    """The axes each result of a cond / while / scan call varies over, from its bodies."""
    if kind == "cond":  # a varying selector makes every result vary
        columns = zip(*(_analyze(table[b].operation, operands[1:], table, depth) for b in fields["branches"]),
                      strict=True)
        return [operands[0].union(*column) for column in columns]
    if kind == "scan":
        args, outs = scan_body_varying(fields, operands, table, depth)
        return [*args[:fields["num_carry"]], *outs[fields["num_carry"]:]]
    body = table[fields["body"]].operation
    n = len(ir.FunctionType(ir.TypeAttr(body.attributes["function_type"]).value).results)
    carry, _ = _loop(body, list(operands[:n]), list(operands[n:]), table, depth)
    (predicate,) = _analyze(table[fields["cond"]].operation, [*carry, *operands[n:]], table, depth)
    return [c | predicate for c in carry]  # a varying trip count makes every carry vary


def annotate_varying(module: ir.Operation) -> None:
    """Record on each vjp called inside a checked shard_map the axes its primals vary over."""
    table = ir.SymbolTable(module)
    for op in [o.operation for o in module.regions[0].blocks[0].operations]:
        transform = read_kind(op, SHARD_MAP_KIND)
        if transform is None or not transform.fields.get("check_vma"):
            continue
        callee = table[transform.callee].operation
        if callee.regions[0].blocks:
            _analyze(callee, [frozenset(spec_axes(s)) for s in transform.fields["in_specs"]], table)
