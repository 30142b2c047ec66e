"""Rule for fft: calls of MKL's DFTI (the CPU runtime binds the symbols, mlax.backends.native.fft).

Each op keeps its DFTI descriptor (for its shape: precision, domain, lengths, number of
transforms = the folded batch, distances, strides, the inverse's 1/N as DFTI_BACKWARD_SCALE,
conjugate-even storage COMPLEX_COMPLEX) in a global of the module: the first execution creates,
configures and commits it and publishes it with a compare-and-swap (racing threads free the
spares); later executions only compute, which for small transforms is most of the saving (a
commit costs 10-40 us). The module's `RELEASE_FUNCTION` frees them; the CPU runtime calls it when
it unlinks the code. A step MKL refuses leaves the global null and the result NaN.
The DFTI entry points are variadic in C (`DftiComputeForward(desc, in, ...)`), so
they are declared as variadic `llvm.func`s and called with `llvm.call ... vararg(...)`: LLVM
then follows the x86-64 convention for variadic calls (%al = the vector registers used),
which a plain call would leave unset. Integers travel as i64 (MKL_LONG; an enum read from a
64-bit variadic slot is its low half), the scale as f64 (C promotes a float argument).

The operand is read where it stands (`bufferization.to_buffer`, read-only, in a
`memref.alloca_scope` with the call, as mlax-lower-callbacks does) and the
result written into a fresh buffer (out-of-place). IRFFT over several axes is, as numpy's
irfftn (MKL's multi-dimensional complex-to-real transform reads every axis as
conjugate-even), an in-place complex inverse over the leading axes of a copy (per batch
element, the last axis's frequencies as its transforms) and then a one-dimensional
complex-to-real transform of the last axis.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, bufferization, llvm, memref, scf, tensor

from mlax.dialect.opviews import linalg
from mlax.passes.abi import RELEASE_FUNCTION
from mlax.passes.lower_to_linalg.common import Rule, reassociation
from mlax.passes.lower_to_linalg.library_calls import (
    address,
    as_tensor,
    fold_batch,
    for_each_matrix,
    fresh_copy,
    int32,
    nan_scalar,
    pointer_at,
    unfold_batch,
)

# mkl_dfti.h
_SINGLE, _DOUBLE, _COMPLEX, _REAL = 35, 36, 32, 33
_BACKWARD_SCALE, _TRANSFORMS, _CONJUGATE_EVEN_STORAGE, _PLACEMENT = 5, 7, 10, 11
_INPUT_STRIDES, _OUTPUT_STRIDES, _INPUT_DISTANCE, _OUTPUT_DISTANCE = 12, 13, 14, 15
_COMPLEX_COMPLEX, _NOT_INPLACE = 39, 44
_THREAD_LIMIT = 27
# Below this many points (length x transforms) one thread is faster: waking MKL's OpenMP team costs
# more than the transform (4096 points: 146 us threaded, 23 us on one thread; 65536: 305 vs 193 us;
# 262144: 1.26 vs 1.49 ms, threads win).
_ONE_THREAD_BELOW = 1 << 17

# IR symbol -> (the C signature as an LLVM function type); backends/native/fft.py binds them.
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


def _ptr() -> ir.Type:
    return llvm.PointerType.get()


def _module_of(op: ir.Operation) -> ir.Operation:
    module = op
    while module.name != "builtin.module":
        module = module.parent
    return module


def _at_module_top(op: ir.Operation) -> ir.InsertionPoint:
    return ir.InsertionPoint.at_block_begin(_module_of(op).regions[0].blocks[0])


def declare(op: ir.Operation, name: str) -> ir.Type:
    """The variadic-aware ``llvm.func`` declaration of ``name`` at the top of the module."""
    function_type = ir.Type.parse(DFTI_FUNCTIONS[name])
    if name not in ir.SymbolTable(_module_of(op)):
        with _at_module_top(op), ir.Location.unknown():
            llvm.LLVMFuncOp(name, ir.TypeAttr.get(function_type),
                            linkage=ir.Attribute.parse("#llvm.linkage<external>"))
    return function_type


def _call(op: ir.Operation, name: str, *args: ir.Value) -> ir.Value:
    """The call of DFTI function ``name``; its result is DFTI's status (0 when it succeeded)."""
    function_type = declare(op, name)
    vararg = ir.TypeAttr.get(function_type) if "..." in DFTI_FUNCTIONS[name] else None
    return llvm.call(ir.IntegerType.get_signless(64), list(args), [], [],
                     callee=ir.FlatSymbolRefAttr.get(name), var_callee_type=vararg)


def _array(values: Sequence[int]) -> ir.Value:
    """A stack array of the i64 ``values`` (lengths, strides), by pointer."""
    array = memref.alloca(ir.MemRefType.get([len(values)], ir.IntegerType.get_signless(64)), [], [])
    for i, v in enumerate(values):
        memref.store(_i64(v), array, [arith.constant(ir.IndexType.get(), i)])
    return _pointer(array)


def _failed(status: ir.Value) -> ir.Value:
    return llvm.icmp(llvm.ICmpPredicate.ne, status, _i64(0))


def _configure(op: ir.Operation, plan: _Plan) -> tuple[ir.Value, ir.Value]:
    """A descriptor of ``plan``, created, configured and committed in an alloca scope (which
    may hold no branch: scf becomes blocks before the scope is lowered), and whether MKL
    refused any step."""
    scope = memref.AllocaScopeOp([_ptr(), ir.IntegerType.get_signless(1)])
    with ir.InsertionPoint(scope.bodyRegion.blocks.append()):
        slot = llvm.alloca(_ptr(), _i64(1), _ptr())
        llvm.store(llvm.mlir_zero(_ptr()), slot)
        d = len(plan.lengths)
        size = _i64(plan.lengths[0]) if d == 1 else _array(plan.lengths)
        statuses = [_call(op, "mlax_dfti_create", slot, int32(_DOUBLE if plan.double else _SINGLE),
                          int32(_REAL if plan.real else _COMPLEX), _i64(d), size)]
        handle = llvm.load(_ptr(), slot)

        def set_value(parameter: int, value: ir.Value) -> None:
            statuses.append(_call(op, "mlax_dfti_set", handle, int32(parameter), value))

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
        if math.prod(plan.lengths) * plan.transforms < _ONE_THREAD_BELOW:
            set_value(_THREAD_LIMIT, _i64(1))
        statuses.append(_call(op, "mlax_dfti_commit", handle))
        memref.AllocaScopeReturnOp([handle, functools.reduce(llvm.or_, map(_failed, statuses))])
    return scope.results[0], scope.results[1]


def _free(op: ir.Operation, handle: ir.Value) -> None:
    """DftiFreeDescriptor(&handle) (a null handle, from a failed create, is refused harmlessly)."""
    scope = memref.AllocaScopeOp([])
    with ir.InsertionPoint(scope.bodyRegion.blocks.append()):
        slot = llvm.alloca(_ptr(), _i64(1), _ptr())
        llvm.store(handle, slot)
        _call(op, "mlax_dfti_free", slot)
        memref.AllocaScopeReturnOp([])


def _plan_global(op: ir.Operation) -> str:
    """A new zero-initialized pointer global of the module for one call site's descriptor, and the
    module's `RELEASE_FUNCTION` rewritten to free it too."""
    table = ir.SymbolTable(_module_of(op))
    name = next(f"mlax_dfti_plan_{k}" for k in itertools.count() if f"mlax_dfti_plan_{k}" not in table)
    with _at_module_top(op), ir.Location.unknown():
        global_op = llvm.GlobalOp(_ptr(), name, ir.Attribute.parse("#llvm.linkage<internal>"), alignment=8)
        with ir.InsertionPoint(global_op.initializer.blocks.append()):
            llvm.ReturnOp(arg=llvm.mlir_zero(_ptr()))
    _write_release_function(op, table)
    return name


def _write_release_function(op: ir.Operation, table: ir.SymbolTable) -> None:
    """``void RELEASE_FUNCTION()``: frees every cached descriptor of the module (the runtime calls
    it when the program's code is unlinked; no execution runs then)."""
    plans = sorted(n for n in (ir.StringAttr(o.attributes["sym_name"]).value
                               for o in _module_of(op).regions[0].blocks[0].operations
                               if o.operation.name == "llvm.mlir.global")
                   if n.startswith("mlax_dfti_plan_"))
    if RELEASE_FUNCTION in table:
        table[RELEASE_FUNCTION].operation.erase()
    declare(op, "mlax_dfti_free")
    with _at_module_top(op), ir.Location.unknown():
        release = llvm.LLVMFuncOp(RELEASE_FUNCTION, ir.TypeAttr.get(ir.Type.parse("!llvm.func<void ()>")))
        block = release.body.blocks.append()
        for name in plans:
            free, following = release.body.blocks.append(), release.body.blocks.append()
            with ir.InsertionPoint(block):
                slot = llvm.mlir_addressof(_ptr(), name)
                live = llvm.icmp(llvm.ICmpPredicate.ne, llvm.load(_ptr(), slot), llvm.mlir_zero(_ptr()))
                llvm.cond_br(live, [], [], free, following)
            with ir.InsertionPoint(free):
                _call(op, "mlax_dfti_free", slot)
                llvm.br([], following)
            block = following
        with ir.InsertionPoint(block):
            llvm.ReturnOp()


def _cached_descriptor(op: ir.Operation, plan: _Plan) -> ir.Value:
    """This call site's committed descriptor of ``plan``, made by the first execution and kept in
    a global (null while MKL refuses it). Threads racing on the first execution each make one;
    a compare-and-swap keeps the first stored and the others free theirs."""
    slot = llvm.mlir_addressof(_ptr(), _plan_global(op))
    cached = llvm.load(_ptr(), slot, alignment=8, ordering=llvm.AtomicOrdering.acquire)
    missing = scf.IfOp(llvm.icmp(llvm.ICmpPredicate.eq, cached, llvm.mlir_zero(_ptr())), [_ptr()],
                       has_else=True)
    with ir.InsertionPoint(missing.then_block):
        made, refused = _configure(op, plan)
        outcome = scf.IfOp(refused, [_ptr()], has_else=True)
        with ir.InsertionPoint(outcome.then_block):
            _free(op, made)
            scf.YieldOp([llvm.mlir_zero(_ptr())])
        with ir.InsertionPoint(outcome.else_block):
            kept = llvm.call(_ptr(), [slot, made], [], [], callee=ir.FlatSymbolRefAttr.get(_publisher(op)))
            lost = scf.IfOp(llvm.icmp(llvm.ICmpPredicate.ne, kept, made))
            with ir.InsertionPoint(lost.then_block):
                _free(op, made)
                scf.YieldOp([])
            scf.YieldOp([kept])
        scf.YieldOp([outcome.results[0]])
    with ir.InsertionPoint(missing.else_block):
        scf.YieldOp([cached])
    return missing.results[0]


_PUBLISHER = "mlax_publish_descriptor"


def _publisher(op: ir.Operation) -> str:
    """``ptr publish(ptr* slot, ptr made)``: stores ``made`` in the null ``slot`` and returns it, or
    returns what another thread stored first (a compare-and-swap, in an llvm.func: the buffer
    deallocation pipeline refuses ops with unknown memory effects in the functions it rewrites)."""
    if _PUBLISHER not in ir.SymbolTable(_module_of(op)):
        with _at_module_top(op), ir.Location.unknown():
            signature = ir.TypeAttr.get(ir.Type.parse("!llvm.func<ptr (ptr, ptr)>"))
            internal = ir.Attribute.parse("#llvm.linkage<internal>")
            function = llvm.LLVMFuncOp(_PUBLISHER, signature, linkage=internal)
            function.attributes["no_inline"] = ir.UnitAttr.get()  # or `inline` brings the CAS back
            block = function.body.blocks.append(_ptr(), _ptr())
            with ir.InsertionPoint(block):
                slot, made = block.arguments
                swap = llvm.cmpxchg(slot, llvm.mlir_zero(_ptr()), made, llvm.AtomicOrdering.acq_rel,
                                    llvm.AtomicOrdering.acquire)
                stored = llvm.extractvalue(ir.IntegerType.get_signless(1), swap, [1])
                llvm.ReturnOp(arg=llvm.select(stored, made, llvm.extractvalue(_ptr(), swap, [0])))
    return _PUBLISHER


def _compute(op: ir.Operation, handle: ir.Value, forward: bool,
             data: Callable[[], list[ir.Value]]) -> ir.Value:
    """DFTI's status of the transform of the pointers ``data()`` makes; a null (refused)
    descriptor is not called. The pointers are made in an alloca scope with the call, so that no
    two calls share one (CSE'd) ``to_buffer``: bufferization sees an operand read where its
    ``to_buffer`` is, and the call must come right after it."""
    usable = llvm.icmp(llvm.ICmpPredicate.ne, handle, llvm.mlir_zero(_ptr()))
    call = scf.IfOp(usable, [ir.IntegerType.get_signless(64)], has_else=True)
    with ir.InsertionPoint(call.then_block):
        scope = memref.AllocaScopeOp([ir.IntegerType.get_signless(64)])
        with ir.InsertionPoint(scope.bodyRegion.blocks.append()):
            name = "mlax_dfti_forward" if forward else "mlax_dfti_backward"
            memref.AllocaScopeReturnOp([_call(op, name, handle, *data())])
        scf.YieldOp([scope.results[0]])
    with ir.InsertionPoint(call.else_block):
        scf.YieldOp([_i64(-1)])
    return call.results[0]


def _nans_if_failed(status: ir.Value, buffer: ir.Value) -> None:
    """NaN in every element of ``buffer`` when ``status`` reports a failure (as jax's failed
    factorizations): a refused descriptor leaves the result unwritten."""
    failed = scf.IfOp(_failed(status))
    with ir.InsertionPoint(failed.then_block):
        linalg.fill(nan_scalar(ir.MemRefType(buffer.type).element_type), outs=[buffer])
        scf.YieldOp([])


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
    handle = _cached_descriptor(op, plan)
    status = _compute(op, handle, forward,
                      lambda: [_pointer(bufferization.to_buffer(_memref(x.type), x, read_only=True)),
                               _pointer(out)])
    _nans_if_failed(status, out)
    return as_tensor(out)


def _irfft_leading(op: ir.Operation, x: ir.Value, lengths: tuple[int, ...]) -> ir.Value:
    """The complex inverse over the leading fft axes of the folded ``x`` (count, *lengths[:-1], m),
    in place in a copy: per batch element, m strided transforms of distance 1."""
    count, *leading, m = ir.RankedTensorType(x.type).shape
    copy = fresh_copy(x)
    strides = tuple(s * m for s in _row_strides(leading))
    plan = _Plan(_is_double(x.type), False, tuple(leading), m, (1, 1), (strides, strides),
                 1 / math.prod(leading), in_place=True)
    handle = _cached_descriptor(op, plan)
    base = address(copy)
    item_bytes = math.prod(leading) * m * (16 if _is_double(x.type) else 8)
    for_each_matrix(count, lambda i: _compute(op, handle, False, lambda: [pointer_at(base, i, item_bytes)]))
    # Only a refused descriptor can fail here (the transforms' arguments are fixed at compile time).
    _nans_if_failed(_compute_status_of(handle), copy)
    return as_tensor(copy)


def _compute_status_of(handle: ir.Value) -> ir.Value:
    """-1 for a null (refused) descriptor, else 0."""
    refused = llvm.icmp(llvm.ICmpPredicate.eq, handle, llvm.mlir_zero(_ptr()))
    return arith.select(refused, _i64(-1), _i64(0))


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
