"""The launch plan of a GPU program: its host code at the end of the pipeline's ``gpu`` stage,
written down as data that backends/gpu/loader.py executes without MLIR.

The host code allocates and frees device buffers, copies them, takes views of them and
launches kernels, inside ``scf.for``/``scf.while``/``scf.if`` whose predicates are host values:
a few bytes copied from device memory (`mlax-gpu-host-reads`), ownership bits of the
deallocation bookkeeping, comparisons of buffer addresses. The plan has:

- ``buffers``: slots holding a device pointer each: input, output, constant and temporary
  buffers (shape, dtype, bytes), and ``value`` slots set by steps (a loop's carried buffer, an
  ``scf.if`` result, a view at an offset computed at run time, which holds the view's start);
- ``registers``: how many host scalars (integers, bools as 0/1) the steps compute;
- ``steps``: ``alloc``/``free`` (a temporary's allocation), ``copy`` (byte offsets), ``launch``
  (arguments: a slot, ``[type, value]`` for a constant, ``{"register": k, "type": t}`` for a
  host scalar), ``set`` (``dst = fn(args)``, fn one of gpu_loader.FUNCTIONS, each argument
  ``["c", value]`` or ``["r", register]``), ``pointer`` (a slot's address into a register),
  ``read`` (a few bytes of device memory into a register: a predicate), ``view`` (a slot set to
  another's pointer plus a byte offset), ``move`` (a parallel assignment of slots and
  registers: loop carries, branch results), ``loop`` (``iv``, ``lower``, ``upper``, ``step``,
  ``body``), ``while`` (``before``, ``predicate``, ``after``) and ``if`` (``predicate``,
  ``then``, ``else``).

Host code outside this (an op the plan does not know, a dynamically sized buffer) is refused
with a NotImplementedError naming the op at its location.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from mlir import ir

from mlax.backends.gpu.loader import FORMAT, FUNCTIONS, SCALARS, VERSION
from mlax.dialect import dtypes
from mlax.dialect.tensor_spec import TensorSpec

_VIEWS = ("memref.expand_shape", "memref.collapse_shape", "memref.cast", "memref.reinterpret_cast",
          "memref.subview")
# arith op (cmpi predicate) -> the loader's function; trunci/extsi carry the width as a second argument.
_ARITH = {"arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul", "arith.andi": "and",
          "arith.ori": "or", "arith.xori": "xor", "arith.divsi": "div", "arith.remsi": "rem",
          "arith.minsi": "min", "arith.maxsi": "max", "arith.select": "select", "arith.index_cast": "copy",
          "arith.index_castui": "copy", "arith.extui": "copy", "arith.trunci": "trunc", "arith.extsi": "sext"}
_CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
Operand = list[Any]  # ["c", value] or ["r", register]


def where(op: ir.Operation) -> str:
    """``file:line:col: error: `` for the op's (first) source location, as mlax's errors read."""
    found = re.search(r'"([^"]+)":(\d+):(\d+)', str(op.location))
    return f"{found.group(1)}:{found.group(2)}:{found.group(3)}: error: " if found else ""


def refuse(op: ir.Operation, why: str) -> NotImplementedError:
    return NotImplementedError(f"{where(op)}the GPU artifact cannot express {op.name} in host code: {why}; "
                               'run the program with jit(f, backend="gpu") or backend="xla" instead')


def _itemsize(memref: ir.MemRefType) -> int:
    return dtypes.from_mlir(memref.element_type).itemsize


def _nbytes(memref: ir.MemRefType) -> int:
    return int(np.prod(memref.shape, dtype=np.int64)) * _itemsize(memref)


def _dynamic(number: int) -> bool:
    return number == ir.ShapedType.get_dynamic_stride_or_offset()


def _kind(value_type: ir.Type) -> str:
    """The loader's scalar type of a host value passed to a kernel (index is i64)."""
    return "i64" if str(value_type) == "index" else str(value_type)


def _global_array(module: ir.Module, op: ir.Operation) -> np.ndarray:
    name = ir.FlatSymbolRefAttr(op.attributes["name"]).value
    memref = ir.MemRefType(op.results[0].type)
    found = next(g for g in module.body.operations
                 if g.operation.name == "memref.global" and g.sym_name.value == name)
    values = ir.DenseElementsAttr(found.attributes["initial_value"])
    dtype = dtypes.from_mlir(memref.element_type)
    if values.is_splat:
        return np.full(memref.shape, np.asarray(values.get_splat_value().value, dtype), dtype)
    return np.array(values).astype(dtype, copy=False).reshape(memref.shape)


def _kernel_of(launch: ir.Operation) -> tuple[str, str]:
    """(gpu.module name, kernel name) of a ``gpu.launch_func``: ``@module::@kernel``."""
    module, kernel = re.fullmatch(r'@"?([^":]+)"?::@"?([^"]+)"?', str(launch.attributes["kernel"])).groups()
    return module, kernel


class _Plan:
    """The plan under construction: slots, registers, constant arrays."""

    def __init__(self, module: ir.Module) -> None:
        self.module = module
        self.buffers: list[dict[str, Any]] = []
        self.where: dict[ir.Value, tuple[int, int]] = {}  # buffer value -> (slot, byte offset of its start)
        self.starts: set[int] = set()  # value slots holding a view's start, not an allocation's
        self.scalars: dict[ir.Value, Operand] = {}
        self.registers = 0
        self.host: dict[ir.Value, int] = {}  # a host memref.alloca -> the register of its element
        self.constants: list[np.ndarray] = []
        self.carried: set[ir.Value] = set()  # names of carries (loop arguments and results, branch results)
        # Allocations: a deallocation or an address comparison needs a slot holding one, which a
        # slice never does and a carry does if every buffer moved into it does (checked at the end).
        self.slices: set[int] = set()
        self.moved: dict[int, list[tuple[int, int]]] = {}  # carry slot -> (slot, byte offset) moved in
        self.needs_allocation: dict[int, ir.Operation] = {}

    def slot(self, value: ir.Value, kind: str, dtype: Any, **extra: Any) -> int:
        memref = ir.MemRefType(value.type)
        if not memref.has_static_shape:
            raise refuse(value.owner if not isinstance(value.owner, ir.Block) else value.owner.owner,
                         "a dynamically sized buffer")
        self.buffers.append({"kind": kind, "shape": list(memref.shape), "dtype": np.dtype(dtype).name,
                             "nbytes": _nbytes(memref), **extra})
        self.where[value] = (len(self.buffers) - 1, 0)
        return len(self.buffers) - 1

    def register(self, value: ir.Value) -> int:
        self.registers += 1
        self.scalars[value] = ["r", self.registers - 1]
        return self.registers - 1

    def operand(self, op: ir.Operation, value: ir.Value) -> Operand:
        if value not in self.scalars:
            raise refuse(op, f"a host value of type {value.type} that the plan does not compute")
        return self.scalars[value]

    def buffer(self, op: ir.Operation, value: ir.Value) -> tuple[int, int]:
        if value not in self.where:
            raise refuse(op, f"a buffer ({value.type}) that the plan does not know")
        return self.where[value]

    def carries(self, op: ir.Operation, values: list[ir.Value], aliases: list[list[ir.Value]]) -> None:
        """Slots or registers for the values a loop or branch hands on (``aliases``: the block
        arguments and results that name the same carry)."""
        for i, value in enumerate(values):
            if isinstance(value.type, ir.MemRefType):
                memref = ir.MemRefType(value.type)
                element = dtypes.from_mlir(memref.element_type)
                slot = self.slot(value, "value", element)
                if _dynamic(memref.get_strides_and_offset()[1]):
                    self.starts.add(slot)
                elif memref.get_strides_and_offset()[1] != 0:
                    raise refuse(op, f"a carried view at a static offset ({memref})")
                for alias in aliases:
                    self.where[alias[i]] = (slot, 0)
                    self.carried.add(alias[i])
            else:
                register = self.register(value)
                for alias in aliases:
                    self.scalars[alias[i]] = ["r", register]

    def move(self, op: ir.Operation, targets: list[ir.Value], sources: list[ir.Value]) -> dict[str, Any]:
        """A parallel assignment of ``sources`` to the carries ``targets``."""
        buffers, registers = [], []
        for target, source in zip(targets, sources, strict=True):
            if isinstance(target.type, ir.MemRefType):
                slot, offset = self.buffer(op, source)
                if offset and self.where[target][0] not in self.starts:
                    raise refuse(op, "a view at an offset handed on as a whole buffer")
                if not self.contiguous(source):  # copies take carries of dynamic layouts as contiguous
                    raise refuse(op, f"a strided view handed on ({source.type})")
                buffers.append([self.where[target][0], slot, offset])
                self.moved.setdefault(self.where[target][0], []).append((slot, offset))
            else:
                registers.append([self.scalars[target][1], self.operand(op, source)])
        return {"op": "move", "buffers": buffers, "registers": registers}

    def block(self, block: ir.Block, carries: list[ir.Value] | None = None) -> list[dict[str, Any]]:
        """The steps of ``block``; its terminator's operands are moved into ``carries``."""
        steps: list[dict[str, Any]] = []
        for op in (o.operation for o in block.operations):
            if op.name in ("scf.yield", "scf.condition", "func.return"):
                values = list(op.operands)[1:] if op.name == "scf.condition" else list(op.operands)
                if carries:
                    steps.append(self.move(op, carries, values))
            else:
                self.op(op, steps)
        return steps

    def op(self, op: ir.Operation, steps: list[dict[str, Any]]) -> None:  # noqa: C901 - one case per op
        name = op.name
        if name == "arith.constant":
            attribute = op.attributes["value"]
            if isinstance(attribute, ir.BoolAttr):
                self.scalars[op.results[0]] = ["c", int(attribute.value)]
            elif isinstance(attribute, ir.IntegerAttr | ir.FloatAttr):
                value = attribute.value
                self.scalars[op.results[0]] = ["c", value & 1 if str(op.results[0].type) == "i1" else value]
        elif name in _ARITH or name == "arith.cmpi":
            self.arith(op, steps)
        elif name == "memref.get_global":
            self.constants.append(_global_array(self.module, op))
            self.slot(op.results[0], "constant", self.constants[-1].dtype, constant=len(self.constants) - 1)
        elif name == "memref.alloca":
            self.host[op.results[0]] = self.registers
            self.registers += 1
        elif name == "memref.load" and op.operands[0] in self.host:
            self.scalars[op.results[0]] = ["r", self.host[op.operands[0]]]
        elif name == "gpu.alloc":
            if len(op.operands):
                raise refuse(op, "a dynamically sized or asynchronous allocation")
            element = dtypes.from_mlir(ir.MemRefType(op.results[0].type).element_type)
            steps.append({"op": "alloc", "buffer": self.slot(op.results[0], "temporary", element)})
        elif name == "gpu.dealloc":
            steps.append({"op": "free", "buffer": self.allocation(op, op.operands[-1])})
        elif name == "gpu.memcpy":
            self.memcpy(op, steps)
        elif name in _VIEWS:
            self.view(op, steps)
        elif name == "memref.extract_strided_metadata":
            self.metadata(op)
        elif name == "memref.extract_aligned_pointer_as_index":
            slot = self.allocation(op, op.operands[0])
            steps.append({"op": "pointer", "dst": self.register(op.results[0]), "buffer": slot})
        elif name == "gpu.launch_func":
            steps.append(self.launch(op))
        elif name in ("scf.for", "scf.while", "scf.if"):
            self.control(op, steps)
        else:
            raise refuse(op, "the plan has device allocations, copies, views, kernel launches, loops, "
                             "branches and integer arithmetic")

    def arith(self, op: ir.Operation, steps: list[dict[str, Any]]) -> None:
        if op.name == "arith.cmpi":
            function = _CMPI[ir.IntegerAttr(op.attributes["predicate"]).value]
        else:
            function = _ARITH[op.name]
        args = [self.operand(op, v) for v in op.operands]
        if function in ("trunc", "sext"):
            width = str(op.results[0].type if function == "trunc" else op.operands[0].type)
            args.append(["c", 64 if width == "index" else int(width[1:])])
        if all(kind == "c" for kind, _ in args):  # folded here: bookkeeping on constants
            self.scalars[op.results[0]] = ["c", FUNCTIONS[function](*(v for _, v in args))]
            return
        steps.append({"op": "set", "dst": self.register(op.results[0]), "fn": function, "args": args})

    def memcpy(self, op: ir.Operation, steps: list[dict[str, Any]]) -> None:
        dst, src = op.operands[-2], op.operands[-1]
        slot, offset = self.buffer(op, src)
        if dst in self.host:  # a predicate or index read by host code
            steps.append({"op": "read", "dst": self.host[dst], "buffer": slot, "offset": offset,
                          "dtype": np.dtype(dtypes.from_mlir(ir.MemRefType(src.type).element_type)).name})
            return
        for value in (dst, src):
            if not self.contiguous(value):
                raise refuse(op, f"a copy of a strided view ({value.type})")
        target, target_offset = self.buffer(op, dst)
        steps.append({"op": "copy", "dst": target, "dst_offset": target_offset, "src": slot,
                      "src_offset": offset, "nbytes": _nbytes(ir.MemRefType(src.type))})

    def view(self, op: ir.Operation, steps: list[dict[str, Any]]) -> None:
        source, result = op.operands[0], op.results[0]
        slot, offset = self.buffer(op, source)
        memref = ir.MemRefType(result.type)
        if not memref.has_static_shape:
            raise refuse(op, "a view with dynamic sizes")
        strides, result_offset = memref.get_strides_and_offset()
        if not _dynamic(result_offset):  # the offset is in the view's type
            self.where[result] = (slot, offset if slot in self.starts else result_offset * _itemsize(memref))
            return
        if op.name in ("memref.cast", "memref.expand_shape", "memref.collapse_shape"):  # the same start
            self.where[result] = (slot, offset)
            return
        if op.name != "memref.subview" or slot not in self.starts and any(map(_dynamic, strides)):
            raise refuse(op, "a view at an offset computed at run time other than a subview")
        self.subview(op, steps, slot, offset)

    def subview(self, op: ir.Operation, steps: list[dict[str, Any]], slot: int, offset: int) -> None:
        """A slice at run-time offsets: a value slot set to the source's start plus the bytes."""
        source = ir.MemRefType(op.operands[0].type)
        source_strides, source_offset = source.get_strides_and_offset()
        if any(map(_dynamic, source_strides)):
            raise refuse(op, "a slice of a view with dynamic strides")
        itemsize = _itemsize(source)
        total: Operand = ["c", offset if slot in self.starts else source_offset * itemsize]
        dynamic = iter(op.opview.offsets)
        for static, stride in zip(op.opview.static_offsets, source_strides, strict=True):
            index = self.operand(op, next(dynamic)) if _dynamic(static) else ["c", static]
            for function, argument in (("mul", ["c", stride * itemsize]), ("add", total)):
                if index[0] == "c" and argument[0] == "c":
                    index = ["c", FUNCTIONS[function](index[1], argument[1])]
                else:
                    register = self.registers
                    self.registers += 1
                    steps.append({"op": "set", "dst": register, "fn": function, "args": [index, argument]})
                    index = ["r", register]
            total = index
        element = dtypes.from_mlir(source.element_type)
        view = self.slot(op.results[0], "value", element)
        self.starts.add(view)
        self.slices.add(view)
        steps.append({"op": "view", "dst": view, "src": slot, "offset": total})

    def contiguous(self, value: ir.Value) -> bool:
        """Whether a copy may read or write ``value`` as one run of bytes: row-major strides; a
        cast to a dynamic layout is as contiguous as its source, a carry as what is moved in."""
        memref = ir.MemRefType(value.type)
        strides, _ = memref.get_strides_and_offset()
        if any(map(_dynamic, strides)):
            owner = value.owner
            cast = not isinstance(owner, ir.Block) and owner.operation.name == "memref.cast"
            return value in self.carried or cast and self.contiguous(owner.operation.operands[0])
        expected = [int(np.prod(memref.shape[i + 1:], dtype=np.int64)) for i in range(memref.rank)]
        return all(s == e for s, e, n in zip(strides, expected, memref.shape, strict=True) if n != 1)

    def allocation(self, op: ir.Operation, value: ir.Value) -> int:
        """The slot of ``value``, which ``op`` needs to hold an allocation (not a view into one)."""
        slot, offset = self.buffer(op, value)
        if offset or slot in self.slices:
            raise refuse(op, "the allocation of a view")
        self.needs_allocation.setdefault(slot, op)
        return slot

    def check_allocations(self) -> None:
        """Refuse a deallocation or address of a carry that may hold a view (a slice moved in)."""
        views = set(self.slices)
        while grown := {carry for carry, sources in self.moved.items() if carry not in views
                        and any(offset or slot in views for slot, offset in sources)}:
            views |= grown
        for slot, op in self.needs_allocation.items():
            if slot in views:
                raise refuse(op, "the allocation of a view")

    def metadata(self, op: ir.Operation) -> None:
        """``extract_strided_metadata``: its base buffer (for a deallocation, a kernel argument)
        and static numbers; a carry's buffer is its own base, contiguous (checked by `move`)."""
        source = op.operands[0]
        slot, _ = self.buffer(op, source)
        memref = ir.MemRefType(source.type)
        strides, offset = memref.get_strides_and_offset()
        if source in self.carried:
            offset = 0
            strides = [int(np.prod(memref.shape[i + 1:], dtype=np.int64)) for i in range(memref.rank)]
        if slot not in self.slices:
            self.where[op.results[0]] = (slot, 0)
        for value, number in zip(list(op.results)[1:], [offset, *memref.shape, *strides], strict=True):
            if not _dynamic(number):
                self.scalars[value] = ["c", number]

    def launch(self, op: ir.Operation) -> dict[str, Any]:
        launch = op.opview
        if len(launch.asyncDependencies) or launch.clusterSizeX is not None:
            raise refuse(op, "an asynchronous or clustered launch")

        def constant(value: ir.Value) -> int:
            found = self.scalars.get(value)
            if found is None or found[0] != "c":
                raise refuse(op, "a grid or block size computed at run time")
            return int(found[1])

        arguments: list[Any] = []
        for value in launch.kernelOperands:
            if isinstance(value.type, ir.MemRefType):
                arguments.append(self.buffer(op, value)[0])
                continue
            kind, found = _kind(value.type), self.operand(op, value)
            if kind not in SCALARS:
                raise refuse(op, f"a kernel argument of type {kind}")
            arguments.append([kind, found[1]] if found[0] == "c" else {"register": found[1], "type": kind})
        module, kernel = _kernel_of(op)
        shared = launch.dynamicSharedMemorySize
        return {"op": "launch", "module_name": module, "kernel": kernel,
                "grid": [constant(v) for v in (launch.gridSizeX, launch.gridSizeY, launch.gridSizeZ)],
                "block": [constant(v) for v in (launch.blockSizeX, launch.blockSizeY, launch.blockSizeZ)],
                "shared": 0 if shared is None else constant(shared), "args": arguments}

    def control(self, op: ir.Operation, steps: list[dict[str, Any]]) -> None:
        """``scf.for``, ``scf.while`` and ``scf.if``: carries first set by a move, then the step."""
        results = list(op.results)
        if op.name == "scf.for":
            body = op.regions[0].blocks[0]
            arguments = list(body.arguments)
            lower, upper, step = (self.operand(op, v) for v in list(op.operands)[:3])
            self.carries(op, results, [arguments[1:], results])
            steps.append(self.move(op, results, list(op.operands)[3:]))
            iv = self.register(arguments[0])
            steps.append({"op": "loop", "iv": iv, "lower": lower, "upper": upper, "step": step,
                          "body": self.block(body, results)})
        elif op.name == "scf.while":
            before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
            self.carries(op, list(before.arguments), [list(before.arguments)])
            self.carries(op, results, [list(after.arguments), results])
            steps.append(self.move(op, list(before.arguments), list(op.operands)))
            before_steps = self.block(before, results)
            condition = before.operations[len(before.operations) - 1]
            predicate = self.operand(op, condition.operands[0])
            steps.append({"op": "while", "before": before_steps, "predicate": predicate,
                          "after": self.block(after, list(before.arguments))})
        else:
            self.carries(op, results, [results])
            predicate = self.operand(op, op.operands[0])
            branches = [self.block(region.blocks[0], results) if len(region.blocks) else []
                        for region in op.regions]
            steps.append({"op": "if", "predicate": predicate, "then": branches[0], "else": branches[1]})


def launch_plan(module: ir.Module, entry: str, inputs: list[TensorSpec],
                outputs: list[TensorSpec]) -> tuple[dict[str, Any], list[np.ndarray]]:
    """The plan of ``entry``'s host code at the end of the ``gpu`` stage, and its constant
    arrays. ``inputs``/``outputs`` are the user's types (a bool buffer holds bytes)."""
    function = next(op for op in module.body.operations
                    if op.operation.name == "func.func" and op.sym_name.value == entry)
    block = function.regions[0].blocks[0]
    if len(block.arguments) != len(inputs) + len(outputs):
        raise ValueError(f"@{entry} has {len(block.arguments)} buffers, expected {len(inputs)} inputs "
                         f"and {len(outputs)} outputs")
    plan = _Plan(module)
    for i, (argument, spec) in enumerate(zip(block.arguments, [*inputs, *outputs], strict=True)):
        plan.slot(argument, "input" if i < len(inputs) else "output", spec.dtype)
    steps = plan.block(block)
    plan.check_allocations()
    return ({"format": FORMAT, "version": VERSION, "entry": entry, "buffers": plan.buffers,
             "registers": plan.registers, "constants": len(plan.constants), "steps": steps}, plan.constants)
