"""Reverse mode as JAX does it: linearize (forward mode), then transpose the linear part.

`emit_vjp` first writes the JVP of the function into a scratch function whose tangent
arguments are those of the differentiated inputs. Every op there that depends on a tangent is
linear in the tangents (the JVP rules promise it); every other op computes primal values.
Primal ops are copied into the function being built in their order; the linear ops are then
visited in reverse and each one's TRANSPOSE rule turns the cotangents of its results into
cotangents of its linear operands (summed where a value has several uses). The scratch
function is erased. One rule table per concern: JVP rules for every op, transpose rules only
for the few linear ops the JVP rules emit. Values computed inside a `checkpoint` are
recomputed in the backward part where its policy does not save them (remat.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from mlax.dialect.control_flow import CONTROL_FLOW_KINDS
from mlax.dialect.transforms import read_transform
from mlax.dialect.user_primitives import USER_PRIMITIVE_KIND
from mlax.passes.autodiff.control_flow import SPLIT_JVP_RULES, function_type, transpose_control_flow
from mlax.passes.autodiff.emit import Emitter, MaybeValue, clone_all, is_float
from mlax.passes.autodiff.jvp import CUSTOM_LINEAR, FunctionLookup, emit_jvp
from mlax.passes.autodiff.remat import Regions, Rematerializer, strip_marks
from mlax.passes.autodiff.rule_variants import variant
from mlax.passes.autodiff.transpose_rules import TRANSPOSE_RULES
from mlax.passes.autodiff.user_primitives import transpose_user_primitive
from mlax.passes.autodiff.varying import NONE, Varying, construct_varying, op_varying
from mlax.passes.registry import PassFailure
from mlax.passes.symbols import define_function, derived_function, find_derived, mark_derived, unique_name


@dataclass
class _Linearized:
    """The scratch function holding a JVP: its arguments, primal outputs and output tangents."""

    function: ir.Operation
    primals: list[ir.Value]
    tangents: list[ir.Value]
    outs: list[ir.Value]
    out_tangents: list[MaybeValue]
    regions: Regions


def _linearize(function: ir.Operation, argnums: Sequence[int], module: ir.Operation,
               lookup: FunctionLookup, share_calls: bool = True) -> _Linearized:
    """A scratch function (primals..., tangents of the argnums inputs...) holding the JVP of
    ``function``."""
    inputs = list(function_type(function).inputs)
    with function.location, ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]):
        scratch = func.FuncOp(unique_name(module, "__mlax_linearize"), ir.FunctionType.get(
            inputs + [inputs[a] for a in argnums], []), visibility="private")
        block = scratch.add_entry_block()  # under the function's location
    primals = list(block.arguments)[:len(inputs)]
    tangent_args = list(block.arguments)[len(inputs):]
    tangents: list[MaybeValue] = [None] * len(inputs)
    for a, t in zip(argnums, tangent_args, strict=True):
        tangents[a] = t
    regions = Regions(block, share_calls)
    outs, out_tangents = emit_jvp(function, primals, tangents, ir.InsertionPoint(block), lookup, split=True,
                                  regions=regions)
    return _Linearized(scratch.operation, primals, tangent_args, outs, out_tangents, regions)


def emit_vjp(function: ir.Operation, primals: Sequence[ir.Value], cotangents: Sequence[MaybeValue],
             argnums: Sequence[int], point: ir.InsertionPoint, module: ir.Operation,
             lookup: FunctionLookup,
             varying: Sequence[Varying] | None = None) -> tuple[list[ir.Value], list[MaybeValue]]:
    """Emit at ``point`` the outputs of ``function`` on ``primals`` and the cotangents of its
    ``argnums`` inputs given the output ``cotangents`` (None = zero). ``varying`` (inside a
    checked shard_map body) gives the mesh axes each primal varies over (varying.py)."""
    linearized = _linearize(function, argnums, module, lookup, share_calls=varying is None)
    block = linearized.function.regions[0].blocks[0]
    typing = None if varying is None else _Typing(linearized, varying, argnums)
    linear: set[ir.Value] = set(linearized.tangents)
    values: dict[ir.Value, ir.Value] = dict(zip(linearized.primals, primals, strict=True))
    linear_ops = []
    for op in [o.operation for o in block.operations]:
        if any(v in linear for v in op.operands):
            linear.update(op.results)
            linear_ops.append(op)
            continue
        clone = op.clone(ip=point)
        for i, v in enumerate(op.operands):
            clone.operands[i] = values[v]
        strip_marks(clone)
        values.update(zip(op.results, clone.results, strict=True))
    outs = [values[v] for v in linearized.outs]
    primal = Rematerializer(linearized.regions, values, point)
    ct: dict[ir.Value, MaybeValue] = {}
    for tangent, cotangent in zip(linearized.out_tangents, cotangents, strict=True):
        if tangent is not None and tangent in linear and cotangent is not None:
            ct[tangent] = Emitter(point, function.location).add(ct.get(tangent), cotangent)
    _transpose_ops(linear_ops, linear, ct, primal.value, point, lookup, typing)
    input_cts = [ct.get(t) for t in linearized.tangents]
    linearized.function.erase()
    return outs, input_cts


def _transpose_ops(linear_ops: Sequence[ir.Operation], linear: set[ir.Value], ct: dict[ir.Value, MaybeValue],
                   primal_value: Callable[[ir.Value, ir.Operation], ir.Value], point: ir.InsertionPoint,
                   lookup: FunctionLookup, typing: _Typing | None = None) -> None:
    """Visit ``linear_ops`` in reverse, each one's transpose turning the cotangents ``ct`` of its
    results into cotangents of its linear operands (added into ``ct``); ``primal_value(v, op)``
    is the primal value ``v`` that ``op``'s transpose reads."""
    for op in reversed(linear_ops):
        result_cts = [ct.pop(r, None) for r in op.results]
        if all(c is None for c in result_cts):
            continue
        emitter = Emitter(point, op.location)
        known = [None if v in linear else primal_value(v, op) for v in op.operands]
        if op.name == "func.call":
            target = lookup(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
            transform = read_transform(target)
            if transform is not None and transform.kind in SPLIT_JVP_RULES:
                types = None if typing is None else typing.of_operands(op)
                contributions = transpose_control_flow(emitter, op, target, transform, result_cts, known,
                                                       lookup, types)
            elif read_linear_residuals(target) is not None:
                contributions = _transpose_linear_call(emitter, op, target, result_cts, known, lookup)
            elif transform is not None and transform.kind == USER_PRIMITIVE_KIND:
                contributions = transpose_user_primitive(point, op, target, result_cts, known)
            else:
                contributions = _transpose_custom_vjp(emitter, op, result_cts, known, lookup)
            if typing is not None:
                contributions = typing.sum_to_operands(emitter, op, contributions)
            _accumulate(ct, op, contributions, linear, emitter)
            continue
        name = op.name.removeprefix("mlax.")
        rule = TRANSPOSE_RULES.get(name)
        if rule is None:
            raise PassFailure(f"mlax-autodiff: no transpose rule for {op.name} (reverse mode needs one for "
                              f"every op that is linear in the tangents)", op.location)
        if typing is not None and name == "psum":  # typed: psum's transpose is pvary, the identity
            contributions = list(result_cts)
        else:
            contributions = rule(emitter, op, result_cts, known)
        if typing is not None:
            contributions = typing.sum_to_operands(emitter, op, contributions)
        _accumulate(ct, op, contributions, linear, emitter)


class _Typing:
    """The mesh axes each value of a linearized function varies over, and jax's rule for a
    cotangent reaching an operand that varies over fewer axes than its op: psum over the rest."""

    def __init__(self, linearized: _Linearized, varying: Sequence[Varying], argnums: Sequence[int]) -> None:
        block = linearized.function.regions[0].blocks[0]
        self.varying: dict[ir.Value, Varying] = dict(zip(linearized.primals, varying, strict=True))
        self.varying.update((t, varying[a]) for t, a in zip(linearized.tangents, argnums, strict=True))
        self.working: dict[ir.Operation, Varying] = {}
        table = ir.SymbolTable(linearized.function.parent)
        for op in [o.operation for o in block.operations]:
            ins = [self.varying[v] for v in op.operands]
            construct = read_transform(table[ir.FlatSymbolRefAttr(op.attributes["callee"]).value]) \
                if op.name == "func.call" else None
            if construct is not None and construct.kind in CONTROL_FLOW_KINDS:
                # typed from its bodies; its transpose sums inside them, none at the call
                working, outs = NONE, construct_varying(construct.kind, construct.fields, ins, table)
            else:
                working, outs = op_varying(op, ins)
            self.working[op] = working
            self.varying.update(zip(op.results, outs, strict=True))

    def of_operands(self, op: ir.Operation) -> list[Varying]:
        return [self.varying[v] for v in op.operands]

    def sum_to_operands(self, e: Emitter, op: ir.Operation,
                        contributions: Sequence[MaybeValue]) -> list[MaybeValue]:
        out = []
        for operand, contribution in zip(op.operands, contributions, strict=True):
            missing = self.working[op] - self.varying[operand]
            if contribution is not None and missing:
                contribution = e("psum", contribution, axes=tuple(sorted(missing)))
            out.append(contribution)
        return out


def _accumulate(ct: dict[ir.Value, MaybeValue], op: ir.Operation, contributions: Sequence[MaybeValue],
                linear: set[ir.Value], emitter: Emitter) -> None:
    """Add a transposed op's cotangent contributions to its linear operands."""
    for operand, contribution in zip(op.operands, contributions, strict=True):
        if operand in linear and contribution is not None:
            if contribution.type != operand.type:
                raise PassFailure(f"mlax-autodiff: the transpose of {op.name} gave a cotangent of type "
                                  f"{contribution.type} for an operand of type {operand.type}", op.location)
            ct[operand] = emitter.add(ct.get(operand), contribution)


def _transpose_custom_vjp(e: Emitter, op: ir.Operation, cts: list[MaybeValue], known: list[MaybeValue],
                          lookup: FunctionLookup) -> list[MaybeValue]:
    """A custom-VJP linear map (residuals..., tangents...) -> tangent outs, transposed by the
    user's bwd: (residuals..., output cotangents...) -> input cotangents."""
    marker = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    if marker not in CUSTOM_LINEAR:
        raise PassFailure(f"mlax-autodiff: cannot transpose a call of @{marker}", op.location)
    bwd_name, count = CUSTOM_LINEAR[marker]
    residuals = known[:count]
    if any(r is None for r in residuals):
        raise PassFailure("mlax-autodiff: the residuals of a custom_vjp depend on tangents", op.location)
    bwd = lookup(bwd_name)
    dense = [e.materialize(c, r) for c, r in zip(cts, op.results, strict=True)]
    specialised = variant(bwd, [c is None for c in cts]) if any(c is None for c in cts) else None
    if specialised is not None:  # symbolic_zeros: bwd takes only the nonzero cotangents
        bwd, dense = lookup(specialised[0]), [c for c in cts if c is not None]
    arguments = [*residuals, *dense]
    input_cts, _ = emit_jvp(bwd, arguments, [None] * len(arguments), e.point, lookup)
    return [None] * len(residuals) + list(input_cts)


# Reverse mode of a call, as jax's partial evaluation of a call: the callee's linearization split
# once per callee and set of nonzero input tangents into a primal function (primals -> results ++
# residuals) and a linear one (residuals ++ tangents -> the nonzero result tangents), whose
# transpose is written once per set of nonzero cotangents. A function called at 16 sites is
# linearized and transposed once. The linear function records its number of residuals.
RESIDUALS_ATTR = "mlax.residuals"
# Ops a linear function recomputes rather than take as residuals: they read nothing, or only
# expand a value (a residual is then the value before broadcasting: a divide by a row sum keeps
# the sums, not a full-size copy; inside a scan, the stack of them).
_RECOMPUTED_IN_LINEAR = ("mlax.constant", "mlax.iota", "mlax.broadcast_in_dim")


def read_linear_residuals(function: ir.Operation) -> int | None:
    """The number of residual arguments of a linear function `linearize_call` wrote, else None."""
    if RESIDUALS_ATTR not in function.attributes:
        return None
    return ir.IntegerAttr(function.attributes[RESIDUALS_ATTR]).value


def linearize_call(callee: ir.Operation, operands: list[ir.Value], tangents: list[MaybeValue],
                   point: ir.InsertionPoint, lookup: FunctionLookup,
                   location: ir.Location) -> tuple[list[ir.Value], list[MaybeValue]] | None:
    """A call linearized (split mode, outside checkpoints): a call of the callee's primal
    function and one of its linear function; None where the callee holds checkpoints (whose
    policies decide per value what is saved: walked in place instead)."""
    name = ir.StringAttr(callee.attributes["sym_name"]).value
    nonzero = [t is not None and is_float(v) for t, v in zip(tangents, operands, strict=True)]
    result_types = list(function_type(callee).results)
    if not any(nonzero):
        with location:
            call = func.CallOp(result_types, name, operands, ip=point)
        return list(call.results), [None] * len(result_types)
    pair = linear_pair(callee.parent, callee, name, nonzero, lookup)
    if pair is None:
        return None
    (primal, _), (linear, flags) = pair
    dense = [t for t, f in zip(tangents, nonzero, strict=True) if f]
    first = _call(primal, operands, point, location)
    outs, residuals = first[:len(result_types)], first[len(result_types):]
    second = _call(linear, [*residuals, *dense], point, location)
    present = iter(second)
    return outs, [next(present) if f else None for f in flags]


def linear_pair(module: ir.Operation, callee: ir.Operation, name: str, nonzero: Sequence[bool],
                lookup: FunctionLookup) -> tuple[tuple[ir.Operation, list[bool]],
                                                 tuple[ir.Operation, list[bool]]] | None:
    """The primal and linear functions of ``callee`` for the ``nonzero`` input tangents; None
    where its linearization holds checkpoints."""
    keys = (f"primal {name} {_mask(nonzero)}", f"linear {name} {_mask(nonzero)}")
    found = [find_derived(module, key) for key in keys]
    if found[0] is not None and found[1] is not None:
        return found[0], found[1]
    argnums = [i for i, f in enumerate(nonzero) if f]
    linearized = _linearize(callee, argnums, module, lookup)
    try:
        if linearized.regions.region_of:
            return None
        return _split(module, linearized, name, keys, callee.location)
    finally:
        linearized.function.erase()


def _split(module: ir.Operation, linearized: _Linearized, name: str, keys: tuple[str, str],
           location: ir.Location) -> tuple[tuple[ir.Operation, list[bool]], tuple[ir.Operation, list[bool]]]:
    """Write a linearization's primal ops as one function and its linear ops as another."""
    block = linearized.function.regions[0].blocks[0]
    linear: set[ir.Value] = set(linearized.tangents)
    primal_ops, linear_ops = [], []
    for op in [o.operation for o in block.operations]:
        if any(v in linear for v in op.operands):
            linear.update(op.results)
            linear_ops.append(op)
        else:
            primal_ops.append(op)
    recomputed, residuals = _residuals(primal_ops, linear_ops, linear)
    out_tangents = [t if t is not None and t in linear else None for t in linearized.out_tangents]

    def primal_body(point: ir.InsertionPoint, arguments: list[ir.Value]) -> list[ir.Value]:
        values = dict(zip(linearized.primals, arguments, strict=True))
        clone_all(primal_ops, values, point)
        return [values[v] for v in [*linearized.outs, *residuals]]

    def linear_body(point: ir.InsertionPoint, arguments: list[ir.Value]) -> list[ir.Value]:
        values = dict(zip([*residuals, *linearized.tangents], arguments, strict=True))
        clone_all([*recomputed, *linear_ops], values, point)
        return [values[t] for t in out_tangents if t is not None]

    primal_name = define_function(module, f"{name}_primal", [a.type for a in linearized.primals], location,
                                  primal_body)
    linear_name = define_function(module, f"{name}_linear",
                                  [v.type for v in [*residuals, *linearized.tangents]], location, linear_body)
    primal_flags = [True] * (len(linearized.outs) + len(residuals))
    linear_flags = [t is not None for t in out_tangents]
    linear_function = mark_derived(module, linear_name, keys[1], linear_flags)
    linear_function.attributes[RESIDUALS_ATTR] = ir.IntegerAttr.get(
        ir.IntegerType.get_signless(64, linear_function.context), len(residuals))
    return ((mark_derived(module, primal_name, keys[0], primal_flags), primal_flags),
            (linear_function, linear_flags))


def _residuals(primal_ops: Sequence[ir.Operation], linear_ops: Sequence[ir.Operation],
               linear: set[ir.Value]) -> tuple[list[ir.Operation], list[ir.Value]]:
    """The primal ops a linear function recomputes (in order) and the values it takes as residuals."""
    needed = {v for op in linear_ops for v in op.operands if v not in linear}
    recomputed = []
    for op in reversed(primal_ops):
        if op.name in _RECOMPUTED_IN_LINEAR and any(r in needed for r in op.results):
            recomputed.append(op)
            needed.update(op.operands)
    recomputed.reverse()
    local = {r for op in recomputed for r in op.results}
    reads = [v for op in [*recomputed, *linear_ops] for v in op.operands]
    return recomputed, list(dict.fromkeys(v for v in reads if v not in linear and v not in local))


def _call(function: ir.Operation, operands: Sequence[ir.Value], point: ir.InsertionPoint,
          location: ir.Location) -> list[ir.Value]:
    result_types = function_type(function).results
    with location:
        call = func.CallOp(list(result_types), ir.StringAttr(function.attributes["sym_name"]).value,
                           list(operands), ip=point)
    return list(call.results)


def _transpose_linear_call(e: Emitter, op: ir.Operation, linear: ir.Operation, cts: list[MaybeValue],
                           known: list[MaybeValue], lookup: FunctionLookup) -> list[MaybeValue]:
    """A call of a linear function transposed: a call of its transpose (residuals ++ the
    nonzero result cotangents -> the nonzero cotangents of its tangent arguments)."""
    n_res = read_linear_residuals(linear)
    residuals = known[:n_res]
    if any(r is None for r in residuals):
        raise PassFailure("mlax-autodiff: the residuals of a linearized call depend on tangents", op.location)
    n_args = len(function_type(linear).inputs)
    symbol, flags = transpose_function(linear, [i >= n_res for i in range(n_args)],
                                       [c is not None for c in cts], lookup)
    given_cts = iter(_call(lookup(symbol), [*residuals, *(c for c in cts if c is not None)], e.point,
                           op.location))
    return [None] * n_res + [next(given_cts) if f else None for f in flags]


def transpose_function(linear: ir.Operation, linear_args: Sequence[bool], present: Sequence[bool],
                       lookup: FunctionLookup) -> tuple[str, list[bool]]:
    """The transpose of a function whose ops reading the ``linear_args`` are linear in them: a
    function (its other arguments ++ the ``present`` result cotangents) -> the cotangents of the
    linear arguments that are nonzero (flagged), written once per function and masks."""
    name = ir.StringAttr(linear.attributes["sym_name"]).value
    body = linear.regions[0].blocks[0]
    arguments = list(body.arguments)
    known = [a for a, f in zip(arguments, linear_args, strict=True) if not f]
    tangent_args = [a for a, f in zip(arguments, linear_args, strict=True) if f]
    result_types = list(function_type(linear).results)

    def build(point: ir.InsertionPoint, args: list[ir.Value]) -> tuple[list[ir.Value], list[bool]]:
        values = dict(zip(known, args[:len(known)], strict=True))
        linear_values, linear_ops = set(tangent_args), []
        for inner in [o.operation for o in body.operations][:-1]:
            if any(v in linear_values for v in inner.operands):
                linear_values.update(inner.results)
                linear_ops.append(inner)
            else:
                clone_all([inner], values, point)
        ct: dict[ir.Value, MaybeValue] = {}
        given = iter(args[len(known):])
        for result, flag in zip(body.operations[-1].operands, present, strict=True):
            if flag:
                ct[result] = Emitter(point, linear.location).add(ct.get(result), next(given))
        _transpose_ops(linear_ops, linear_values, ct, lambda v, _: values[v], point, lookup)
        input_cts = [ct.get(t) for t in tangent_args]
        return [c for c in input_cts if c is not None], [c is not None for c in input_cts]

    masks = f"{_mask(linear_args)} {_mask(present)}"
    types = [a.type for a in known] + [t for t, f in zip(result_types, present, strict=True) if f]
    return derived_function(linear.parent, f"transpose {name} {masks}", f"{name}_transpose", types,
                            linear.location, build)


def _mask(flags: Sequence[bool]) -> str:
    """Flags as a key's digits."""
    return "".join("1" if f else "0" for f in flags)
