"""Module verification, run on input and between pipeline stages.

Three layers, and a fourth between stages: MLIR's verifier (IRDL checks op names, operand
counts and that ports sharing a type variable agree), the transformation declarations
(dialect/transforms.py), mlax type inference, and, with ``sharding=True`` (what `run_stage`
asks after every mlax stage), the module's mesh and the ``mlax.sharding`` attributes of its
functions (dialect/sharding.py `verify_sharding`; on input, mlax-partition reports a bad spec
itself, naming itself). Type inference: IRDL only knows that operands are tensors, so each
mlax op's result types are checked against what its inference rule gives for its operand
types and attributes. Region ops are left to IRDL (their result types depend on their
bodies). Before inference, every tensor type in the module (values, block arguments, function
signatures) must have an element type of the dialect: builtin types like ``si32`` or ``f80``
parse and pass IRDL, but no mlax rule, pass or backend can handle them.
"""

from __future__ import annotations

from typing import Any

from mlir import ir

from mlax.dialect import dtypes, infer, read_attributes
from mlax.dialect.attrs import dense_attribute
from mlax.dialect.sharding import verify_sharding
from mlax.dialect.tensor_spec import TensorSpec
from mlax.dialect.transforms import verify_transforms
from mlax.passes.diagnostics import Diagnostic, capture
from mlax.passes.walk import is_mlax, nested_ops


def op_type_problem(op: ir.Operation) -> str | None:
    """Why ``op``'s result types disagree with its inference rule, or None if they agree."""
    for value in [*op.operands, *op.results]:  # the rules read shapes as static
        if not isinstance(value.type, ir.RankedTensorType) or not value.type.has_static_shape:
            return f"has a value of type {value.type}; mlax values are tensors of static shape"
    if op.name == "mlax.constant":  # its rule would materialise the value (a splat may be huge)
        return _constant_type_problem(op)
    try:
        specs = [TensorSpec.from_mlir(v.type) for v in op.operands]
        expected = [str(s) for s in infer(op.name, specs, read_attributes(op))]
    except (TypeError, ValueError, KeyError) as error:
        return str(error).removeprefix(f"{op.name}: ")
    actual = [str(r.type) for r in op.results]
    if actual != expected:
        return f"result type(s) {', '.join(actual)} differ from the inferred {', '.join(expected)}"
    return None


def _cached_type_problem(op: ir.Operation, problems: dict[tuple[Any, ...], str | None]) -> str | None:
    """`op_type_problem`, asked once per distinct (name, types, attributes): a program repeats
    few op signatures many times (a gradient's adds and muls of one shape), and types and
    attributes are uniqued by the context, so equal keys mean identical ops to the rule."""
    if op.name == "mlax.constant":  # its own check is cheap, and its value may be complex (no key)
        return op_type_problem(op)
    key = (op.name, tuple(v.type for v in op.operands), tuple(r.type for r in op.results),
           tuple((name, op.attributes[name]) for name in op.attributes))
    if key not in problems:
        problems[key] = op_type_problem(op)
    return problems[key]


def _constant_type_problem(op: ir.Operation) -> str | None:
    result_type = op.results[0].type
    try:
        TensorSpec.from_mlir(result_type)  # before reading the value: its element type may be unsupported
        value_type = dense_attribute(op, "value").type
    except TypeError as error:
        return str(error)
    if value_type != result_type:
        return f"value has type {value_type} but the result has type {result_type}"
    return None


def _defined_types(op: ir.Operation) -> list[ir.Type]:
    """The types ``op`` brings in: its results, its blocks' arguments, a function's signature."""
    types = [r.type for r in op.results]
    types += [a.type for region in op.regions for block in region.blocks for a in block.arguments]
    if op.name == "func.func":
        signature = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        types += [*signature.inputs, *signature.results]
    return types


def _unsupported_tensor_type(types: list[ir.Type], seen: dict[ir.Type, bool] | None = None) -> ir.Type | None:
    """The first tensor type of ``types`` whose element type mlax does not support, or None
    (``seen`` remembers the answer per type: a module has few distinct types and many values)."""
    for t in types:
        supported = seen.get(t) if seen is not None else None
        if supported is None:
            supported = True
            if isinstance(t, ir.RankedTensorType | ir.UnrankedTensorType):
                try:
                    dtypes.from_mlir(ir.ShapedType(t).element_type)
                except TypeError:
                    supported = False
            if seen is not None:
                seen[t] = supported
        if not supported:
            return t
    return None


def _tensor_signature(op: ir.Operation) -> bool:
    """Whether ``op`` is a function taking or returning tensors (not yet bufferized)."""
    return op.name == "func.func" and any(
        isinstance(t, ir.RankedTensorType | ir.UnrankedTensorType) for t in _defined_types(op))


_SUPPORTED = ", ".join(dtypes.mlir_name(d) for d in dtypes.SUPPORTED_DTYPES)


def verify_module(module: ir.Operation, *, sharding: bool = False) -> list[Diagnostic]:
    """All problems of ``module`` as diagnostics (an empty list: it verifies); ``sharding`` also
    checks its mesh and sharding attributes while its functions still take tensors."""
    module = module.operation
    with capture(module.context) as found:
        try:
            module.verify()
        except ir.MLIRError:
            return found  # the verifier's diagnostics; the IR is too broken to look further
        ops = nested_ops(module)
        if not any(is_mlax(op) or _tensor_signature(op) for op in ops):
            verify_transforms(module)  # lowered past the dialect (bufferized): nothing left to type-check
            return found
        seen: dict[ir.Type, bool] = {}
        problems: dict[tuple[Any, ...], str | None] = {}
        unsupported = [_unsupported_tensor_type(_defined_types(op), seen) for op in ops]
        any_unsupported = any(t is not None for t in unsupported)
        for op, bad in zip(ops, unsupported, strict=True):
            operand_types = [v.type for v in op.operands] if any_unsupported else []
            if bad is not None:
                element = ir.ShapedType(bad).element_type
                op.location.emit_error(f"'{op.name}' op mlax does not support element type {element} "
                                       f"(in {bad}; supported: {_SUPPORTED})")
            elif _unsupported_tensor_type(operand_types, seen) is not None:
                continue  # reported where the operand is defined
            elif is_mlax(op) and not op.regions:
                problem = _cached_type_problem(op, problems)
                if problem is not None:
                    op.location.emit_error(f"'{op.name}' op {problem}")
        verify_transforms(module)
        if sharding:
            verify_sharding(module)
    return found
