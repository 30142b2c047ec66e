"""Sharding rules as data: an op's factors and how each tensor dimension maps onto them.

Shardy's idea (openxla/shardy, OpShardingRule), as CONVENTIONS.md item 11 asks: an op
``ij,jk->ik`` has three factors i, j, k; each dimension of each operand and result names the
factors it is made of (major first; one in almost every op, several where a reshape merges
or splits dimensions); j appears in no result, so it is a *reduction* factor: sharding it
leaves partial results that an all-reduce completes. A factor whose dimension must be whole
on every device (the sliced dimension of a slice, the sorted one of a sort) is *replicated*.
Propagation and the per-device rewrite work on factor shardings (the mesh axes each factor
is split over), never on per-op code: that is why the rule table (rules.py) stays small.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mlax.dialect.attrs import Spec

# Factor kinds.
PASS = "pass"            # may be sharded; every device computes its block
REPLICATED = "replicated"  # must be whole on every device
SUM, MAX, MIN = "sum", "max", "min"  # reduction factors and the collective that completes them
REDUCTIONS = {SUM: "psum", MAX: "pmax", MIN: "pmin"}

Dims = tuple[tuple[int, ...], ...]  # per tensor dimension, its factors (major first)
# Per factor: the mesh axes it is split over (major first); None while nothing decided it.
Shardings = list["tuple[str, ...] | None"]
# (the op's attributes, the local result shapes) -> the per-device op's attributes
Localize = Callable[[dict[str, Any], list[tuple[int, ...]]], dict[str, Any]]


@dataclass(frozen=True)
class OpRule:
    """One op's factor mapping: factor sizes and kinds, and the factors of each dimension of
    each operand and result. ``localize`` rewrites attributes that spell global shapes."""

    sizes: tuple[int, ...]
    kinds: tuple[str, ...]
    operands: tuple[Dims, ...]
    results: tuple[Dims, ...]
    localize: Localize | None = None

    def tensors(self) -> tuple[Dims, ...]:
        return (*self.operands, *self.results)


class RuleBuilder:
    """Builds an OpRule factor by factor: ``f = b.factor(8)``, then each tensor's dims."""

    def __init__(self, num_operands: int, num_results: int) -> None:
        self.sizes: list[int] = []
        self.kinds: list[str] = []
        self.operands: list[list[tuple[int, ...]]] = [[] for _ in range(num_operands)]
        self.results: list[list[tuple[int, ...]]] = [[] for _ in range(num_results)]

    def factor(self, size: int, kind: str = PASS) -> int:
        self.sizes.append(int(size))
        self.kinds.append(kind)
        return len(self.sizes) - 1

    def operand(self, index: int, *factors: int) -> None:
        """Append a dimension made of ``factors`` to operand ``index``."""
        self.operands[index].append(tuple(factors))

    def result(self, index: int, *factors: int) -> None:
        self.results[index].append(tuple(factors))

    def build(self, localize: Localize | None = None) -> OpRule:
        return OpRule(tuple(self.sizes), tuple(self.kinds), tuple(tuple(d) for d in self.operands),
                      tuple(tuple(d) for d in self.results), localize)


AxisSizes = Callable[[Sequence[str]], int]  # Mesh.axis_size: the product of the named axes


def _product(axes: Sequence[str], axis_size: AxisSizes) -> int:
    return axis_size(tuple(axes)) if axes else 1


def absorb(rule: OpRule, dims: Dims, spec: Spec, shardings: Shardings, axis_size: AxisSizes) -> None:
    """Record what one tensor's spec says about the op's factors, where nothing decided them
    yet (the first tensor seen wins a conflict). Only sharded dimensions decide: a whole
    dimension leaves its factors open, so a replicated value never stops another from
    sharding them (it is sliced locally instead). The axes of a dimension go to its factors
    major first, each taking the longest run of axes that divides it; a minor factor is
    reached only once the one before it is split completely (blocks stay contiguous)."""
    used = {a for s in shardings if s for a in s}
    for factors, axes in zip(dims, spec, strict=True):
        rest = list(axes)
        for f in factors:
            if not rest or rule.kinds[f] == REPLICATED:
                break
            take: list[str] = []
            while rest[len(take):] and rule.sizes[f] % _product([*take, rest[len(take)]], axis_size) == 0:
                take.append(rest[len(take)])
            if not take:
                break
            if shardings[f] is None and not used & set(take):
                shardings[f] = tuple(take)
                used |= set(take)
            elif shardings[f] != tuple(take):
                break
            if _product(take, axis_size) != rule.sizes[f]:
                break
            rest = rest[len(take):]


def normalize(rule: OpRule, shardings: Shardings, axis_size: AxisSizes) -> list[tuple[str, ...]]:
    """Decided factor shardings (open ones whole) that every tensor of the op can carry: in a
    dimension of several factors, a factor after one that is not split completely is made
    whole (its blocks would not be contiguous)."""
    out = [s or () for s in shardings]
    changed = True
    while changed:
        changed = False
        for dims in rule.tensors():
            for factors in dims:
                for i, f in enumerate(factors[:-1]):
                    if _product(out[f], axis_size) != rule.sizes[f]:
                        for g in factors[i + 1:]:
                            if out[g]:
                                out[g], changed = (), True
                        break
    return out


def project(dims: Dims, shardings: Sequence[tuple[str, ...]]) -> Spec:
    """The spec of a tensor whose dimensions are ``dims``, given normalized factor shardings."""
    return tuple(tuple(a for f in factors for a in shardings[f]) for factors in dims)


def local_shape(rule: OpRule, dims: Dims, shardings: Sequence[tuple[str, ...]],
                axis_size: AxisSizes) -> tuple[int, ...]:
    """A tensor's per-device shape: each factor divided by the size of its axes."""
    return tuple(math.prod(rule.sizes[f] // _product(shardings[f], axis_size) for f in factors)
                 for factors in dims)


def has_sharding(shardings: Shardings) -> bool:
    return any(shardings)
