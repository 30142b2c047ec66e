"""jaxlib's LAPACK targets as jax's CPU lowering calls them, and what every rule around them needs.

`lapack_call` is the custom call of ``lapack_<s|d|c|z><routine>_ffi``: typed FFI (the
`mhlo.backend_config` a dictionary of ui8 characters: uplo, trans_x, mode...), column-major
layouts for the matrices (`operand_layouts` / `result_layouts` minor-to-major: the two matrix
dimensions, then the batch), row-major for the rest. A failed matrix (LAPACK's ``info``) is NaN
in jax's results, in both parts of a complex one: `nan_unless`.
"""

from __future__ import annotations

import math

from mlir import ir

from mlax.passes.lower_to_stablehlo.common import (
    broadcast,
    complex_parts,
    dims,
    hlo,
    scalar_reducer,
    scalar_type,
    select,
    splat,
    tensor_type,
    value,
    with_element,
)

TARGET_PREFIX = "lapack_"


def _layout(rank: int, matrices: bool) -> str:
    """A minor-to-major layout: column-major matrices (then the batch), or row-major."""
    order = [rank - 2, rank - 1, *range(rank - 3, -1, -1)] if matrices else list(range(rank - 1, -1, -1))
    if not rank:
        return "dense<> : tensor<0xindex>"
    return f"dense<[{', '.join(map(str, order))}]> : tensor<{rank}xindex>"


def _layouts(types: list[ir.Type], matrices: list[bool]) -> ir.Attribute:
    return ir.Attribute.parse("[" + ", ".join(_layout(tensor_type(t).rank, m)
                                              for t, m in zip(types, matrices, strict=True)) + "]")


def lapack_call(name: str, operands: list[ir.Value], results: list[ir.Type], matrix_results: list[bool],
                matrix_operands: list[bool] | None = None, integers: dict[str, int] | None = None,
                **chars: str) -> list[ir.Value]:
    """The custom call of jaxlib's ``lapack_<s|d|c|z><name>_ffi`` as jax emits it (every operand a
    batch of column-major matrices unless ``matrix_operands`` says which are); its attributes are
    the ``chars`` (ui8: uplo, mode...) and the i32 ``integers`` (gehrd's low and high)."""
    element = tensor_type(operands[0]).element_type
    complex_type = isinstance(element, ir.ComplexType)
    width = ir.FloatType(element.element_type if complex_type else element).width
    prefix = ("c" if width == 32 else "z") if complex_type else ("s" if width == 32 else "d")
    fields = {key: f"{ord(char)} : ui8" for key, char in chars.items()}
    fields |= {key: f"{number} : i32" for key, number in (integers or {}).items()}
    config = ", ".join(f"{key} = {field}" for key, field in sorted(fields.items()))
    call = hlo("custom_call", operands, results, {
        "call_target_name": ir.StringAttr.get(f"{TARGET_PREFIX}{prefix}{name}_ffi"),
        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
        "backend_config": ir.StringAttr.get(""),
        "has_side_effect": ir.BoolAttr.get(False),
        "operand_layouts": _layouts([v.type for v in operands], matrix_operands or [True] * len(operands)),
        "result_layouts": _layouts(results, matrix_results),
        "mhlo.backend_config": ir.Attribute.parse("{" + config + "}"),
    })
    return list(call.results)


def per_matrix(flags: ir.Value, like: ir.Value) -> ir.Value:
    """A per-matrix i1 ``flags`` (the batch shape) broadcast over every element of ``like``."""
    mask_type = with_element(like, ir.IntegerType.get_signless(1))
    return broadcast(flags, mask_type, range(tensor_type(flags).rank))


def info_type(x: ir.Value) -> ir.Type:
    return ir.RankedTensorType.get(tensor_type(x).shape[:-2], ir.IntegerType.get_signless(32))


def nan_unless(ok: ir.Value, x: ir.Value) -> ir.Value:
    """``x`` where the per-matrix i1 ``ok`` holds, NaN (in both parts of a complex one) elsewhere."""
    nan = complex(math.nan, math.nan) if isinstance(tensor_type(x).element_type, ir.ComplexType) else math.nan
    return select(per_matrix(ok, x), x, splat(nan, x.type))


def finite_matrices(x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """(per-matrix i1: ``x``'s matrix holds no NaN or infinity, ``x`` with the others zeroed):
    for the routines jaxlib's kernels run on such input although they may never return
    (?gesdd on an infinity); their results are then `nan_unless` the flag."""
    t = tensor_type(x)
    i1 = ir.IntegerType.get_signless(1)
    parts = complex_parts(x)[:2] if isinstance(t.element_type, ir.ComplexType) else (x,)
    finite = [value("is_finite", [p], with_element(p, i1)) for p in parts]
    each = finite[0] if len(finite) == 1 else value("and", finite, finite[0].type)
    flags_type = ir.RankedTensorType.get(t.shape[:-2], i1)
    matrix = {"dimensions": dims([t.rank - 2, t.rank - 1])}
    reduce = hlo("reduce", [each, splat(1, scalar_type(i1))], flags_type, matrix, regions=1)
    scalar_reducer(reduce, 0, i1, "and")
    flags = reduce.result
    return flags, select(per_matrix(flags, x), x, splat(0, x.type))
