"""Shared builders of `mlax-lower-to-stablehlo`: StableHLO ops in generic form.

The stablehlo dialect is not registered in mlax's context, so its ops are created by name
(`hlo`) with their attributes in StableHLO's own syntax (``#stablehlo<comparison_direction
GT>``, ``#stablehlo.dot<...>``), which the context keeps as opaque attributes and prints back
verbatim; XLA parses the printed text itself. A rule (`Rule`) gets the mlax op with the
insertion point and location set to it and returns the value that replaces the op's single
result, of the op's own result type (element types stay as they are: StableHLO has i1,
unsigned integers, f16 and bf16).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from mlir import ir

from mlax.dialect import dtypes
from mlax.passes.op_rules import Rule as Rule  # the family modules take it from here
from mlax.passes.registry import PassFailure

AttributeValue = ir.Attribute | str


def fail(op: ir.Operation, message: str) -> PassFailure:
    return PassFailure(f"mlax-lower-to-stablehlo: {message}", op.location)


def hlo(name: str, operands: Sequence[ir.Value], results: ir.Type | Sequence[ir.Type],
        attributes: dict[str, AttributeValue] | None = None, regions: int = 0) -> ir.Operation:
    """Create ``stablehlo.<name>`` at the current insertion point. Attribute values given as
    text are parsed (StableHLO's enum and struct attributes have no Python builders here)."""
    types = [results] if isinstance(results, ir.Type) else list(results)
    attrs = {key: ir.Attribute.parse(value) if isinstance(value, str) else value
             for key, value in (attributes or {}).items()}
    return ir.Operation.create(f"stablehlo.{name}", results=types, operands=list(operands),
                               attributes=attrs, regions=regions)


def value(name: str, operands: Sequence[ir.Value], result: ir.Type,
          attributes: dict[str, AttributeValue] | None = None) -> ir.Value:
    """The single result of a region-free ``stablehlo.<name>``."""
    return hlo(name, operands, result, attributes).result


def enum(kind: str, member: str) -> str:
    """A StableHLO enum attribute, e.g. ``#stablehlo<comparison_direction GT>``."""
    return f"#stablehlo<{kind} {member}>"


def dims(values: Sequence[int]) -> ir.DenseI64ArrayAttr:
    """``array<i64: ...>``: dimension lists, shapes, strides, permutations."""
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def int_list(values: Sequence[int]) -> str:
    """``[0, 1]`` as written inside StableHLO's struct attributes."""
    return "[" + ", ".join(str(int(v)) for v in values) + "]"


def i64_array(op: ir.Operation, name: str) -> list[int]:
    """The integers of ``op``'s DenseI64ArrayAttr ``name``."""
    return list(ir.DenseI64ArrayAttr(op.attributes[name]))


def bool_attr(op: ir.Operation, name: str) -> bool:
    return bool(ir.BoolAttr(op.attributes[name]).value)


def i64_attr(op: ir.Operation, name: str) -> int:
    return ir.IntegerAttr(op.attributes[name]).value


def tensor_type(t: ir.Value | ir.Type) -> ir.RankedTensorType:
    return ir.RankedTensorType(t if isinstance(t, ir.Type) else t.type)


def element_type(t: ir.Value | ir.Type) -> ir.Type:
    return tensor_type(t).element_type


def with_element(t: ir.Value | ir.Type, element: ir.Type) -> ir.Type:
    """``t``'s shape with another element type."""
    return ir.RankedTensorType.get(tensor_type(t).shape, element)


def with_shape(t: ir.Value | ir.Type, shape: Sequence[int]) -> ir.Type:
    """``t``'s element type with another shape."""
    return ir.RankedTensorType.get(list(shape), element_type(t))


def scalar_type(element: ir.Type) -> ir.Type:
    return ir.RankedTensorType.get([], element)


def is_float(t: ir.Type) -> bool:
    return isinstance(element_type(t) if isinstance(t, ir.RankedTensorType) else t, ir.FloatType)


def is_complex(t: ir.Type) -> bool:
    return isinstance(element_type(t) if isinstance(t, ir.RankedTensorType) else t, ir.ComplexType)


def is_unsigned(t: ir.Type) -> bool:
    t = element_type(t) if isinstance(t, ir.RankedTensorType) else t
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).is_unsigned


def is_bool(t: ir.Type) -> bool:
    t = element_type(t) if isinstance(t, ir.RankedTensorType) else t
    return isinstance(t, ir.IntegerType) and ir.IntegerType(t).width == 1


def constant(values: np.ndarray | float | int, t: ir.Type) -> ir.Value:
    """``values`` broadcast (NumPy's rules) to type ``t``: one value is a scalar constant and a
    ``broadcast_in_dim``, as jax writes it (XLA makes a literal of a constant's full size: a
    splat of 1024 x 1024 f32 is 4 MB to compile, which doubled a small program's compile time
    on a TPU); else the constant of ``values`` as given and a ``broadcast_in_dim``, so no array
    of ``t``'s (maybe huge) size is built."""
    result = tensor_type(t)
    given = np.asarray(values, dtype=dtypes.from_mlir(result.element_type))
    full = np.broadcast_to(given, result.shape)  # a view: checks that ``values`` broadcast to ``t``
    unique = np.unique(given) if full.size else given.reshape(-1)[:0]
    if len(unique) == 1 and result.rank and full.size > 1:
        return broadcast(constant(unique[0], with_shape(result, ())), result, [])
    if len(unique) == 1 and is_complex(result.element_type):
        attr = ir.DenseElementsAttr.get(np.ascontiguousarray(unique[:1]), type=result)  # one element: a splat
    elif len(unique) == 1:
        attr = ir.DenseElementsAttr.get_splat(result, _scalar_attr(unique[0], result.element_type))
    elif given.shape == full.shape or not full.size:
        attr = ir.DenseElementsAttr.get(np.ascontiguousarray(full), type=result)
    else:  # the dimensions ``values`` repeat along are left out of the constant
        padded = given.reshape((1,) * (full.ndim - given.ndim) + given.shape)
        kept = [d for d in range(full.ndim) if padded.shape[d] == full.shape[d]]
        source = padded.reshape([full.shape[d] for d in kept])
        return broadcast(constant(source, with_shape(result, source.shape)), result, kept)
    return value("constant", [], result, {"value": attr})


def _scalar_attr(item: np.generic, element: ir.Type) -> ir.Attribute:
    if isinstance(element, ir.FloatType):
        return ir.FloatAttr.get(element, float(item))
    width = ir.IntegerType(element).width
    number = int(item) & ((1 << width) - 1)
    # The binding takes an int64 (read as unsigned bits for an unsigned type): ui64 values past
    # 2^63 go in as their two's complement, as signed ones do.
    if number >= 1 << (width - 1) and (width == 64 or not is_unsigned(element)):
        number -= 1 << width
    return ir.IntegerAttr.get(element, number)


def splat(number: float | int, t: ir.Type) -> ir.Value:
    """A constant of type ``t`` with every element ``number``."""
    return constant(number, t)


def body(op: ir.Operation, region: int, argument_types: Sequence[ir.Type],
         build: Callable[..., Sequence[ir.Value]]) -> None:
    """Fill region ``region`` of ``op`` with one block of ``argument_types`` whose results,
    ``build(*arguments)``, are returned by ``stablehlo.return`` (reduce bodies, sort
    comparators, while conditions and bodies, case branches)."""
    block = op.regions[region].blocks.append(*argument_types)
    with ir.InsertionPoint(block):
        hlo("return", list(build(*block.arguments)), [])


def scalar_reducer(op: ir.Operation, region: int, element: ir.Type, combine: str) -> None:
    """A ``(scalar, scalar) -> scalar`` body applying ``stablehlo.<combine>`` (reduce,
    reduce_window, scatter, all_reduce); complex maximum/minimum are JAX's lexicographic ones."""
    scalar = scalar_type(element)
    if is_complex(element) and combine in _LEXICOGRAPHIC:
        direction = _LEXICOGRAPHIC[combine]
        body(op, region, [scalar, scalar], lambda a, b: [lexicographic(a, b, direction)])
        return
    body(op, region, [scalar, scalar], lambda a, b: [value(combine, [a, b], scalar)])


_LEXICOGRAPHIC = {"maximum": "GT", "minimum": "LT"}


def complex_parts(x: ir.Value) -> tuple[ir.Value, ir.Value, ir.Type]:
    """The real and imaginary parts of a complex tensor and their tensor type."""
    part = with_element(x, ir.ComplexType(element_type(x)).element_type)
    return value("real", [x], part), value("imag", [x], part), part


def lexicographic(x: ir.Value, y: ir.Value, direction: str) -> ir.Value:
    """JAX's complex max (GT) / min (LT), mlir._minmax_hlo: x where ``direction`` holds of the
    real parts, or of the imaginary parts when the real parts are equal; y otherwise."""
    (rx, ix, _), (ry, iy, _) = complex_parts(x), complex_parts(y)
    pick = select(compare(rx, ry, "EQ"), compare(ix, iy, direction), compare(rx, ry, direction))
    return select(pick, x, y)


# --- helpers of the indexing, windowed, sorting and control-flow rules ------------------------


def struct(kind: str, **fields: Sequence[int] | int) -> str:
    """A StableHLO struct attribute in its own syntax, e.g. ``#stablehlo.gather<offset_dims =
    [1], index_vector_dim = 1>`` (lists as ``[...]``, integers bare, in the order given)."""
    parts = [f"{key} = {int_list(v) if isinstance(v, Sequence) else int(v)}" for key, v in fields.items()]
    return f"#stablehlo.{kind}<{', '.join(parts)}>"


def reshape(x: ir.Value, shape: Sequence[int]) -> ir.Value:
    return value("reshape", [x], with_shape(x, shape))


def broadcast(x: ir.Value, t: ir.Type, dimensions: Sequence[int]) -> ir.Value:
    """``stablehlo.broadcast_in_dim`` of ``x`` to type ``t``: ``x``'s dimension i is ``t``'s
    ``dimensions[i]``."""
    return value("broadcast_in_dim", [x], t, {"broadcast_dimensions": dims(dimensions)})


def iota(t: ir.Type, dimension: int) -> ir.Value:
    return value("iota", [], t, {"iota_dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64),
                                                                      dimension)})


def chlo(name: str, operands: Sequence[ir.Value], result: ir.Type) -> ir.Value:
    """The single result of ``chlo.<name>``: XLA's own decompositions (erf, erfc, erf_inv,
    next_after), as JAX emits them. XLA's text parser reads chlo and expands it; jaxlib's
    portable-artifact serializer (``_jax.mlir.serialize_portable_artifact``) legalizes it to
    StableHLO first."""
    return ir.Operation.create(f"chlo.{name}", results=[result], operands=list(operands)).result


def comparison_type(t: ir.Value | ir.Type) -> str:
    """The ``compare_type`` JAX gives a comparison of ``t``'s elements: FLOAT (also complex),
    UNSIGNED (also booleans: false < true) or SIGNED."""
    t = t.type if isinstance(t, ir.Value) else t
    element = element_type(t) if isinstance(t, ir.RankedTensorType) else t
    if is_float(element) or is_complex(element):
        kind = "FLOAT"
    else:
        kind = "UNSIGNED" if is_unsigned(element) or is_bool(element) else "SIGNED"
    return enum("comparison_type", kind)


def compare(lhs: ir.Value, rhs: ir.Value, direction: str) -> ir.Value:
    """``stablehlo.compare`` (EQ NE LT LE GT GE) with the comparison type of the operands; the
    result is i1 of their shape."""
    return value("compare", [lhs, rhs], with_element(lhs, ir.IntegerType.get_signless(1)),
                 {"comparison_direction": enum("comparison_direction", direction),
                  "compare_type": comparison_type(lhs)})


def convert(x: ir.Value, element: ir.Type) -> ir.Value:
    """``stablehlo.convert`` of ``x`` to ``element`` (``x`` itself when it already is)."""
    if element_type(x) == element:
        return x
    return value("convert", [x], with_element(x, element))


def select(pred: ir.Value, on_true: ir.Value, on_false: ir.Value) -> ir.Value:
    """``stablehlo.select`` of two values of one type by an i1 ``pred`` of their shape (or of
    rank 0, choosing a whole value)."""
    return value("select", [pred, on_true, on_false], on_true.type)

