"""Batching `mlax.cond` / `mlax.while` / `mlax.scan` calls: JAX's control-flow batching rules.

A construct with a batched operand becomes a NEW construct (or, for a batched cond selector,
plain calls) whose bodies are `mlax.vmap` declarations of the old bodies, resolved at once
through the shared Resolver, so nested constructs and vmap of vmap batch recursively. Which
loop carries must be batched is a fixpoint over the body (JAX's ``_batch_jaxpr`` with
``instantiate``): a carry is batched if it enters batched or the body makes it batched.

- cond, unbatched selector: a cond of the vmapped branches.
- cond, batched selector: every vmapped branch runs; each output selects per example
  (the index clamped into range, as the unbatched cond does).
- while, unbatched predicate: a while of the vmapped cond and body. Batched predicate: all
  carries batched; loop while ANY example's predicate holds, and the body keeps the carries
  of finished examples (select between the new and the old carry).
- scan: batched scanned operands and stacked results have the batch at 0 outside and at 1
  inside the scan (a transpose each way), so each slice carries it at 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from mlir import ir

from mlax.dialect.callbacks import read_callback
from mlax.dialect.transforms import Transform, read_kind
from mlax.dialect.user_primitives import read_user_primitive
from mlax.passes.autodiff.emit import Emitter, spec
from mlax.passes.batching.rules import broadcast_batch
from mlax.passes.batching.rules_collectives import names_axis, resolved_flags
from mlax.passes.batching.user_primitives import batched_rule
from mlax.passes.expand_transforms import THROUGH
from mlax.passes.registry import PassFailure
from mlax.passes.symbols import CallSite, define_function

FunctionLookup = Callable[[str], ir.Operation]
FlagRule = Callable[[dict, list[bool], int, FunctionLookup, int, "str | None"], list[bool]]


def control_flow(function: ir.Operation | None) -> Transform | None:
    """The construct ``function`` declares, if it is a control-flow (or shard_map) declaration."""
    return read_kind(function, *RULES)


# --- which values end up batched (over-approximated where a rule cannot be read ahead) -------------


def batched_outputs(function: ir.Operation, flags: Sequence[bool], lookup: FunctionLookup, size: int,
                    axis_name: str | None = None) -> list[bool]:
    """Which results of ``function`` `emit_batched` may return batched given batched ``flags``;
    a result marked False is certainly unbatched (it may be asked for with out_axes -1).
    Nested constructs are read as their rules batch them (a loop counter that depends on no
    batched value stays unbatched, as in jax's ``_batch_jaxpr``); collectives over
    ``axis_name`` as their resolution makes them; user primitives as their batching rules
    say; the results of callbacks with a batched operand, and of custom derivatives, are all
    batched (as their calls are: a custom derivative's declaration is batched under a named
    axis too)."""
    block = function.regions[0].blocks[0]
    batched = dict(zip(block.arguments, flags, strict=True))
    for op in [o.operation for o in block.operations]:
        ins = [batched[v] for v in op.operands]
        if op.name == "func.return":
            return ins
        outs = resolved_flags(op, ins) if names_axis(op, axis_name) else [any(ins)] * len(op.results)
        if op.name == "func.call" and (any(ins) or axis_name is not None):
            outs = _call_outputs(op, ins, lookup, size, axis_name) or outs
        batched.update(zip(op.results, outs, strict=True))
    raise PassFailure("mlax-batch: function without func.return", function.location)


def _call_outputs(call: ir.Operation, ins: list[bool], lookup: FunctionLookup, size: int,
                  axis_name: str | None) -> list[bool] | None:
    """Which results of ``call`` are batched, where its callee says more than "any operand"."""
    target = lookup(ir.FlatSymbolRefAttr(call.attributes["callee"]).value)
    if (transform := read_kind(target, *THROUGH)) is not None:
        if transform.kind != "checkpoint":  # batched as a declaration: every result batched
            return [True] * len(call.results)
        target = lookup(transform.fields["callee"])
    if (construct := control_flow(target)) is not None:
        n = len(call.results)
        if not any(ins):  # the call is copied as it is
            return [False] * n
        return OUT_FLAGS[construct.kind](construct.fields, ins, n, lookup, size, axis_name)
    if read_user_primitive(target) is not None:  # as its batching rule says (traced once)
        return batched_rule(target, ins, size, axis_name)[1] if any(ins) else [False] * len(call.results)
    if read_callback(target) is not None:
        return None
    return batched_outputs(target, ins, lookup, size, axis_name)


def _carry_fixpoint(body: ir.Operation, carry: list[bool], rest: list[bool],
                    lookup: FunctionLookup, size: int, axis_name: str | None) -> list[bool]:
    """Carries that must be batched: those entering batched or made batched by the body."""
    while True:
        outs = batched_outputs(body, [*carry, *rest], lookup, size, axis_name)[:len(carry)]
        grown = [a or b for a, b in zip(carry, outs, strict=True)]
        if grown == carry:
            return carry
        carry = grown


def _cond_flags(fields: dict, flags: list[bool], n: int, lookup: FunctionLookup, size: int,
                axis_name: str | None) -> list[bool]:
    """A cond's batched results: all for a batched selector, else those batched in any branch."""
    if flags[0]:
        return [True] * n
    columns = zip(*(batched_outputs(lookup(b), flags[1:], lookup, size, axis_name)
                    for b in fields["branches"]), strict=True)
    return [any(column) for column in columns]


def _while_flags(fields: dict, flags: list[bool], n: int, lookup: FunctionLookup, size: int,
                 axis_name: str | None) -> list[bool]:
    """A while's batched carries: the body's fixpoint; all of them if the predicate is batched."""
    consts = flags[n:]
    carry = _carry_fixpoint(lookup(fields["body"]), flags[:n], consts, lookup, size, axis_name)
    if batched_outputs(lookup(fields["cond"]), [*carry, *consts], lookup, size, axis_name)[0]:
        return [True] * n  # examples finish at different iterations: every carry is per example
    return carry


def _scan_flags(fields: dict, flags: list[bool], n: int, lookup: FunctionLookup, size: int,
                axis_name: str | None) -> list[bool]:
    """A scan's batched results: the carries' fixpoint, then the stacked outputs of the body."""
    num_carry = fields["num_carry"]
    function = lookup(fields["body"])
    carry = _carry_fixpoint(function, flags[:num_carry], flags[num_carry:], lookup, size, axis_name)
    ys = batched_outputs(function, [*carry, *flags[num_carry:]], lookup, size, axis_name)[num_carry:]
    return [*carry, *ys]


# --- where the batched construct goes ------------------------------------------------------------


def _axes(flags: Sequence[bool]) -> tuple[int, ...]:
    return tuple(0 if f else -1 for f in flags)


@dataclass
class Site(CallSite):
    """The batched call being written: where, at which batch size, and how to make functions."""

    size: int
    axis_name: str | None = None  # the vmap's, which the bodies' vmaps bind too

    @property
    def e(self) -> Emitter:
        return Emitter(self.point, self.location)

    def vmapped(self, name: str, ins: Sequence[bool], outs: Sequence[bool]) -> str:
        """``@name`` batched: arguments and results carry the batch at 0 where flagged."""
        return self.declare("vmap", name, callee=name, in_axes=_axes(ins), out_axes=_axes(outs),
                            axis_size=self.size, axis_name=self.axis_name)

    def broadcast(self, values: Sequence[ir.Value], flags: Sequence[bool], want: Sequence[bool]
                  ) -> list[ir.Value]:
        """``values``, those ``want`` batched but not ``flags`` batched broadcast along the batch."""
        e = self.e
        return [broadcast_batch(e, v, self.size) if w and not f else v
                for v, f, w in zip(values, flags, want, strict=True)]


def _select(e: Emitter, pred: ir.Value, on_true: ir.Value, on_false: ir.Value) -> ir.Value:
    """Per example: ``pred`` (shape (size,)) broadcast to the operands' shape picks a side."""
    shape = spec(on_true).shape
    if len(shape) > 1:
        pred = e("broadcast_in_dim", pred, shape=tuple(shape), broadcast_dimensions=(0,))
    return e("select", pred, on_true, on_false)


def _swap01(e: Emitter, value: ir.Value) -> ir.Value:
    """Exchange the two leading dimensions (batch <-> scanned axis)."""
    rank = spec(value).ndim
    return e("transpose", value, permutation=(1, 0, *range(2, rank)))


# --- the rules ----------------------------------------------------------------------------------------

Batched = tuple[list[ir.Value], list[bool]]
Rule = Callable[[Site, dict, list[ir.Value], list[bool], int], Batched]


def _cond(at: Site, fields: dict, args: list[ir.Value], flags: list[bool], n: int) -> Batched:
    branches = fields["branches"]
    selector, operands, in_flags = args[0], args[1:], flags[1:]
    if not flags[0]:
        out_flags = _cond_flags(fields, flags, n, at.lookup, at.size, at.axis_name)
        vmapped = tuple(at.vmapped(b, in_flags, out_flags) for b in branches)
        name = at.declare("cond", vmapped[0], branches=vmapped)
        return at.call(name, [selector, *operands]), out_flags
    results = [at.call(at.vmapped(b, in_flags, [True] * n), operands) for b in branches]
    return _pick(at.e, selector, results), [True] * n


def _pick(e: Emitter, selector: ir.Value, results: list[list[ir.Value]]) -> list[ir.Value]:
    """Per example, the results of the branch ``selector`` names: for two branches a boolean
    (false, true); otherwise an index clamped into range, each branch tested in turn."""
    if len(results) == 2:
        tests = [(selector, results[1])]
        outs = results[0]
    else:
        index = e("clamp", e("constant", value=np.int32(0)), selector,
                  e("constant", value=np.int32(len(results) - 1)))
        tests = [(e("compare", index, e.full(index, i), comparison_direction="EQ"), r)
                 for i, r in enumerate(results[:-1])]
        outs = results[-1]
    for pred, chosen in tests:
        outs = [_select(e, pred, a, b) for a, b in zip(chosen, outs, strict=True)]
    return outs


def _while(at: Site, fields: dict, args: list[ir.Value], flags: list[bool], n: int) -> Batched:
    consts = flags[n:]
    carry = _while_flags(fields, flags, n, at.lookup, at.size, at.axis_name)
    pred_batched = batched_outputs(at.lookup(fields["cond"]), [*carry, *consts], at.lookup, at.size,
                                   at.axis_name)[0]
    operands = [*at.broadcast(args[:n], flags[:n], carry), *args[n:]]
    ins = [*carry, *consts]
    body = at.vmapped(fields["body"], ins, carry)
    cond = at.vmapped(fields["cond"], ins, [pred_batched])
    if pred_batched:
        types, lanes, step = [v.type for v in operands], cond, body

        def any_holds(point: ir.InsertionPoint, values: list[ir.Value]) -> list[ir.Value]:
            (pred,) = at.call(lanes, values, point)
            return [Emitter(point, at.location)("reduce_or", pred, dimensions=(0,))]

        def step_holding(point: ir.InsertionPoint, values: list[ir.Value]) -> list[ir.Value]:
            (pred,) = at.call(lanes, values, point)
            new = at.call(step, values, point)
            e = Emitter(point, at.location)
            return [_select(e, pred, a, b) for a, b in zip(new, values[:n], strict=True)]

        cond = define_function(at.module, f"{lanes}_any", types, at.location, any_holds)
        body = define_function(at.module, f"{step}_masked", types, at.location, step_holding)
    name = at.declare("while", body, cond=cond, body=body)
    return at.call(name, operands), carry


def _scan(at: Site, fields: dict, args: list[ir.Value], flags: list[bool], n: int) -> Batched:
    num_carry, num_consts = fields["num_carry"], fields["num_consts"]
    xs_end = len(args) - num_consts
    outs = _scan_flags(fields, flags, n, at.lookup, at.size, at.axis_name)
    ins = [*outs[:num_carry], *flags[num_carry:]]
    e = at.e
    xs = [_swap01(e, x) if f else x
          for x, f in zip(args[num_carry:xs_end], flags[num_carry:xs_end], strict=True)]
    operands = [*at.broadcast(args[:num_carry], flags[:num_carry], outs[:num_carry]), *xs, *args[xs_end:]]
    body = at.vmapped(fields["body"], ins, outs)
    name = at.declare("scan", body, body=body, length=fields["length"], reverse=fields["reverse"],
                      num_carry=num_carry, num_consts=num_consts)
    results = at.call(name, operands)
    ys = [_swap01(e, y) if f else y for y, f in zip(results[num_carry:], outs[num_carry:], strict=True)]
    return [*results[:num_carry], *ys], outs


# kind -> rule, and the results it makes batched; shard_map.py adds the shard_map rule (its calls
# are batched the same way)
RULES: dict[str, Rule] = {"cond": _cond, "while": _while, "scan": _scan}
OUT_FLAGS: dict[str, FlagRule] = {"cond": _cond_flags, "while": _while_flags, "scan": _scan_flags}


def batch_control_flow(call: ir.Operation, construct: Transform, args: list[ir.Value], flags: list[bool],
                       size: int, point: ir.InsertionPoint, lookup: FunctionLookup,
                       axis_name: str | None = None) -> Batched:
    """The batched form of ``call``, a call of ``construct`` with some operand batched: its
    results and which of them are batched (at dimension 0)."""
    module = lookup(construct.name).parent
    at = Site(module, point, call.location, lookup, size, axis_name)
    return RULES[construct.kind](at, construct.fields, args, flags, len(call.results))
