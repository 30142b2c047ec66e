"""The op table of the mlax dialect: one OpDef per op, keyed by op name.

An OpDef is the single source for everything the dialect knows about an op: its IRDL
signature (dialect/mlax.irdl.mlir is generated from it), its attribute kinds, its shape
and dtype inference, its NumPy reference semantics (the interpreter) and its one-line
documentation, and its traits. Op families register their defs in dialect/ops/*.py with
`define_op`.

Traits are the facts about an op that the passes' generic rules read, stated once on the op
(as MLIR's ODS traits and JAX's `standard_unop`/`naryop` do), so that no pass keeps its own
list of "the elementwise ops":

- ``elementwise``: ODS's `Elementwise`. Each result element depends only on the operands'
  elements at its index; operands have the result's shape, or rank 0 where the op allows it
  (select's predicate, clamp's bounds). From it: the batching rule (`mlax-batch`, which matches
  the operands and applies the op) and the pointwise sharding rule.
- ``zero_derivative``: the tangent of every result is zero (or it has no float result). From it:
  the JVP rule (no tangent) and the front end's "no derivative flows" test.
- ``linear``: the operand positions in which the op is linear (the others are primal inputs:
  indices, predicates). From it: the default JVP rule, the op applied to the tangents; an
  explicit JVP rule wins where one exists (add, sub, neg keep JAX's partial-sum form).
- ``stablehlo``: the StableHLO (or CHLO) op this one is a renaming of, in full
  (``"stablehlo.negate"``, ``"chlo.erf"``). From it: the `mlax-lower-to-stablehlo` rule
  (an explicit rule wins where some dtypes need more than a renaming) and its inverse, the
  importer's map (`stablehlo_to_mlax`).
- ``complex``: the op takes complex operands or results (docs/complex.md); every other op
  refuses them by name in `infer_results`.
- ``sharding``: the op's sharding factor kind in `mlax-partition`: ``"pointwise"`` (one
  factor per result dimension, shared by the operands of its rank; the default of elementwise
  ops), ``"fallback"`` (gathered whole, computed on every device, sliced), or None: the op has
  its own rule in passes/partition/rules.py (or is special or unsupported there).
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
    # Traits (the module docstring says what each means and which rules follow from it).
    elementwise: bool = False
    zero_derivative: bool = False
    linear: tuple[int, ...] = ()
    stablehlo: str | None = None
    complex: bool = False
    sharding: str | None = None

    @property
    def full_name(self) -> str:
        return f"mlax.{self.name}"


OPS: dict[str, OpDef] = {}

SHARDING_KINDS = ("pointwise", "fallback")

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
    elementwise: bool = False,
    zero_derivative: bool = False,
    linear: tuple[int, ...] = (),
    stablehlo: str | None = None,
    complex: bool = False,
    sharding: str | None = None,
) -> OpDef:
    """Register an op. ``signature`` reads ``"(lhs: T, rhs: T) -> (result: T)"``; ``defaults`` names
    the optional attributes (each also in ``attributes``) with the value their absence means.
    The keywords after ``description`` are the op's traits (this module's docstring); an
    elementwise op's sharding kind defaults to ``"pointwise"``."""
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
    operands, results = _parse_ports(match.group(1)), _parse_ports(match.group(2))
    if sharding is None and elementwise:
        sharding = "pointwise"
    _check_traits(name, operands, linear, stablehlo, sharding)
    op = OpDef(
        name=name,
        summary=summary,
        operands=operands,
        results=results,
        attributes=attributes,
        infer=infer,
        reference=reference,
        weak_type=weak_type,
        description=description,
        family=_family(infer),
        defaults=defaults,
        elementwise=elementwise,
        zero_derivative=zero_derivative,
        linear=tuple(linear),
        stablehlo=stablehlo,
        complex=complex,
        sharding=sharding,
    )
    OPS[name] = op
    return op


def _check_traits(name: str, operands: tuple[Port, ...], linear: tuple[int, ...], stablehlo: str | None,
                  sharding: str | None) -> None:
    if any(not 0 <= i < len(operands) for i in linear):
        raise ValueError(f"{name}: linear positions {tuple(linear)} outside its {len(operands)} operand(s)")
    if stablehlo is not None and not stablehlo.startswith(("stablehlo.", "chlo.")):
        raise ValueError(f"{name}: the StableHLO name must be in full (stablehlo.<op> or chlo.<op>), "
                         f"got {stablehlo!r}")
    if sharding is not None and sharding not in SHARDING_KINDS:
        raise ValueError(f"{name}: unknown sharding kind {sharding!r} (one of {list(SHARDING_KINDS)})")


def _family(infer: InferRule) -> str:
    """The docs' family of an op: the first line of the docstring of the dialect/ops module that
    defines its inference rule, up to the colon (``"Elementwise ops: ..."`` -> ``"Elementwise ops"``;
    an inference rule shared from dialect/ops/common.py would give "Other ops"). docs/dialect.md
    groups by it and tests name a family by it; no pass reads it (the traits say what an op is)."""
    module = sys.modules.get(getattr(infer, "__module__", "") or "")
    if module is None or not module.__name__.startswith("mlax.dialect.ops."):
        return "Other ops"
    return (module.__doc__ or module.__name__).strip().splitlines()[0].split(":")[0].rstrip(".")


def complex_ops() -> frozenset[str]:
    """The ops that take complex operands or results (the ``complex`` trait; docs/complex.md)."""
    return frozenset(name for name, op in OPS.items() if op.complex)


def stablehlo_names() -> dict[str, str]:
    """mlax op name -> the StableHLO (or CHLO) op it renames to (the ``stablehlo`` trait)."""
    return {name: op.stablehlo for name, op in OPS.items() if op.stablehlo is not None}


def stablehlo_to_mlax() -> dict[str, str]:
    """The inverse: StableHLO (or CHLO) op name -> the mlax op (what the importer reads)."""
    inverse: dict[str, str] = {}
    for name, hlo in stablehlo_names().items():
        if hlo in inverse:
            raise ValueError(f"{hlo} is the StableHLO name of both mlax.{inverse[hlo]} and mlax.{name}")
        inverse[hlo] = name
    return inverse


def get_op(name: str) -> OpDef:
    """The OpDef of ``name`` (with or without the ``mlax.`` prefix)."""
    short = name.removeprefix("mlax.")
    try:
        return OPS[short]
    except KeyError:
        raise KeyError(f"unknown mlax op '{name}'") from None


def infer_results(op: OpDef, specs: list[TensorSpec], attrs: dict[str, Any]) -> tuple[TensorSpec, ...]:
    """Run the op's inference rule and normalise its answer to a tuple."""
    if not op.complex:
        _refuse_complex(op, specs)
    out = op.infer(*specs, **attrs)
    out = out if isinstance(out, tuple) else (out,)
    if not op.complex:
        _refuse_complex(op, out)
    return out


def _refuse_complex(op: OpDef, specs: list[TensorSpec] | tuple[TensorSpec, ...]) -> None:
    for spec in specs:
        if spec.dtype.kind == "c":
            raise TypeError(f"{op.full_name} does not support complex dtypes yet, got {spec.dtype} "
                            "(docs/complex.md lists the ops that do)")
