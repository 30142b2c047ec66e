"""Primitives of jax's extension API (``jax.extend.core.Primitive``) on mlax values.

After `mlax.install_as_jax`, ``jax.extend.core.Primitive`` is this subclass of jax's class, so a
library's ``ad.primitive_jvps[p] = ...``, ``batching.primitive_batchers[p] = ...`` and
``mlir.register_lowering(p, ...)`` fill jax's own tables, keyed by the same object, and mlax
reads them there. ``p.bind`` on jax's tracers is jax's; on anything else it is mlax's:

- outside a trace, the primitive's ``impl`` on the arguments (as jax's eager evaluation);
- inside one, ``abstract_eval`` on `ShapedArray`s gives the result types, and the program calls
  an `mlax.user_primitive` declaration (dialect/user_primitives.py) whose rules (`_Bound`) the
  passes use: the JVP and transpose rules in `mlax-autodiff`, the batching rule in
  `mlax-batch`, and the lowering in `mlax-expand-transforms` (the function given to
  ``mlir.lower_fun``, traced as mlax ops; a hand-written lowering is lowered by jax on abstract
  values and imported, mlax.from_stablehlo). A missing rule is jax's NotImplementedError.

No mlax value reaches jax's machinery: the rules get mlax tracers, jax's `Zero` and
`UndefinedPrimal` records (of ShapedArrays), and None for the dimension of an unbatched operand.
jax.experimental.hijax's `HiPrimitive` is only evaluated eagerly (`HiPrimitive` below).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax.core import ShapedArray
from jax.core import Tracer as JaxTracer
from jax.experimental import hijax as jax_hijax
from jax.extend import core as jax_core
from jax.interpreters import ad, batching, mlir
from mlir import ir
from mlir.dialects import func

import mlax.numpy as mnp
from mlax.core import Aval, Tracer, abstractify, current_trace
from mlax.dialect import get_context
from mlax.dialect.user_primitives import declare_user_primitive
from mlax.jax_modules import real_module
from mlax.jax_private import AxisData, ad_rules
from mlax.passes import user_primitives
from mlax.passes.symbols import unique_name
from mlax.rule_variants import placeholder, trace_into_module
from mlax.source_info import current_location
from mlax.staging import with_known


def _shaped(aval: Aval) -> ShapedArray:
    return ShapedArray(aval.shape, aval.dtype, weak_type=aval.weak_type)


def _aval(shaped: Any, name: str) -> Aval:
    """An abstract evaluation's result (a ShapedArray, or anything with shape and dtype)."""
    try:
        return Aval(tuple(shaped.shape), np.dtype(shaped.dtype), bool(getattr(shaped, "weak_type", False)))
    except (AttributeError, TypeError) as error:
        raise TypeError(f"the abstract evaluation rule of primitive '{name}' returned {shaped!r}, "
                        "which is not an abstract array (a ShapedArray)") from error


def _listed(value: Any, multiple: bool) -> list[Any]:
    return list(value) if multiple else [value]


def _is_zero(x: Any) -> bool:
    return x is None or type(x) is ad.Zero


class Primitive(jax_core.Primitive):
    """jax's Primitive, whose ``bind`` on anything but jax's tracers is mlax's."""

    def bind(self, *args: Any, **params: Any) -> Any:
        if any(isinstance(a, JaxTracer) for a in args):  # jax's own tracing (jax's lowering)
            return super().bind(*args, **params)
        if current_trace() is None and not any(isinstance(a, Tracer) for a in args):
            return self.impl(*args, **params)
        return _bind_traced(self, args, params)


class HiPrimitive(jax_hijax.HiPrimitive):
    """jax.experimental.hijax's HiPrimitive, whose ``bind`` on values that are not tracers is its
    ``impl`` (jax's eager evaluation: flax.nnx's hijax variables made and read eagerly). Its types
    and rules are defined against jax's tracing machinery, so mlax does not trace it: binding it
    on mlax's tracers is a NotImplementedError."""

    def bind(self, *args: Any, **params: Any) -> Any:
        if any(isinstance(a, JaxTracer) for a in args):
            return super().bind(*args, **params)
        if any(isinstance(a, Tracer) for a in args):
            raise NotImplementedError(f"mlax does not trace jax.experimental.hijax primitives ({self.name}): "
                                      "their types and rules are defined against jax's tracing machinery; "
                                      "outside transformations they run eagerly")
        return self.impl(*args, **params)


def _bind_traced(primitive: Primitive, args: tuple[Any, ...], params: dict[str, Any]) -> Any:
    trace = current_trace()
    if trace is None:
        raise TypeError(f"{primitive.name} was bound on a value of a trace that has ended")
    in_avals = [abstractify(a) for a in args]
    result, _effects = primitive.abstract_eval(*map(_shaped, in_avals), **params)
    out_avals = [_aval(r, primitive.name) for r in _listed(result, primitive.multiple_results)]
    bound = _Bound(primitive, params, in_avals, out_avals)
    module = trace.block.owner.parent
    values = [trace.value_of(a) for a in args]
    results = [a.spec.to_mlir() for a in out_avals]
    with get_context(), current_location():
        declaration = declare_user_primitive(module, unique_name(module, f"{primitive.name}_prim"),
                                             [v.type for v in values], results,
                                             id=user_primitives.register(bound),
                                             primitive_name=primitive.name, loc=current_location())
        with ir.InsertionPoint(trace.block):
            call = func.CallOp(results, ir.StringAttr(declaration.attributes["sym_name"]).value, values)
    tracers = [Tracer(trace, v, a, f"result {i} of primitive {primitive.name}")
               for i, (v, a) in enumerate(zip(call.results, out_avals, strict=True))]
    out = tracers if primitive.multiple_results else tracers[0]
    return with_known(out, args, {}, lambda *a: primitive.bind(*a, **params))


class _Bound:
    """One binding of a primitive: its parameters and abstract operands and results; the rules
    the passes call (passes/user_primitives.py `Rules`), each traced into the module at hand."""

    def __init__(self, primitive: Primitive, params: dict[str, Any], in_avals: Sequence[Aval],
                 out_avals: Sequence[Aval]) -> None:
        self.primitive, self.params = primitive, params
        self.in_avals, self.out_avals = list(in_avals), list(out_avals)

    @property
    def multiple(self) -> bool:
        return bool(self.primitive.multiple_results)

    def _trace(self, module: ir.Operation, fun: Callable[..., list[Any]], avals: Sequence[Aval]) -> str:
        return trace_into_module(module, fun, tuple(placeholder(a) for a in avals)).name

    def _cast(self, value: Any, aval: Aval) -> Any:
        """A rule's output as an array of ``aval`` (rules may return NumPy values or scalars)."""

        if isinstance(value, Tracer) and value.aval.dtype == aval.dtype and value.aval.shape == aval.shape:
            return value
        return mnp.broadcast_to(mnp.asarray(value, aval.dtype), aval.shape)

    def jvp(self, module: ir.Operation, nonzero: tuple[bool, ...]) -> tuple[str, list[bool]]:
        rule = ad.primitive_jvps.get(self.primitive)
        if rule is None:
            raise NotImplementedError(f"Differentiation rule for '{self.primitive.name}' not implemented")
        rule = _standard_rule(rule, self.out_avals) or rule
        n, flags = len(self.in_avals), []

        def jvp(*flat: Any) -> list[Any]:
            given = iter(flat[n:])
            tangents = [next(given) if f else ad.Zero(_shaped(a).to_tangent_aval())
                        for f, a in zip(nonzero, self.in_avals, strict=True)]
            out, out_tangents = rule(tuple(flat[:n]), tuple(tangents), **self.params)
            outs = [self._cast(o, a)
                    for o, a in zip(_listed(out, self.multiple), self.out_avals, strict=True)]
            out_tangents = _listed(out_tangents, self.multiple)
            flags[:] = [not _is_zero(t) for t in out_tangents]
            return [*outs, *(self._cast(t, a) for t, a in zip(out_tangents, self.out_avals, strict=True)
                             if not _is_zero(t))]

        avals = [*self.in_avals, *(a for a, f in zip(self.in_avals, nonzero, strict=True) if f)]
        return self._trace(module, jvp, avals), flags

    def transpose(self, module: ir.Operation, linear: tuple[bool, ...],
                  present: tuple[bool, ...]) -> tuple[str, list[bool]]:
        rule = ad.primitive_transposes.get(self.primitive)
        if rule is None:
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                      f"'{self.primitive.name}' not implemented")
        flags: list[bool] = []

        def transpose(*flat: Any) -> list[Any]:
            given = iter(flat)
            args = [ad.UndefinedPrimal(_shaped(a)) if lin else next(given)
                    for lin, a in zip(linear, self.in_avals, strict=True)]
            cts = [next(given) if p else ad.Zero(_shaped(a).to_ct_aval())
                   for p, a in zip(present, self.out_avals, strict=True)]
            out = rule(cts if self.multiple else cts[0], *args, **self.params)
            kept = [(c, a) for c, a, lin in zip(out, self.in_avals, linear, strict=True) if lin]
            flags[:] = [not _is_zero(c) for c, _ in kept]
            return [self._cast(c, a) for c, a in kept if not _is_zero(c)]

        known = [a for a, lin in zip(self.in_avals, linear, strict=True) if not lin]
        cts = [a for a, p in zip(self.out_avals, present, strict=True) if p]
        return self._trace(module, transpose, [*known, *cts]), flags

    def batch(self, module: ir.Operation, batched: tuple[bool, ...], size: int,
              axis_name: str | None) -> tuple[str, list[bool]]:

        # primitive_batchers and axis_primitive_batchers both write jax's table of rules taking
        # the axis's data (the vmap's size and name), the operands and their batch dimensions
        rule = batching.fancy_primitive_batchers.get(self.primitive)
        if rule is None:
            raise NotImplementedError(f"Batching rule for '{self.primitive.name}' not implemented")

        out_batched: list[bool] = []  # as the rule says: an output of batch dimension None is unbatched

        def batch(*flat: Any) -> list[Any]:
            dims = tuple(0 if b else None for b in batched)
            out, out_dims = rule(AxisData(axis_name, size, None, None), tuple(flat), dims, **self.params)
            results = []
            out_batched[:] = [d is not None for d in _listed(out_dims, self.multiple)]
            for o, d, a in zip(_listed(out, self.multiple), _listed(out_dims, self.multiple), self.out_avals,
                               strict=True):
                o = mnp.asarray(o) if d is None else mnp.moveaxis(mnp.asarray(o), d, 0)
                results.append(self._cast(o, Aval((size, *a.shape) if d is not None else a.shape, a.dtype,
                                                  a.weak_type)))
            return results

        avals = [Aval((size, *a.shape), a.dtype, a.weak_type) if b else a
                 for a, b in zip(self.in_avals, batched, strict=True)]
        return self._trace(module, batch, avals), out_batched

    def expand(self, module: ir.Operation) -> str:
        lowering = _lowering_function(self.primitive, self.in_avals, self.params)

        def expanded(*flat: Any) -> list[Any]:
            return [self._cast(o, a) for o, a in zip(lowering(*flat), self.out_avals, strict=True)]

        return self._trace(module, expanded, self.in_avals)


def _standard_rule(rule: Any, out_avals: Sequence[Aval]) -> Callable[..., Any] | None:
    """mlax's form of the JVP rules jax's helpers register (``ad.defjvp``, ``defjvp2``,
    ``defbilinear``, ``deflinear``, ``deflinear2``), which would ask jax for the type of an mlax
    value (the zero they start their sums from) or make jax's zeros; None for any other rule."""
    if not isinstance(rule, functools.partial):
        return None
    if rule.func in (ad_rules.standard_jvp, ad_rules.standard_jvp2):
        rules, primitive = rule.args
        with_out = rule.func is ad_rules.standard_jvp2

        def standard(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
            out = primitive.bind(*primals, **params)
            terms = [r(t, *((out,) if with_out else ()), *primals, **params)
                     for r, t in zip(rules, tangents, strict=False) if r is not None and not _is_zero(t)]
            terms = [t for t in terms if not _is_zero(t)]
            zero = ad.Zero(_shaped(out_avals[0]).to_tangent_aval())
            return out, functools.reduce(operator.add, terms) if terms else zero

        return standard
    if rule.func is ad_rules.linear_jvp:
        (primitive,) = rule.args

        def linear(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> Any:
            dense = [mnp.zeros(t.aval.shape, t.aval.dtype) if _is_zero(t) else t for t in tangents]
            return primitive.bind(*primals, **params), primitive.bind(*dense, **params)

        return linear
    return None


def bound_primitive(declaration: ir.Operation) -> tuple[Primitive, dict[str, Any]] | None:
    """The primitive and parameters a user primitive declaration binds (make_jaxpr shows its
    calls as equations of the user's primitive, as jax does); None for another function."""
    bound = user_primitives.lookup(declaration)
    return (bound.primitive, bound.params) if isinstance(bound, _Bound) else None


def _rule(primitive: Primitive) -> Any:
    """The lowering rule jax would use on the CPU: the platform's, else the common one."""
    entry = mlir._platform_specific_lowerings.get("cpu", {}).get(primitive) or mlir._lowerings.get(primitive)
    if entry is None:
        raise NotImplementedError(f"MLIR translation rule for primitive '{primitive.name}' not found for "
                                  "platform cpu")
    return entry.rule


def _lowering_function(primitive: Primitive, in_avals: Sequence[Aval],
                       params: dict[str, Any]) -> Callable[..., list[Any]]:
    """The primitive's lowering as a function of mlax values returning the results' list."""
    rule = _rule(primitive)
    if getattr(rule, "__qualname__", "") == "lower_fun.<locals>.f_lowered":  # mlir.lower_fun(fun, ...)
        cells = dict(zip(rule.__code__.co_freevars, (c.cell_contents for c in rule.__closure__ or ()),
                         strict=True))
        fun, multiple = cells["fun"], cells["multiple_results"]
        return lambda *xs: _listed(fun(*xs, **params), multiple)
    # a lowering written in StableHLO: jax lowers the primitive on abstract values, mlax imports it
    from mlax.stablehlo_import import from_stablehlo

    real = real_module("jax")
    shapes = [real.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in in_avals]
    imported = from_stablehlo(real.jit(lambda *xs: primitive.bind(*xs, **params)).lower(*shapes))
    return lambda *xs: _listed(imported(*xs), primitive.multiple_results)
