"""Rule for fft: calls of MKL's DFTI (the CPU runtime binds the symbols, mlax.runtime.fft).

Each execution of the op creates a DFTI descriptor for its shape, configures it (precision,
domain, lengths, number of transforms = the folded batch, distances, strides, the inverse's
1/N as DFTI_BACKWARD_SCALE, conjugate-even storage COMPLEX_COMPLEX), commits it, computes
and frees it. MKL keeps the twiddle tables of the lengths it has planned, so after the first
commit of a shape a commit costs microseconds (docs/fft.md: 40 us at 1M points, 10 us at 64):
compiled code then holds no state, shares nothing between threads and survives the disk
cache. The DFTI entry points are variadic in C (`DftiComputeForward(desc, in, ...)`), so
they are declared as variadic `llvm.func`s and called with `llvm.call ... vararg(...)`: LLVM
then follows the x86-64 convention for variadic calls (%al = the vector registers used),
which a plain call would leave unset. Integers travel as i64 (MKL_LONG; an enum read from a
64-bit variadic slot is its low half), the scale as f64 (C promotes a float argument).

The operand is read where it stands (`bufferization.to_buffer`, read-only, inside a
`memref.alloca_scope` as mlax-lower-callbacks does, so no two calls share one buffer) and the
result written into a fresh buffer (out-of-place). IRFFT over several axes is, as numpy's
irfftn (MKL's multi-dimensional complex-to-real transform reads every axis as
conjugate-even), an in-place complex inverse over the leading axes of a copy (per batch
element, the last axis's frequencies as its transforms) and then a one-dimensional
complex-to-real transform of the last axis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, bufferization, llvm, memref, tensor

from mlax.passes.lower_to_linalg.common import Rule, reassociation
from mlax.passes.lower_to_linalg.library_calls import (
    address,
    as_tensor,
    fold_batch,
    for_each_matrix,
    fresh_copy,
    pointer_at,
    unfold_batch,
)

# mkl_dfti.h
_SINGLE, _DOUBLE, _COMPLEX, _REAL = 35, 36, 32, 33
_BACKWARD_SCALE, _TRANSFORMS, _CONJUGATE_EVEN_STORAGE, _PLACEMENT = 5, 7, 10, 11
_INPUT_STRIDES, _OUTPUT_STRIDES, _INPUT_DISTANCE, _OUTPUT_DISTANCE = 12, 13, 14, 15
_COMPLEX_COMPLEX, _NOT_INPLACE = 39, 44

# IR symbol -> (the C signature as an LLVM function type); runtime/fft.py binds them.
DFTI_FUNCTIONS = {
    "mlax_dfti_create": "!llvm.func<i64 (ptr, i32, i32, i64, ...)>",
    "mlax_dfti_set": "!llvm.func<i64 (ptr, i32, ...)>",
    "mlax_dfti_commit": "!llvm.func<i64 (ptr)>",
    "mlax_dfti_forward": "!llvm.func<i64 (ptr, ptr, ...)>",
    "mlax_dfti_backward": "!llvm.func<i64 (ptr, ptr, ...)>",
    "mlax_dfti_free": "!llvm.func<i64 (ptr)>",
}


@dataclass(frozen=True)
class _Plan:
    """One DFTI descriptor: what `_configure` sets."""

    double: bool
    real: bool
    lengths: tuple[int, ...]
    transforms: int
    distances: tuple[int, int]
    strides: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    scale: float | None = None
    in_place: bool = False


def _i64(value: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(64), value)


def int32(value: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(32), value)


def _ptr() -> ir.Type:
    return llvm.PointerType.get()


def declare(op: ir.Operation, name: str) -> ir.Type:
    """The variadic-aware ``llvm.func`` declaration of ``name`` at the top of the module."""
    module = op
    while module.name != "builtin.module":
        module = module.parent
    function_type = ir.Type.parse(DFTI_FUNCTIONS[name])
    if name not in ir.SymbolTable(module):
        with ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]), ir.Location.unknown():
            llvm.LLVMFuncOp(name, ir.TypeAttr.get(function_type),
                            linkage=ir.Attribute.parse("#llvm.linkage<external>"))
    return function_type


def _call(op: ir.Operation, name: str, *args: ir.Value) -> None:
    function_type = declare(op, name)
    vararg = ir.TypeAttr.get(function_type) if "..." in DFTI_FUNCTIONS[name] else None
    llvm.call(ir.IntegerType.get_signless(64), list(args), [], [], callee=ir.FlatSymbolRefAttr.get(name),
              var_callee_type=vararg)


def _array(values: Sequence[int]) -> ir.Value:
    """A stack array of the i64 ``values`` (lengths, strides), by pointer."""
    array = memref.alloca(ir.MemRefType.get([len(values)], ir.IntegerType.get_signless(64)), [], [])
    for i, v in enumerate(values):
        memref.store(_i64(v), array, [arith.constant(ir.IndexType.get(), i)])
    return _pointer(array)


def _configure(op: ir.Operation, plan: _Plan) -> tuple[ir.Value, ir.Value]:
    """A committed descriptor of ``plan``: (its handle, the stack slot holding it)."""
    slot = llvm.alloca(_ptr(), _i64(1), _ptr())
    d = len(plan.lengths)
    size = _i64(plan.lengths[0]) if d == 1 else _array(plan.lengths)
    _call(op, "mlax_dfti_create", slot, int32(_DOUBLE if plan.double else _SINGLE),
          int32(_REAL if plan.real else _COMPLEX), _i64(d), size)
    handle = llvm.load(_ptr(), slot)

    def set_value(parameter: int, value: ir.Value) -> None:
        _call(op, "mlax_dfti_set", handle, int32(parameter), value)

    if not plan.in_place:
        set_value(_PLACEMENT, _i64(_NOT_INPLACE))
    if plan.real:
        set_value(_CONJUGATE_EVEN_STORAGE, _i64(_COMPLEX_COMPLEX))
    if plan.transforms > 1:
        set_value(_TRANSFORMS, _i64(plan.transforms))
        set_value(_INPUT_DISTANCE, _i64(plan.distances[0]))
        set_value(_OUTPUT_DISTANCE, _i64(plan.distances[1]))
    if plan.strides is not None:
        set_value(_INPUT_STRIDES, _array(plan.strides[0]))
        set_value(_OUTPUT_STRIDES, _array(plan.strides[1]))
    if plan.scale is not None:
        set_value(_BACKWARD_SCALE, arith.constant(ir.F64Type.get(), plan.scale))
    _call(op, "mlax_dfti_commit", handle)
    return handle, slot


def _compute(op: ir.Operation, handle: ir.Value, forward: bool, *data: ir.Value) -> None:
    _call(op, "mlax_dfti_forward" if forward else "mlax_dfti_backward", handle, *data)


def _pointer(buffer: ir.Value) -> ir.Value:
    return llvm.inttoptr(_ptr(), address(buffer))


def _memref(t: ir.Type) -> ir.MemRefType:
    tensor_type = ir.RankedTensorType(t)
    return ir.MemRefType.get(list(tensor_type.shape), tensor_type.element_type)


def _row_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """DFTI's strides of a row-major array of ``shape``: the offset 0, then one per axis."""
    return (0, *(math.prod(shape[i + 1:]) for i in range(len(shape))))


def _is_double(t: ir.Type) -> bool:
    element = ir.RankedTensorType(t).element_type
    part = ir.ComplexType(element).element_type if isinstance(element, ir.ComplexType) else element
    return ir.FloatType(part).width == 64


def _transform(op: ir.Operation, x: ir.Value, out_type: ir.Type, plan: _Plan, forward: bool) -> ir.Value:
    """One configured transform of the folded tensor ``x`` into a fresh buffer of ``out_type``."""
    out = memref.alloc(_memref(out_type), [], [])
    scope = memref.AllocaScopeOp([])
    with ir.InsertionPoint(scope.bodyRegion.blocks.append()):
        source = bufferization.to_buffer(_memref(x.type), x, read_only=True)
        handle, slot = _configure(op, plan)
        _compute(op, handle, forward, _pointer(source), _pointer(out))
        _call(op, "mlax_dfti_free", slot)
        memref.AllocaScopeReturnOp([])
    return as_tensor(out)


def _irfft_leading(op: ir.Operation, x: ir.Value, lengths: tuple[int, ...]) -> ir.Value:
    """The complex inverse over the leading fft axes of the folded ``x`` (count, *lengths[:-1], m),
    in place in a copy: per batch element, m strided transforms of distance 1."""
    count, *leading, m = ir.RankedTensorType(x.type).shape
    copy = fresh_copy(x)
    strides = tuple(s * m for s in _row_strides(leading))
    plan = _Plan(_is_double(x.type), False, tuple(leading), m, (1, 1), (strides, strides),
                 1 / math.prod(leading), in_place=True)
    # Loops cannot sit in an alloca_scope (scf becomes blocks first): the descriptor is made in
    # one scope, used by the loop, and freed in another.
    scope = memref.AllocaScopeOp([_ptr()])
    with ir.InsertionPoint(scope.bodyRegion.blocks.append()):
        memref.AllocaScopeReturnOp([_configure(op, plan)[0]])
    handle = scope.results[0]
    base = address(copy)
    item_bytes = math.prod(leading) * m * (16 if _is_double(x.type) else 8)
    for_each_matrix(count, lambda i: _compute(op, handle, False, pointer_at(base, i, item_bytes)))
    scope = memref.AllocaScopeOp([])
    with ir.InsertionPoint(scope.bodyRegion.blocks.append()):
        slot = llvm.alloca(_ptr(), _i64(1), _ptr())
        llvm.store(handle, slot)
        _call(op, "mlax_dfti_free", slot)
        memref.AllocaScopeReturnOp([])
    return as_tensor(copy)


def _fft(op: ir.Operation) -> ir.Value:
    (operand,), result_type = op.operands, op.results[0].type
    kind = ir.StringAttr(op.attributes["fft_type"]).value
    lengths = tuple(ir.DenseI64ArrayAttr(op.attributes["fft_lengths"]))
    d = len(lengths)
    if 0 in ir.RankedTensorType(result_type).shape:
        return bufferization.alloc_tensor(result_type, [])  # nothing to transform
    x = fold_batch(operand, d)
    count = ir.RankedTensorType(x.type).shape[0]
    out_type = ir.RankedTensorType(_fold_type(result_type, d))
    double = _is_double(operand.type)
    n = math.prod(lengths)
    half = (*lengths[:-1], lengths[-1] // 2 + 1)
    if kind in ("FFT", "IFFT"):
        plan = _Plan(double, False, lengths, count, (n, n), scale=None if kind == "FFT" else 1 / n)
        out = _transform(op, x, out_type, plan, kind == "FFT")
    elif kind == "RFFT":
        strides = (_row_strides(lengths), _row_strides(half)) if d > 1 else None
        plan = _Plan(double, True, lengths, count, (n, math.prod(half)), strides)
        out = _transform(op, x, out_type, plan, True)
    else:
        if d > 1:
            x = _irfft_leading(op, x, lengths)
        last, m = lengths[-1], half[-1]
        transforms = count * math.prod(lengths[:-1])
        plan = _Plan(double, True, (last,), transforms, (m, last), scale=1 / last)
        flat_out = ir.RankedTensorType.get([transforms, last], out_type.element_type)
        out = _split_leading(_transform(op, _merge_leading(x), flat_out, plan, False), out_type)
    return unfold_batch(out, result_type)


def _fold_type(t: ir.Type, trailing: int) -> ir.Type:
    tensor_type = ir.RankedTensorType(t)
    lead = tensor_type.rank - trailing
    return ir.RankedTensorType.get([math.prod(tensor_type.shape[:lead]), *tensor_type.shape[lead:]],
                                   tensor_type.element_type)


def _groups(rank: int) -> ir.ArrayAttr:
    """Every dimension but the last in one group, the last alone."""
    return reassociation([list(range(rank - 1)), [rank - 1]])


def _merge_leading(x: ir.Value) -> ir.Value:
    """``x`` as a matrix: its leading dimensions folded into one."""
    t = ir.RankedTensorType(x.type)
    if t.rank == 2:
        return x
    merged = ir.RankedTensorType.get([math.prod(t.shape[:-1]), t.shape[-1]], t.element_type)
    return tensor.collapse_shape(merged, x, _groups(t.rank))


def _split_leading(x: ir.Value, target: ir.RankedTensorType) -> ir.Value:
    """The inverse of `_merge_leading`."""
    if target.rank == 2:
        return x
    return tensor.expand_shape(target, x, _groups(target.rank), [], list(target.shape))


RULES: dict[str, Rule] = {"fft": _fft}
