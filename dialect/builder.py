"""Build mlax ops: check operands, infer result types, attach attributes and a location."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir

from mlax.dialect.attrs import dense_attribute, dense_to_numpy, from_attribute, to_attribute
from mlax.dialect.registry import OpDef, get_op, infer_results
from mlax.dialect.tensor_spec import TensorSpec


def check_arity(op: OpDef, count: int) -> None:
    fixed = sum(not p.variadic for p in op.operands)
    if any(p.variadic for p in op.operands):
        if count < fixed:
            raise TypeError(f"{op.full_name} takes at least {fixed} operands, got {count}")
    elif count != fixed:
        raise TypeError(f"{op.full_name} takes {fixed} operands, got {count}")


def check_attributes(op: OpDef, attrs: dict[str, Any]) -> None:
    missing = [a for a in op.attributes if a not in attrs and a not in op.defaults]
    extra = [a for a in attrs if a not in op.attributes]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing attribute(s) {', '.join(missing)}")
        if extra:
            parts.append(f"unknown attribute(s) {', '.join(extra)}")
        raise TypeError(f"{op.full_name}: {'; '.join(parts)}")


def infer(op_name: str, specs: Sequence[TensorSpec], attrs: dict[str, Any]) -> tuple[TensorSpec, ...]:
    """Result specs of ``op_name`` applied to ``specs``; raises TypeError/ValueError naming the op."""
    op = get_op(op_name)
    check_arity(op, len(specs))
    check_attributes(op, attrs)
    return infer_results(op, list(specs), attrs)


def build(
    op_name: str,
    operands: Sequence[ir.Value],
    attrs: dict[str, Any] | None = None,
    loc: ir.Location | None = None,
) -> list[ir.Value]:
    """Create ``op_name`` at the current insertion point and return its results."""
    op = get_op(op_name)
    attrs = dict(attrs or {})
    results = infer(op_name, [TensorSpec.from_mlir(v.type) for v in operands], attrs)
    operation = ir.Operation.create(
        op.full_name,
        results=[r.to_mlir() for r in results],
        operands=list(operands),
        attributes={k: to_attribute(kind, attrs[k]) for k, kind in op.attributes.items()
                    if k in attrs and not (k in op.defaults and _equal(attrs[k], op.defaults[k]))},
        loc=loc,
    )
    return list(operation.results)


def _equal(value: Any, default: Any) -> bool:
    """Whether an optional attribute's value is its default (lists and tuples alike)."""
    if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
        return tuple(value) == tuple(default)
    return bool(value == default)


def read_attributes(operation: ir.Operation) -> dict[str, Any]:
    """The Python values of an mlax op's attributes, as its rules expect them (an absent optional
    attribute reads as its default)."""
    op = get_op(operation.name)
    return {k: op.defaults[k] if k in op.defaults and k not in operation.attributes
            else dense_to_numpy(dense_attribute(operation, k)) if kind == "dense"
            else from_attribute(kind, operation.attributes[k]) for k, kind in op.attributes.items()}
