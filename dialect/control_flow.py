"""Control flow declarations: `mlax.cond`, `mlax.while` and `mlax.scan`.

Why functions and not regions: a cond's operands, a loop's carries and a scan's outputs have
different types, and an IRDL variadic port binds ONE type for all its values (the same limit
that made the transformations declarations, dialect/transforms.py). So, as JAX keeps branches
and bodies as closed jaxprs, each construct is a body-less private function whose
`mlax.<kind>` dictionary names its branch / body functions; programs call it with `func.call`:

    func.func private @scan(tensor<f32>, tensor<5x3xf32>, tensor<3x3xf32>)
        -> (tensor<f32>, tensor<5x3xf32>)
        attributes {mlax.scan = {body = @step, length = 5 : i64, reverse = false,
                                 num_carry = 1 : i64, num_consts = 1 : i64}}
    func.func private @step(%c: tensor<f32>, %x: tensor<3xf32>, %w: tensor<3x3xf32>)
        -> (tensor<f32>, tensor<3xf32>)

Operand order is ``carry ++ xs ++ consts`` (consts are the enclosing values the bodies
capture, passed last as the front end's closure conversion appends them). The signature
rules below are the verifiers: branch types agree, loop carries keep their types, scanned
operands have the leading dimension ``length``. Unlike transformations, these declarations
are never given bodies by the transformation passes: they persist until
`mlax-lower-control-flow` turns their calls into `scf` loops and conditionals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from mlir import ir

from mlax.dialect.tensor_spec import TensorSpec
from mlax.dialect.transforms import KINDS, DeclarationError, FunctionTypes, Signature, make_kind

CONTROL_FLOW_KINDS = ("cond", "while", "scan")


def _types(t: ir.FunctionType) -> tuple[list[ir.Type], list[ir.Type]]:
    return list(t.inputs), list(t.results)


def _scalar(element: ir.Type) -> ir.Type:
    return ir.RankedTensorType.get([], element)


def selector_type(num_branches: int) -> ir.Type:
    """tensor<i1> for two branches (false, true), tensor<i32> otherwise (clamped into range)."""
    width = 1 if num_branches == 2 else 32
    return _scalar(ir.IntegerType.get_signless(width))


def _cond(values: dict[str, Any], types: FunctionTypes) -> dict[str, Signature]:
    branches = values["branches"]
    if not branches:
        raise DeclarationError("needs at least one branch")
    ins, outs = _types(types("branches[0]"))
    expected = {f"branches[{i}]": (ins, outs) for i in range(1, len(branches))}
    return {"": ([selector_type(len(branches)), *ins], outs), **expected}


def _check_carry(ins: list[ir.Type], outs: list[ir.Type], count: int, what: str) -> None:
    if len(ins) < count or len(outs) < count:
        raise DeclarationError(f"{what} has {len(ins)} argument(s) and {len(outs)} result(s), "
                               f"fewer than the {count} loop-carried value(s)")
    for i, (a, b) in enumerate(zip(ins[:count], outs[:count], strict=True)):
        if a != b:
            raise DeclarationError(f"{what} carry {i} enters as {a} but leaves as {b}; a "
                                   "loop-carried value must keep its type")


def _while(values: dict[str, Any], types: FunctionTypes) -> dict[str, Signature]:
    ins, outs = _types(types("body"))
    _check_carry(ins, outs, len(outs), "body")
    bool_scalar = _scalar(ir.IntegerType.get_signless(1))
    return {"": (ins, outs), "cond": (ins, [bool_scalar])}


def _stacked(t: ir.Type, length: int) -> ir.Type:
    if not isinstance(t, ir.RankedTensorType):
        raise DeclarationError(f"scanned value of type {t} is not a ranked tensor")
    return ir.RankedTensorType.get([length, *t.shape], t.element_type)


def _scan(values: dict[str, Any], types: FunctionTypes) -> dict[str, Signature]:
    ins, outs = _types(types("body"))
    length, num_carry, num_consts = values["length"], values["num_carry"], values["num_consts"]
    if length < 0 or num_carry < 0 or num_consts < 0:
        raise DeclarationError("length, num_carry and num_consts must be >= 0")
    if num_carry + num_consts > len(ins):
        raise DeclarationError(f"num_carry + num_consts = {num_carry + num_consts} exceeds the body's "
                               f"{len(ins)} argument(s)")
    _check_carry(ins, outs, num_carry, "body")
    carry, xs, consts = ins[:num_carry], ins[num_carry:len(ins) - num_consts], ins[len(ins) - num_consts:]
    ys = outs[num_carry:]
    return {"": ([*carry, *(_stacked(t, length) for t in xs), *consts],
                 [*carry, *(_stacked(t, length) for t in ys)])}


KINDS.update({k.name: k for k in (
    make_kind("cond", "branches: symbols", _cond,
          "(selector, operands...) -> results: the selected branch applied to the operands"),
    make_kind("while", "cond: symbol, body: symbol", _while,
          "(carry..., consts...) -> carry: body while cond holds"),
    make_kind("scan", "body: symbol, length: i64, reverse: bool, num_carry: i64, num_consts: i64", _scan,
          "(carry..., xs..., consts...) -> (carry..., stacked ys...): body over the leading axis of xs"),
)})


# Reference semantics (the interpreter): kind -> runner(fields, call, operands, result specs),
# where ``call(symbol, operands)`` runs a function of the module.
Call = Callable[[str, list[np.ndarray]], list[np.ndarray]]


def _run_cond(fields: dict[str, Any], call: Call, operands: list[np.ndarray],
              results: list[TensorSpec]) -> list[np.ndarray]:
    branches = fields["branches"]
    index = int(np.clip(np.asarray(operands[0]).astype(np.int64), 0, len(branches) - 1))
    return call(branches[index], operands[1:])


def _run_while(fields: dict[str, Any], call: Call, operands: list[np.ndarray],
               results: list[TensorSpec]) -> list[np.ndarray]:
    carry, consts = operands[:len(results)], operands[len(results):]
    while bool(call(fields["cond"], [*carry, *consts])[0]):
        carry = call(fields["body"], [*carry, *consts])
    return carry


def _run_scan(fields: dict[str, Any], call: Call, operands: list[np.ndarray],
              results: list[TensorSpec]) -> list[np.ndarray]:
    num_carry, num_consts, length = fields["num_carry"], fields["num_consts"], fields["length"]
    carry = operands[:num_carry]
    xs, consts = operands[num_carry:len(operands) - num_consts], operands[len(operands) - num_consts:]
    ys = [np.empty(spec.shape, spec.dtype) for spec in results[num_carry:]]
    steps = range(length - 1, -1, -1) if fields["reverse"] else range(length)
    for i in steps:
        outs = call(fields["body"], [*carry, *(x[i] for x in xs), *consts])
        carry = outs[:num_carry]
        for y, out in zip(ys, outs[num_carry:], strict=True):
            y[i] = out
    return [*carry, *ys]


REFERENCES: dict[str, Callable[..., list[np.ndarray]]] = {
    "cond": _run_cond, "while": _run_while, "scan": _run_scan}
