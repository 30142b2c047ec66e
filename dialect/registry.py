"""The op table of the mlax dialect: one OpDef per op, keyed by op name.

An OpDef is the single source for everything the dialect knows about an op: its IRDL
signature (dialect/mlax.irdl.mlir is generated from it), its attribute kinds, its shape
and dtype inference, its NumPy reference semantics (the interpreter) and its one-line
documentation. Op families register their defs in dialect/ops/*.py with `define_op`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlax.dialect.tensor_spec import TensorSpec

# Attribute kinds: how a Python value is stored as an MLIR attribute (see attrs.py).
ATTRIBUTE_KINDS = ("i64", "i64s", "bool", "bools", "symbols", "f64", "str", "dense", "symbol", "type", "dict",
                   "strs", "spec", "specs")

InferRule = Callable[..., "TensorSpec | tuple[TensorSpec, ...]"]
ReferenceRule = Callable[..., "np.ndarray | tuple[np.ndarray, ...]"]


@dataclass(frozen=True)
class Port:
    """One operand or result: its name and its type variable.

    Ports that share a type variable must have identical types (IRDL binds one type per
    variable), which is how elementwise ops state "operands and result agree".
    """

    name: str
    type_var: str
    variadic: bool = False


@dataclass(frozen=True)
class OpDef:
    name: str
    summary: str
    operands: tuple[Port, ...]
    results: tuple[Port, ...]
    attributes: dict[str, str]
    infer: InferRule
    reference: ReferenceRule
    # How the front end propagates JAX's weak type: "all" (weak iff every operand is
    # weak, as elementwise ops), "first" (as operand 0), "rest" (iff every operand but the
    # first is weak, as select's cases), or "never".
    weak_type: str = "all"
    description: str = field(default="", compare=False)
    # The op family (the dialect/ops module that defines it), for the docs.
    family: str = ""
    # Optional attributes and the Python value that their absence means (a subset of
    # `attributes`). Builders omit one equal to its default, so IR that predates it prints
    # unchanged; readers fill the default in; the IRDL file leaves them out (discardable).
    defaults: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def full_name(self) -> str:
        return f"mlax.{self.name}"


OPS: dict[str, OpDef] = {}

# The ops that take complex operands or results (docs/complex.md); dialect/ops/complex_parts.py
# declares them. Every other op refuses complex values in `infer_results`, naming itself, so an op
# not yet taught complex numbers fails at trace time rather than deep in a lowering.
COMPLEX_OPS: set[str] = set()

_PORT = re.compile(r"^(\*?)(\w+)\s*:\s*(\w+)$")


def _parse_ports(text: str) -> tuple[Port, ...]:
    """Parse ``"lhs: T, rhs: T"`` (``*name: T`` marks a variadic port)."""
    ports = []
    for item in filter(None, (s.strip() for s in text.split(","))):
        match = _PORT.match(item)
        if match is None:
            raise ValueError(f"bad port spec {item!r}")
        star, name, type_var = match.groups()
        ports.append(Port(name, type_var, variadic=bool(star)))
    return tuple(ports)


def define_op(
    name: str,
    signature: str,
    *,
    infer: InferRule,
    reference: ReferenceRule,
    attributes: dict[str, str] | None = None,
    defaults: dict[str, Any] | None = None,
    weak_type: str = "all",
    summary: str,
    description: str = "",
) -> OpDef:
    """Register an op. ``signature`` reads ``"(lhs: T, rhs: T) -> (result: T)"``; ``defaults`` names
    the optional attributes (each also in ``attributes``) with the value their absence means."""
    match = re.fullmatch(r"\s*\((.*)\)\s*->\s*\((.*)\)\s*", signature)
    if match is None:
        raise ValueError(f"bad signature for {name}: {signature!r}")
    attributes = dict(attributes or {})
    for attr, kind in attributes.items():
        if kind not in ATTRIBUTE_KINDS:
            raise ValueError(f"{name}: unknown kind {kind!r} for attribute {attr}")
    defaults = dict(defaults or {})
    undeclared = sorted(set(defaults) - set(attributes))
    if undeclared:
        raise ValueError(f"{name}: defaults for undeclared attribute(s) {undeclared}")
    if name in OPS:
        raise ValueError(f"op mlax.{name} defined twice")
    family = _defining_family()
    op = OpDef(
        name=name,
        summary=summary,
        operands=_parse_ports(match.group(1)),
        results=_parse_ports(match.group(2)),
        attributes=attributes,
        infer=infer,
        reference=reference,
        weak_type=weak_type,
        description=description,
        family=family,
        defaults=defaults,
    )
    OPS[name] = op
    return op


def _defining_family() -> str:
    """The family of the op being defined: the first line of its dialect/ops module's docstring,
    up to the colon (``"Elementwise ops: ..."`` -> ``"Elementwise ops"``)."""
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("mlax.dialect.ops.") and module != "mlax.dialect.ops.common":
            doc = (frame.f_globals.get("__doc__") or module).strip()
            return doc.splitlines()[0].split(":")[0].rstrip(".")
        frame = frame.f_back
    return "Other ops"


def get_op(name: str) -> OpDef:
    """The OpDef of ``name`` (with or without the ``mlax.`` prefix)."""
    short = name.removeprefix("mlax.")
    try:
        return OPS[short]
    except KeyError:
        raise KeyError(f"unknown mlax op '{name}'") from None


def infer_results(op: OpDef, specs: list[TensorSpec], attrs: dict[str, Any]) -> tuple[TensorSpec, ...]:
    """Run the op's inference rule and normalise its answer to a tuple."""
    if op.name not in COMPLEX_OPS:
        _refuse_complex(op, specs)
    out = op.infer(*specs, **attrs)
    out = out if isinstance(out, tuple) else (out,)
    if op.name not in COMPLEX_OPS:
        _refuse_complex(op, out)
    return out


def _refuse_complex(op: OpDef, specs: list[TensorSpec] | tuple[TensorSpec, ...]) -> None:
    for spec in specs:
        if spec.dtype.kind == "c":
            raise TypeError(f"{op.full_name} does not support complex dtypes yet, got {spec.dtype} "
                            "(docs/complex.md lists the ops that do)")
