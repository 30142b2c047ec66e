"""Module-level symbols passes create: library functions lowering calls into (BLAS, libm),
declared once per module, and the private helper functions the transformation passes write."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mlir import ir
from mlir.dialects import func

from mlax.dialect.transforms import JIT_NAME_ATTR, declare_transform, get_kind, read_transform
from mlax.passes.walk import nested_ops


def declare_function(module: ir.Operation, name: str, function_type: ir.FunctionType) -> None:
    """A private ``func.func`` declaration ``@name`` at the top of ``module``, unless one exists."""
    body = module.regions[0].blocks[0]
    for op in body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return
    with ir.InsertionPoint.at_block_begin(body), ir.Location.unknown():
        func.FuncOp(name, function_type, visibility="private")


# On a body-less function a pass made from another (a batched stand-in of a custom-derivative
# rule that raised when traced at its call): the symbol of the stand-in it was made from.
STAND_IN_ATTR = "mlax.stand_in_of"


def body_less_name(function: ir.Operation) -> str:
    """``@name`` of a body-less function in a pass's error, with the stand-in it was made
    from, which the front end knows the error of (pyfront/custom_derivatives.py)."""
    name = f"@{ir.StringAttr(function.attributes['sym_name']).value}"
    if STAND_IN_ATTR in function.attributes:
        name += f" (made from @{ir.StringAttr(function.attributes[STAND_IN_ATTR]).value} )"
    return name


def stand_in(module: ir.Operation, of: ir.Operation, base: str, arg_types: Sequence[ir.Type],
             result_types: Sequence[ir.Type]) -> str:
    """A body-less private function of the given type standing, as ``of`` (itself body-less)
    does, for a rule that raised: a pass that needs its body fails naming ``of``'s origin."""
    origin = of.attributes[STAND_IN_ATTR] if STAND_IN_ATTR in of.attributes else of.attributes["sym_name"]
    name = unique_name(module, base)
    with of.location, ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]):
        function = func.FuncOp(name, ir.FunctionType.get(list(arg_types), list(result_types)),
                               visibility="private")
    function.operation.attributes[STAND_IN_ATTR] = origin
    return name


def unique_name(module: ir.Operation, base: str) -> str:
    """``base``, or ``base_<k>`` for the first k that no symbol of ``module`` uses."""
    table = ir.SymbolTable(module)
    name, k = base, 0
    while name in table:
        k += 1
        name = f"{base}_{k}"
    return name


def define_function(module: ir.Operation, base: str, arg_types: Sequence[ir.Type], location: ir.Location,
                    build: Callable[[ir.InsertionPoint, list[ir.Value]], Sequence[ir.Value]]) -> str:
    """Append a private function of ``arg_types`` whose body ``build(point, arguments)`` writes
    (it returns the results); the result types follow from what it returns. Returns its name."""
    name = unique_name(module, base)
    with location, ir.InsertionPoint(module.regions[0].blocks[0]):
        function = func.FuncOp(name, ir.FunctionType.get(list(arg_types), []), visibility="private")
        block = function.add_entry_block()
    point = ir.InsertionPoint(block)
    results = list(build(point, list(block.arguments)))
    with location:
        func.ReturnOp(results, ip=point)
        function.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(arg_types), [r.type for r in results]))
    return name


# A function derived from another once per configuration (passes/autodiff/jvp.py,
# passes/batching/__init__.py): its key, and per result of the derivation whether it is present
# (a nonzero tangent) or batched.
DERIVED_KEY_ATTR = "mlax.derived"
DERIVED_FLAGS_ATTR = "mlax.derived_flags"

Derivation = Callable[[ir.InsertionPoint, list[ir.Value]], tuple[Sequence[ir.Value], Sequence[bool]]]


def shared_callee(function: ir.Operation) -> bool:
    """Whether calls of ``function`` are derived through functions written once for it (a
    nested jit's body, or a function derived from one) rather than walked in place."""
    return JIT_NAME_ATTR in function.attributes or DERIVED_KEY_ATTR in function.attributes


def find_derived(module: ir.Operation, key: str) -> tuple[ir.Operation, list[bool]] | None:
    """The function written for ``key`` (`derived_function`), with its flags, if there is one."""
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "func.func" and DERIVED_KEY_ATTR in op.attributes \
                and ir.StringAttr(op.attributes[DERIVED_KEY_ATTR]).value == key:
            return op, list(ir.DenseBoolArrayAttr(op.attributes[DERIVED_FLAGS_ATTR]))
    return None


def mark_derived(module: ir.Operation, name: str, key: str, flags: Sequence[bool]) -> ir.Operation:
    """Record on function ``name`` that it is the one written for ``key``."""
    function = ir.SymbolTable(module)[name]
    function.attributes[DERIVED_KEY_ATTR] = ir.StringAttr.get(key, function.context)
    function.attributes[DERIVED_FLAGS_ATTR] = ir.DenseBoolArrayAttr.get(list(flags), function.context)
    return function


def derived_function(module: ir.Operation, key: str, base: str, arg_types: Sequence[ir.Type],
                     location: ir.Location, build: Derivation) -> tuple[str, list[bool]]:
    """The private function ``build`` writes for ``key`` (its results, and a flag per result of
    the derivation), written the first time a key is asked for and shared afterwards: a
    function called at many sites is derived once. Returns its name and the flags."""
    found = find_derived(module, key)
    if found is not None:
        return ir.StringAttr(found[0].attributes["sym_name"]).value, found[1]
    flags: list[bool] = []

    def body(point: ir.InsertionPoint, arguments: list[ir.Value]) -> Sequence[ir.Value]:
        results, result_flags = build(point, arguments)
        flags.extend(result_flags)
        return results

    name = define_function(module, base, arg_types, location, body)
    mark_derived(module, name, key, flags)
    return name, flags


def reachable_functions(module: ir.Operation,
                        roots: list[ir.Operation] | None = None) -> list[ir.Operation]:
    """The functions ``roots`` (by default the public ones) reach, themselves included,
    through calls and declarations' symbol fields."""
    table = ir.SymbolTable(module)
    todo = list(roots) if roots is not None else [
        op for op in [o.operation for o in module.regions[0].blocks[0].operations]
        if op.name == "func.func" and "sym_visibility" not in op.attributes]
    seen = {ir.StringAttr(op.attributes["sym_name"]).value for op in todo}
    found = []
    while todo:
        function = todo.pop()
        found.append(function)
        names = []
        transform = read_transform(function)
        if transform is not None:
            for field in get_kind(transform.kind).fields:
                value = transform.fields.get(field.name)
                if field.kind in ("symbol", "symbols") and value is not None:
                    names += [value] if field.kind == "symbol" else list(value)
        names += [ir.FlatSymbolRefAttr(op.attributes["callee"]).value for op in nested_ops(function)
                  if op.name == "func.call"]
        for name in names:
            if name not in seen and name in table:
                seen.add(name)
                todo.append(table[name].operation)
    return found


@dataclass
class CallSite:
    """Where a transformation pass writes the code for one call, and how it makes the functions
    and declarations that code calls (autodiff and batching of control flow share it)."""

    module: ir.Operation
    point: ir.InsertionPoint
    location: ir.Location
    lookup: Callable[[str], ir.Operation]  # resolves declarations on demand (expand_transforms)

    def call(self, name: str, operands: Sequence[ir.Value],
             point: ir.InsertionPoint | None = None) -> list[ir.Value]:
        results = ir.FunctionType(ir.TypeAttr(self.lookup(name).attributes["function_type"]).value).results
        with self.location:
            return list(func.CallOp(list(results), name, list(operands), ip=point or self.point).results)

    def declare(self, kind: str, base: str, **fields: Any) -> str:
        """A new ``mlax.<kind>`` declaration named after ``base``; a transformation is resolved
        (given its body) right away, since nothing else would look it up."""
        name = unique_name(self.module, f"{base}_{kind}")
        declare_transform(self.module, kind, name, loc=self.location, **fields)
        self.lookup(name)
        return name
