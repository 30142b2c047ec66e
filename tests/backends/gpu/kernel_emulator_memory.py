"""Memory for the kernel emulator (tests/backends/gpu/kernel_emulator.py): buffers, memref views and the
ops that allocate, copy, reshape and access them, on the host and in kernels.

A buffer is flat storage in memory's own dtype (bools as bytes, bf16 as ml_dtypes.bfloat16)
that knows whether it lives on the device (gpu.alloc, the entry's arguments, workgroup memory)
or on the host (memref.alloca, constant globals): the emulator refuses host code that touches
device memory and kernels that touch host memory, as a GPU would fault or read garbage there.
New buffers are filled with NaN (floats) or 0x5A bytes, so results read before written show."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
from mlir import ir

from tests.backends.gpu.kernel_emulator_ops import (
    EmulationError,
    from_storage,
    register,
    storage_dtype,
    to_storage,
)

if TYPE_CHECKING:
    from tests.backends.gpu.kernel_emulator import Execution

_uids = itertools.count()


@dataclass(eq=False)
class Buffer:
    """One allocation: flat storage, where it lives, and whether it was freed."""

    data: np.ndarray
    device: bool
    name: str
    uid: int = field(default_factory=lambda: next(_uids))
    freed: bool = False


@dataclass(frozen=True)
class View:
    """A memref value: a strided window on a buffer. Workgroup memory has one copy per block,
    ``block_stride`` elements apart."""

    buffer: Buffer
    offset: int
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    block_stride: int = 0

    @staticmethod
    def of(buffer: Buffer, sizes: tuple[int, ...], offset: int = 0) -> View:
        strides = tuple(int(np.prod(sizes[i + 1:])) for i in range(len(sizes)))
        return View(buffer, offset, tuple(sizes), strides)

    def contiguous(self) -> bool:
        return self.strides == View.of(self.buffer, self.sizes).strides


def _uniform(ex: Execution, value: np.ndarray) -> int:
    """A value every active thread agrees on (a memref's offset, size or stride)."""
    active = value[ex.mask] if ex.mask.any() else value
    if (active != active[0]).any():
        raise EmulationError("a memref's shape or offset differs between threads")
    return int(active[0])


# ----- memory ops (host and kernels) -----

@register("memref.load")
def _load(ex: Execution, op: ir.Operation) -> None:
    view, *indices = ex.operands(op)
    ex.set(op.results[0], from_storage(ex.load(view, indices), op.results[0].type))


@register("memref.store")
def _store(ex: Execution, op: ir.Operation) -> None:
    value, view, *indices = ex.operands(op)
    ex.store(view, indices, to_storage(value, op.operands[0].type))


@register("vector.load")
def _vector_load(ex: Execution, op: ir.Operation) -> None:
    view, *indices = ex.operands(op)
    t = ir.VectorType(op.results[0].type)
    if len(t.shape) != 1 or view.strides[-1] != 1:
        raise EmulationError(f"vector.load of {t} from a memref whose last stride is not 1")
    ex.set(op.results[0], from_storage(ex.load(view, indices, t.shape[0]), op.results[0].type))


@register("vector.store")
def _vector_store(ex: Execution, op: ir.Operation) -> None:
    value, view, *indices = ex.operands(op)
    if view.strides[-1] != 1:
        raise EmulationError("vector.store to a memref whose last stride is not 1")
    ex.store(view, indices, to_storage(value, op.operands[0].type), value.shape[1])


def memref_shape(t: ir.Type) -> tuple[int, ...]:
    return tuple(ir.MemRefType(t).shape)


@register("memref.expand_shape", "memref.collapse_shape")
def _reshape(ex: Execution, op: ir.Operation) -> None:
    view = ex.get(op.operands[0])
    if not view.contiguous():
        raise EmulationError(f"{op.name} of a strided memref")
    ex.set(op.results[0], replace(View.of(view.buffer, memref_shape(op.results[0].type), view.offset),
                                  block_stride=view.block_stride))


@register("memref.cast")
def _cast(ex: Execution, op: ir.Operation) -> None:
    ex.set(op.results[0], ex.get(op.operands[0]))


def _mixed(ex: Execution, op: ir.Operation, name: str, dynamic: list[np.ndarray]) -> list[int]:
    """A static_offsets/sizes/strides list with its dynamic entries filled in."""
    return [_uniform(ex, dynamic.pop(0)) if v == ir.ShapedType.get_dynamic_size() or
            v == ir.ShapedType.get_dynamic_stride_or_offset() else v for v in op.attributes[name]]


@register("memref.reinterpret_cast", "memref.subview")
def _window(ex: Execution, op: ir.Operation) -> None:
    view, *dynamic = ex.operands(op)
    offsets = _mixed(ex, op, "static_offsets", dynamic)
    sizes = _mixed(ex, op, "static_sizes", dynamic)
    strides = _mixed(ex, op, "static_strides", dynamic)
    if op.name == "memref.reinterpret_cast":
        result = View(view.buffer, offsets[0], tuple(sizes), tuple(strides), view.block_stride)
    else:
        offset = view.offset + sum(o * s for o, s in zip(offsets, view.strides, strict=True))
        # A rank-reducing subview drops unit dimensions, the outer ones first.
        extra = len(sizes) - len(memref_shape(op.results[0].type))
        dropped = [i for i, s in enumerate(sizes) if s == 1][:extra]
        kept = [i for i in range(len(sizes)) if i not in dropped]
        result = View(view.buffer, offset, tuple(sizes[i] for i in kept),
                      tuple(view.strides[i] * strides[i] for i in kept), view.block_stride)
    ex.set(op.results[0], result)


@register("memref.extract_strided_metadata")
def _metadata(ex: Execution, op: ir.Operation) -> None:
    view = ex.get(op.operands[0])
    scalars = [view.offset, *view.sizes, *view.strides]
    ex.set(op.results[0], View(view.buffer, 0, (), (), view.block_stride))
    for result, value in zip(list(op.results)[1:], scalars, strict=True):
        ex.set(result, np.full(ex.threads, value, np.int64))


@register("memref.extract_aligned_pointer_as_index")
def _pointer(ex: Execution, op: ir.Operation) -> None:
    """A made-up address: equal for two views of one allocation, different across them."""
    ex.set(op.results[0], np.full(ex.threads, (ex.get(op.operands[0]).buffer.uid + 1) << 32, np.int64))


def fresh(t: ir.Type, device: bool, name: str) -> View:
    """A new buffer full of NaN (floats) or 0x5A bytes, so a read before a write shows."""
    shape, dtype = memref_shape(t), storage_dtype(t)
    data = np.full(int(np.prod(shape)), np.nan if dtype.kind == "f" else 0x5A, dtype) if dtype.kind != "b" \
        else np.zeros(int(np.prod(shape)), bool)
    return View.of(Buffer(data, device, name), shape)


@register("gpu.alloc", "memref.alloca")
def _alloc(ex: Execution, op: ir.Operation) -> None:
    if op.name == "gpu.alloc" and len(op.operands):
        raise EmulationError("gpu.alloc with dynamic sizes or async dependencies")
    ex.set(op.results[0], fresh(op.results[0].type, op.name == "gpu.alloc",
                                 f"{op.name} {op.results[0].get_name()}"))


@register("gpu.dealloc")
def _dealloc(ex: Execution, op: ir.Operation) -> None:
    buffer = ex.get(op.operands[0]).buffer
    if buffer.freed or not buffer.device:
        raise EmulationError(f"gpu.dealloc of {'a freed' if buffer.freed else 'a host'} buffer {buffer.name}")
    buffer.freed = True


@register("memref.get_global")
def _get_global(ex: Execution, op: ir.Operation) -> None:
    name = ir.FlatSymbolRefAttr(op.attributes["name"]).value
    data = ex.module.globals[name]
    ex.set(op.results[0], View.of(Buffer(data.ravel().copy(), False, f"@{name}"), data.shape))


@register("gpu.memcpy")
def _memcpy(ex: Execution, op: ir.Operation) -> None:
    if len(op.results) or len(op.operands) != 2:
        raise EmulationError("asynchronous gpu.memcpy")
    target, source = ex.operands(op)
    if target.sizes != source.sizes:
        raise EmulationError(f"gpu.memcpy between shapes {source.sizes} and {target.sizes}")
    for view in (target, source):
        if view.buffer.freed:
            raise EmulationError(f"gpu.memcpy of {view.buffer.name} after gpu.dealloc")
    index = np.indices(source.sizes).reshape(len(source.sizes), int(np.prod(source.sizes)))
    at = [np.full(index.shape[1], view.offset, np.int64) for view in (target, source)]
    for addresses, view in zip(at, (target, source), strict=True):
        for i, stride in zip(index, view.strides, strict=True):
            addresses += i * stride
    target.buffer.data[at[0]] = source.buffer.data[at[1]]
