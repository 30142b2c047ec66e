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
from mlax.passes.autodiff.emit import Emitter, MaybeValue, is_float
from mlax.passes.autodiff.varying import Varying, as_specs, scan_body_varying
from mlax.passes.registry import PassFailure
from mlax.passes.symbols import CallSite, define_function

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
        missing = [i for i, v in enumerate(values) if v is None]
        for i, z in zip(missing, _zeros_at(b, point, [ins[i] for i in missing]), strict=True):
            values[i] = z
        with b.location:
            call = func.CallOp(list(vjp_type.results), vjp, [*values, *ct_carry, *ct_ys], ip=point)
        arg_cts = list(call.results)[nc + ny:]
        e = Emitter(point, b.location)
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
