"""Op attributes: Python values <-> MLIR attributes, by the attribute kind an OpDef declares.

Builders take plain Python values (ints, tuples, strings, NumPy arrays, dtypes); the
interpreter and the passes read attributes back into the same Python values, so every
rule table sees one representation.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
from mlir import ir

from mlax.dialect import dtypes

# IRDL base constraint for each kind (used by irdl_gen).
IRDL_BASE = {
    "i64": "#builtin.integer",
    "i64s": "#builtin.dense_array",
    "bool": "#builtin.integer",
    "symbols": "#builtin.array",
    "bools": "#builtin.dense_array",
    "f64": "#builtin.float",
    "str": "#builtin.string",
    "dense": "#builtin.dense_int_or_fp_elements",
    "symbol": "#builtin.symbol_ref",
    "type": "#builtin.type",
    "dict": "#builtin.dictionary",
    "strs": "#builtin.array",
    "spec": "#builtin.array",
    "specs": "#builtin.array",
}

# A partition spec as the dialect stores it: per dimension of a tensor, the mesh axes that
# dimension is split over, major first (``()``: not split). ``(("x",), ())`` is jax's
# ``P("x", None)``; ``(("x", "y"),)`` is ``P(("x", "y"))``.
Spec = tuple[tuple[str, ...], ...]


def spec_attribute(spec: Spec) -> ir.ArrayAttr:
    """``[["x"], []]``: one array of axis names per dimension."""
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.StringAttr.get(str(a)) for a in dim]) for dim in spec])


def read_spec(attr: ir.Attribute) -> Spec:
    return tuple(tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(dim)) for dim in ir.ArrayAttr(attr))


# Splats of more elements than this read back (`dense_to_numpy`) as a read-only broadcast of
# their one value rather than a filled array, and such a broadcast is written back as a splat
# (`dense_elements`): a splat in hand-written IR may have any shape (tensor<1099511627776xf32>).
SPLAT_VIEW_ELEMENTS = 1 << 16


def _is_broadcast_scalar(value: np.ndarray) -> bool:
    return value.size > 1 and all(s == 0 or n == 1 for s, n in zip(value.strides, value.shape, strict=True))


def dense_elements(value: np.ndarray) -> ir.DenseElementsAttr:
    """A dense elements attribute holding ``value`` with its exact dtype (a splat for a
    broadcast of one value, without filling it in)."""
    if isinstance(value, np.ndarray) and _is_broadcast_scalar(value) and not dtypes.is_complex(value.dtype):
        one = dense_elements(np.array(value[(0,) * value.ndim], dtype=value.dtype).reshape(1))
        tensor = ir.RankedTensorType.get(list(value.shape), ir.ShapedType(one.type).element_type)
        return ir.DenseElementsAttr.get_splat(tensor, one.get_splat_value())
    value = np.ascontiguousarray(value).reshape(np.shape(value))  # keeps rank 0 at rank 0
    tensor = ir.RankedTensorType.get(list(value.shape), dtypes.to_mlir(value.dtype))
    if value.dtype == np.bool_:
        return ir.DenseElementsAttr.get(value)
    if value.dtype == dtypes.bfloat16:
        return ir.DenseElementsAttr.get(value.view(np.uint16), type=tensor)
    if dtypes.is_unsigned_int(value.dtype):
        signed = value.view(np.dtype(f"i{value.dtype.itemsize}"))
        return ir.DenseElementsAttr.get(signed, type=tensor)
    return ir.DenseElementsAttr.get(value, type=tensor)


def dense_to_numpy(attr: ir.Attribute) -> np.ndarray:
    """The NumPy array held by a dense elements attribute (splat or not)."""
    tensor = ir.RankedTensorType(attr.type)
    dtype = dtypes.from_mlir(tensor.element_type)
    shape = tuple(tensor.shape)
    dense = ir.DenseElementsAttr(attr)
    if dense.is_splat:
        splat = dense.get_splat_value()
        if dtypes.is_complex(dtype):
            real, imag = (ir.FloatAttr(part).value for part in ir.ArrayAttr(splat))
            return np.full(shape, complex(real, imag), dtype=dtype)
        scalar = ir.FloatAttr(splat).value if dtypes.is_float(dtype) else ir.IntegerAttr(splat).value
        if dtype == np.bool_:
            scalar = bool(scalar)
        elif dtypes.is_unsigned_int(dtype):
            scalar = scalar % (1 << (8 * dtype.itemsize))
        if math.prod(shape) > SPLAT_VIEW_ELEMENTS:
            return np.broadcast_to(np.array(scalar, dtype=dtype), shape)
        return np.full(shape, scalar, dtype=dtype)
    if dtype == dtypes.bfloat16:
        return _bf16_from_text(str(attr)).reshape(shape)
    if dtypes.is_complex(dtype):
        return _complex_from_text(str(attr), dtype).reshape(shape)
    raw = np.array(dense, copy=True)
    if dtypes.is_unsigned_int(dtype) and raw.dtype != dtype:
        raw = raw.view(dtype) if raw.dtype.itemsize == dtype.itemsize else raw.astype(dtype)
    return raw.astype(dtype, copy=False).reshape(shape)


_NUMBER = re.compile(r"0x[0-9A-Fa-f]+|[-+]?(?:inf|nan|[0-9.]+(?:[eE][-+]?[0-9]+)?)")


def _bf16_from_text(text: str) -> np.ndarray:
    """Read a non-splat bf16 dense attribute from its printed form.

    The bindings expose no buffer for bf16 elements; MLIR prints each element exactly
    (decimal, or the raw bits in hex for NaN/inf), so the text round-trips bit for bit; from
    100 elements on it prints the whole little-endian buffer as one hex string.
    """
    body = text[text.index("<") + 1: text.rindex("> :")]
    if body.startswith('"0x'):
        return np.frombuffer(bytes.fromhex(body[3:-1]), np.dtype("<u2")).view(dtypes.bfloat16)
    bits = []
    for token in _NUMBER.findall(body):
        if token.startswith("0x"):
            bits.append(int(token, 16))
        else:
            bits.append(int(np.array(float(token), np.float32).astype(dtypes.bfloat16).view(np.uint16)))
    return np.array(bits, np.uint16).view(dtypes.bfloat16)


def _complex_from_text(text: str, dtype: np.dtype) -> np.ndarray:
    """Read a non-splat complex dense attribute from its printed form (the bindings expose no
    buffer for complex elements): each part is printed exactly, in decimal or as raw hex bits, or
    (from 100 elements on) the whole buffer as one hex string."""
    part = dtypes.real_dtype(dtype)
    bits = np.dtype(f"u{part.itemsize}")
    body = text[text.index("<") + 1: text.rindex("> :")]
    if body.startswith('"0x'):  # a large attribute: its raw little-endian buffer as one hex string
        return np.frombuffer(bytes.fromhex(body[3:-1]), np.dtype(dtype).newbyteorder("<")).astype(dtype)
    parts = [np.array(int(token, 16), bits).view(part) if token.startswith("0x") else part.type(token)
             for token in _NUMBER.findall(body)]
    return np.array(parts, part).view(dtype)


def dense_attribute(operation: ir.Operation, name: str) -> ir.DenseElementsAttr:
    """``operation``'s dense elements attribute ``name``. The bindings cannot return one of complex
    elements (a TypeError, "Can't cast unknown element type"), so such an attribute is rebuilt from
    its printed form; every reader of an op's dense attribute goes through here."""
    try:
        return ir.DenseElementsAttr(operation.attributes[name])
    except TypeError:
        pass
    named = [operation.attributes[i] for i in range(len(operation.attributes))
             if operation.attributes[i].name == name]
    if named:
        text = str(named[0])[len(f"NamedAttribute({name}="):-1]
    else:  # a property of an unregistered op (jax's stablehlo.constant): only the op's text has it
        printed = operation.get_asm(print_generic_op_form=True)
        text = re.search(rf"\b{re.escape(name)} = (dense<[^>]*> : tensor<[^<>]*<[^<>]*>>)", printed).group(1)
    with operation.context:  # the interpreter reads attributes outside any context
        tensor = ir.RankedTensorType(ir.Type.parse(text[text.rindex(" : ") + 3:]))
        values = _complex_from_text(text, dtypes.from_mlir(tensor.element_type))
        if values.size != math.prod(tensor.shape):  # a splat: one element stands for all
            return ir.DenseElementsAttr.get(values[:1], type=tensor)
        return ir.DenseElementsAttr.get(values.reshape(tensor.shape), type=tensor)


def to_attribute(kind: str, value: Any) -> ir.Attribute:
    """Store a Python value as an MLIR attribute of the given kind."""
    if kind == "i64":
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))
    if kind == "i64s":
        return ir.DenseI64ArrayAttr.get([int(v) for v in value])
    if kind == "bool":
        return ir.BoolAttr.get(bool(value))
    if kind == "symbols":
        return ir.ArrayAttr.get([ir.FlatSymbolRefAttr.get(str(v)) for v in value])
    if kind == "bools":
        return ir.DenseBoolArrayAttr.get([bool(v) for v in value])
    if kind == "f64":
        return ir.FloatAttr.get(ir.F64Type.get(), float(value))
    if kind == "str":
        return ir.StringAttr.get(str(value))
    if kind == "dense":
        return dense_elements(np.asarray(value))
    if kind == "symbol":
        return ir.FlatSymbolRefAttr.get(str(value))
    if kind == "type":
        return ir.TypeAttr.get(dtypes.to_mlir(value))
    if kind == "dict":
        return ir.DictAttr.get(dict(value))
    if kind == "strs":
        return ir.ArrayAttr.get([ir.StringAttr.get(str(v)) for v in value])
    if kind == "spec":
        return spec_attribute(value)
    if kind == "specs":
        return ir.ArrayAttr.get([spec_attribute(spec) for spec in value])
    raise ValueError(f"unknown attribute kind {kind!r}")


def from_attribute(kind: str, attr: ir.Attribute) -> Any:
    """Read an attribute of the given kind back into its Python value."""
    if kind == "i64":
        return ir.IntegerAttr(attr).value
    if kind == "i64s":
        return tuple(ir.DenseI64ArrayAttr(attr))
    if kind == "bool":
        return ir.BoolAttr(attr).value
    if kind == "symbols":
        return tuple(ir.FlatSymbolRefAttr(a).value for a in ir.ArrayAttr(attr))
    if kind == "bools":
        return tuple(bool(v) for v in ir.DenseBoolArrayAttr(attr))
    if kind == "f64":
        return ir.FloatAttr(attr).value
    if kind == "str":
        return ir.StringAttr(attr).value
    if kind == "dense":
        return dense_to_numpy(attr)
    if kind == "symbol":
        return ir.FlatSymbolRefAttr(attr).value
    if kind == "type":
        return dtypes.from_mlir(ir.TypeAttr(attr).value)
    if kind == "dict":
        return ir.DictAttr(attr)
    if kind == "strs":
        return tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(attr))
    if kind == "spec":
        return read_spec(attr)
    if kind == "specs":
        return tuple(read_spec(spec) for spec in ir.ArrayAttr(attr))
    raise ValueError(f"unknown attribute kind {kind!r}")
