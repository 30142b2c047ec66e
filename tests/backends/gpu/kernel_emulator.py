"""A lockstep emulator of the GPU backend's ``gpu`` stage, so that CI checks kernel numerics
without a GPU: ``emulate(lowered, *arguments)`` runs the host function of
``lowered.as_text("gpu")`` (allocations, copies, views, host loops and branches, predicates read
back from the device) and every ``gpu.launch_func`` it reaches.

A launch runs all its threads at once, op by op, as NumPy arrays with one row per thread (every
block in lockstep is one legal schedule: blocks are independent, and the race check below
reports programs that depend on an order). Divergent ``scf.if``/``scf.for``/``scf.while`` run
under a mask of the active threads. Warp-level and block-level ops (``gpu.shuffle``,
``gpu.all_reduce``, ``gpu.barrier``, ``nvvm.mma.sync``) see the whole warp or block, and refuse
to run where only part of it is active (undefined on a GPU). The host function is the same
machine with one thread.

Checks besides the numbers: loads and stores stay inside their memref (per dimension); the host
never touches device memory nor a kernel host memory; no use after ``gpu.dealloc``; races:
between two barriers, a thread of a block reading or writing an address another thread of the
block wrote (or writing one it read) is a race, in shared and global memory, and so is a global
address written by one block and read or written by another in the same launch.
Memory (buffers, views, the memref ops) is in kernel_emulator_memory.py, value semantics
(arith, math, vector, tensor cores) in kernel_emulator_ops.py; the three files fill the one
dispatch table ``OPS``, keyed by op name."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from mlir import ir

from tests.backends.gpu.kernel_emulator_memory import Buffer, View, fresh, memref_shape
from tests.backends.gpu.kernel_emulator_ops import (
    OPS,
    EmulationError,
    register,
    storage_dtype,
    unsigned,
    width,
    wrap,
)

__all__ = ["EmulationError", "RaceError", "UnknownOpError", "emulate", "emulate_text"]


class RaceError(EmulationError):
    """Two threads touch one address without a barrier between them (or two blocks do)."""


class UnknownOpError(EmulationError):
    """An op the emulator has no semantics for: a new pass's output must be taught to it."""


def _merge(mask: np.ndarray, new: Any, old: Any) -> Any:
    """Per thread: ``new`` where ``mask``, else ``old`` (memrefs must not diverge)."""
    if isinstance(new, np.ndarray):
        return np.where(mask.reshape(-1, *([1] * (new.ndim - 1))), new, old)
    if mask.all() or old is None:
        return new
    if not mask.any() or new is old:
        return old
    raise EmulationError("a memref value differs between the threads of a kernel")


class Races:
    """The accesses of one launch, checked at each barrier and at the end (see the module)."""

    def __init__(self, kernel: str, block_threads: int) -> None:
        self.kernel, self.block_threads = kernel, block_threads
        self.interval: list[tuple[np.ndarray, ...]] = []
        self.launch: list[tuple[np.ndarray, ...]] = []
        self.names: dict[int, str] = {}

    def record(self, view: View, address: np.ndarray, thread: np.ndarray, write: bool) -> None:
        if not thread.size:
            return
        self.names[view.buffer.uid] = view.buffer.name
        address = address.reshape(len(thread), -1)
        thread = np.repeat(thread, address.shape[1])
        uid, written = np.full(thread.shape, view.buffer.uid), np.full(thread.shape, write)
        access = (uid, address.ravel(), thread, written)
        self.interval.append(access)
        if not view.block_stride:
            self.launch.append(access)

    def _conflict(self, accesses: list[tuple[np.ndarray, ...]], across_blocks: bool, what: str) -> None:
        if not accesses:
            return
        uid, address, thread, write = (np.concatenate(a) for a in zip(*accesses, strict=True))
        actor = thread // self.block_threads if across_blocks else thread
        key = (uid << 40) | address
        order = np.lexsort((actor, key))
        key, actor, write, thread = key[order], actor[order], write[order], thread[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        written = np.add.reduceat(write.astype(np.int64), starts) > 0
        several = np.minimum.reduceat(actor, starts) != np.maximum.reduceat(actor, starts)
        if not across_blocks:  # within a block only: threads of other blocks are other addresses or `launch`
            block = thread // self.block_threads
            several &= np.minimum.reduceat(block, starts) == np.maximum.reduceat(block, starts)
        bad = np.flatnonzero(written & several)
        if bad.size:
            s = starts[bad[0]]
            e = starts[bad[0] + 1] if bad[0] + 1 < len(starts) else len(key)
            who_name = "blocks" if across_blocks else "threads"
            raise RaceError(f"race in kernel {self.kernel}: {what}: {self.names[int(key[s] >> 40)]}"
                            f"[{int(key[s] & ((1 << 40) - 1))}] is written and accessed by {who_name} "
                            f"{sorted(set(actor[s:e].tolist()))[:4]} (linear thread ids "
                            f"{sorted(set(thread[s:e].tolist()))[:4]})")

    def barrier(self) -> None:
        self._conflict(self.interval, False, "between two barriers")
        self.interval = []

    def finish(self) -> None:
        self.barrier()
        self._conflict(self.launch, True, "in one launch")


@dataclass
class Geometry:
    """Which thread is which: ids per dimension, the block size and the grid size."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]

    @property
    def block_threads(self) -> int:
        return int(np.prod(self.block))

    def ids(self) -> dict[str, np.ndarray]:
        t = np.arange(int(np.prod(self.grid)) * self.block_threads)
        local, block = t % self.block_threads, t // self.block_threads
        out = {}
        for kind, index, sizes in (("thread", local, self.block), ("block", block, self.grid)):
            out[f"{kind}_x"] = index % sizes[0]
            out[f"{kind}_y"] = index // sizes[0] % sizes[1]
            out[f"{kind}_z"] = index // (sizes[0] * sizes[1])
        out["linear"], out["local"], out["block"] = t, local, block
        return out


class Execution:
    """One running function: the host's (one thread) or a launch's (all its threads)."""

    def __init__(self, module: Module, geometry: Geometry, name: str, host: bool = False) -> None:
        self.module, self.geometry, self.name, self.host = module, geometry, name, host
        self.ids = geometry.ids()
        self.threads = len(self.ids["linear"])
        self.mask = np.ones(self.threads, bool)
        self.env: dict[ir.Value, Any] = {}
        self.races = Races(name, geometry.block_threads)

    def get(self, value: ir.Value) -> Any:
        return self.env[value]

    def set(self, value: ir.Value, result: Any) -> None:
        self.env[value] = result

    def operands(self, op: ir.Operation) -> list[Any]:
        return [self.env[v] for v in op.operands]

    def run(self, block: ir.Block, arguments: list[Any]) -> list[Any]:
        """Runs a block under the current mask; returns its terminator's operands."""
        for argument, value in zip(block.arguments, arguments, strict=True):
            self.env[argument] = value
        for op in block.operations:
            op = op.operation
            if op.name in ("scf.yield", "scf.condition", "gpu.return", "func.return"):
                return self.operands(op)
            handler = OPS.get(op.name)
            if handler is None:
                where = "host code" if self.host else f"kernel {self.name}"
                raise UnknownOpError(f"the kernel emulator does not know {op.name} (in {where}): teach "
                                     f"it in tests/backends/gpu/kernel_emulator*.py before trusting this "
                                     "program")
            handler(self, op)
        return []

    def region(self, region: ir.Region, arguments: list[Any], mask: np.ndarray) -> list[Any] | None:
        """Runs a region's block with ``mask`` as the active threads (None: nobody ran it)."""
        if not mask.any() or not len(region.blocks):
            return None
        saved, self.mask = self.mask, mask
        try:
            return self.run(region.blocks[0], arguments)
        finally:
            self.mask = saved

    def whole_blocks(self, what: str) -> None:
        """``what`` must be reached by every thread of a block or by none of them."""
        rows = self.mask.reshape(-1, self.geometry.block_threads)
        if (rows.any(axis=1) != rows.all(axis=1)).any():
            raise EmulationError(f"{what} reached by only some threads of a block in kernel {self.name}")

    def warp_index(self) -> np.ndarray:
        """Warps are 32 consecutive linear thread ids of a block (the last one may be partial)."""
        per_block = -(-self.geometry.block_threads // 32)
        return self.ids["block"] * per_block + self.ids["local"] // 32

    def require_full_warps(self, what: str) -> None:
        if self.geometry.block_threads % 32 or not (self.mask.reshape(-1, 32).all(1)
                                                    | ~self.mask.reshape(-1, 32).any(1)).all():
            raise EmulationError(f"{what} needs whole warps active, in kernel {self.name}")

    # ----- memory -----

    def addresses(self, view: View, indices: list[np.ndarray], lanes: int = 1) -> np.ndarray:
        """Flat element addresses of each thread's access (bounds checked for active threads)."""
        if view.buffer.freed:
            raise EmulationError(f"{view.buffer.name} is used after gpu.dealloc in {self.name}")
        if view.buffer.device == self.host:
            raise EmulationError(f"{'the host' if self.host else 'kernel ' + self.name} accesses "
                                 f"{'device' if view.buffer.device else 'host'} memory ({view.buffer.name})")
        address = np.full(self.threads, view.offset, np.int64)
        extents = [*indices[:-1], indices[-1] + lanes - 1] if indices else []
        for index, extent, size, stride in zip(indices, extents, view.sizes, view.strides, strict=True):
            outside = self.mask & ((index < 0) | (extent >= size))
            if outside.any():
                t = int(np.flatnonzero(outside)[0])
                raise EmulationError(f"out of bounds in {self.name}: index {int(index[t])} of a dimension of "
                                     f"size {size} of {view.buffer.name} (linear thread {t})")
            address += index * stride
        if view.block_stride:
            address += self.ids["block"] * view.block_stride
        address = address[:, None] + np.arange(lanes) if lanes > 1 else address
        return np.clip(address, 0, view.buffer.data.size - 1)

    def load(self, view: View, indices: list[np.ndarray], lanes: int = 1) -> np.ndarray:
        address = self.addresses(view, indices, lanes)
        if not self.host:
            self.races.record(view, address[self.mask], self.ids["linear"][self.mask], False)
        return view.buffer.data[address]

    def store(self, view: View, indices: list[np.ndarray], value: np.ndarray, lanes: int = 1) -> None:
        address = self.addresses(view, indices, lanes)
        if not self.host:
            self.races.record(view, address[self.mask], self.ids["linear"][self.mask], True)
        view.buffer.data[address[self.mask]] = value[self.mask]


# ----- control flow -----

@register("scf.if")
def _if(ex: Execution, op: ir.Operation) -> None:
    condition = ex.get(op.operands[0]).astype(bool)
    then = ex.region(op.regions[0], [], ex.mask & condition)
    other = ex.region(op.regions[1], [], ex.mask & ~condition)
    if then is not None and other is not None:
        then = [_merge(condition, a, b) for a, b in zip(then, other, strict=True)]
    for result, value in zip(op.results, then if then is not None else other or [], strict=False):
        ex.set(result, value)


@register("scf.for")
def _for(ex: Execution, op: ir.Operation) -> None:
    low, high, step, *carried = ex.operands(op)
    index = low.copy()
    while True:
        active = ex.mask & (index < high)
        if not active.any():
            break
        new = ex.region(op.regions[0], [index, *carried], active)
        carried = [_merge(active, a, b) for a, b in zip(new, carried, strict=True)]
        index = np.where(active, index + step, index)
    for result, value in zip(op.results, carried, strict=True):
        ex.set(result, value)


@register("scf.while")
def _while(ex: Execution, op: ir.Operation) -> None:
    carried, active = ex.operands(op), ex.mask.copy()
    final: list[Any] = [None] * len(op.results)
    while active.any():
        condition, *values = ex.region(op.regions[0], carried, active)
        final = [_merge(active, a, b) for a, b in zip(values, final, strict=True)]
        active = active & condition.astype(bool)
        if active.any():
            new = ex.region(op.regions[1], values, active)
            carried = [_merge(active, a, b) for a, b in zip(new, carried, strict=True)]
    for result, value in zip(op.results, final, strict=True):
        ex.set(result, value)


# ----- gpu ops in kernels -----

def _dimension(op: ir.Operation) -> str:
    return str(op.attributes["dimension"]).split()[-1].rstrip(">")


@register("gpu.thread_id", "gpu.block_id", "gpu.block_dim", "gpu.grid_dim", "gpu.lane_id")
def _ids(ex: Execution, op: ir.Operation) -> None:
    kind = op.name.split(".")[1]
    if kind == "lane_id":
        value = ex.ids["local"] % 32
    elif kind in ("thread_id", "block_id"):
        value = ex.ids[f"{kind.split('_')[0]}_{_dimension(op)}"]
    else:
        sizes = ex.geometry.block if kind == "block_dim" else ex.geometry.grid
        value = np.full(ex.threads, sizes["xyz".index(_dimension(op))])
    ex.set(op.results[0], value.astype(np.int64))


@register("gpu.barrier")
def _barrier(ex: Execution, op: ir.Operation) -> None:
    ex.whole_blocks("gpu.barrier")
    ex.races.barrier()


@register("gpu.shuffle")
def _shuffle(ex: Execution, op: ir.Operation) -> None:
    """As MLIR's NVVM lowering makes it (GPUToNVVM, GPUShuffleOpLowering): member mask = the first
    ``width`` lanes, clamp = width - 1 (32 - width for ``up``), no segments; then PTX's shfl.sync
    (PTX ISA, shfl.sync): source lane j from the offset's low 5 bits, valid iff j <= clamp
    (j >= clamp for ``up``); an invalid thread keeps its own value. A lane outside the member
    mask that runs the shuffle, or a source lane that does not run it, is undefined: reported."""
    value, offset, width_ = ex.operands(op)
    mode = str(op.attributes["mode"]).split()[-1].rstrip(">")
    lane, b = ex.ids["local"] % 32, offset & 31
    if (ex.mask & (lane >= width_)).any():
        raise EmulationError(f"gpu.shuffle run by a lane outside its width in kernel {ex.name}")
    source = {"xor": lane ^ b, "down": lane + b, "up": lane - b, "idx": b}[mode]
    valid = (source >= 32 - width_) if mode == "up" else (source <= width_ - 1)
    valid &= (source >= 0) & (ex.ids["local"] - lane + source < ex.geometry.block_threads)
    target = np.where(valid, ex.ids["linear"] - lane + source, ex.ids["linear"])
    if (ex.mask & valid & ~ex.mask[target]).any():
        raise EmulationError(f"gpu.shuffle reads a lane that does not take part, in kernel {ex.name}")
    ex.set(op.results[0], value[target])
    ex.set(op.results[1], valid.astype(np.int64))


_REDUCTIONS = {
    "add": np.add, "mul": np.multiply, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "maxsi": np.maximum, "minsi": np.minimum, "maximumf": np.maximum, "minimumf": np.minimum,
    "maxnumf": np.fmax, "minnumf": np.fmin,
}


@register("gpu.all_reduce")
def _all_reduce(ex: Execution, op: ir.Operation) -> None:
    """A tree over the block's threads (the order a shuffle butterfly uses, roughly): float sums
    differ from a sequential loop's by reassociation only. The region form (a custom combiner)
    is refused: no pass emits it."""
    ex.whole_blocks("gpu.all_reduce")
    value = ex.get(op.operands[0])
    t = op.results[0].type
    rows = value.reshape(-1, ex.geometry.block_threads, *value.shape[1:])
    kind = str(op.attributes["op"]).split()[-1].rstrip(">") if "op" in op.attributes else None
    combine = _REDUCTIONS.get(kind) if kind else None
    if kind in ("maxui", "minui"):
        bits = width(t)
        pick = np.greater_equal if kind == "maxui" else np.less_equal
        combine = lambda a, b: np.where(pick(unsigned(a, bits), unsigned(b, bits)), a, b)  # noqa: E731
    if combine is None:
        raise EmulationError(f"gpu.all_reduce {kind or 'with a region'} is not emulated yet")
    while rows.shape[1] > 1:
        half = rows.shape[1] // 2
        folded = combine(rows[:, :half], rows[:, half:2 * half])
        rows = np.concatenate([folded, rows[:, 2 * half:]], axis=1)
    out = np.repeat(rows[:, 0], ex.geometry.block_threads, axis=0)
    ex.set(op.results[0], wrap(out, width(t)) if width(t) is not None else out.astype(value.dtype))


# ----- host: launches -----

@register("gpu.launch_func")
def _launch(ex: Execution, op: ir.Operation) -> None:
    sizes = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
    values = ex.operands(op)
    starts = np.cumsum([0, *sizes])
    if sizes[0] or any(sizes[7:11]) or sizes[12]:
        raise EmulationError("gpu.launch_func with async tokens, clusters or dynamic shared memory")
    grid = tuple(int(v[0]) for v in values[starts[1]:starts[4]])
    block = tuple(int(v[0]) for v in values[starts[4]:starts[7]])
    arguments = values[starts[11]:starts[12]]
    symbol = str(op.attributes["kernel"]).replace('"', "").replace("@", "").split("::")
    ex.module.launch(ex.module.kernels[tuple(symbol)], Geometry(grid, block), arguments)


class Module:
    """A parsed ``gpu``-stage module: its host function, kernels and constant globals."""

    def __init__(self, text: str) -> None:
        """Parses ``text``: call inside an ``ir.Context`` that outlives the module."""
        self.module = ir.Module.parse(text)
        self.kernels: dict[tuple[str, str], ir.Operation] = {}
        self.globals: dict[str, np.ndarray] = {}
        self.host = None
        for op in self.module.body.operations:
            op = op.operation
            name = ir.StringAttr(op.attributes["sym_name"]).value if "sym_name" in op.attributes else ""
            if op.name == "gpu.module":
                for f in op.regions[0].blocks[0].operations:
                    f = f.operation
                    self.kernels[(name, ir.StringAttr(f.attributes["sym_name"]).value)] = f
            elif op.name == "memref.global":
                value = op.attributes["initial_value"]
                t = ir.MemRefType(ir.TypeAttr(op.attributes["type"]).value)
                self.globals[name] = (np.full(t.shape, value.get_splat_value().value) if value.is_splat
                                      else np.array(value)).astype(storage_dtype(t))
            elif op.name == "func.func":
                self.host = op

    def launch(self, kernel: ir.Operation, geometry: Geometry, arguments: list[Any]) -> None:
        name = ir.StringAttr(kernel.attributes["sym_name"]).value
        ex = Execution(self, geometry, name)
        body = kernel.regions[0].blocks[0]
        count = len(arguments)
        shared = ir.IntegerAttr(kernel.attributes["workgroup_attributions"]).value
        bound = [a if isinstance(a, View) else np.full(ex.threads, a[0]) for a in arguments]
        blocks = int(np.prod(geometry.grid))
        for argument in list(body.arguments)[count:count + shared]:
            view = fresh(argument.type, True, f"workgroup memory {argument.get_name()} of {name}")
            per_block = view.buffer.data.size
            view.buffer.data = np.tile(view.buffer.data, blocks)
            bound.append(replace(view, block_stride=per_block))
        if len(body.arguments) != len(bound):
            raise EmulationError(f"kernel {name} has private memory attributions")
        # CUDA's limits: 1024 threads per block, 48 KiB of static shared memory per block.
        static = sum(v.block_stride * v.buffer.data.itemsize for v in bound[count:])
        if geometry.block_threads > 1024 or static > 48 * 1024:
            raise EmulationError(f"kernel {name}: {geometry.block_threads} threads and {static} bytes of "
                                 f"shared memory per block are over CUDA's limits (1024, 48 KiB)")
        with np.errstate(all="ignore"):
            ex.run(body, bound)
        ex.races.finish()

    def run(self, arguments: list[np.ndarray]) -> list[np.ndarray]:
        host = Execution(self, Geometry((1, 1, 1), (1, 1, 1)), "host", host=True)
        block = self.host.regions[0].blocks[0]
        views = []
        for i, argument in enumerate(block.arguments):
            t = argument.type
            data = (_bytes_as(np.asarray(arguments[i]), storage_dtype(t)) if i < len(arguments)
                    else fresh(t, True, "").buffer.data)
            views.append(View.of(Buffer(data.copy(), True, f"argument {i}"), memref_shape(t)))
        with np.errstate(all="ignore"):
            host.run(block, views)
        return [v.buffer.data.reshape(v.sizes) for v in views[len(arguments):]]


def _bytes_as(array: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """An input in memory's dtype: the same bytes where the sizes agree (uint32 as i32), else
    converted (bools become bytes)."""
    flat = np.ascontiguousarray(array).ravel()
    same = flat.dtype.kind in "iu" and dtype.kind in "iu" and flat.dtype.itemsize == dtype.itemsize
    return flat.view(dtype) if same else flat.astype(dtype)


def emulate_text(text: str, arguments: list[np.ndarray]) -> list[np.ndarray]:
    """Runs a ``gpu``-stage module's host function on ``arguments``; returns its results (one
    array per out-parameter, in memory's dtype: bools as bytes)."""
    with ir.Context():
        return Module(text).run(arguments)


def emulate(lowered: Any, *arguments: np.ndarray) -> list[np.ndarray]:
    """The results of ``mlax.jit(f, backend="gpu").lower(*arguments)`` as its kernels compute them."""
    return emulate_text(lowered.as_text("gpu", debug_info=False), list(arguments))
