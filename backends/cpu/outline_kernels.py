"""`mlax-outline-kernels`: each kernel becomes a function; one that recurs, one function compiled once.

A training step repeats its kernels: the same layer norm and GELU in every layer, the same
AdamW update for every parameter of one shape (a 4-layer decoder's step has 682 linalg ops of
about 107 kinds). After bufferization each is a loop nest of the entry function, and LLVM's O3,
three quarters of a first call, optimizes and generates code for every copy. This pass, the
last of the `buffers` stage, gives each linalg op whose buffers have static shapes a private
function of its operands, with the constants its body reads cloned in; ops whose functions
print the same (and whose buffers alias alike) share the first one and become calls of it. An
operand that is a static view of a buffer (a subview or reshape without dynamic operands: the
bare-pointer convention passes identity layouts only) is passed as that buffer, the view rebuilt
inside the function. A kernel that occurs once becomes a function too: LLVM's loop passes cost
more than linearly in the loops of one function (IndVarSimplify took 14 s of O3 on the entry of
a 6-layer MLP's gradient whose 235 once-only loops stayed inline; 0.1 s per kernel apart).

The functions are ``noinline`` (LLVM would inline them back and compile every copy again), and
each buffer argument that is a distinct buffer at the calls (its root, through reshaping
views, is an allocation or an entry argument that no other operand shares) is ``noalias``, as
it was inline, so the loops vectorize without runtime alias checks.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import ops_outside_linalg

KERNEL_PREFIX = "mlax_kernel"
_VIEWS = ("memref.collapse_shape", "memref.expand_shape", "memref.reshape", "memref.cast", "memref.subview")
_STATIC_VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast")
_DISTINCT_ROOTS = ("memref.alloc", "memref.alloca")


def _identity_buffer(t: ir.Type) -> bool:
    return isinstance(t, ir.MemRefType) and t.has_static_shape and isinstance(t.layout, ir.AffineMapAttr) \
        and t.affine_map == ir.AffineMap.get_identity(t.rank)


def _plain_buffer(value: ir.Value) -> bool:
    """An identity-layout buffer that is not a cast of a strided one (canonicalize would fold such a
    cast into the call, which then passes a strided view to a function of plain buffers)."""
    if isinstance(value, ir.OpResult) and value.owner.name == "memref.cast":
        return _identity_buffer(value.owner.operands[0].type)
    return _identity_buffer(value.type)


def _static_view(value: ir.Value) -> tuple[ir.Value, list[ir.Operation]] | None:
    """The plain buffer ``value`` is a view of through subviews and reshapes without dynamic
    operands, and those view ops, root first (none for a plain buffer); None if there is none."""
    chain: list[ir.Operation] = []
    while not _plain_buffer(value):
        if not isinstance(value, ir.OpResult) or value.owner.name not in _STATIC_VIEWS \
                or len(value.owner.operands) != 1:
            return None
        chain.append(value.owner)
        value = value.owner.operands[0]
    return value, chain[::-1]


def _passed(value: ir.Value) -> ir.Value:
    """What a call passes for the operand ``value``: the plain buffer it views, or itself."""
    return _static_view(value)[0] if isinstance(value.type, ir.MemRefType) else value


def _outlinable(op: ir.Operation) -> bool:
    """A linalg op on buffers whose operands are plain buffers or static views of them (the view
    is rebuilt inside the function: the bare-pointer convention passes identity layouts only),
    and whose body reads only plain buffers."""
    if not (op.name.startswith("linalg.") and len(op.results) == 0 and op.regions):
        return False
    return all(not isinstance(v.type, ir.MemRefType) or _static_view(v) is not None for v in op.operands) \
        and all(_plain_buffer(v) or not isinstance(v.type, ir.MemRefType) for v in _captured(op))


def _root(value: ir.Value) -> ir.Value:
    while isinstance(value, ir.OpResult) and value.owner.name in _VIEWS:
        value = value.owner.operands[0]
    return value


def _distinct(root: ir.Value) -> bool:
    """Whether ``root`` is a buffer no other root can alias: an allocation, or an argument of a
    function that says so (the entry's are ``llvm.noalias``)."""
    if isinstance(root, ir.OpResult):
        return root.owner.name in _DISTINCT_ROOTS
    owner = root.owner.owner.operation if isinstance(root, ir.BlockArgument) else None
    if owner is None or owner.name != "func.func" or "arg_attrs" not in owner.attributes:
        return False
    attributes = ir.DictAttr(ir.ArrayAttr(owner.attributes["arg_attrs"])[root.arg_number])
    return "llvm.noalias" in attributes


def _aliasing(operands: list[ir.Value]) -> tuple[bool, ...]:
    """For each operand, whether it is a buffer that no other operand of the op can alias."""
    roots = [_root(v) if isinstance(v.type, ir.MemRefType) else None for v in operands]
    buffers = [r for r in roots if r is not None]
    return tuple(r is not None and _distinct(r) and sum(r == other for other in buffers) == 1 for r in roots)


def _nested(op: ir.Operation) -> list[ir.Operation]:
    """``op`` and the ops of its regions, in pre-order."""
    found: list[ir.Operation] = []
    op.walk(lambda inner: found.append(inner.operation) or ir.WalkResult.ADVANCE, ir.WalkOrder.PRE_ORDER)
    return found


def _captured(op: ir.Operation) -> list[ir.Value]:
    """The values defined outside ``op`` that the ops of its regions read, in order of first use."""
    nested = _nested(op)
    inside = set(nested)
    found: dict[ir.Value, None] = {}
    for inner in nested[1:]:
        for value in inner.operands:
            owner = (value.owner if isinstance(value, ir.OpResult) else value.owner.owner).operation
            if owner not in inside:
                found.setdefault(value)
    return list(found)


def _is_constant(value: ir.Value) -> bool:
    return isinstance(value, ir.OpResult) and value.owner.name == "arith.constant"


def _attributes(op: ir.Operation) -> tuple[tuple[str, str], ...]:
    attributes = op.attributes
    return tuple((name, str(attributes[name])) for name in attributes)


def _signature(op: ir.Operation) -> tuple[object, ...]:
    """What makes two linalg ops the same kernel, read off the IR: the op's attributes and
    operand types; each op of its body with its attributes, result types and what each of its
    operands is (an argument of a block of the body, a result of an earlier op of the body, or
    the k-th value read from outside); the constants and types of those outside values; and
    which of its buffers may alias."""
    codes: dict[ir.Value, tuple[object, ...]] = {}
    outside: dict[ir.Value, int] = {}
    body: list[object] = []
    for index, inner in enumerate(_nested(op)):
        for region_index, region in enumerate(inner.regions):
            for block_index, block in enumerate(region.blocks):
                for argument in block.arguments:
                    codes[argument] = ("block", index, region_index, block_index, argument.arg_number,
                                       str(argument.type))
        if index == 0:
            continue
        operands = tuple(codes.get(v) or ("outside", outside.setdefault(v, len(outside)))
                         for v in inner.operands)
        for result in inner.results:
            codes[result] = ("result", index, result.result_number)
        body.append((inner.name, operands, tuple(str(r.type) for r in inner.results), _attributes(inner)))
    read = tuple(str(v.owner.attributes["value"]) if _is_constant(v) else str(v.type) for v in outside)
    head = (op.name, _attributes(op), tuple(str(v.type) for v in op.operands))
    views = tuple(tuple((view.name, _attributes(view), str(view.operands[0].type))
                        for view in _static_view(v)[1]) if isinstance(v.type, ir.MemRefType) else ()
                  for v in op.operands)
    return head, views, tuple(body), read, _aliasing(list(op.operands))


@dataclass
class _Kernel:
    op: ir.Operation
    arguments: list[ir.Value]  # the operands (or the buffers they view), then what the body reads
    function: ir.Operation
    aliasing: tuple[bool, ...]


def _build(op: ir.Operation, module_body: ir.Block, name: str) -> _Kernel:
    """A private function named ``name`` computing what ``op`` computes, on its arguments."""
    arguments = _arguments(op)
    function_type = ir.FunctionType.get([v.type for v in arguments], [])
    with op.location, ir.InsertionPoint(module_body):
        function = func.FuncOp(name, function_type, visibility="private")
        block = function.add_entry_block()
    replacement = dict(zip(arguments, block.arguments, strict=True))
    with ir.InsertionPoint(block):
        for constant in (v for v in _captured(op) if _is_constant(v)):
            replacement[constant] = constant.owner.clone().results[0]
        for operand in op.operands:
            for view in _static_view(operand)[1] if isinstance(operand.type, ir.MemRefType) else ():
                if view.results[0] not in replacement:
                    copy = view.clone()
                    copy.operands[0] = replacement[view.operands[0]]
                    replacement[view.results[0]] = copy.results[0]
        clone = op.clone()
        with op.location:
            func.ReturnOp([])
    for index, value in enumerate(op.operands):
        clone.operands[index] = replacement[value]

    def rewire(inner: ir.Operation) -> ir.WalkResult:
        for index, value in enumerate(inner.operands):
            if value in replacement and inner != clone:
                inner.operands[index] = replacement[value]
        return ir.WalkResult.ADVANCE

    clone.walk(rewire)
    return _Kernel(op, arguments, function.operation, _aliasing(list(op.operands)))


def _arguments(op: ir.Operation) -> list[ir.Value]:
    """The values a call of ``op``'s kernel passes: its operands (or the buffers they view), then the
    non-constant values its body reads."""
    return [_passed(v) for v in op.operands] + [v for v in _captured(op) if not _is_constant(v)]


@register_pass
@dataclass
class OutlineKernels(ModulePass):
    """Make each recurring linalg op on buffers one noinline function, called where it occurs."""

    argument = "mlax-outline-kernels"
    sees_mlax_ops = False
    summary = "outline recurring linalg ops on buffers into shared noinline functions (compiled once)"

    def run(self, module: ir.Operation) -> None:
        body = module.regions[0].blocks[0]
        taken = {ir.StringAttr(op.attributes["sym_name"]).value for op in body.operations
                 if "sym_name" in op.attributes}
        names = (name for k in range(1 << 30) if (name := f"{KERNEL_PREFIX}_{k}") not in taken)
        ops = [inner.operation for op in body.operations if op.operation.name == "func.func"
               for inner in ops_outside_linalg(op.operation) if inner.name.startswith("linalg.")]
        groups: dict[tuple[object, ...], list[ir.Operation]] = defaultdict(list)
        for op in ops:
            if _outlinable(op):
                groups[_signature(op)].append(op)
        for same in groups.values():
            first = _build(same[0], body, next(names))
            first.function.attributes["passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("noinline")])
            noalias = [*first.aliasing, *[False] * (len(first.arguments) - len(first.aliasing))]
            marked = [{"llvm.noalias": ir.UnitAttr.get()} if distinct else {} for distinct in noalias]
            first.function.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(m) for m in marked])
            name = ir.StringAttr(first.function.attributes["sym_name"]).value
            for op in same:
                with op.location:
                    func.CallOp([], name, _arguments(op), ip=ir.InsertionPoint(op))
                views = {view: None for v in op.operands if isinstance(v.type, ir.MemRefType)
                         for view in _static_view(v)[1]}
                op.erase()
                for view in reversed(views):  # the views only the kernel read, now rebuilt inside it
                    if not list(view.results[0].uses):
                        view.erase()
