"""Typed sharding specs and what a type rule sees: the part of mlax.sharding_types that its rules
(pyfront/sharding_type_rules.py) are written against, so that the rules sit between this module and
the typing of ops (`sharding_types.result_avals`), which imports them to fill `RULES`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from jax.sharding import AbstractMesh, AxisType, NamedSharding, PartitionSpec

from mlax.sharding import remember

Spec = tuple[tuple[str, ...], ...]  # per dimension, the Explicit mesh axes splitting it
Shape = tuple[int, ...]


# --- shardings as specs and back --------------------------------------------------------------


def _axes(entry: Any) -> tuple[str, ...]:
    if entry is None or entry is PartitionSpec.UNCONSTRAINED:
        return ()
    return tuple(entry) if isinstance(entry, tuple) else (entry,)


def spec_of(sharding: NamedSharding | None, rank: int) -> Spec:
    """The typed spec of a sharding, one entry per dimension (None: every dimension whole)."""
    if sharding is None:
        return ((),) * rank
    dims = tuple(_axes(e) for e in sharding.spec)
    return dims + ((),) * (rank - len(dims))


def entries(spec: Spec) -> tuple[Any, ...]:
    """A spec as PartitionSpec entries: None, 'x' or ('x', 'y') per dimension."""
    return tuple(None if not a else a[0] if len(a) == 1 else a for a in spec)


@functools.lru_cache(maxsize=4096)
def named(mesh: AbstractMesh, spec: Spec) -> NamedSharding:
    """jax's aval sharding for ``spec`` on ``mesh`` (cached: avals are made per op)."""
    return NamedSharding(mesh, PartitionSpec(*entries(spec)))


def explicit(mesh: AbstractMesh | None) -> bool:
    """Whether ``mesh`` has an Explicit axis (only then do types name axes)."""
    return mesh is not None and any(t == AxisType.Explicit for t in mesh.axis_types)


def manual(mesh: AbstractMesh) -> bool:
    """Whether every axis of ``mesh`` is Manual (inside a shard_map body)."""
    return bool(mesh.axis_types) and all(t == AxisType.Manual for t in mesh.axis_types)


def of_buffer(buffer: Any) -> NamedSharding | None:
    """The type sharding of a jax Array placed on a mesh (jax's ``typeof(buffer).sharding``),
    None for one on a single device without one."""
    if buffer is None or not isinstance(buffer.sharding, NamedSharding):
        return None
    remember(buffer.sharding.mesh)
    sharding = buffer.aval.sharding
    return None if sharding.mesh.empty else sharding


def aval_text(shape: Shape, dtype: Any, sharding: NamedSharding | None, **options: Any) -> str:
    """An abstract value as jax writes it (``float32[8@x,4]``; ``short_dtypes``,
    ``mesh_axis_types``), through jax's own ShapedArray."""
    from jax.core import ShapedArray

    aval = ShapedArray(shape, dtype) if sharding is None else ShapedArray(shape, dtype, sharding=sharding)
    return aval.str_short(**options) if options else str(aval)


# --- the rule context ------------------------------------------------------------------------


@dataclass(frozen=True)
class Operand:
    shape: Shape
    dtype: Any
    spec: Spec
    sharding: NamedSharding | None

    def text(self, **options: Any) -> str:
        return aval_text(self.shape, self.dtype, self.sharding, **options)


@dataclass(frozen=True)
class Call:
    """One op being typed: its name, typed operands, result shapes, attributes and mesh."""

    name: str
    operands: tuple[Operand, ...]
    shapes: tuple[Shape, ...]
    attrs: dict[str, Any]
    mesh: AbstractMesh

    def axis_size(self, axes: Sequence[str]) -> int:
        sizes = self.mesh.shape
        return math.prod(sizes[a] for a in axes)


Rule = Callable[[Call], "list[Spec]"]
RULES: dict[str, Rule] = {}


def rule(*names: str) -> Callable[[Rule], Rule]:
    """Register a type rule for mlax ops ``names``."""
    def register(fn: Rule) -> Rule:
        for name in names:
            if name in RULES:
                raise ValueError(f"type sharding rule for mlax.{name} registered twice")
            RULES[name] = fn
        return fn
    return register


def replicated(call: Call) -> list[Spec]:
    return [((),) * len(s) for s in call.shapes]
