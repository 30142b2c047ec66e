"""Forward mode: re-emit a function's ops and, after each, its tangent (JVP_RULES).

`emit_jvp` is the one routine both modes build on: it walks the callee's body in order,
clones every primal op into the function being built, and calls the op's rule with the
tangents of its operands (None = symbolic zero: ops whose operands all have zero tangents
get no tangent code at all). A `func.call` is differentiated through by walking the called
function's body in place (so derivative programs are flat and a called function that is
itself a resolved jvp/vjp declaration, as in grad of grad, is handled like any other); a
call of a checkpoint is walked the same way, inside a region that reverse mode's
rematerialization reads (remat.py). A call of a nested jit's function (a shared callee) is
instead a call of its JVP function, written once per callee and set of nonzero tangents.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mlir import ir
from mlir.dialects import func

from mlax.dialect.callbacks import CALLBACK_KIND
from mlax.dialect.transforms import SAVEABLE_ATTR, read_transform
from mlax.dialect.user_primitives import USER_PRIMITIVE_KIND
from mlax.passes.autodiff.callbacks import emit_callback_jvp
from mlax.passes.autodiff.control_flow import SPLIT_JVP_RULES, emit_control_flow_jvp
from mlax.passes.autodiff.emit import Emitter, MaybeValue, is_float
from mlax.passes.autodiff.jvp_rules import JVP_RULES
from mlax.passes.autodiff.remat import Regions
from mlax.passes.autodiff.rule_variants import variant
from mlax.passes.autodiff.user_primitives import emit_user_primitive_jvp
from mlax.passes.registry import PassFailure
from mlax.passes.symbols import body_less_name, derived_function, shared_callee

# Resolves a callee symbol to its func.func, giving a jvp/vjp declaration its body first
# (an mlax.custom_jvp_call declaration comes back as it is: _emit_call uses its rule).
FunctionLookup = Callable[[str], ir.Operation]


def _block(function: ir.Operation) -> ir.Block:
    return function.regions[0].blocks[0]


def _function_name(function: ir.Operation) -> str:
    return ir.StringAttr(function.attributes["sym_name"]).value


def emit_jvp(function: ir.Operation, primals: Sequence[ir.Value], tangents: Sequence[MaybeValue],
             point: ir.InsertionPoint, lookup: FunctionLookup, split: bool = False,
             regions: Regions | None = None) -> tuple[list[ir.Value], list[MaybeValue]]:
    """Emit ``function``'s body at ``point`` on ``primals`` with its tangent computation;
    returns the primal results and their tangents (None = zero). ``split`` (reverse mode's
    linearization) keeps primal and tangent computations in separate ops where an op would
    otherwise compute both (control flow), so the tangent part can be transposed; ``regions``
    (reverse mode's too) records the checkpoint regions the ops are emitted in (remat.py)."""
    if not function.regions[0].blocks:
        raise PassFailure(f"mlax-autodiff: {body_less_name(function)} has no body to differentiate",
                          function.location)
    block = _block(function)
    values: dict[ir.Value, ir.Value] = dict(zip(block.arguments, primals, strict=True))
    tangent_of: dict[ir.Value, MaybeValue] = {
        arg: t if t is not None and is_float(arg) else None
        for arg, t in zip(block.arguments, tangents, strict=True)}
    for op in [o.operation for o in block.operations]:
        if op.name == "func.return":
            return [values[v] for v in op.operands], [tangent_of.get(v) for v in op.operands]
        operands = [values[v] for v in op.operands]
        operand_tangents = [tangent_of.get(v) for v in op.operands]
        if op.name == "func.call":
            callee = lookup(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
            outs, out_tangents = _emit_call(callee, operands, operand_tangents, point, lookup, op.location,
                                            split, regions, SAVEABLE_ATTR in op.attributes)
        else:
            outs, out_tangents = _emit_op(op, operands, operand_tangents, point)
        for result, value, tangent in zip(op.results, outs, out_tangents, strict=True):
            values[result] = value
            tangent_of[result] = tangent
    raise PassFailure(f"mlax-autodiff: @{_function_name(function)} has no func.return", function.location)


# Custom-VJP linear maps: symbol of a private marker function -> (the user's bwd, the number
# of residual operands before the tangents).
# A call of a marker stands, in a linearized program, for "the map whose transpose is bwd";
# vjp.py transposes it by calling bwd, and the pass erases the markers when it is done.
CUSTOM_LINEAR: dict[str, tuple[str, int]] = {}


def _emit_call(callee: ir.Operation, operands: list[ir.Value], tangents: list[MaybeValue],
               point: ir.InsertionPoint, lookup: FunctionLookup, location: ir.Location,
               split: bool, regions: Regions | None, saved: bool) -> tuple[list[ir.Value], list[MaybeValue]]:
    """Differentiate through a call: walk the called body, or, for a function with a custom
    derivative (an `mlax.custom_jvp_call` / `custom_vjp_call` declaration), its rules.
    ``saved``: an enclosing checkpoint's policy saves the call's results."""
    transform = read_transform(callee)
    if transform is None and shared_callee(callee):
        if not split:
            return _call_derived_jvp(callee, operands, tangents, point, lookup, location)
        if regions is not None and regions.shares_calls():
            from mlax.passes.autodiff.vjp import linearize_call  # reverse mode's half of the split

            shared = linearize_call(callee, operands, tangents, point, lookup, location)
            if shared is not None:
                return shared
    if transform is None:
        return emit_jvp(callee, operands, tangents, point, lookup, split, regions)
    if transform.kind in (CALLBACK_KIND, USER_PRIMITIVE_KIND, *SPLIT_JVP_RULES):  # saved whole or not at all
        if transform.kind == CALLBACK_KIND:
            outs, out_tangents = emit_callback_jvp(callee, transform, operands, tangents, point, location)
        elif transform.kind == USER_PRIMITIVE_KIND:
            outs, out_tangents = emit_user_primitive_jvp(callee, operands, tangents, point, lookup, location,
                                                         emit_jvp)
        else:  # control flow and shard_map
            outs, out_tangents = emit_control_flow_jvp(callee, transform, operands, tangents, point, lookup,
                                                       location, split)
        if regions is not None and saved:
            regions.mark_saved(outs)
        return outs, out_tangents
    function = lookup(transform.fields["callee"])
    if transform.kind == "checkpoint" and regions is not None:
        return regions.emit(transform.fields, saved,
                            lambda: emit_jvp(function, operands, tangents, point, lookup, split, regions))
    if all(t is None for t in tangents) or transform.kind == "checkpoint":
        return emit_jvp(function, operands, tangents, point, lookup, split, regions)
    emitter = Emitter(point, callee.location)
    dense = [emitter.materialize(t, v) for t, v in zip(tangents, operands, strict=True)]
    zero = [t is None for t in tangents]
    if transform.kind == "custom_vjp_call":
        return _emit_custom_vjp(callee, transform.fields, operands, dense, zero, point, lookup)
    rule = lookup(transform.fields["jvp"])
    specialised = variant(rule, zero) if any(zero) else None
    if specialised is not None:  # symbolic_zeros: the rule takes only the nonzero tangents
        rule, dense = lookup(specialised[0]), [t for t in tangents if t is not None]
    arguments = [*operands, *dense]
    results, _ = emit_jvp(rule, arguments, [None] * len(arguments), point, lookup)
    half = len(results) // 2
    return results[:half], [t if is_float(t) else None for t in results[half:]]


def _call_derived_jvp(callee: ir.Operation, operands: list[ir.Value], tangents: list[MaybeValue],
                      point: ir.InsertionPoint, lookup: FunctionLookup,
                      location: ir.Location) -> tuple[list[ir.Value], list[MaybeValue]]:
    """Forward mode of a call: a call of the callee's JVP function (primals ++ the nonzero
    tangents -> results ++ their nonzero tangents), written once per callee and set of
    nonzero input tangents; without tangents, the call itself."""
    name = _function_name(callee)
    nonzero = [t is not None and is_float(v) for t, v in zip(tangents, operands, strict=True)]
    result_types = list(ir.FunctionType(ir.TypeAttr(callee.attributes["function_type"]).value).results)
    n_out = len(result_types)
    if not any(nonzero):
        with location:
            call = func.CallOp(result_types, name, operands, ip=point)
        return list(call.results), [None] * n_out
    n_in = len(operands)

    def build(body: ir.InsertionPoint, arguments: list[ir.Value]) -> tuple[list[ir.Value], list[bool]]:
        inner: list[MaybeValue] = [None] * n_in
        for i, t in zip([i for i, f in enumerate(nonzero) if f], arguments[n_in:], strict=True):
            inner[i] = t
        outs, out_tangents = emit_jvp(callee, arguments[:n_in], inner, body, lookup)
        return [*outs, *(t for t in out_tangents if t is not None)], [t is not None for t in out_tangents]

    key = f"jvp {name} {''.join('1' if f else '0' for f in nonzero)}"
    dense = [t for t, f in zip(tangents, nonzero, strict=True) if f and t is not None]
    types = [v.type for v in operands] + [t.type for t in dense]
    symbol, flags = derived_function(callee.parent, key, f"{name}_jvp", types, callee.location, build)
    function_type = ir.FunctionType(ir.TypeAttr(lookup(symbol).attributes["function_type"]).value)
    with location:
        call = func.CallOp(list(function_type.results), symbol,
                           [*operands, *dense], ip=point)
    results = list(call.results)
    present = iter(results[n_out:])
    return results[:n_out], [next(present) if f else None for f in flags]


def _emit_custom_vjp(declaration: ir.Operation, fields: dict, operands: list[ir.Value],
                     tangents: list[ir.Value], zero: list[bool], point: ir.InsertionPoint,
                     lookup: FunctionLookup) -> tuple[list[ir.Value], list[MaybeValue]]:
    """The user's fwd on the primals gives the outputs and residuals; the output tangents are
    a call of a marker function of (residuals, tangents) that reverse mode transposes with bwd.
    With symbolic_zeros, fwd and bwd are those traced for the inputs ``zero`` marks unperturbed."""
    fwd, bwd_name = lookup(fields["fwd"]), fields["bwd"]
    specialised = variant(fwd, zero) if any(zero) else None
    if specialised is not None:
        fwd, bwd_name = lookup(specialised[0]), specialised[1]
    results, _ = emit_jvp(fwd, operands, [None] * len(operands), point, lookup)
    n_out = len(ir.FunctionType(ir.TypeAttr(declaration.attributes["function_type"]).value).results)
    outs, residuals = results[:n_out], results[n_out:]
    module = declaration.parent
    table = ir.SymbolTable(module)
    name, k = "__mlax_custom_vjp_linear", 0
    while name in table or name in CUSTOM_LINEAR:
        k += 1
        name = f"__mlax_custom_vjp_linear_{k}"
    with declaration.location, ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]):
        signature = ir.FunctionType.get([v.type for v in [*residuals, *tangents]], [v.type for v in outs])
        func.FuncOp(name, signature, visibility="private")
    CUSTOM_LINEAR[name] = (bwd_name, len(residuals))
    with declaration.location:
        call = func.CallOp([v.type for v in outs], name, [*residuals, *tangents], ip=point)
    return outs, [t if is_float(t) else None for t in call.results]


def _emit_op(op: ir.Operation, operands: list[ir.Value], tangents: list[MaybeValue],
             point: ir.InsertionPoint) -> tuple[list[ir.Value], list[MaybeValue]]:
    clone = op.clone(ip=point)
    for i, value in enumerate(operands):
        clone.operands[i] = value
    outs = list(clone.results)
    if all(t is None for t in tangents):
        return outs, [None] * len(outs)
    if not op.name.startswith("mlax."):
        raise PassFailure(f"mlax-autodiff: cannot differentiate through {op.name}", op.location)
    name = op.name.removeprefix("mlax.")
    rule = JVP_RULES.get(name)
    if rule is None:
        raise PassFailure(f"mlax-autodiff: no JVP rule for {op.name} yet", op.location)
    out_tangents = rule(Emitter(point, op.location), op, operands, tangents, outs)
    for result, tangent in zip(outs, out_tangents, strict=True):
        if tangent is not None and tangent.type != result.type:
            raise PassFailure(f"mlax-autodiff: the JVP rule of {op.name} gave a tangent of type "
                              f"{tangent.type} for a result of type {result.type}", op.location)
    return outs, [t if is_float(r) else None for r, t in zip(outs, out_tangents, strict=True)]
