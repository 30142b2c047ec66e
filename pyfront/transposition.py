"""mlax.linear_transpose: the transpose of a linear function, as jax.linear_transpose.

The primals only give the input types (arrays, ShapeDtypeStructs, scalars). ``fun`` is traced
once on them and its body checked to be linear in its inputs, op by op, with the rule table
reverse mode uses (passes/autodiff/transpose_rules.py): an op on an input-dependent value
needs a transpose rule, and a bilinear op (mul, dot_general, conv, div) at most one such
operand (div: only the numerator), as in jax, where tracing the transpose fails the same
way. The transpose is then the VJP at zeros (for a linear function the VJP is the same at
every point), which `mlax-autodiff` builds by linearize + transpose like every VJP.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from jax import tree_util
from jax.core import ShapedArray
from mlir import ir

from mlax.autodiff import vjp
from mlax.core import Aval, abstractify, current_trace
from mlax.dialect import dtypes as mlir_dtypes
from mlax.dialect.transforms import read_transform
from mlax.errors import check_callable, user_error
from mlax.passes.autodiff.transpose_rules import TRANSPOSE_RULES
from mlax.rule_variants import placeholder
from mlax.tracing import abstract_argument, function_name, trace_function

# Ops whose result is linear in each operand separately (positions that may be linear; None: any one).
_BILINEAR: dict[str, tuple[int, ...] | None] = {
    "mul": None, "dot_general": None, "conv_general_dilated": None, "div": (0,)}


def _check_linear(function: ir.Operation, table: ir.SymbolTable, linear: set[ir.Value], name: str) -> set:
    """The values of ``function``'s body that depend on the ``linear`` ones, raising jax's
    errors where one does so non-linearly."""
    for op in [o.operation for o in function.regions[0].blocks[0].operations]:
        positions = [i for i, v in enumerate(op.operands) if v in linear]
        if not positions or op.name == "func.return":
            continue
        short = op.name.removeprefix("mlax.")
        if op.name == "func.call":
            callee = table[ir.FlatSymbolRefAttr(op.attributes["callee"]).value].operation
            if read_transform(callee) is None:  # plain call: check its body; declarations pass
                inner = _check_linear(callee, table, {callee.regions[0].blocks[0].arguments[i]
                                                      for i in positions}, name)
                returned = callee.regions[0].blocks[0].operations[-1].operands
                linear.update(r for r, v in zip(op.results, returned, strict=True) if v in inner)
                continue
        elif short not in TRANSPOSE_RULES:
            raise user_error(NotImplementedError, f"Transpose rule (for reverse-mode differentiation) for "
                             f"'{short}' not implemented: {name} is not linear in its inputs",
                             f"fun of mlax.linear_transpose ({name})")
        elif short in _BILINEAR:
            allowed = _BILINEAR[short]
            if len(positions) > 1 or (allowed is not None and positions[0] not in allowed):
                raise user_error(AssertionError, f"{name} is not linear in its inputs: '{short}' of values "
                                 "that both depend on them", f"fun of mlax.linear_transpose ({name})")
        linear.update(op.results)
    return linear


def _struct(aval: Aval) -> ShapedArray:
    return ShapedArray(aval.shape, aval.dtype, weak_type=aval.weak_type)


def linear_transpose(fun: Callable[..., Any], *primals: Any, reduce_axes: Any = ()) -> Callable[..., Any]:
    """``transposed(out_cotangent) -> tuple of input cotangents`` of the linear ``fun``."""
    check_callable(fun, "fun of mlax.linear_transpose")
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    name = function_name(fun)
    leaves, in_tree = tree_util.tree_flatten(primals)
    advice = "linear_transpose reads every primal as an array: pass other values through a closure."
    in_avals = [abstract_argument(leaf, f"primals[{i}]", "mlax.linear_transpose", "linear_transpose", advice)
                for i, leaf in enumerate(leaves)]

    def build_args(tracers: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return tree_util.tree_unflatten(in_tree, tracers), {}

    traced = trace_function(fun, build_args, in_avals, [f"primals[{i}]" for i in range(len(leaves))],
                            current_trace(), "linear_transpose")
    in_dtypes = [np.dtype(a.dtype) for a in in_avals]
    out_dtypes = [np.dtype(a.dtype) for a in traced.out_avals]
    if not (all(mlir_dtypes.is_float(d) for d in in_dtypes + out_dtypes)
            or all(np.issubdtype(d, np.integer) for d in in_dtypes + out_dtypes)):
        raise user_error(TypeError, "linear_transpose only supports [float or complex] -> "
                         "[float or complex], and integer -> integer functions, but got "
                         f"{in_dtypes} -> {out_dtypes}.",
                         f"fun of mlax.linear_transpose ({name})")
    if not all(mlir_dtypes.is_float(d) for d in in_dtypes):
        raise user_error(NotImplementedError, "linear_transpose of integer -> integer functions is not "
                         "supported yet (mlax differentiates float values only)",
                         f"fun of mlax.linear_transpose ({name})")
    table = ir.SymbolTable(traced.module.operation)
    entry = table[traced.entry].operation
    _check_linear(entry, table, set(entry.regions[0].blocks[0].arguments), name)
    zeros = tree_util.tree_unflatten(in_tree, [placeholder(a) for a in in_avals])
    out_avals = traced.out_avals

    def transposed(out_cotangent: Any) -> tuple[Any, ...]:
        cts, tree = tree_util.tree_flatten(out_cotangent)
        if tree != traced.out_tree:
            raise user_error(TypeError, "cotangent tree does not match function output, expected "
                             f"{traced.out_tree} but got {tree}", f"the argument of the transpose of {name}")
        if any(abstractify(c).shape != a.shape or np.dtype(abstractify(c).dtype) != np.dtype(a.dtype)
               for c, a in zip(cts, out_avals, strict=True)):
            raise user_error(TypeError, "cotangent type does not match function output, expected "
                             f"{[_struct(a) for a in out_avals]} but got {cts}",
                             f"the argument of the transpose of {name}")
        _, pull = vjp(fun, *zeros)
        return pull(out_cotangent)

    return transposed
