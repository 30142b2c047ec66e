"""Host callback declarations: `mlax.callback`, a Python function called from compiled code.

A callback's operands and results have different types, and an IRDL variadic port binds ONE
type for all its values (the limit that made control flow and the transformations
declarations, dialect/transforms.py). So a callback is a body-less private function whose
`mlax.callback` dictionary says which Python function to call; programs call it with
`func.call`, and its type is the callback's operand and result types:

    func.func private @cb_callback(tensor<3xf32>, tensor<i32>) -> tensor<3xf32>
        attributes {mlax.callback = {id = 7 : i64, kind = "pure", ordered = false,
                                     name = "cb", vmap_method = "sequential"}}

``id`` keys the process's callback registry (mlax.backends.native.host_callbacks), which holds the
Python function; a module printed and read by another process names an id that process does
not have, and running it fails with an error naming the declaration. ``kind`` is "pure"
(results, may be dropped when unused, as jax's pure_callback), "debug" (no results, never
dropped, called in program order) or "io" (jax's io_callback: results and effects, never
dropped; ``ordered`` ones are called in program order); ``name`` is the Python function's
name, for messages.
Unlike control flow, nothing gives these declarations a body: each backend's lowering turns
their calls into a host call (docs/callbacks.md).
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

CALLBACK_KIND = "callback"
ATTR = f"mlax.{CALLBACK_KIND}"
CALLBACK_KINDS = ("pure", "debug", "io")
EFFECT_KINDS = ("debug", "io")  # never dropped, never merged: the calls are effects
# jax.pure_callback's vmap_method values (jax's "None" is the field left out).
VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized")


def _callback(values: dict[str, Any], types: FunctionTypes) -> dict[str, Signature]:
    """Checks the fields; the declaration's own type is free (it is the callback's), so no
    signature is imposed."""
    if values["kind"] not in CALLBACK_KINDS:
        raise DeclarationError(
            f"kind must be one of {', '.join(map(repr, CALLBACK_KINDS))}, got {values['kind']!r}"
        )
    method = values["vmap_method"]
    if method is not None and (values["kind"] != "pure" or method not in VMAP_METHODS):
        raise DeclarationError(
            f"vmap_method {method!r} needs kind 'pure' and one of {', '.join(map(repr, VMAP_METHODS))}"
        )
    if values["id"] < 0:
        raise DeclarationError(f"id must be >= 0, got {values['id']}")
    return {}


KINDS[CALLBACK_KIND] = make_kind(
    CALLBACK_KIND,
    "id: i64, kind: str, ordered: bool, name: str, vmap_method?: str",
    _callback,
    "any operand and result types: the registered Python function applied to the operands",
)


def read_callback(op: ir.Operation | ir.OpView) -> Transform | None:
    """The callback ``op`` (a func.func) declares, or None if it is not a callback declaration."""
    return read_kind(op, CALLBACK_KIND)


def check_results(transform: Transform, function_type: ir.FunctionType) -> None:
    """A debug callback returns nothing (DeclarationError naming the declaration otherwise)."""
    if transform.fields["kind"] == "debug" and len(function_type.results):
        raise DeclarationError(
            f"mlax.callback declaration @{transform.name}: a debug callback has "
            f"no results, but the declaration's type is {function_type}"
        )


def declare_callback(
    module: ir.Module | ir.Operation,
    name: str,
    inputs: Sequence[ir.Type],
    results: Sequence[ir.Type],
    *,
    id: int,
    kind: str,
    ordered: bool,  # noqa: A002
    callback_name: str,
    vmap_method: str | None = None,
    loc: ir.Location | None = None,
) -> func.FuncOp:
    """Append ``func.func private @name`` declaring a callback to ``module``."""
    fields = {"id": id, "kind": kind, "ordered": ordered, "name": callback_name, "vmap_method": vmap_method}
    _callback(fields, lambda _: None)  # type: ignore[arg-type,return-value]
    function_type = ir.FunctionType.get(list(inputs), list(results))
    check_results(Transform(name, CALLBACK_KIND, fields), function_type)
    body = module.body if isinstance(module, ir.Module) else module.regions[0].blocks[0]
    kinds = {f.name: f.kind for f in KINDS[CALLBACK_KIND].fields}
    attr = ir.DictAttr.get({k: to_attribute(kinds[k], v) for k, v in fields.items() if v is not None})
    with ir.InsertionPoint(body), loc or ir.Location.unknown():
        op = func.FuncOp(name, function_type, visibility="private")
    op.attributes[ATTR] = attr
    return op


def callback_declarations(module: ir.Operation) -> dict[str, tuple[ir.Operation, Transform]]:
    """The module's callback declarations by symbol."""
    found = {}
    for op in module.regions[0].blocks[0].operations:
        transform = read_callback(op)
        if transform is not None:
            found[transform.name] = (op.operation, transform)
    return found


def callee_of(call: ir.Operation) -> str:
    return ir.FlatSymbolRefAttr(call.attributes["callee"]).value
