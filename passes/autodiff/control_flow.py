"""Differentiating through control flow: the JVP of a call of a cond / while / scan
declaration, and the transposes reverse mode needs.

Forward mode (`mlax.jvp`) emits one joint construct over the bodies' `mlax.jvp`s, carrying
(value, tangent) pairs, as JAX's jvp rules do. For reverse mode's linearization (``split``) each
JVP emits the construct twice instead, as JAX's partial evaluation splits it:
- a *primal* call computing the outputs (for scan it also stacks the carry entering each
  step, the residuals the tangent loop needs), and
- a *tangent* call whose bodies run the `mlax.jvp` of the original bodies and keep only the
  tangent outputs, so it is linear in the tangents.
Linearize + transpose (vjp.py) then sees the primal call as primal and the tangent call as one
linear op, transposed here: a cond by a cond over `mlax.vjp`s of its tangent branches, a scan by
a scan in the opposite direction over the `mlax.vjp` of its tangent body (the consts'
cotangents summed in its carry). A while loop has no transpose (its trip count is not known
ahead), as in JAX: reverse mode through one is an error that points to scan / fori_loop.

The transposed bodies recompute each step's primal values from the stacked carries (the
residuals are the inputs of a step, not the intermediates of its body).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir
from mlir.dialects import func

from mlax.dialect.transforms import Transform
from mlax.passes.autodiff.callbacks import drop_debug_callbacks
from mlax.passes.autodiff.emit import Emitter, MaybeValue, clone_all, is_float
from mlax.passes.autodiff.varying import Varying, as_specs, scan_body_varying
from mlax.passes.registry import PassFailure
from mlax.passes.symbols import CallSite, define_function

# On a split scan's tangent body: its ops reading tangents are linear in them, so it is
# transposed op by op (not through the vjp of a jvp).
LINEAR_BODY_ATTR = "mlax.linear_body"
WHILE_TRANSPOSE_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic "
    "start/stop values. Try using lax.scan, or lax.fori_loop with static start/stop.")


def function_type(function: ir.Operation) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)


class Builder(CallSite):
    """Where derivative code for one call goes, and how to make the functions it needs."""

    def adapter(self, base: str, target: str, arg_types: Sequence[ir.Type], in_map: Sequence[int],
                out_map: Sequence[int]) -> str:
        """A function of ``arg_types`` calling ``target`` on ``[args[i] for i in in_map]`` and
        returning ``(results ++ args)[j] for j in out_map``."""
        target_type = function_type(self.lookup(target))

        def build(point: ir.InsertionPoint, args: list[ir.Value]) -> list[ir.Value]:
            with self.location:
                call = func.CallOp(list(target_type.results), target, [args[i] for i in in_map], ip=point)
            pool = [*call.results, *args]
            return [pool[j] for j in out_map]

        return define_function(self.module, base, arg_types, self.location, build)

    def dense(self, values: Sequence[MaybeValue], like: Sequence[ir.Value | ir.Type],
              point: ir.InsertionPoint | None = None) -> list[ir.Value]:
        e = Emitter(point or self.point, self.location)
        return [e.materialize(v, t) for v, t in zip(values, like, strict=True)]


def _types(values: Sequence[ir.Value]) -> list[ir.Type]:
    return [v.type for v in values]


def tangent_values(outs: Sequence[ir.Value]) -> list[MaybeValue]:
    return [t if is_float(t) else None for t in outs]


def span(start: int, count: int) -> list[int]:
    return list(range(start, start + count))


# ---- forward mode ------------------------------------------------------------------------------


def emit_control_flow_jvp(declaration: ir.Operation, transform: Transform, operands: list[ir.Value],
                          tangents: list[MaybeValue], point: ir.InsertionPoint, lookup: Any,
                          location: ir.Location, split: bool) -> tuple[list[ir.Value], list[MaybeValue]]:
    """The primal results of a call (at ``location``) of a control-flow declaration and their
    tangents: split into a primal and a tangent construct for reverse mode, else one joint
    construct computing both."""
    b = Builder(declaration.parent, point, location, lookup)
    name = ir.StringAttr(declaration.attributes["sym_name"]).value
    if all(t is None for t in tangents):
        outs = b.call(name, operands)
        return outs, [None] * len(outs)
    rules = SPLIT_JVP_RULES if split else JOINT_JVP_RULES
    return rules[transform.kind](b, name, transform.fields, operands, tangents)


def _jvp_cond(b: Builder, name: str, fields: dict, operands: list[ir.Value],
              tangents: list[MaybeValue]) -> tuple[list[ir.Value], list[MaybeValue]]:
    outs = b.call(name, operands)
    args = operands[1:]
    n_args, n_out = len(args), len(outs)
    branches = []
    for branch in fields["branches"]:
        jvp = b.declare("jvp", branch, callee=branch)
        branches.append(b.adapter(f"{branch}_tangent", jvp, _types(args) * 2, range(2 * n_args),
                                  span(n_out, n_out)))
    tangent_cond = b.declare("cond", f"{fields['branches'][0]}_tangent", branches=tuple(branches))
    return outs, tangent_values(b.call(tangent_cond, [operands[0], *args, *b.dense(tangents[1:], args)]))


def _pair_loop(b: Builder, fields: dict, operands: list[ir.Value],
               tangents: list[MaybeValue]) -> list[ir.Value]:
    """The while loop over (carry, carry tangent), with (consts, const tangents): its cond ignores
    the tangents, its body is the body's jvp. Returns (carry..., carry tangents...)."""
    nc = len(function_type(b.lookup(fields["body"])).results)
    nk = len(operands) - nc
    carry, consts = operands[:nc], operands[nc:]
    dense = b.dense(tangents, operands)
    arg_types = _types(carry) * 2 + _types(consts) * 2  # (c, dc, k, dk)
    c, dc, k, dk = span(0, nc), span(nc, nc), span(2 * nc, nk), span(2 * nc + nk, nk)
    jvp = b.declare("jvp", fields["body"], callee=fields["body"])  # (c, k, dc, dk) -> (c', dc')
    body = b.adapter(f"{fields['body']}_tangent", jvp, arg_types, c + k + dc + dk, range(2 * nc))
    cond = b.adapter(f"{fields['cond']}_tangent", fields["cond"], arg_types, c + k, [0])
    loop = b.declare("while", f"{fields['body']}_tangent", cond=cond, body=body)
    return b.call(loop, [*carry, *dense[:nc], *consts, *dense[nc:]])


def _jvp_while(b: Builder, name: str, fields: dict, operands: list[ir.Value],
               tangents: list[MaybeValue]) -> tuple[list[ir.Value], list[MaybeValue]]:
    outs = b.call(name, operands)
    return outs, tangent_values(_pair_loop(b, fields, operands, tangents)[len(outs):])


def _scan_counts(b: Builder, fields: dict,
                 operands: list[ir.Value]) -> tuple[str, list[ir.Type], int, int, int, int]:
    """A scan's body, the body's argument types, and its numbers of carries, xs, consts and ys."""
    nc, nk, body = fields["num_carry"], fields["num_consts"], fields["body"]
    body_type = function_type(b.lookup(body))
    return body, list(body_type.inputs), nc, len(operands) - nc - nk, nk, len(body_type.results) - nc


def _jvp_scan(b: Builder, name: str, fields: dict, operands: list[ir.Value],
              tangents: list[MaybeValue]) -> tuple[list[ir.Value], list[MaybeValue]]:
    """Reverse mode's split of a scan, as jax's partial evaluation splits it: the body's
    linearization is split once into a primal function (step inputs -> step outputs ++
    residuals) and a linear one (residuals ++ tangents -> tangent outputs). The primal scan
    stacks the residuals that change per step; those that are the scan's xs or consts, or are
    computed from the consts alone (hoisted: computed once, before the loops), are passed as
    they are; the tangent scan runs the linear function. A body holding checkpoints, whose
    policies decide what is saved, is split by recomputation instead."""
    body, ins, nc, nx, nk, ny = _scan_counts(b, fields, operands)
    nonzero = [is_float(v) if i < nc else t is not None and is_float(v)
               for i, (v, t) in enumerate(zip(operands, tangents, strict=True))]
    from mlax.passes.autodiff.vjp import linear_pair  # the split is reverse mode's (vjp.py)

    pair = linear_pair(b.module, b.lookup(body), body, nonzero, b.lookup)
    if pair is None:
        return _jvp_scan_recomputing(b, name, fields, operands, tangents)
    (primal, _), (linear, flags) = pair
    loop = {k: fields[k] for k in ("length", "reverse")}
    plan = _ResidualPlan(primal, nc, nx, nk, nc + ny)
    # The primal scan, stacking the residuals that change per step.
    forward = b.adapter(f"{body}_forward", ir.StringAttr(primal.attributes["sym_name"]).value, ins,
                        range(len(ins)), [*range(nc + ny), *(nc + ny + i for i in plan.per_step)])
    primal_scan = b.declare("scan", f"{body}_forward", body=forward, num_carry=nc, num_consts=nk, **loop)
    results = b.call(primal_scan, operands)
    outs, stacked = results[:nc + ny], results[nc + ny:]
    consts = operands[nc + nx:]
    invariants = b.call(plan.hoist(b, f"{body}_invariants", ins[nc + nx:]), consts) if plan.invariant else []
    # The tangent scan: carry the float carries' tangents; xs (per-step residuals, xs that are
    # residuals, nonzero xs tangents); consts (consts that are residuals, hoisted residuals,
    # nonzero consts tangents).
    res_types = plan.types
    dense = b.dense(tangents, operands)
    tan_c = [i for i in range(nc) if nonzero[i]]
    tan_x = [j for j in range(nx) if nonzero[nc + j]]
    tan_k = [j for j in range(nk) if nonzero[nc + nx + j]]
    groups = [tan_c, plan.per_step, plan.from_xs, tan_x, plan.from_consts, plan.invariant, tan_k]
    arg_types = [*(ins[i] for i in tan_c), *(res_types[r] for r in plan.per_step),
                 *(res_types[r] for r in plan.from_xs), *(ins[nc + j] for j in tan_x),
                 *(res_types[r] for r in plan.from_consts), *(res_types[r] for r in plan.invariant),
                 *(ins[nc + nx + j] for j in tan_k)]
    body_outs = [*(ins[i] for i in tan_c), *(t for t in list(function_type(b.lookup(body)).results)[nc:])]
    float_ys = [j for j in range(ny) if is_float(body_outs[len(tan_c) + j])]
    linear_name = ir.StringAttr(linear.attributes["sym_name"]).value
    linear_type = function_type(linear)

    def tangent_step(point: ir.InsertionPoint, params: list[ir.Value]) -> list[ir.Value]:
        parts, start = [], 0
        for group in groups:
            parts.append(params[start:start + len(group)])
            start += len(group)
        dc, step_res, x_res, dx, k_res, inv_res, dk = parts
        residuals: list[ir.Value | None] = [None] * len(res_types)
        for indices, values in ((plan.per_step, step_res), (plan.from_xs, x_res), (plan.from_consts, k_res),
                                (plan.invariant, inv_res)):
            for r, v in zip(indices, values, strict=True):
                residuals[r] = v
        with b.location:
            call = func.CallOp(list(linear_type.results), linear_name, [*residuals, *dc, *dx, *dk], ip=point)
        given = iter(call.results)
        present = [next(given) if f else None for f in flags]  # (dc', dy) over all carries and ys
        e = Emitter(point, b.location)
        carry_out = [e.materialize(present[i], ins[i]) for i in tan_c]
        ys_out = [e.materialize(present[nc + j], body_outs[len(tan_c) + j]) for j in float_ys]
        return [*carry_out, *ys_out]

    tangent_body = define_function(b.module, f"{body}_tangent", arg_types, b.location, tangent_step)
    b.lookup(tangent_body).attributes[LINEAR_BODY_ATTR] = ir.UnitAttr.get()
    tangent = b.declare("scan", f"{body}_tangent", body=tangent_body, num_carry=len(tan_c),
                        num_consts=len(plan.from_consts) + len(plan.invariant) + len(tan_k), **loop)
    tangent_outs = iter(b.call(tangent, [
        *(dense[i] for i in tan_c), *stacked, *(operands[plan.argument[r]] for r in plan.from_xs),
        *(dense[nc + j] for j in tan_x), *(operands[plan.argument[r]] for r in plan.from_consts),
        *invariants, *(dense[nc + nx + j] for j in tan_k)]))
    carry_tangents = [next(tangent_outs) if nonzero[i] else None for i in range(nc)]
    ys_tangents = [next(tangent_outs) if j in float_ys else None for j in range(ny)]
    return outs, [*carry_tangents, *ys_tangents]


class _ResidualPlan:
    """Where each residual of a split scan body comes from: the step (stacked by the primal
    scan), the scan's xs or consts (the body's own arguments), or the consts alone (invariant:
    hoisted out of the loops)."""

    def __init__(self, primal: ir.Operation, nc: int, nx: int, nk: int, n_out: int) -> None:
        block = primal.regions[0].blocks[0]
        self.block = block
        arguments = list(block.arguments)
        returned = list(block.operations[len(block.operations) - 1].operands)[n_out:]
        self.types = [v.type for v in returned]
        invariant: set[ir.Value] = set(arguments[nc + nx:])
        self.hoistable: list[ir.Operation] = []
        for op in [o.operation for o in block.operations]:
            if op.name.startswith("mlax.") and len(op.regions) == 0 \
                    and all(v in invariant for v in op.operands):
                invariant.update(op.results)
                self.hoistable.append(op)
        self.argument: dict[int, int] = {}  # residual -> the body argument it is
        kinds = []
        for r, v in enumerate(returned):
            position = v.arg_number if isinstance(v, ir.BlockArgument) and v.owner == block else -1
            if nc <= position:
                self.argument[r] = position
                kinds.append("x" if position < nc + nx else "const")
            else:
                kinds.append("invariant" if v in invariant else "step")
        self.returned = returned
        self.nc_nx = nc + nx
        self.per_step = [r for r, k in enumerate(kinds) if k == "step"]
        self.from_xs = [r for r, k in enumerate(kinds) if k == "x"]
        self.from_consts = [r for r, k in enumerate(kinds) if k == "const"]
        self.invariant = [r for r, k in enumerate(kinds) if k == "invariant"]

    def hoist(self, b: Builder, base: str, const_types: Sequence[ir.Type]) -> str:
        """A function of the consts computing the invariant residuals (the ops they need, cloned)."""
        needed = {self.returned[r] for r in self.invariant}
        kept = []
        for op in reversed(self.hoistable):
            if any(r in needed for r in op.results):
                kept.append(op)
                needed.update(op.operands)
        kept.reverse()
        arguments = list(self.block.arguments)[self.nc_nx:]

        def build(point: ir.InsertionPoint, params: list[ir.Value]) -> list[ir.Value]:
            values: dict[ir.Value, ir.Value] = dict(zip(arguments, params, strict=True))
            clone_all(kept, values, point)
            return [values[self.returned[r]] for r in self.invariant]

        return define_function(b.module, base, const_types, b.location, build)


def _jvp_scan_recomputing(b: Builder, name: str, fields: dict, operands: list[ir.Value],
                          tangents: list[MaybeValue]) -> tuple[list[ir.Value], list[MaybeValue]]:
    """The split of a scan whose body holds checkpoints: the primal scan stacks only the carry
    entering each step; the tangent scan runs the body's jvp, recomputing each step."""
    body, ins, nc, nx, nk, ny = _scan_counts(b, fields, operands)
    loop = {k: fields[k] for k in ("length", "reverse")}
    # The primal scan again, stacking the carry entering each step (the residuals).
    n_body_out = nc + ny
    stacking = b.adapter(f"{body}_residuals", body, ins, range(len(ins)),
                         [*range(n_body_out), *span(n_body_out, nc)])
    primal = b.declare("scan", f"{body}_residuals", body=stacking, num_carry=nc, num_consts=nk, **loop)
    primal_results = b.call(primal, operands)
    outs, carries = primal_results[:n_body_out], primal_results[n_body_out:]
    # The tangent scan: carry dc; xs (carry_i, x_i, dx_i); consts (k, dk).
    c_t, x_t, k_t = ins[:nc], ins[nc:nc + nx], ins[nc + nx:]
    arg_types = [*c_t, *c_t, *x_t, *x_t, *k_t, *k_t]
    dc, ci, xi, dxi = span(0, nc), span(nc, nc), span(2 * nc, nx), span(2 * nc + nx, nx)
    k, dk = span(2 * nc + 2 * nx, nk), span(2 * nc + 2 * nx + nk, nk)
    jvp = b.declare("jvp", body, callee=body)  # (c, x, k, dc, dx, dk) -> (c', y, dc', dy)
    tangent_body = b.adapter(f"{body}_tangent", jvp, arg_types, ci + xi + k + dc + dxi + dk,
                             span(n_body_out, n_body_out))
    tangent = b.declare("scan", f"{body}_tangent", body=tangent_body, num_carry=nc, num_consts=2 * nk, **loop)
    dense = b.dense(tangents, operands)
    xs, consts = operands[nc:nc + nx], operands[nc + nx:]
    return outs, tangent_values(b.call(tangent, [*dense[:nc], *carries, *xs, *dense[nc:nc + nx], *consts,
                                            *dense[nc + nx:]]))


def _joint_cond(b: Builder, name: str, fields: dict, operands: list[ir.Value],
                tangents: list[MaybeValue]) -> tuple[list[ir.Value], list[MaybeValue]]:
    """A cond over the branches' jvps: (args, tangents) -> (outs, tangent outs)."""
    args = operands[1:]
    branches = tuple(b.declare("jvp", branch, callee=branch) for branch in fields["branches"])
    joint = b.declare("cond", f"{fields['branches'][0]}_jvp", branches=branches)
    results = b.call(joint, [operands[0], *args, *b.dense(tangents[1:], args)])
    half = len(results) // 2
    return results[:half], tangent_values(results[half:])


def _joint_while(b: Builder, name: str, fields: dict, operands: list[ir.Value],
                 tangents: list[MaybeValue]) -> tuple[list[ir.Value], list[MaybeValue]]:
    """The (carry, carry tangent) loop alone gives both."""
    results = _pair_loop(b, fields, operands, tangents)
    half = len(results) // 2
    return results[:half], tangent_values(results[half:])


def _joint_scan(b: Builder, name: str, fields: dict, operands: list[ir.Value],
                tangents: list[MaybeValue]) -> tuple[list[ir.Value], list[MaybeValue]]:
    """A scan carrying (carry, carry tangent) over (xs, xs tangents) with (consts, tangents)."""
    body, ins, nc, nx, nk, ny = _scan_counts(b, fields, operands)
    c_t, x_t, k_t = ins[:nc], ins[nc:nc + nx], ins[nc + nx:]
    c, dc, x, dx = span(0, nc), span(nc, nc), span(2 * nc, nx), span(2 * nc + nx, nx)
    k, dk = span(2 * nc + 2 * nx, nk), span(2 * nc + 2 * nx + nk, nk)
    jvp = b.declare("jvp", body, callee=body)  # (c, x, k, dc, dx, dk) -> (c', y, dc', dy)
    n_out = nc + ny
    arg_types = [*c_t, *c_t, *x_t, *x_t, *k_t, *k_t]
    joint_body = b.adapter(f"{body}_jvp_step", jvp, arg_types, c + x + k + dc + dx + dk,
                           [*range(nc), *span(n_out, nc), *span(nc, ny), *span(n_out + nc, ny)])
    joint = b.declare("scan", f"{body}_jvp", body=joint_body, num_carry=2 * nc, num_consts=2 * nk,
                      length=fields["length"], reverse=fields["reverse"])
    dense = b.dense(tangents, operands)
    results = b.call(joint, [*operands[:nc], *dense[:nc], *operands[nc:nc + nx], *dense[nc:nc + nx],
                             *operands[nc + nx:], *dense[nc + nx:]])
    outs = [*results[:nc], *results[2 * nc:2 * nc + ny]]
    return outs, tangent_values([*results[nc:2 * nc], *results[2 * nc + ny:]])


# kind -> rule; shard_map.py adds the shard_map rules (its calls are differentiated the same way)
SPLIT_JVP_RULES = {"cond": _jvp_cond, "while": _jvp_while, "scan": _jvp_scan}
JOINT_JVP_RULES = {"cond": _joint_cond, "while": _joint_while, "scan": _joint_scan}


# ---- transposes --------------------------------------------------------------------------------


def transpose_control_flow(e: Emitter, op: ir.Operation, declaration: ir.Operation, transform: Transform,
                           cts: list[MaybeValue], known: list[MaybeValue], lookup: Any,
                           varying: Sequence[Varying] | None = None) -> list[MaybeValue]:
    """Cotangents of the operands of a control-flow call that is linear in its operands whose
    ``known`` value is None, given the cotangents of its results. ``varying`` (reverse mode
    inside a checked shard_map body) gives the mesh axes each operand varies over: the vjps
    of the bodies are typed by them (varying.py)."""
    if transform.kind == "while":
        raise PassFailure(f"mlax-autodiff: {WHILE_TRANSPOSE_ERROR}", op.location)
    b = Builder(declaration.parent, e.point, op.location, lookup)
    return TRANSPOSE_RULES[transform.kind](b, transform.fields, op, cts, known, varying)


def _typed(varying: Sequence[Varying] | None) -> dict[str, Any]:
    """The ``varying`` field of a body's vjp declaration, when the transpose is typed."""
    return {} if varying is None else {"varying": as_specs(varying)}


def _zeros_at(b: Builder, point: ir.InsertionPoint, types: Sequence[ir.Type]) -> list[ir.Value]:
    e = Emitter(point, b.location)
    return [e.zeros(t) for t in types]


def _transpose_cond(b: Builder, fields: dict, op: ir.Operation, cts: list[MaybeValue],
                    known: list[MaybeValue], varying: Sequence[Varying] | None) -> list[MaybeValue]:
    if known[0] is None:
        raise PassFailure("mlax-autodiff: the selector of a cond depends on tangents", op.location)
    args = list(op.operands)[1:]
    linear = [i for i, v in enumerate(known[1:]) if v is None]
    kept = [i for i, v in enumerate(known[1:]) if v is not None]
    results = list(op.results)
    arg_types = [args[i].type for i in kept] + _types(results)
    branches = []
    for branch in fields["branches"]:
        vjp = b.declare("vjp", branch, callee=branch, argnums=tuple(linear),
                        **_typed(None if varying is None else varying[1:]))
        drop_debug_callbacks(b.lookup(vjp))

        def build(point: ir.InsertionPoint, params: list[ir.Value], vjp: str = vjp) -> list[ir.Value]:
            values: list[ir.Value | None] = [None] * len(args)
            for i, p in zip(kept, params, strict=False):
                values[i] = p
            zeros = iter(_zeros_at(b, point, [args[i].type for i in linear]))
            full = [v if v is not None else next(zeros) for v in values]
            target = function_type(b.lookup(vjp))
            with b.location:
                call = func.CallOp(list(target.results), vjp, [*full, *params[len(kept):]], ip=point)
            return list(call.results)[len(results):]

        branches.append(define_function(b.module, f"{branch}_transpose", arg_types, b.location, build))
    transposed = b.declare("cond", f"{fields['branches'][0]}_transpose", branches=tuple(branches))
    operands = [known[0], *(known[1 + i] for i in kept), *b.dense(cts, results)]
    lin_cts = iter(b.call(transposed, operands))
    return [None, *(next(lin_cts) if v is None else None for v in known[1:])]


def _transpose_scan(b: Builder, fields: dict, op: ir.Operation, cts: list[MaybeValue],
                    known: list[MaybeValue], varying: Sequence[Varying] | None) -> list[MaybeValue]:
    operands, results = list(op.operands), list(op.results)
    body, ins, nc, nx, nk, ny = _scan_counts(b, fields, operands)
    n = len(operands)
    body_type = function_type(b.lookup(body))
    xs_known = [j for j in range(nx) if known[nc + j] is not None]
    xs_linear = [j for j in range(nx) if known[nc + j] is None]
    ks_known = [j for j in range(nk) if known[nc + nx + j] is not None]
    ks_linear = [j for j in range(nk) if known[nc + nx + j] is None]
    # Every carry is linear (a tangent scan carries only tangents; a known one is a zero).
    argnums = [*range(nc), *(nc + j for j in xs_linear), *(nc + nx + j for j in ks_linear)]
    body_varying = None if varying is None else \
        scan_body_varying(fields, varying, ir.SymbolTable(b.module))[0]
    body_function = b.lookup(body)
    step_transpose = None
    if varying is None and LINEAR_BODY_ATTR in body_function.attributes:
        from mlax.passes.autodiff.vjp import transpose_function  # reverse mode's transposer (vjp.py)

        step_transpose = transpose_function(body_function, [i in argnums for i in range(len(ins))],
                                            [True] * (nc + ny), b.lookup)
    else:
        vjp = b.declare("vjp", body, callee=body, argnums=tuple(argnums), **_typed(body_varying))
        vjp_type = function_type(b.lookup(vjp))
        drop_debug_callbacks(b.lookup(vjp))
    n_acc = len(ks_linear)
    y_types = list(body_type.results)[nc:]
    arg_types = [*ins[:nc], *(ins[nc + nx + j] for j in ks_linear), *(ins[nc + j] for j in xs_known),
                 *y_types, *(ins[nc + nx + j] for j in ks_known)]

    def build(point: ir.InsertionPoint, params: list[ir.Value]) -> list[ir.Value]:
        ct_carry, acc = params[:nc], params[nc:nc + n_acc]
        rest = params[nc + n_acc:]
        x_vals, ct_ys, k_vals = rest[:len(xs_known)], rest[len(xs_known):len(xs_known) + ny], \
            rest[len(xs_known) + ny:]
        values: list[ir.Value | None] = [None] * len(ins)
        for j, v in zip(xs_known, x_vals, strict=True):
            values[nc + j] = v
        for j, v in zip(ks_known, k_vals, strict=True):
            values[nc + nx + j] = v
        e = Emitter(point, b.location)
        if step_transpose is not None:  # a linear body: its transpose, on the known arguments
            given = iter(b.call(step_transpose[0], [*(v for v in values if v is not None), *ct_carry, *ct_ys],
                                point))
            arg_cts = [e.materialize(next(given) if f else None, ins[i])
                       for f, i in zip(step_transpose[1], argnums, strict=True)]
        else:  # the vjp of the body at zero tangents
            missing = [i for i, v in enumerate(values) if v is None]
            for i, z in zip(missing, _zeros_at(b, point, [ins[i] for i in missing]), strict=True):
                values[i] = z
            with b.location:
                call = func.CallOp(list(vjp_type.results), vjp, [*values, *ct_carry, *ct_ys], ip=point)
            arg_cts = list(call.results)[nc + ny:]
        sums = [e("add", a, c) for a, c in zip(acc, arg_cts[nc + len(xs_linear):], strict=True)]
        return [*arg_cts[:nc], *sums, *arg_cts[nc:nc + len(xs_linear)]]

    backward_body = define_function(b.module, f"{body}_transpose", arg_types, b.location, build)
    backward = b.declare("scan", f"{body}_transpose", body=backward_body, length=fields["length"],
                         reverse=not fields["reverse"], num_carry=nc + n_acc, num_consts=len(ks_known))
    carry_cts = b.dense(cts[:nc], results[:nc])
    acc0 = b.dense([None] * n_acc, [operands[nc + nx + j] for j in ks_linear])
    operands_in = [*carry_cts, *acc0, *(known[nc + j] for j in xs_known), *b.dense(cts[nc:], results[nc:]),
                   *(known[nc + nx + j] for j in ks_known)]
    out = b.call(backward, operands_in)
    contributions: list[MaybeValue] = [None] * n
    contributions[:nc] = out[:nc]
    for j, v in zip(ks_linear, out[nc:nc + n_acc], strict=True):
        contributions[nc + nx + j] = v
    for j, v in zip(xs_linear, out[nc + n_acc:], strict=True):
        contributions[nc + j] = v
    return contributions


TRANSPOSE_RULES = {"cond": _transpose_cond, "scan": _transpose_scan}
