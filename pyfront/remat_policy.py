"""Which values a `checkpoint` saves for the backward pass: jax's policy, asked about every op
the checkpointed function traced, its answers written into the IR.

A jax policy is a callable ``policy(prim, *avals, **params)`` answering, per primitive
application, whether its outputs may be saved (True / `Saveable` / `Offloadable`) or must be
recomputed (False / `Recompute`). mlax asks it about each op of the checkpointed function, with
jax's primitive for the op (`jax.extend.core.primitives`), the operands' abstract values and,
where policies read them, jax's params (dot_general's ``dimension_numbers``); a value named by
`checkpoint_name` is also asked about as jax's ``name_p`` with its ``name``. Ops whose results
may be saved get the discardable attribute ``mlax.saveable``, which `mlax-autodiff`'s reverse
mode reads (passes/autodiff/remat.py); the other values of the region are recomputed in the
backward pass from its inputs and the saved values. `Offloadable` is a plain save (mlax has
one memory space). Ops of functions the checkpointed one calls are asked too (reverse mode
walks such calls in place); a nested checkpoint, a control-flow construct or a callback is
asked about as one application of jax's primitive for it (``remat``, ``scan``...), and its
results are saved or recomputed whole.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.core
import jax.extend.core as jex
from jax import ad_checkpoint as _jax_ad_checkpoint
from jax.extend.core import primitives
from mlir import ir

from mlax.dialect import read_attributes
from mlax.dialect.callbacks import CALLBACK_KIND
from mlax.dialect.tensor_spec import TensorSpec
from mlax.dialect.transforms import CHECKPOINT_NAMES_ATTR, SAVEABLE_ATTR, read_transform
from mlax.passes.walk import nested_ops

Policy = Callable[..., Any]

# mlax op or construct -> jax's primitive, where the names differ.
_PRIMITIVE_NAMES = {
    "convert": "convert_element_type", "bitcast_convert": "bitcast_convert_type", "select": "select_n",
    "checkpoint": "remat", CALLBACK_KIND: "pure_callback",
}
_COMPARISONS = {"EQ": "eq", "NE": "ne", "LT": "lt", "LE": "le", "GT": "gt", "GE": "ge"}


def policy_name(policy: Policy | None) -> str:
    """How the declaration names the policy: jax's name for its own policies."""
    if policy is None:
        return "nothing_saveable"
    for name, known in vars(_jax_ad_checkpoint.checkpoint_policies).items():
        if policy is known:
            return name
    return getattr(policy, "__name__", type(policy).__name__)


def _primitive(name: str, attrs: dict[str, Any]) -> Any:
    """jax's primitive for an mlax op or construct (a stand-in of that name where jax has none)."""
    if name == "compare":
        name = _COMPARISONS.get(str(attrs.get("comparison_direction")), name)
    name = _PRIMITIVE_NAMES.get(name, name)
    return getattr(primitives, f"{name}_p", None) or jex.Primitive(name)


def _aval(value: ir.Value) -> jax.core.ShapedArray:
    spec = TensorSpec.from_mlir(value.type)
    return jax.core.ShapedArray(tuple(spec.shape), spec.dtype)


def _params(name: str, attrs: dict[str, Any]) -> dict[str, Any]:
    """The params of jax's primitive that policies read: dot_general's dimension numbers."""
    if name != "dot_general":
        return {}
    dims = {k: tuple(int(d) for d in attrs[f"{k}_dimensions"])
            for k in ("lhs_contracting", "rhs_contracting", "lhs_batch", "rhs_batch")}
    return {"dimension_numbers": ((dims["lhs_contracting"], dims["rhs_contracting"]),
                                  (dims["lhs_batch"], dims["rhs_batch"])),
            "precision": None, "preferred_element_type": None, "out_sharding": None}


def _saves(policy: Policy, prim: Any, avals: list[Any], params: dict[str, Any]) -> bool:
    answer = policy(prim, *avals, **params)
    if isinstance(answer, bool):
        return answer
    if isinstance(answer, (type(_jax_ad_checkpoint.Saveable), _jax_ad_checkpoint.Offloadable)):
        return True
    if isinstance(answer, type(_jax_ad_checkpoint.Recompute)):
        return False
    raise TypeError(f"the checkpoint policy {policy_name(policy)} returned {answer!r} for {prim}: a policy "
                    "must return a bool, Saveable, Recompute or Offloadable")


def _op_saves(policy: Policy, op: ir.Operation, name: str, attrs: dict[str, Any]) -> bool:
    avals = [_aval(v) for v in op.operands]
    if _saves(policy, _primitive(name, attrs), avals, _params(name, attrs)):
        return True
    if CHECKPOINT_NAMES_ATTR not in op.attributes:
        return False
    results = [_aval(v) for v in op.results]
    return any(_saves(policy, primitives.name_p, results, {"name": ir.StringAttr(n).value})
               for n in ir.ArrayAttr(op.attributes[CHECKPOINT_NAMES_ATTR]))


def mark_saveable(module: ir.Operation, callee: str, policy: Policy | None) -> None:
    """Ask ``policy`` (None: jax's default, nothing saveable) about every op ``callee`` runs and
    mark the ops whose results it saves."""
    table = ir.SymbolTable(module)
    todo, seen = [callee], {callee}
    while todo:
        for op in nested_ops(table[todo.pop()].operation):
            if op.name == "func.func":
                continue
            transform = None
            if op.name == "func.call":
                target = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
                transform = read_transform(table[target]) if target in table else None
                if transform is None or transform.kind in ("custom_jvp_call", "custom_vjp_call"):
                    # walked in place by reverse mode: their own ops answer
                    fields = {} if transform is None else transform.fields
                    for name in [target] + [fields[k] for k in ("callee", "jvp", "fwd") if k in fields]:
                        if name not in seen and name in table:
                            seen.add(name)
                            todo.append(name)
                    continue
            if not op.name.startswith("mlax.") and transform is None:
                continue
            name = transform.kind if transform is not None else op.name.removeprefix("mlax.")
            attrs = {} if transform is not None else read_attributes(op)
            if policy is not None and _op_saves(policy, op, name, attrs):
                op.attributes[SAVEABLE_ATTR] = ir.UnitAttr.get(op.context)
            elif SAVEABLE_ATTR in op.attributes:
                del op.attributes[SAVEABLE_ATTR]


# Where each of an op's `CHECKPOINT_NAMES_ATTR` names was given: the ``checkpoint_name`` call's
# location as text, which `print_saved_residuals` shows for a named residual, as jax shows its
# ``name`` equation's.
CHECKPOINT_NAME_SITES_ATTR = "mlax.checkpoint_name_sites"


def name_value(value: ir.Value, name: str, site: ir.Location) -> None:
    """Record ``name``, given at ``site``, on the op that computes ``value``
    (`checkpoint_name`); a function's argument needs none: a checkpoint always keeps its inputs."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return
    op = owner.operation
    for attribute, text in ((CHECKPOINT_NAMES_ATTR, name), (CHECKPOINT_NAME_SITES_ATTR, str(site))):
        held = list(ir.ArrayAttr(op.attributes[attribute])) if attribute in op.attributes else []
        op.attributes[attribute] = ir.ArrayAttr.get([*held, ir.StringAttr.get(text, op.context)], op.context)
