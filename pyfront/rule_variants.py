"""Symbolic zeros of custom-derivative rules (``symbolic_zeros=True``), as jax's.

jax hands a rule a `SymbolicZero` for each tangent (or cotangent) it knows to be zero: those
of inputs that are not differentiated. In mlax only `mlax-autodiff` knows that pattern, so a
rule is traced with every tangent present at the call (the all-perturbed case) and, for the
patterns the pass meets, again at pass time: `register_variants` gives the pass a maker
(passes/autodiff/rule_variants.py) that traces the rule for one pattern into the module
being differentiated. jax's own `SymbolicZero` and `CustomVJPPrimal` are plain classes
(an abstract value and a record), so code checking ``isinstance`` against them works.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from jax import dtypes as jax_dtypes
from jax import tree_util
from jax.core import ShapedArray
from jax.custom_derivatives import CustomVJPPrimal, SymbolicZero
from mlir import ir
from mlir.dialects import func

from mlax.array import Array
from mlax.autodiff import _trace_callee
from mlax.core import Aval, Known, Trace, abstractify, zeros
from mlax.dialect import dtypes as mlir_dtypes
from mlax.dialect import get_context
from mlax.errors import user_error
from mlax.passes.autodiff import rule_variants
from mlax.passes.symbols import unique_name
from mlax.tracing import SubFunction

__all__ = ["CustomVJPPrimal", "SymbolicZero", "custom_vjp_primal_tree_values", "zero_from_primal"]

@dataclass
class TraceInto:
    """Where rules are traced: into the enclosing ``trace`` at the call, or (None) straight
    into ``module``, the module under differentiation, at pass time."""

    module: ir.Operation
    trace: Trace | None = None

    def __call__(self, fun: Callable[..., Any], args: tuple[Any, ...],
                 knowns: Sequence[Known | None] | None = None) -> SubFunction:
        """``knowns``: at the call, what concrete mode knows of each argument (jax's eager
        transformations hand a rule concrete primals, so its Python may branch on them)."""
        if self.trace is not None:
            return _trace_callee(fun, args, self.trace, knowns=knowns)[0]
        return trace_into_module(self.module, fun, args)


def _tangent_dtype(aval: Aval) -> np.dtype:
    dtype = np.dtype(aval.dtype)
    return dtype if mlir_dtypes.is_float(dtype) else np.dtype(jax_dtypes.float0)


def symbolic_zero(aval: Aval) -> SymbolicZero:
    """jax's SymbolicZero for a primal of abstract value ``aval`` (float0 for int/bool)."""
    return SymbolicZero(ShapedArray(aval.shape, _tangent_dtype(aval), weak_type=aval.weak_type))


def zero_from_primal(val: Any, symbolic_zeros: bool = False) -> Any:
    """Zero tangents shaped like the pytree ``val``: SymbolicZeros, or arrays of zeros (float0
    for integer and boolean primals), as jax.custom_derivatives.zero_from_primal."""
    def zero(x: Any) -> Any:
        aval = abstractify(x)
        if symbolic_zeros:
            return symbolic_zero(aval)
        dtype = _tangent_dtype(aval)
        return zeros(Aval(aval.shape, dtype)) if dtype != jax_dtypes.float0 else np.zeros(aval.shape, dtype)

    return tree_util.tree_map(zero, val)


def custom_vjp_primal_tree_values(tree: Any) -> Any:
    """The values of a tree of CustomVJPPrimal records, as jax's helper of the same name."""
    def value(leaf: Any) -> Any:
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value

    return tree_util.tree_map(value, tree)


def dense(tangent: Any, aval: Aval) -> Any:
    """A rule's output tangent with a SymbolicZero (or None) made zeros of ``aval``."""
    if tangent is None or isinstance(tangent, SymbolicZero):
        return zeros(aval)
    return tangent


def with_zeros(given: Sequence[Any], zero: Sequence[bool], avals: Sequence[Aval]) -> list[Any]:
    """The tangents a symbolic-zeros rule sees: ``given`` (the nonzero ones, in order) with a
    SymbolicZero wherever ``zero`` says."""
    rest = iter(given)
    return [symbolic_zero(a) if z else next(rest) for z, a in zip(zero, avals, strict=True)]


def placeholder(aval: Aval) -> Any:
    """A concrete stand-in of an abstract value, only to give a traced function its argument types."""
    return Array._wrap(np.zeros(aval.shape, aval.dtype), aval.weak_type)


def trace_into_module(module: ir.Operation, fun: Callable[..., Any], args: tuple[Any, ...]) -> SubFunction:
    """Trace ``fun`` into a private function of ``module`` outside any trace (pass time): a
    throwaway holder function gives it an enclosing trace; it may not use enclosing values."""
    with get_context(), ir.Location.unknown(), ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]):
        holder = func.FuncOp(unique_name(module, "__mlax_rule_holder"), ir.FunctionType.get([], []),
                             visibility="private")
        block = holder.add_entry_block()
    trace = Trace("rule", block)
    try:
        sub, _, _ = _trace_callee(fun, args, trace)
    finally:
        trace.active = False
        holder.operation.erase()
    if sub.captured:
        raise user_error(TypeError, f"the custom derivative rule {sub.name} uses a traced value from outside "
                         "it; pass it as an argument instead")
    return sub


def register_variants(rule: str, module: ir.Operation,
                      make: Callable[[TraceInto, tuple[bool, ...]], list[str]]) -> None:
    """Let the pass specialise the traced rule function ``rule`` of ``module``: ``make(into,
    zero)`` traces the functions for one zero pattern and returns their symbols."""
    def maker(target: ir.Operation, zero: tuple[bool, ...]) -> list[str]:
        return make(TraceInto(target), zero)

    token = rule_variants.register(maker)
    table = ir.SymbolTable(module)
    with get_context():
        table[rule].operation.attributes[rule_variants.ATTR] = ir.StringAttr.get(token)
