"""`mlax-batch`: give every `mlax.vmap` declaration a batched body (no per-example loop).

The handler moves each batched argument's batch axis to dimension 0 (a transpose), walks the
callee's ops in order and, for each op with a batched operand, emits the op's batch rule
(rules.py: one per op, every batched value keeps its batch dimension at 0, as JAX's
batching rules with bdim 0); ops with only unbatched operands are copied as they are. Calls
of a nested jit's function call its batched function, written once per callee and
configuration (pyfront/nested_jit.py); other calls are walked in place (custom derivatives and
checkpoints through their callee); calls of control-flow constructs and host callbacks by their rules
(control_flow.py, callbacks.py). Results
are moved to their out_axes; an unbatched result asked for with an axis is broadcast.
Resolution goes through the shared Resolver (passes/expand_transforms.py), so vmap of grad
and grad of vmap resolve innermost first under `mlax-expand-transforms`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from mlax.dialect.callbacks import read_callback
from mlax.dialect.transforms import read_transform
from mlax.dialect.user_primitives import read_user_primitive
from mlax.passes.autodiff.emit import Emitter, spec
from mlax.passes.batching import shard_map  # noqa: F401  (adds the shard_map rule to control_flow's table)
from mlax.passes.batching.callbacks import batch_callback
from mlax.passes.batching.control_flow import batch_control_flow, control_flow
from mlax.passes.batching.custom_derivatives import batch_custom_call
from mlax.passes.batching.rules import BATCH_RULES, broadcast_batch
from mlax.passes.batching.rules_collectives import names_axis, resolve_collective
from mlax.passes.batching.user_primitives import batch_user_primitive
from mlax.passes.expand_transforms import HANDLERS, Resolver
from mlax.passes.registry import ModulePass, PassFailure, register_pass
from mlax.passes.symbols import body_less_name, derived_function, shared_callee

FunctionLookup = Callable[[str], ir.Operation]
CUSTOM_DERIVATIVES = ("custom_jvp_call", "custom_vjp_call")  # batched as declarations (custom_derivatives.py)


def emit_batched(function: ir.Operation, operands: Sequence[ir.Value], batched: Sequence[bool], size: int,
                 point: ir.InsertionPoint, lookup: FunctionLookup,
                 axis_name: str | None = None) -> tuple[list[ir.Value], list[bool]]:
    """Emit ``function``'s body at ``point`` on ``operands`` (those flagged batched carry a
    leading batch dimension of ``size``); returns the results and which of them are batched.
    Collectives over ``axis_name`` (the vmap's, if it has one) become ops over the batch."""
    if not function.regions[0].blocks:
        raise PassFailure(f"mlax-batch: {body_less_name(function)} has no body to batch (an external "
                          "function)", function.location)
    block = function.regions[0].blocks[0]
    values: dict[ir.Value, ir.Value] = dict(zip(block.arguments, operands, strict=True))
    flags: dict[ir.Value, bool] = dict(zip(block.arguments, batched, strict=True))
    for op in [o.operation for o in block.operations]:
        if op.name == "func.return":
            return [values[v] for v in op.operands], [flags[v] for v in op.operands]
        args = [values[v] for v in op.operands]
        arg_flags = [flags[v] for v in op.operands]
        target = lookup(ir.FlatSymbolRefAttr(op.attributes["callee"]).value) \
            if op.name == "func.call" else None
        construct = control_flow(target)
        if target is not None and read_callback(target) is not None:
            outs, out_flags = batch_callback(op, target, args, arg_flags, size, point)
        elif target is not None and read_user_primitive(target) is not None:
            outs, out_flags = batch_user_primitive(op, target, args, arg_flags, size, point, axis_name) \
                if any(arg_flags) else _unbatched(op, args, point)
        elif target is not None and construct is None:
            transform = read_transform(target)
            if transform is None and shared_callee(target):
                outs, out_flags = _call_batched(op, target, args, arg_flags, size, point, lookup, axis_name)
            elif transform is not None and transform.kind in CUSTOM_DERIVATIVES:
                if any(arg_flags) or axis_name is not None:
                    outs, out_flags = batch_custom_call(op, target, transform, args, arg_flags, size, point,
                                                        lookup, axis_name, emit_batched)
                else:  # nothing batched: the call stays, and its rule with it (an enclosing grad uses it)
                    outs, out_flags = _unbatched(op, args, point)
            else:  # walked in place; a checkpoint through its callee
                body = target if transform is None else lookup(transform.fields["callee"])
                outs, out_flags = emit_batched(body, args, arg_flags, size, point, lookup, axis_name)
        elif names_axis(op, axis_name):
            outs, out_flags = resolve_collective(Emitter(point, op.location), op, args, arg_flags, size,
                                                 axis_name)
        elif not any(arg_flags):
            outs, out_flags = _unbatched(op, args, point)
        elif construct is not None:
            outs, out_flags = batch_control_flow(op, construct, args, arg_flags, size, point, lookup,
                                                 axis_name)
        else:
            outs = _apply_rule(op, args, arg_flags, size, point)
            out_flags = [True] * len(outs)
        for result, value, flag in zip(op.results, outs, out_flags, strict=True):
            values[result], flags[result] = value, flag
    raise PassFailure("mlax-batch: function without func.return", function.location)


def _unbatched(op: ir.Operation, args: list[ir.Value],
               point: ir.InsertionPoint) -> tuple[list[ir.Value], list[bool]]:
    """``op`` as it is, on ``args``: none of them is batched, nor are its results."""
    clone = op.clone(ip=point)
    for i, value in enumerate(args):
        clone.operands[i] = value
    return list(clone.results), [False] * len(clone.results)


def _call_batched(op: ir.Operation, callee: ir.Operation, args: list[ir.Value], flags: list[bool], size: int,
                  point: ir.InsertionPoint, lookup: FunctionLookup,
                  axis_name: str | None) -> tuple[list[ir.Value], list[bool]]:
    """A call batched: a call of the callee's batched function, written once per callee, set
    of batched operands, size and axis name; with nothing batched (and no axis whose
    collectives it could use), the call itself."""
    name = ir.StringAttr(callee.attributes["sym_name"]).value
    if not any(flags) and axis_name is None:
        clone = op.clone(ip=point)
        for i, value in enumerate(args):
            clone.operands[i] = value
        return list(clone.results), [False] * len(clone.results)

    def build(body: ir.InsertionPoint, arguments: list[ir.Value]) -> tuple[list[ir.Value], list[bool]]:
        return emit_batched(callee, arguments, flags, size, body, lookup, axis_name)

    key = f"vmap {name} {''.join('1' if f else '0' for f in flags)} {size} {axis_name}"
    symbol, out_flags = derived_function(callee.parent, key, f"{name}_vmap", [a.type for a in args],
                                         callee.location, build)
    function_type = ir.FunctionType(ir.TypeAttr(lookup(symbol).attributes["function_type"]).value)
    with op.location:
        call = func.CallOp(list(function_type.results), symbol, args, ip=point)
    return list(call.results), out_flags


def _element_type(value: ir.Value) -> ir.Type:
    return ir.RankedTensorType(value.type).element_type


def _apply_rule(op: ir.Operation, args: list[ir.Value], flags: list[bool], size: int,
                point: ir.InsertionPoint) -> list[ir.Value]:
    name = op.name.removeprefix("mlax.")
    rule = BATCH_RULES.get(name) if op.name.startswith("mlax.") else None
    if rule is None:
        raise PassFailure(f"mlax-batch: no batching rule for {op.name} yet", op.location)
    emitter = Emitter(point, op.location)
    if size == 0:  # every result is empty: no rule needs to see a batch of nothing
        with op.location:
            return [emitter.zeros(ir.RankedTensorType.get([0, *spec(r).shape], _element_type(r)))
                    for r in op.results]
    outs = rule(emitter, op, args, flags, size)
    for result, out in zip(op.results, outs, strict=True):
        expected = [size, *spec(result).shape]
        if list(spec(out).shape) != expected or spec(out).dtype != spec(result).dtype:
            raise PassFailure(f"mlax-batch: the batching rule of {op.name} gave {out.type} for a result of "
                              f"type {result.type} (expected a leading dimension of {size})", op.location)
    return outs


def _move(e: Emitter, value: ir.Value, source: int, destination: int) -> ir.Value:
    if source == destination:
        return value
    order = [d for d in range(len(spec(value).shape)) if d != source]
    order.insert(destination, source)
    return e("transpose", value, permutation=tuple(order))


def _vmap(resolver: Resolver, declaration: ir.Operation, callee: ir.Operation, fields: dict,
          arguments: list[ir.Value], point: ir.InsertionPoint) -> list[ir.Value]:
    size = int(fields["axis_size"])
    e = Emitter(point, declaration.location)
    operands, flags = [], []
    for argument, axis in zip(arguments, fields["in_axes"], strict=True):
        operands.append(argument if axis == -1 else _move(e, argument, axis, 0))
        flags.append(axis != -1)
    outs, out_flags = emit_batched(callee, operands, flags, size, point, resolver.lookup,
                                   fields.get("axis_name"))
    results = []
    for out, flag, axis in zip(outs, out_flags, fields["out_axes"], strict=True):
        if axis == -1:
            if flag:
                raise PassFailure("mlax-batch: at vmap out_axes, got axis spec None but an output with "
                                  "out_axes None (-1) depends on the batched inputs (jax's words first)",
                                  declaration.location)
            results.append(out)
            continue
        results.append(_move(e, out if flag else broadcast_batch(e, out, size), 0, axis))
    return results


HANDLERS["vmap"] = _vmap


@register_pass
@dataclass
class Batch(ModulePass):
    """Resolve mlax.vmap declarations into batched functions."""

    argument = "mlax-batch"
    summary = "give mlax.vmap declarations batched bodies from per-op batching rules"

    def run(self, module: ir.Operation) -> None:
        Resolver(module, ("vmap",), self.argument).run()
