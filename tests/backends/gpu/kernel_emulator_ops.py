"""The value semantics of the kernel emulator (tests/backends/gpu/kernel_emulator.py): arith, math,
vector, llvm and nvvm ops on whole warps of values at once.

A value is a NumPy array with one row per thread (shape ``(threads,)``, or ``(threads, lanes)``
for a vector): floats in their own dtype, so float32 arithmetic rounds as the GPU's does (never
through Python floats); integers of every width as int64 holding the signed value wrapped to
the width (i1 as 0/1). Ops are registered by name in ``OPS``, the emulator's one dispatch
table; an op missing from it stops the emulation with its name, so a pass that starts emitting
a new op cannot go unchecked."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
from mlir import ir

# name -> handler(execution, op): the execution reads operands (``get``) and writes results.
OPS: dict[str, Callable[[Any, ir.Operation], None]] = {}

_FLOATS = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
_INTS = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "index": np.int64}


class EmulationError(RuntimeError):
    """The emulated program did something a GPU does not define (or the emulator cannot do)."""


def element(t: ir.Type) -> str:
    """The element type's name of a scalar, vector or memref type (``f32``, ``i8``, ``index``)."""
    for kind in (ir.VectorType, ir.MemRefType):
        if isinstance(t, kind):
            return str(kind(t).element_type)
    return str(t)


def storage_dtype(t: ir.Type) -> np.dtype:
    """The NumPy dtype that holds elements of ``t`` in memory."""
    name = element(t)
    if name in _FLOATS:
        return np.dtype(_FLOATS[name])
    if name in _INTS:
        return np.dtype(_INTS[name])
    raise EmulationError(f"the emulator has no memory layout for element type {name}")


def width(t: ir.Type) -> int | None:
    """The bit width of an integer (or index) type, None for floats."""
    name = element(t)
    return 64 if name == "index" else int(name[1:]) if name in _INTS else None


def wrap(v: np.ndarray, bits: int) -> np.ndarray:
    """Integers wrapped to ``bits`` (two's complement), as signed int64."""
    v = np.asarray(v).astype(np.int64)
    if bits >= 64:
        return v
    if bits == 1:
        return v & 1
    v = v & ((1 << bits) - 1)
    return v - ((v >> (bits - 1)) << bits)


def unsigned(v: np.ndarray, bits: int) -> np.ndarray:
    """The unsigned reading of wrapped integers (uint64 for 64 bits)."""
    return v.view(np.uint64) if bits >= 64 else v & ((1 << bits) - 1)


def to_storage(v: np.ndarray, t: ir.Type) -> np.ndarray:
    """Register values as the bytes' dtype (what a store or a bitcast sees)."""
    dtype = storage_dtype(t)
    return v.astype(np.int64).astype(dtype) if width(t) is not None else v.astype(dtype)


def from_storage(v: np.ndarray, t: ir.Type) -> np.ndarray:
    """Loaded or bitcast bytes as register values (integers widened to int64)."""
    return v.astype(np.int64) if width(t) is not None else v


def register(*names: str) -> Callable:
    def add(handler: Callable) -> Callable:
        for name in names:
            OPS[name] = handler
        return handler
    return add


def pure(*names: str) -> Callable:
    """Registers ``fn(op, *operands) -> result`` for ops of one result and no side effect."""
    def add(fn: Callable) -> Callable:
        register(*names)(lambda ex, op: ex.set(op.results[0], fn(op, *ex.operands(op))))
        return fn
    return add


def _type(op: ir.Operation) -> ir.Type:
    return op.results[0].type


# ----- arith -----

def _shift_right(u: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A logical shift of unsigned values (uint64 for 64 bits) back to int64 bits."""
    return (u >> (b & 63).astype(u.dtype)).astype(np.int64)


_INT_BINARY: dict[str, Callable] = {
    "arith.addi": lambda a, b, w: a + b, "arith.subi": lambda a, b, w: a - b,
    "arith.muli": lambda a, b, w: a * b, "arith.andi": lambda a, b, w: a & b,
    "arith.ori": lambda a, b, w: a | b, "arith.xori": lambda a, b, w: a ^ b,
    "arith.shli": lambda a, b, w: np.where(unsigned(b, w) < w, a << (b & 63), 0),
    "arith.shrsi": lambda a, b, w: np.where(unsigned(b, w) < w, a >> (b & 63), a >> 63),
    "arith.shrui": lambda a, b, w: np.where(unsigned(b, w) < w, _shift_right(unsigned(a, w), b), 0),
    "arith.maxsi": lambda a, b, w: np.maximum(a, b), "arith.minsi": lambda a, b, w: np.minimum(a, b),
    "arith.maxui": lambda a, b, w: np.where(unsigned(a, w) >= unsigned(b, w), a, b),
    "arith.minui": lambda a, b, w: np.where(unsigned(a, w) <= unsigned(b, w), a, b),
    # Division by zero is undefined; the lanes of inactive threads may divide by anything.
    "arith.divsi": lambda a, b, w: np.sign(a) * np.sign(b) * (np.abs(a) // np.maximum(np.abs(b), 1)),
    "arith.remsi": lambda a, b, w: np.sign(a) * (np.abs(a) % np.maximum(np.abs(b), 1)),
    "arith.divui": lambda a, b, w: (unsigned(a, w) // np.maximum(unsigned(b, w), 1)).astype(np.int64),
    "arith.remui": lambda a, b, w: (unsigned(a, w) % np.maximum(unsigned(b, w), 1)).astype(np.int64),
}
for _name, _fn in _INT_BINARY.items():
    pure(_name)(lambda op, a, b, fn=_fn: wrap(fn(a, b, width(_type(op))), width(_type(op))))

_FLOAT_BINARY: dict[str, Callable] = {
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply, "arith.divf": np.divide,
    # maximumf/minimumf propagate NaN (PTX max.NaN); maxnumf/minnumf return the number.
    "arith.maximumf": np.maximum, "arith.minimumf": np.minimum,
    "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin, "math.copysign": np.copysign,
}
for _name, _fn in _FLOAT_BINARY.items():
    pure(_name)(lambda op, a, b, fn=_fn: fn(a, b).astype(a.dtype))

_FLOAT_UNARY: dict[str, Callable] = {
    "arith.negf": np.negative, "math.absf": np.abs, "math.sqrt": np.sqrt, "math.floor": np.floor,
    "math.ceil": np.ceil, "math.trunc": np.trunc, "math.roundeven": np.rint,
    "math.round": lambda x: np.copysign(np.floor(np.abs(x) + x.dtype.type(0.5)), x),
}
for _name, _fn in _FLOAT_UNARY.items():
    pure(_name)(lambda op, a, fn=_fn: fn(a).astype(a.dtype))


# CUDA's libdevice functions (within 1-4 ulp of the rounded exact value, CUDA's documented
# bounds): computed in f64 (long double for f64) and rounded to the operand's type.
_LIBDEVICE_UNARY: dict[str, Callable] = {
    "math.sin": np.sin, "math.cos": np.cos, "math.tan": np.tan, "math.asin": np.arcsin,
    "math.acos": np.arccos, "math.atan": np.arctan, "math.sinh": np.sinh, "math.cosh": np.cosh,
    "math.asinh": np.arcsinh, "math.acosh": np.arccosh, "math.atanh": np.arctanh, "math.cbrt": np.cbrt,
    "math.exp": np.exp, "math.exp2": np.exp2, "math.expm1": np.expm1, "math.log": np.log,
    "math.log2": np.log2, "math.log10": np.log10, "math.log1p": np.log1p, "math.tanh": np.tanh,
    "math.erf": lambda x: np.vectorize(math.erf, otypes=[np.float64])(x),
    "math.erfc": lambda x: np.vectorize(math.erfc, otypes=[np.float64])(x),
    "math.rsqrt": lambda x: 1 / np.sqrt(x),
}
_LIBDEVICE_BINARY: dict[str, Callable] = {"math.atan2": np.arctan2, "math.powf": np.power}


def _wide(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float64 if a.dtype.itemsize < 8 else np.longdouble)


for _name, _fn in _LIBDEVICE_UNARY.items():
    pure(_name)(lambda op, a, fn=_fn: np.asarray(fn(_wide(a))).astype(a.dtype))
for _name, _fn in _LIBDEVICE_BINARY.items():
    pure(_name)(lambda op, a, b, fn=_fn: np.asarray(fn(_wide(a), _wide(b))).astype(a.dtype))


@pure("math.fma")
def _fma(op: ir.Operation, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """One rounding for f16/f32 (the product is exact in f64); f64 goes through long double,
    which is not a single rounding (good to tolerance, not to the bit)."""
    wide = np.float64 if a.dtype.itemsize < 8 else np.longdouble
    return (a.astype(wide) * b.astype(wide) + c.astype(wide)).astype(a.dtype)


@pure("math.absi")
def _absi(op: ir.Operation, a: np.ndarray) -> np.ndarray:
    return wrap(np.abs(a), width(_type(op)))


@pure("math.ctpop")
def _ctpop(op: ir.Operation, a: np.ndarray) -> np.ndarray:
    """Set bits of the value's own width (PTX popc: a negative i8 counts 8 bits, not 64)."""
    return np.bitwise_count(unsigned(a.astype(np.int64), width(_type(op))).astype(np.uint64)).astype(a.dtype)


_CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une",
         "uno", "true"]
_COMPARE = {"eq": np.equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less, "le": np.less_equal,
            "ne": np.not_equal}


@pure("arith.cmpf")
def _cmpf(op: ir.Operation, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    name = _CMPF[ir.IntegerAttr(op.attributes["predicate"]).value]
    unordered = np.isnan(a) | np.isnan(b)
    if name in ("false", "true"):
        return np.full(a.shape, int(name == "true"), np.int64)
    if name in ("ord", "uno"):
        return (unordered == (name == "uno")).astype(np.int64)
    result = _COMPARE[name[1:]](a, b)
    return (result & ~unordered if name[0] == "o" else result | unordered).astype(np.int64)


@pure("arith.cmpi")
def _cmpi(op: ir.Operation, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    predicate = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"][
        ir.IntegerAttr(op.attributes["predicate"]).value]
    bits = width(op.operands[0].type)
    if predicate[0] == "u":
        a, b = unsigned(a, bits), unsigned(b, bits)
    return _COMPARE[predicate[-2:] if predicate[0] in "su" else predicate](a, b).astype(np.int64)


@pure("arith.select")
def _select(op: ir.Operation, c: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    c = c.astype(bool)
    return np.where(c[:, None] if c.ndim < a.ndim else c, a, b)


@pure("arith.extf", "arith.truncf")
def _float_cast(op: ir.Operation, a: np.ndarray) -> np.ndarray:
    return a.astype(storage_dtype(_type(op)))  # round to nearest even, as cvt.rn


@pure("arith.sitofp")
def _sitofp(op: ir.Operation, a: np.ndarray) -> np.ndarray:
    return a.astype(storage_dtype(_type(op)))


@pure("arith.uitofp")
def _uitofp(op: ir.Operation, a: np.ndarray) -> np.ndarray:
    return unsigned(a, width(op.operands[0].type)).astype(storage_dtype(_type(op)))


@pure("arith.fptosi", "arith.fptoui")
def _fptoi(op: ir.Operation, a: np.ndarray) -> np.ndarray:
    """cvt.rzi saturates to the target range and turns NaN into 0 (LLVM leaves it poison)."""
    bits = width(_type(op))
    signed = op.name == "arith.fptosi"
    low, high = (-2.0 ** (bits - 1), 2.0 ** (bits - 1) - 1) if signed else (0, 2.0 ** bits - 1)
    x = np.nan_to_num(np.trunc(a.astype(np.float64)), nan=0.0)
    return wrap(np.clip(x, low, high).astype(np.int64) if bits < 64 else x.astype(np.int64), bits)


@pure("arith.extsi")
def _extsi(op: ir.Operation, a: np.ndarray) -> np.ndarray:
    return -a if width(op.operands[0].type) == 1 else a


@pure("arith.extui")
def _extui(op: ir.Operation, a: np.ndarray) -> np.ndarray:
    return wrap(unsigned(a, width(op.operands[0].type)), width(_type(op)))


@pure("arith.trunci", "arith.index_cast")
def _trunc_or_extend(op: ir.Operation, a: np.ndarray) -> np.ndarray:
    return wrap(a, width(_type(op)))


@pure("arith.index_castui")
def _index_castui(op: ir.Operation, a: np.ndarray) -> np.ndarray:
    return wrap(unsigned(a, width(op.operands[0].type)), width(_type(op)))


@pure("arith.bitcast", "llvm.bitcast", "vector.bitcast")
def _bitcast(op: ir.Operation, a: np.ndarray) -> np.ndarray:
    """The same bits read as another type (a vector's first element in the low bits)."""
    source, target = op.operands[0].type, _type(op)
    raw = np.ascontiguousarray(to_storage(a, source))
    lanes = ir.VectorType(target).shape[0] if isinstance(target, ir.VectorType) else None
    viewed = raw.reshape(raw.shape[0], -1).view(storage_dtype(target))
    return from_storage(viewed if lanes else viewed[:, 0], target)


@register("arith.constant", "llvm.mlir.constant")
def _constant(ex: Any, op: ir.Operation) -> None:
    attr, t = op.attributes["value"], _type(op)
    if isinstance(attr, ir.DenseElementsAttr):
        value = np.array(attr.get_splat_value().value if attr.is_splat else np.array(attr))
    elif width(t) is not None:
        value = np.array(int(ir.BoolAttr(attr).value) if isinstance(attr, ir.BoolAttr) else attr.value)
    else:
        value = np.array(ir.FloatAttr(attr).value)  # exact: the attribute holds a value of type t
    value = wrap(value, width(t)) if width(t) is not None else value.astype(storage_dtype(t))
    lanes = ir.VectorType(t).shape if isinstance(t, ir.VectorType) else ()
    ex.set(op.results[0], np.broadcast_to(value, (ex.threads, *lanes)).copy())


# ----- vector -----

@pure("vector.extract")
def _extract(op: ir.Operation, v: np.ndarray, *dynamic: np.ndarray) -> np.ndarray:
    position = list(op.attributes["static_position"])
    if dynamic or len(position) != 1:
        raise EmulationError(f"vector.extract at a dynamic or nested position: {op}")
    return v[:, position[0]]


@pure("vector.from_elements")
def _from_elements(op: ir.Operation, *elements: np.ndarray) -> np.ndarray:
    return np.stack(elements, axis=1)


@pure("vector.broadcast", "vector.splat")
def _broadcast(op: ir.Operation, v: np.ndarray) -> np.ndarray:
    shape = ir.VectorType(_type(op)).shape
    if len(shape) != 1:
        raise EmulationError(f"{op.name} to a vector of rank {len(shape)}")
    return np.repeat(v[:, None] if v.ndim == 1 else v, shape[0] // (1 if v.ndim == 1 else v.shape[1]), axis=1)


@pure("vector.insert")
def _insert(op: ir.Operation, value: np.ndarray, v: np.ndarray, *dynamic: np.ndarray) -> np.ndarray:
    position = list(op.attributes["static_position"])
    if dynamic or len(position) != 1:
        raise EmulationError(f"vector.insert at a dynamic or nested position: {op}")
    v = v.copy()
    v[:, position[0]] = value
    return v


# ----- tensor cores: llvm.nvvm.f2tf32.rna, nvvm.mma.sync -----

def _to_tf32_bits(x: np.ndarray) -> np.ndarray:
    """cvt.rna.tf32.f32: round to 10 mantissa bits, ties away from zero (PTX ISA, cvt: .rna),
    kept in a 32-bit register whose low 13 bits are zero. Adding half of the dropped unit to the
    sign-magnitude bits rounds the magnitude half away from zero; NaN stays NaN."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32)
    return np.where(np.isnan(x), np.uint32(0x7FFFFFFF), rounded).view(np.int32).astype(np.int64)


@register("llvm.call_intrinsic")
def _intrinsic(ex: Any, op: ir.Operation) -> None:
    name = ir.StringAttr(op.attributes["intrin"]).value
    if name != "llvm.nvvm.f2tf32.rna":
        raise EmulationError(f"the kernel emulator does not know the intrinsic {name}")
    ex.set(op.results[0], _to_tf32_bits(ex.get(op.operands[0])))


@register("llvm.extractvalue")
def _extractvalue(ex: Any, op: ir.Operation) -> None:
    ex.set(op.results[0], ex.get(op.operands[0])[list(op.attributes["position"])[0]])


def _fragment(operand: str, kind: str, lane: np.ndarray, i: int) -> tuple[np.ndarray, np.ndarray]:
    """(row, col) of element i held by ``lane`` in an mma.sync fragment, from the PTX ISA,
    section 9.7.14.5.7 "Matrix Fragments for mma.m16n8k8" (.tf32: A figure 72, B figure 75,
    C/D figure 77) and 9.7.14.5.8 "Matrix Fragments for mma.m16n8k16 with floating point type"
    (.f16/.bf16: A figure 79, B, C/D), with groupID = laneid >> 2, threadID_in_group = laneid % 4:
      m16n8k8 .tf32  A: row = groupID (+8 for a1, a3), col = threadID_in_group (+4 for a2, a3)
                     B: row = threadID_in_group (+4 for b1), col = groupID
      m16n8k16 .f16  A: row = groupID (+8 for a2, a3, a6, a7),
                        col = 2 threadID_in_group + (i & 1) (+8 for i >= 4)
                     B: row = 2 threadID_in_group + (i & 1) (+8 for i >= 2), col = groupID
      C, D (both):      row = groupID (+8 for c2, c3), col = 2 threadID_in_group + (i & 1)"""
    group, member = lane >> 2, lane % 4
    if operand == "c":
        return group + 8 * (i >= 2), 2 * member + (i & 1)
    if kind == "tf32":
        if operand == "a":
            return group + 8 * (i % 2), member + 4 * (i >= 2)
        return member + 4 * i, group
    if operand == "a":
        return group + 8 * (i in (2, 3, 6, 7)), 2 * member + (i & 1) + 8 * (i >= 4)
    return 2 * member + (i & 1) + 8 * (i >= 2), group


def _elements(registers: list[np.ndarray], types: list[ir.Type], kind: str) -> list[np.ndarray]:
    """The matrix elements in a fragment's registers, low to high, as float64."""
    out = []
    for value, t in zip(registers, types, strict=True):
        if kind == "tf32":  # the tensor cores read 19 bits: the low 13 of the register are dropped
            bits = value.astype(np.int64) & ~0x1FFF
            out.append(bits.astype(np.int32).view(np.float32).astype(np.float64))
            continue
        dtype = np.float16 if kind == "f16" else ml_dtypes.bfloat16
        raw = np.ascontiguousarray(to_storage(value, t)).reshape(value.shape[0], -1).view(dtype)
        out.extend(raw[:, j].astype(np.float64) for j in range(2))
    return out


@register("nvvm.mma.sync")
def _mma_sync(ex: Any, op: ir.Operation) -> None:
    """D = A B + C for each warp: the fragments are gathered into 16xK, Kx8 and 16x8 matrices
    by the PTX layout above, multiplied exactly (float64) and rounded once to f32."""
    shape = str(op.attributes["shape"])
    layouts = str(op.attributes["layoutA"]), str(op.attributes["layoutB"])
    a_type = str(op.attributes["multiplicandAPtxType"]) if "multiplicandAPtxType" in op.attributes else ""
    kind = "tf32" if "tf32" in a_type else "bf16" if "bf16" in a_type else "f16"
    k = {"m = 16, n = 8, k = 8": 8, "m = 16, n = 8, k = 16": 16}.get(shape.split("<", 1)[1].rstrip(">"))
    if k is None or layouts != ("#nvvm.mma_layout<row>", "#nvvm.mma_layout<col>") or \
            (kind == "tf32") != (k == 8):
        raise EmulationError(f"the emulator knows mma.sync m16n8k8 .tf32 and m16n8k16 .f16/.bf16, "
                             f"row.col only: {shape} {layouts} {kind}")
    ex.require_full_warps("nvvm.mma.sync")
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    values = ex.operands(op)
    groups = np.split(np.arange(len(values)), np.cumsum(sizes)[:-1])
    lane = np.arange(ex.threads) % 32
    warp = ex.warp_index()
    count = int(warp.max()) + 1
    matrices = {}
    for name, index, shape2 in zip("abc", groups, ((16, k), (k, 8), (16, 8)), strict=True):
        elements = (_elements([values[i] for i in index], [op.operands[i].type for i in index], kind)
                    if name != "c" else [values[i].astype(np.float64) for i in index])
        matrix = np.zeros((count, *shape2))
        for i, e in enumerate(elements):
            row, col = _fragment(name, kind, lane, i)
            matrix[warp, row, col] = e
        matrices[name] = matrix
    d = (matrices["a"] @ matrices["b"] + matrices["c"]).astype(np.float32)
    ex.set(op.results[0], tuple(d[warp, *_fragment("c", kind, lane, i)] for i in range(4)))
