"""mlax.make_jaxpr: jax.make_jaxpr's interface over mlax's traced IR.

mlax's program representation is MLIR, not jaxprs; ``make_jaxpr`` traces the function as
``jit`` does (nothing is compiled) and reads the traced module back as jax's own data
structures (``jax.extend.core.ClosedJaxpr``, ``Jaxpr``, ``JaxprEqn``, ``Var``, ``Literal``,
``jax.core.ShapedArray`` avals). So the text prints in jax's exact style, by jax's printer, and
code that walks ``closed.jaxpr.eqns`` or compares avals works unchanged. One equation per mlax
op, named as jax's primitive where mlax's op has a counterpart (`_RENAMES`), with jax's params
where jax's primitive has them. The primitives bind on mlax values: jax's lax primitives are
mlax.lax_primitives' objects (``jax.lax.add_p`` after install_as_jax), declarations and calls
mlax.jaxpr_calls', so an interpreter that rebinds each equation (distrax's, equinox's) works;
mlax's ``eval_jaxpr`` (pyfront/jaxpr_eval.py) calls the function each jaxpr was read from.

What the IR does not record is approximated: weak types of intermediate values follow each
op's weak-type rule (``OpDef.weak_type``, as ``bind`` applies it), with constants counting as
neither weak nor strong and arguments of nested jaxprs as strong; the jaxpr's own inputs and
outputs carry the traced, exact avals.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax.extend.core as jex
import numpy as np
from jax import ShapeDtypeStruct, tree_util
from jax.core import ShapedArray
from jax.lax import (
    ConvDimensionNumbers,
    FftType,
    GatherDimensionNumbers,
    GatherScatterMode,
    Precision,
    RoundingMethod,
    ScatterDimensionNumbers,
)
from mlir import ir

from mlax import jaxpr_calls, lax_primitives, prng
from mlax.api import JittedFunction
from mlax.core import Aval, abstractify, current_trace
from mlax.dialect import get_op, read_attributes
from mlax.dialect.attrs import dense_attribute, dense_to_numpy
from mlax.dialect.tensor_spec import TensorSpec
from mlax.dialect.transforms import JIT_NAME_ATTR, KINDS, read_transform
from mlax.errors import check_callable, index_tuple, user_error
from mlax.extend_primitive import bound_primitive
from mlax.jax_private import pp_eqn, pp_eqn_rules
from mlax.jaxpr_eval import record
from mlax.shape_eval import abstract_argument
from mlax.tracing import TracedFunction, _describe_path, definition_info, function_name, trace_function

__all__ = ["make_jaxpr"]

Atom = Any  # jex.Var | jex.Literal
# A rename: (mlax attributes, operands, result weak type) -> (jax's name, params, operands).
Rename = Callable[[dict[str, Any], list[Atom], bool], tuple[str, dict[str, Any], list[Atom]]]


def _named(name: str) -> Rename:
    return lambda params, invars, weak: (name, params, invars)


def _dot_general(params: dict[str, Any], invars: list[Atom], weak: bool) -> tuple[str, dict[str, Any],
                                                                                  list[Atom]]:
    """dot_general's params as jax's: dimension numbers as lists, precision None for the default
    (which jax's printer leaves out)."""
    numbers = ((list(params["lhs_contracting_dimensions"]), list(params["rhs_contracting_dimensions"])),
               (list(params["lhs_batch_dimensions"]), list(params["rhs_batch_dimensions"])))
    shown: dict[str, Any] = {"dimension_numbers": numbers, "precision": _precision(params["precision"]),
                             "preferred_element_type": params["result_dtype"]}
    return "dot_general", shown, invars


def _precision(names: Sequence[str]) -> tuple[Precision, ...] | None:
    """mlax's precision names as jax's param: None for the default."""
    return None if all(p == "DEFAULT" for p in names) else tuple(Precision[p] for p in names)


def _conv(params: dict[str, Any], invars: list[Atom], weak: bool) -> tuple[str, dict[str, Any], list[Atom]]:
    """conv_general_dilated's params as jax's: padding pairs, the specs as jax's record."""
    shown = {k: params[k] for k in ("window_strides", "lhs_dilation", "rhs_dilation", "feature_group_count",
                                    "batch_group_count")}
    numbers = ConvDimensionNumbers(params["lhs_spec"], params["rhs_spec"], params["out_spec"])
    shown.update(padding=_pairs(params["padding"]), dimension_numbers=numbers,
                 precision=_precision(params["precision"]))
    return "conv_general_dilated", shown, invars


def _pairs(flat: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """mlax's flat (lo0, hi0, lo1, hi1...) padding as jax's pairs."""
    return tuple(zip(flat[::2], flat[1::2], strict=True))


def _trailing_index_vector(params: dict[str, Any], invars: list[Atom]) -> bool:
    """Whether a gather's or scatter's index vector is its indices' last dimension, jax's only
    form (mlax.lax builds that; an imported StableHLO gather may not, and keeps mlax's params)."""
    return params["index_vector_dim"] == invars[1].aval.ndim - 1


def _gather(params: dict[str, Any], invars: list[Atom], weak: bool) -> tuple[str, dict[str, Any], list[Atom]]:
    """gather's dimension numbers as jax's record, its mode as jax's enum."""
    if not _trailing_index_vector(params, invars):
        return "gather", params, invars
    numbers = GatherDimensionNumbers(params["offset_dims"], params["collapsed_slice_dims"],
                                     params["start_index_map"], params["operand_batching_dims"],
                                     params["start_indices_batching_dims"])
    return "gather", {"dimension_numbers": numbers, "slice_sizes": params["slice_sizes"],
                      "mode": GatherScatterMode.from_any(params["mode"])}, invars


def _scatter(name: str) -> Rename:
    def rename(params: dict[str, Any], invars: list[Atom], weak: bool) -> tuple[str, dict[str, Any],
                                                                               list[Atom]]:
        if not _trailing_index_vector(params, invars):
            return name, params, invars
        numbers = ScatterDimensionNumbers(
            params["update_window_dims"], params["inserted_window_dims"],
            params["scatter_dims_to_operand_dims"], params["input_batching_dims"],
            params["scatter_indices_batching_dims"])
        mode = GatherScatterMode.from_any(params["mode"])
        return name, {"dimension_numbers": numbers, "mode": mode}, invars

    return rename


def _window(name: str) -> Rename:
    return lambda params, invars, weak: (name, {**params, "padding": _pairs(params["padding"])}, invars)


# mlax ops whose jax primitive is named (or takes its operands, or params) differently; every
# other mlax op has jax's name already (tests/frontend/test_make_jaxpr.py checks both against jax).
# With mlax.lax_primitives.DEFAULTS, the params are jax's, so ``eqn.primitive.bind(*operands,
# **eqn.params)`` computes the equation (tests/frontend/test_jax_lax_primitives.py).
_RENAMES: dict[str, Rename] = {
    "dot_general": _dot_general,
    "reshape": lambda params, invars, weak: ("reshape", {"new_sizes": tuple(params["shape"])}, invars),
    "pad": lambda params, invars, weak: ("pad", {"padding_config": tuple(zip(
        params["edge_padding_low"], params["edge_padding_high"], params["interior_padding"], strict=True))},
        invars),
    "round": lambda params, invars, weak: (
        "round", {"rounding_method": RoundingMethod[params["rounding_method"].upper()]}, invars),
    # jax records unit strides as None
    "slice": lambda params, invars, weak: ("slice", {
        **params, "strides": None if all(s == 1 for s in params["strides"]) else params["strides"]}, invars),
    "top_k": lambda params, invars, weak: (
        "top_k", {"k": params["k"], "axis": invars[0].aval.ndim - 1}, invars),
    "fft": lambda params, invars, weak: ("fft", {**params, "fft_type": FftType[params["fft_type"]]}, invars),
    "gather": _gather,
    "conv_general_dilated": _conv,
    "bitcast_convert": _named("bitcast_convert_type"),
    "compare": lambda params, invars, weak: (params["comparison_direction"].lower(), {}, invars),
    "convert": lambda params, invars, weak: (
        "convert_element_type", {"new_dtype": params["new_dtype"], "weak_type": weak}, invars),
    # jax's select_n(pred, *cases) picks cases[pred]: (on_false, on_true) for a boolean pred.
    "select": lambda params, invars, weak: ("select_n", {}, [invars[0], invars[2], invars[1]]),
    "scatter": _scatter("scatter"),
    "scatter_add": _scatter("scatter-add"),
    "scatter_mul": _scatter("scatter-mul"),
    "scatter_min": _scatter("scatter-min"),
    "scatter_max": _scatter("scatter-max"),
    **{f"reduce_window_{k}": _window(f"reduce_window_{k}") for k in ("sum", "max", "min")},
}


def _reduction(name: str) -> Rename:
    """reduce_* over ``dimensions`` as jax's over ``axes`` (jax's reduce_sum alone also takes
    the result's sharding, None where it is not given)."""
    extra = {"out_sharding": None} if name == "reduce_sum" else {}
    return lambda params, invars, weak: (name, {"axes": tuple(params["dimensions"]), **extra}, invars)


def _arg_reduction(name: str) -> Rename:
    """argmax/argmin along ``axis`` as jax's along ``axes`` (a one-axis tuple)."""
    return lambda params, invars, weak: (
        name, {"axes": (params["axis"],), "index_dtype": params["index_dtype"]}, invars)


def _cumulative(name: str) -> Rename:
    """cum* with jax's boolean ``reverse`` (mlax's attribute is 0 or 1)."""
    return lambda params, invars, weak: (name, {"axis": params["axis"], "reverse": bool(params["reverse"])},
                                         invars)


_RENAMES.update({f"reduce_{k}": _reduction(f"reduce_{k}")
                 for k in ("sum", "prod", "max", "min", "and", "or")})
_RENAMES.update({f"arg{k}": _arg_reduction(f"arg{k}") for k in ("max", "min")})
_RENAMES.update({f"cum{k}": _cumulative(f"cum{k}") for k in ("sum", "prod", "max", "min")})

# mlax ops with no jax primitive of the same meaning: they keep mlax's name (jax sorts with one
# variadic `sort`; mlax sorts through a permutation, see DESIGN.md).
# psum_scatter is jax's reduce_scatter primitive, which jax.lax does not export.
MLAX_ONLY_OPS = frozenset({"sort_permutation", "apply_permutation", "psum_scatter"})

# Declarations (docs/control_flow.md, docs/transforms.md) are equations named by their kind
# (jax's cond, while, scan, custom_jvp_call, custom_vjp_call and checkpoint have the same names;
# jvp, vjp and vmap are mlax's: jax applies them while tracing). Each function a declaration
# names becomes a ClosedJaxpr param: a `symbols` field under its own name (cond's branches), a
# `symbol` field as ``<field>_jaxpr`` or, for ``callee``, ``jaxpr``; except as jax names them:
_JAXPR_PARAMS = {
    ("scan", "body"): "jaxpr",
    ("custom_jvp_call", "callee"): "call_jaxpr",
    ("custom_vjp_call", "callee"): "call_jaxpr",
}


@functools.cache
def _binary_elementwise(name: str) -> bool:
    """Whether ``name`` is a binary op of one operand type (add, mul, compare...): jax's take a
    scalar operand as it is, where mlax broadcasts it into a splat constant, so their splat
    literals are read as jax's scalars."""
    ports = get_op(name).operands
    return len(ports) == 2 and len({p.type_var for p in ports}) == 1 and not any(p.variadic for p in ports)


def _scalar_literal(literal: jex.Literal) -> jex.Literal:
    aval = literal.aval
    value = np.asarray(literal.val)
    scalar = value.reshape(-1)[0] if value.size else np.zeros((), value.dtype)
    return jex.Literal(np.asarray(scalar), ShapedArray((), aval.dtype, weak_type=aval.weak_type))


@functools.cache
def primitive(name: str) -> jex.Primitive:
    """The one Primitive object of each name (names are finitely many: op names and kinds):
    jax's lax primitives are mlax.lax_primitives' objects (``jax.lax.add_p`` after
    install_as_jax, bound on mlax values), declarations and calls mlax.jaxpr_calls' (bound on
    their jaxprs), the others plain ones of their names. A nested jit prints as jax's."""
    prim = lax_primitives.BY_NAME.get(name) or jaxpr_calls.BY_NAME.get(name) or jex.Primitive(name)
    if name == "jit":
        pp_eqn_rules[prim] = _pp_jit
    return prim


def _pp_jit(eqn: jex.JaxprEqn, context: Any, settings: Any) -> Any:
    """A nested jit printed as jax prints its own: ``name`` first, and the inner jaxpr's
    binders named as the equation's operands and results where they are distinct."""
    inner = eqn.params["jaxpr"].jaxpr
    if inner not in context.shared_jaxprs:
        context.suggest_same_var_names(inner.invars, eqn.invars)
        context.suggest_same_var_names(inner.outvars, eqn.outvars)
    return pp_eqn(eqn, context, settings, params=["name", *sorted(set(eqn.params) - {"name"})])


def shaped_array(aval: Aval) -> ShapedArray:
    return ShapedArray(aval.shape, aval.dtype, weak_type=aval.weak_type)


def _type_aval(t: ir.Type, weak: bool = False) -> ShapedArray:
    spec = TensorSpec.from_mlir(t)
    return ShapedArray(spec.shape, spec.dtype, weak_type=weak)


def _weak(rule: str, weak: list[bool | None]) -> bool:
    """``bind``'s weak-type rule over operands whose weakness may be unknown (None: constants)."""
    if rule == "first":
        return bool(weak) and weak[0] is True
    known = [w for w in (weak[1:] if rule == "rest" else weak) if w is not None]
    return rule in ("all", "rest") and bool(known) and all(known)


@dataclass(frozen=True)
class _Entry:
    """What the trace knows of the entry function and its IR does not: exact avals, names."""

    in_avals: list[ShapedArray]
    out_avals: list[ShapedArray]
    debug_info: jex.DebugInfo
    captured: tuple[Any, ...] = ()  # values of an enclosing trace the function uses: its consts


def _entry(fun: Callable[..., Any], traced: TracedFunction, arg_paths: list[str], out_shape: Any) -> _Entry:
    info = definition_info(fun)
    source = f"{info.function} at {info.filename}:{info.line}" if info else function_name(fun)
    paths = tree_util.tree_flatten_with_path(out_shape)[0]
    results = tuple("result" + tree_util.keystr(path) for path, _ in paths)
    return _Entry([shaped_array(a) for a in traced.in_avals], [shaped_array(a) for a in traced.out_avals],
                  jex.DebugInfo("jit", source, tuple(arg_paths), results), traced.captured)


class _Reader:
    """Reads the functions of one traced module as ClosedJaxprs (each function once)."""

    def __init__(self, module: ir.Module) -> None:
        self.functions = {ir.StringAttr(op.attributes["sym_name"]).value: op.operation
                          for op in module.body.operations if op.operation.name == "func.func"}
        self.closed: dict[str, jex.ClosedJaxpr] = {}
        self.module = module

    def closed_jaxpr(self, name: str, traced_for: str = "closed_call", entry: _Entry | None = None
                     ) -> jex.ClosedJaxpr:
        """Function ``@name`` as a ClosedJaxpr, for the equation ``traced_for`` (jax's debug
        info); the ``entry`` function takes its traced avals and names from the trace."""
        if name not in self.closed:
            function = self.functions[name]
            debug = entry.debug_info if entry else jex.DebugInfo(traced_for, name, None, None)
            if read_transform(function) is not None:
                self.closed[name] = self._declaration_jaxpr(function, debug)
            else:
                self.closed[name] = _FunctionReader(self, function, entry).closed(debug)
            record(self.closed[name].jaxpr, self.module, name, len(entry.captured) if entry else 0)
        return self.closed[name]

    def _declaration_jaxpr(self, function: ir.Operation, debug: jex.DebugInfo) -> jex.ClosedJaxpr:
        """A declaration named by another one (a jvp of a vmap): one equation applying it."""
        fn_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
        invars = [jex.Var(_type_aval(t)) for t in fn_type.inputs]
        outvars = [jex.Var(_type_aval(t)) for t in fn_type.results]
        name, params = self.declaration(function)
        eqn = jex.new_jaxpr_eqn(invars, outvars, primitive(name), params, frozenset())
        return jex.ClosedJaxpr(jex.Jaxpr([], invars, outvars, [eqn], debug_info=debug), [])

    def declaration(self, function: ir.Operation) -> tuple[str, dict[str, Any]]:
        """The primitive name and params of a declaration: its kind and its fields, with the
        functions it names as ClosedJaxprs."""
        transform = read_transform(function)
        params: dict[str, Any] = {}
        for field in KINDS[transform.kind].fields:
            value = transform.fields.get(field.name)
            if value is None:
                continue
            if field.kind == "symbols":
                params[field.name] = tuple(self.closed_jaxpr(v, transform.kind) for v in value)
            elif field.kind == "symbol":
                if not self.functions[value].regions[0].blocks:
                    continue  # a rule that raised when traced at the call: untraced, as jax's fwd thunk
                default = "jaxpr" if field.name == "callee" else f"{field.name}_jaxpr"
                param = _JAXPR_PARAMS.get((transform.kind, field.name), default)
                params[param] = self.closed_jaxpr(value, transform.kind)
            else:
                params[field.name] = value
        return transform.kind, params


class _FunctionReader:
    """One function body read as a Jaxpr: an equation per op, constants as literals
    (splats: their one value, with the constant's aval) or constvars (the others)."""

    def __init__(self, reader: _Reader, function: ir.Operation, entry: _Entry | None) -> None:
        self.reader = reader
        self.out_avals = entry.out_avals if entry else None
        block = function.regions[0].blocks[0]
        self.block = block
        avals = entry.in_avals if entry else [_type_aval(a.type) for a in block.arguments]
        captured = list(entry.captured) if entry else []
        arguments = list(block.arguments)
        self.invars = [jex.Var(aval) for aval in avals]
        # the values of an enclosing trace it uses (extra arguments after its own): constvars
        # whose consts are those tracers, as jax's make_jaxpr inside a trace gives them
        self.constvars: list[jex.Var] = [jex.Var(shaped_array(abstractify(c))) for c in captured]
        self.consts: list[Any] = captured
        self.atoms: dict[ir.Value, Atom] = dict(zip(arguments, [*self.invars, *self.constvars], strict=True))
        self.weak: dict[ir.Value, bool | None] = {a: v.aval.weak_type for a, v in self.atoms.items()}
        self.eqns: list[jex.JaxprEqn] = []

    def closed(self, debug: jex.DebugInfo) -> jex.ClosedJaxpr:
        outvars: list[Atom] = []
        for operation in self.block.operations:
            op = operation.operation
            if op.name == "func.return":
                outvars = self._outvars(list(op.operands))
            elif op.name == "mlax.constant":
                self._constant(op)
            elif op.name == "func.call":
                self._call(op)
            elif op.name.startswith("mlax."):
                self._op(op)
            else:
                raise RuntimeError(f"internal error: make_jaxpr cannot read '{op.name}' at {op.location}")
        jaxpr = jex.Jaxpr(self.constvars, self.invars, outvars, self.eqns, debug_info=debug)
        return jex.ClosedJaxpr(jaxpr, self.consts)

    def _outvars(self, values: list[ir.Value]) -> list[Atom]:
        if self.out_avals is None:
            return [self.atoms[v] for v in values]
        outvars = []
        for value, aval in zip(values, self.out_avals, strict=True):
            atom = self.atoms[value]
            if isinstance(atom, jex.Var) and atom.aval != aval:
                atom.aval = aval  # the traced aval is exact where the propagated weak type is not
            outvars.append(atom)
        return outvars

    def _constant(self, op: ir.Operation) -> None:
        (result,) = op.results
        attr = dense_attribute(op, "value")
        value = dense_to_numpy(attr)
        aval = _type_aval(result.type)
        if attr.is_splat:  # its value of the literal's shape (a read-only view of the one value), which
            # jax's printer shows as [...] but for a scalar, and rebinding the equation reads whole
            scalar = value.reshape(-1)[0] if value.size else np.zeros((), value.dtype)
            self.atoms[result] = jex.Literal(np.broadcast_to(np.asarray(scalar), aval.shape), aval)
        else:
            var = jex.Var(aval)
            self.constvars.append(var)
            self.consts.append(value)
            self.atoms[result] = var
        self.weak[result] = None

    def _emit(self, op: ir.Operation, name: str | jex.Primitive, params: dict[str, Any], invars: list[Atom],
              weak: bool) -> None:
        outvars = [jex.Var(_type_aval(r.type, weak)) for r in op.results]
        prim = primitive(name) if isinstance(name, str) else name
        self.eqns.append(jex.new_jaxpr_eqn(invars, outvars, prim, params, frozenset()))
        for result, var in zip(op.results, outvars, strict=True):
            self.atoms[result] = var
            self.weak[result] = weak

    def _op(self, op: ir.Operation) -> None:
        short = op.name.removeprefix("mlax.")
        operands = list(op.operands)
        weak = _weak(get_op(short).weak_type, [self.weak[v] for v in operands])
        rename = _RENAMES.get(short, _named(short))
        invars = [self.atoms[v] for v in operands]
        if _binary_elementwise(short) and not all(isinstance(v, jex.Literal) for v in invars):
            invars = [_scalar_literal(v) if isinstance(v, jex.Literal) else v for v in invars]
        name, params, invars = rename(read_attributes(op), invars, weak)
        self._emit(op, name, {**lax_primitives.DEFAULTS.get(name, {}), **params}, invars, weak)

    def _call(self, op: ir.Operation) -> None:
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        function = self.reader.functions[callee]
        invars = [self.atoms[v] for v in op.operands]
        bound = bound_primitive(function)
        if bound is not None:  # a primitive of jax's extension API: its own equation
            name, params = bound
        elif read_transform(function) is not None:
            name, params = self.reader.declaration(function)
        elif JIT_NAME_ATTR in function.attributes:  # a nested jit (pyfront/nested_jit.py)
            name, params = "jit", {"name": ir.StringAttr(function.attributes[JIT_NAME_ATTR]).value,
                                   "jaxpr": self.reader.closed_jaxpr(callee)}
        else:  # a call of a function with a body (jax's closed_call)
            name, params = "closed_call", {"call_jaxpr": self.reader.closed_jaxpr(callee)}
        if name == "cond" and invars[0].aval.dtype == np.bool_:
            invars = [self._index_of(invars[0]), *invars[1:]]
        self._emit(op, name, params, invars, False)

    def _index_of(self, pred: Atom) -> jex.Var:
        """jax's cond takes an int32 index (its branches in mlax's order: false, true), which
        lax.cond converts from the boolean predicate mlax's cond takes: that equation."""
        index = jex.Var(ShapedArray(pred.aval.shape, np.dtype(np.int32)))
        params = {"new_dtype": np.dtype(np.int32), "weak_type": False}
        convert = primitive("convert_element_type")
        self.eqns.append(jex.new_jaxpr_eqn([pred], [index], convert, params, frozenset()))
        return index


_ADVICE = ("make_jaxpr traces every argument as an array: mark others static with static_argnums or pass "
           "them through a closure.")


def _partitioner(fun: Callable[..., Any], static_argnums: Any) -> tuple[Callable[..., Any], JittedFunction]:
    """The function to trace and a jit of it that splits static from traced arguments (with
    jit's checks); a jitted ``fun`` keeps its own static arguments static as well."""
    nums = () if static_argnums is None else index_tuple(static_argnums, "static_argnums", "mlax.make_jaxpr")
    if isinstance(fun, JittedFunction):
        inner = fun.__wrapped__
        return inner, JittedFunction(inner, (*nums, *fun._static_argnums), tuple(fun._static_argnames))
    return fun, JittedFunction(fun, nums)


def make_jaxpr(fun: Callable[..., Any], static_argnums: int | Sequence[int] = (), axis_env: Any = None,
               return_shape: bool = False, abstracted_axes: Any = None) -> Callable[..., Any]:
    """A function that traces ``fun`` on example arguments (arrays, scalars, ShapeDtypeStructs,
    pytrees of them) and returns its program as a ``ClosedJaxpr``, as ``jax.make_jaxpr``;
    with ``return_shape``, also the outputs' ``ShapeDtypeStruct`` pytree. Nothing is compiled.

    ``axis_env`` and ``abstracted_axes`` (named axes outside a vmap, dynamic shapes) are not
    supported: mlax's collectives name the axes of an enclosing vmap, and its shapes are static.
    """
    check_callable(fun, "fun of mlax.make_jaxpr")
    for option, value in (("axis_env", axis_env), ("abstracted_axes", abstracted_axes)):
        if value:
            raise user_error(NotImplementedError, f"mlax.make_jaxpr does not support {option}",
                             f"{option} of mlax.make_jaxpr")

    # built on the first call, where jax checks static_argnums (a failure is not cached)
    partitioner = functools.cache(lambda: _partitioner(fun, static_argnums))

    @functools.wraps(fun)
    def make(*args: Any, **kwargs: Any) -> Any:
        traced_fun, partition = partitioner()
        _, (dyn_args, dyn_kwargs), dyn_names, rebuild = partition._partition(args, kwargs)
        name = function_name(traced_fun)
        paths_and_leaves, in_tree = prng.tree_flatten_with_path((dyn_args, dyn_kwargs))  # keys as their data
        paths = [_describe_path(key_path, dyn_names) for key_path, _ in paths_and_leaves]
        in_avals = [abstract_argument(leaf, path, name, "make_jaxpr", _ADVICE)
                    for (_, leaf), path in zip(paths_and_leaves, paths, strict=True)]

        def build_args(tracers: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
            return rebuild(*tree_util.tree_unflatten(in_tree, tracers))

        traced = trace_function(traced_fun, build_args, in_avals, paths, current_trace(), "make_jaxpr")
        reader = _Reader(traced.module)
        structs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in traced.out_avals]
        out_shape = tree_util.tree_unflatten(traced.out_tree, structs)  # keys as abstract keys
        closed = traced_jaxpr(traced_fun, traced, paths, out_shape, reader)
        return (closed, out_shape) if return_shape else closed

    return make


def traced_jaxpr(fun: Callable[..., Any], traced: TracedFunction, arg_paths: Sequence[str], out_shape: Any,
                 reader: _Reader | None = None) -> jex.ClosedJaxpr:
    """The ClosedJaxpr of ``fun``'s trace ``traced`` (its arguments named by ``arg_paths``, its
    outputs shaped as ``out_shape``): make_jaxpr's result, and ``jit(f).trace(...).jaxpr``."""
    reader = reader or _Reader(traced.module)
    return reader.closed_jaxpr(traced.entry, entry=_entry(fun, traced, list(arg_paths), out_shape))
