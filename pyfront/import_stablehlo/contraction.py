"""dot_general, dot and convolution -> mlax.lax.dot_general / conv_general_dilated.

A result element type other than the operands' is jax's ``preferred_element_type``.
`precision_config` becomes the op's precision (absent or empty: DEFAULT for both operands);
dot algorithms are ignored. Convolution dimension numbers are read from their compact text
(``[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]``) or the ``raw`` field form.
"""

from __future__ import annotations

import re
from typing import Any

from jax import lax as jax_lax
from mlir import ir

import mlax.lax as lax
from mlax.import_stablehlo.core import (
    Entry,
    Importer,
    attribute,
    integer,
    ints,
    malformed,
    pairs,
    required,
    result_spec,
    struct,
    unsupported,
    value_spec,
)

CONVERTERS: dict[str, Entry] = {}


def _preferred(op: ir.Operation) -> Any:
    result = result_spec(op).dtype
    return None if result == value_spec(op, op.operands[0]).dtype else result


def _precision(op: ir.Operation) -> tuple[str, str] | None:
    """``precision_config = [#stablehlo<precision HIGHEST>, ...]`` as jax's pair of strings."""
    found = attribute(op, "precision_config")
    if found is None or len(ir.ArrayAttr(found)) == 0:
        return None
    names = [re.fullmatch(r"#stablehlo<\s*precision\s+(\w+)\s*>", str(p)) for p in ir.ArrayAttr(found)]
    if len(names) != 2 or None in names:
        raise malformed(op, f"cannot read the precision_config {found}")
    return names[0].group(1).lower(), names[1].group(1).lower()


def dot_general(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    fields = struct(op, "dot_dimension_numbers")
    numbers = ((fields.get("lhs_contracting_dimensions", []), fields.get("rhs_contracting_dimensions", [])),
               (fields.get("lhs_batching_dimensions", []), fields.get("rhs_batching_dimensions", [])))
    return [lax.dot_general(args[0], args[1], numbers, _precision(op), _preferred(op))]


def dot(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    return [lax.dot(args[0], args[1], _precision(op), _preferred(op))]


def conv_dimension_numbers(op: ir.Operation) -> jax_lax.ConvDimensionNumbers:
    """jax's (lhs_spec, rhs_spec, out_spec): (batch, feature, spatial...) positions of the input
    and output, (output feature, input feature, spatial...) of the kernel."""
    text = str(required(op, "dimension_numbers"))
    compact = re.fullmatch(r"#stablehlo\.conv<\[([^\]]*)\]x\[([^\]]*)\]->\[([^\]]*)\]>", text)
    if compact is not None:
        specs = []
        for letters, group in zip(("bf", "oi", "bf"), compact.groups(), strict=True):
            names = [n.strip() for n in group.split(",")]
            spatial = sorted((int(n), d) for d, n in enumerate(names) if n.isdigit())
            unknown = any(n not in letters and not n.isdigit() for n in names)
            if unknown or any(n not in names for n in letters):
                raise malformed(op, f"cannot read the dimension numbers {text}")
            specs.append((names.index(letters[0]), names.index(letters[1]), *(d for _, d in spatial)))
        return jax_lax.ConvDimensionNumbers(*specs)
    fields = struct(op, "dimension_numbers")
    try:
        return jax_lax.ConvDimensionNumbers(
            (fields["input_batch_dimension"], fields["input_feature_dimension"],
             *fields["input_spatial_dimensions"]),
            (fields["kernel_output_feature_dimension"], fields["kernel_input_feature_dimension"],
             *fields["kernel_spatial_dimensions"]),
            (fields["output_batch_dimension"], fields["output_feature_dimension"],
             *fields["output_spatial_dimensions"]))
    except KeyError as missing:
        raise malformed(op, f"the dimension numbers {text} lack {missing}") from None


def convolution(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    lhs, rhs = args
    k = len(value_spec(op, op.operands[0]).shape) - 2
    ones = [1] * k
    if any(ints(op, "window_reversal", [0] * k)):
        raise unsupported(op, "window_reversal (mlax's convolution does not reverse the window)")
    out = lax.conv_general_dilated(
        lhs, rhs, ints(op, "window_strides", ones), pairs(op, "padding", k), ints(op, "lhs_dilation", ones),
        ints(op, "rhs_dilation", ones), dimension_numbers=conv_dimension_numbers(op),
        feature_group_count=integer(op, "feature_group_count", 1),
        batch_group_count=integer(op, "batch_group_count", 1), precision=_precision(op),
        preferred_element_type=_preferred(op))
    return [out]


CONVERTERS.update({
    "stablehlo.dot_general": Entry(dot_general, "mlax.dot_general"),
    "stablehlo.dot": Entry(dot, "mlax.dot_general"),
    "stablehlo.convolution": Entry(convolution, "mlax.conv_general_dilated"),
})
