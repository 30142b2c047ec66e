"""User primitive declarations: `mlax.user_primitive`, a primitive defined with jax's extension
API (``jax.extend.core.Primitive`` and its rule tables), called from a program.

Like a host callback (dialect/callbacks.py), it is a body-less private function whose type is
the primitive's operand and result types; programs call it with `func.call`:

    func.func private @multiply_add_prim(tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
        attributes {mlax.user_primitive = {id = 3 : i64, name = "multiply_add"}}

``id`` keys the process's table of bound primitives (mlax.passes.user_primitives), which holds
the primitive and its parameters (any Python objects); ``name`` is the primitive's, for
messages. The passes use the primitive's own rules at its calls (jvp, transpose, batching) and
`mlax-expand-transforms` finally gives each declaration a body: its lowering traced into mlax
ops. A module printed and read by another process names an id that process does not have.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir
from mlir.dialects import func

from mlax.dialect.attrs import to_attribute
from mlax.dialect.transforms import (
    KINDS,
    DeclarationError,
    FunctionTypes,
    Signature,
    Transform,
    make_kind,
    read_kind,
)

USER_PRIMITIVE_KIND = "user_primitive"
ATTR = f"mlax.{USER_PRIMITIVE_KIND}"


def _user_primitive(values: dict[str, Any], types: FunctionTypes) -> dict[str, Signature]:
    """The declaration's type is the primitive's (from its abstract evaluation): nothing imposed."""
    if values["id"] < 0:
        raise DeclarationError(f"id must be >= 0, got {values['id']}")
    return {}


KINDS[USER_PRIMITIVE_KIND] = make_kind(
    USER_PRIMITIVE_KIND,
    "id: i64, name: str",
    _user_primitive,
    "any operand and result types: a primitive of jax's extension API, applied with its own rules",
)


def read_user_primitive(op: ir.Operation | ir.OpView) -> Transform | None:
    """The user primitive ``op`` (a func.func) declares, or None if it declares none."""
    return read_kind(op, USER_PRIMITIVE_KIND)


def declare_user_primitive(module: ir.Module | ir.Operation, name: str, inputs: Sequence[ir.Type],
                           results: Sequence[ir.Type], *, id: int, primitive_name: str,  # noqa: A002
                           loc: ir.Location | None = None) -> func.FuncOp:
    """Append ``func.func private @name`` declaring a call of user primitive ``id`` to ``module``."""
    _user_primitive({"id": id}, lambda _: None)  # type: ignore[arg-type,return-value]
    body = module.body if isinstance(module, ir.Module) else module.regions[0].blocks[0]
    kinds = {f.name: f.kind for f in KINDS[USER_PRIMITIVE_KIND].fields}
    fields = {"id": id, "name": primitive_name}
    attr = ir.DictAttr.get({k: to_attribute(kinds[k], v) for k, v in fields.items()})
    with ir.InsertionPoint(body), loc or ir.Location.unknown():
        op = func.FuncOp(name, ir.FunctionType.get(list(inputs), list(results)), visibility="private")
    op.attributes[ATTR] = attr
    return op
