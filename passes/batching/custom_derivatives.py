"""Batching a call of a function with a custom derivative (`mlax.custom_jvp_call` /
`mlax.custom_vjp_call` declarations) without losing the derivative.

Walking the callee in place would leave a plain batched body, and an enclosing grad would then
differentiate the primal instead of the user's rule (`grad(vmap(relu))` at 0 would not be 0).
So the declaration itself is batched, as jax batches custom_jvp_call/custom_vjp_call: a new
declaration of the same kind whose functions are the batched callee and the batched rules,
written once per declaration, set of batched operands, size and axis name. Every result of the
batched declaration is batched (an unbatched one is broadcast), so primal and tangent results
agree in type:

- custom_jvp: the jvp rule is batched with each tangent batched where its primal is (in the
  batched program a tangent has its primal's type);
- custom_vjp: fwd is batched the same way (its outputs and residuals all batched); bwd takes
  the batched residuals and cotangents, and the cotangent of an unbatched input is summed over
  the batch (the transpose of that input's broadcast into every example).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mlir import ir
from mlir.dialects import func

from mlax.dialect.transforms import Transform, declare_transform
from mlax.passes.autodiff.emit import Emitter
from mlax.passes.batching.rules import broadcast_batch
from mlax.passes.symbols import define_function, find_derived, mark_derived, stand_in, unique_name

FunctionLookup = Callable[[str], ir.Operation]
Batcher = Callable[..., tuple[list[ir.Value], list[bool]]]


def _name(function: ir.Operation) -> str:
    return ir.StringAttr(function.attributes["sym_name"]).value


def _all_batched(e: Emitter, values: Sequence[ir.Value], flags: Sequence[bool], size: int) -> list[ir.Value]:
    return [v if f else broadcast_batch(e, v, size) for v, f in zip(values, flags, strict=True)]


Finish = Callable[[Emitter, list[ir.Value], list[bool]], list[ir.Value]]


def _write(module: ir.Operation, base: str, function: ir.Operation, arg_types: list[ir.Type],
           flags: Sequence[bool], size: int, lookup: FunctionLookup, axis_name: str | None,
           emit_batched: Batcher, finish: Finish, result_types: Sequence[ir.Type] = ()) -> str:
    """A function of ``arg_types`` running ``function`` batched (``flags``), its results made
    by ``finish`` from the batched results and their flags. A rule that raised when traced at
    the call (a body-less stand-in) is batched as a stand-in of ``result_types``: as in jax,
    vmap does not trace a rule that no derivative needs."""
    if not function.regions[0].blocks:
        return stand_in(module, function, base, arg_types, result_types)

    def build(point: ir.InsertionPoint, arguments: list[ir.Value]) -> list[ir.Value]:
        outs, out_flags = emit_batched(function, arguments, list(flags), size, point, lookup, axis_name)
        return finish(Emitter(point, function.location), outs, out_flags)

    return define_function(module, base, arg_types, function.location, build)


def batch_custom_call(op: ir.Operation, declaration: ir.Operation, transform: Transform, args: list[ir.Value],
                      flags: list[bool], size: int, point: ir.InsertionPoint, lookup: FunctionLookup,
                      axis_name: str | None, emit_batched: Batcher) -> tuple[list[ir.Value], list[bool]]:
    """The call ``op`` of ``declaration`` batched: a call of the batched declaration."""
    module = declaration.parent
    name = _name(declaration)
    key = f"vmap {name} {''.join('1' if f else '0' for f in flags)} {size} {axis_name}"
    found = find_derived(module, key)
    if found is None:
        found = (_batched_declaration(module, declaration, transform, args, flags, size, lookup, axis_name,
                                      emit_batched, key), [])
    batched = found[0]
    result_types = list(ir.FunctionType(ir.TypeAttr(batched.attributes["function_type"]).value).results)
    with op.location:
        call = func.CallOp(result_types, _name(batched), args, ip=point)
    return list(call.results), [True] * len(result_types)


def _batched_declaration(module: ir.Operation, declaration: ir.Operation, transform: Transform,
                         args: list[ir.Value], flags: list[bool], size: int, lookup: FunctionLookup,
                         axis_name: str | None, emit_batched: Batcher, key: str) -> ir.Operation:
    name = _name(declaration)
    arg_types = [a.type for a in args]
    fields = transform.fields

    def batched(e: Emitter, outs: list[ir.Value], out_flags: list[bool]) -> list[ir.Value]:
        return _all_batched(e, outs, out_flags, size)

    callee = _write(module, f"{name}_vmap_callee", lookup(fields["callee"]), arg_types, flags, size, lookup,
                    axis_name, emit_batched, batched)
    if transform.kind == "custom_jvp_call":
        outs = list(ir.FunctionType(ir.TypeAttr(lookup(callee).attributes["function_type"]).value).results)
        jvp = _write(module, f"{name}_vmap_jvp", lookup(fields["jvp"]), arg_types * 2, flags * 2, size,
                     lookup, axis_name, emit_batched, batched, outs * 2)
        symbols = {"callee": callee, "jvp": jvp}
    else:
        fwd = _write(module, f"{name}_vmap_fwd", lookup(fields["fwd"]), arg_types, flags, size, lookup,
                     axis_name, emit_batched, batched)
        fwd_types = list(ir.FunctionType(ir.TypeAttr(lookup(fwd).attributes["function_type"]).value).results)
        n_out = len(ir.FunctionType(ir.TypeAttr(declaration.attributes["function_type"]).value).results)
        bwd_types = fwd_types[n_out:] + fwd_types[:n_out]  # (residuals..., output cotangents...)

        def cotangents(e: Emitter, outs: list[ir.Value], out_flags: list[bool]) -> list[ir.Value]:
            """Input cotangents: batched for batched inputs, summed over the batch otherwise."""
            return [(v if f else broadcast_batch(e, v, size)) if batched_input
                    else (e("reduce_sum", v, dimensions=(0,)) if f else v)
                    for v, f, batched_input in zip(outs, out_flags, flags, strict=True)]

        bwd = _write(module, f"{name}_vmap_bwd", lookup(fields["bwd"]), bwd_types, [True] * len(bwd_types),
                     size, lookup, axis_name, emit_batched, cotangents, arg_types)
        symbols = {"callee": callee, "fwd": fwd, "bwd": bwd}
    result = declare_transform(module, transform.kind, unique_name(module, f"{name}_vmap"),
                               loc=declaration.location, **symbols)
    return mark_derived(module, _name(result), key, [])

