"""Rules for conv_general_dilated and reduce_window_{sum,max,min}: `stablehlo.convolution` and
`stablehlo.reduce_window`, whose attributes are mlax's own (strides, lo/hi padding, lhs/base
and rhs/window dilations, feature and batch groups), rewritten in StableHLO's spelling.

Convolution dimension numbers are mlax's three permutations (batch, feature, spatial...) and
(output feature, input feature, spatial...), written as StableHLO's layout strings
(``[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]``: the role of each dimension in order). Halves
(f16, bf16) are converted to f32 around the convolution and a sum window: the reference
accumulates in f32 and rounds once, which an f32 computation rounded at the end gives on every
backend (XLA's own choice for halves is backend-dependent). The op's precision becomes
`precision_config`, as on dot_general (DEFAULT when absent, as jax emits it: a TPU then uses bf16
passes and a GPU TF32 for f32 convolutions).

reduce_window's init value is the monoid's identity (0, -inf / the lowest integer / false, +inf
/ the highest integer / true), which is also what XLA puts in padding and base-dilation holes,
as the reference does; the body is add, maximum or minimum (or / and on booleans).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from mlir import ir

from mlax.dialect import dtypes, read_attributes
from mlax.dialect.ops.reductions import MONOIDS
from mlax.passes.lower_to_stablehlo.common import (
    Rule,
    convert,
    dims,
    element_type,
    hlo,
    is_bool,
    scalar_reducer,
    scalar_type,
    splat,
    tensor_type,
    value,
    with_element,
)
from mlax.passes.lower_to_stablehlo.contraction import precision_config

_HALVES = ("f16", "bf16")


def _padding(padding: Sequence[int]) -> ir.Attribute:
    """lo/hi pairs ``(lo_0, hi_0, lo_1, ...)`` as StableHLO's ``dense<[[lo, hi], ...]> :
    tensor<Nx2xi64>``."""
    pairs = np.array(padding, np.int64).reshape(-1, 2)
    t = ir.RankedTensorType.get(list(pairs.shape), ir.IntegerType.get_signless(64))
    return ir.DenseElementsAttr.get(pairs, type=t)


def _layout(spec: Sequence[int], roles: str) -> str:
    """One operand's layout: ``spec`` lists the dimensions that play ``roles[0]``, ``roles[1]``
    and the spatial dimensions 0, 1, ...; the layout names each dimension's role in order."""
    names = [""] * len(spec)
    for d, role in zip(spec, [*roles, *map(str, range(len(spec) - 2))], strict=True):
        names[d] = role
    return "[" + ", ".join(names) + "]"


def _widened(x: ir.Value) -> ir.Value:
    """Halves as f32 (the reference's accumulation type); others unchanged."""
    return convert(x, ir.F32Type.get()) if str(element_type(x)) in _HALVES else x


def _conv(op: ir.Operation) -> ir.Value:
    lhs, rhs = op.operands
    a = read_attributes(op)
    result = tensor_type(op.results[0])
    if 0 in result.shape:
        return splat(0, result)
    lhs, rhs = _widened(lhs), _widened(rhs)
    numbers = (f"#stablehlo.conv<{_layout(a['lhs_spec'], 'bf')}x{_layout(a['rhs_spec'], 'oi')}"
               f"->{_layout(a['out_spec'], 'bf')}>")
    i64 = ir.IntegerType.get_signless(64)
    attributes = {"dimension_numbers": numbers, "window_strides": dims(a["window_strides"]),
                  "padding": _padding(a["padding"]), "lhs_dilation": dims(a["lhs_dilation"]),
                  "rhs_dilation": dims(a["rhs_dilation"]),
                  "feature_group_count": ir.IntegerAttr.get(i64, a["feature_group_count"]),
                  "batch_group_count": ir.IntegerAttr.get(i64, a["batch_group_count"]),
                  "precision_config": precision_config(op)}
    out = value("convolution", [lhs, rhs], with_element(result, element_type(lhs)), attributes)
    return convert(out, result.element_type)


# kind -> the stablehlo combiner of numbers, then of booleans
_COMBINERS = {"sum": ("add", "add"), "max": ("maximum", "or"), "min": ("minimum", "and")}


def _reduce_window(kind: str) -> Rule:
    def rule(op: ir.Operation) -> ir.Value:
        (operand,) = op.operands
        a = read_attributes(op)
        result = tensor_type(op.results[0])
        if 0 in result.shape:
            return splat(0, result)
        if kind == "sum":
            operand = _widened(operand)
        element = element_type(operand)
        identity = MONOIDS[kind].identity(dtypes.from_mlir(element))
        attributes = {"window_dimensions": dims(a["window_dimensions"]),
                      "window_strides": dims(a["window_strides"]), "base_dilations": dims(a["base_dilation"]),
                      "window_dilations": dims(a["window_dilation"]), "padding": _padding(a["padding"])}
        window = hlo("reduce_window", [operand, splat(identity, scalar_type(element))],
                     with_element(result, element), attributes, regions=1)
        scalar_reducer(window, 0, element, _COMBINERS[kind][is_bool(element)])
        return convert(window.result, result.element_type)

    return rule


RULES: dict[str, Rule] = {"conv_general_dilated": _conv,
                          **{f"reduce_window_{kind}": _reduce_window(kind) for kind in _COMBINERS}}
