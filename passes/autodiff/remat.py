"""Rematerialization (`checkpoint`) in reverse mode: recompute in the backward pass what the
forward pass need not keep.

Linearizing a call of an `mlax.checkpoint` declaration walks its callee in place, as any call,
but inside a *region*: `Regions` remembers which region (innermost first) each op of the
linearized function was emitted in, and what the region may save. The checkpoint's policy
marked the callee's ops whose results it saves (``mlax.saveable``, pyfront/remat_policy.py).

When the transpose needs a primal value ``v`` (an operand of a linear op, the *reader*),
`Rematerializer.value` decides as jax's remat partial evaluation does. Let C be the innermost
region holding both ``v`` and the reader:
- no such region (``v`` is computed outside every region, or is a region's output read
  outside it): the forward value;
- ``v`` computed directly in C: the forward value if C's policy saves it, else recomputed;
- ``v`` the output of a region D nested in C: the forward value if C's policy saved D's
  results (the mark on D's call), else recomputed.
A region's own saves count only when every enclosing region saves its call (`Region.saves`).
Recomputing clones the value's op at the current point of the backward pass, with operands
decided the same way (the op as their reader); each value is recomputed once, by an op
marked ``mlax.recomputed`` (for readers of the IR and `print_saved_residuals`). Forward values
that a recomputation reads go through an `mlax.optimization_barrier` when its region asked
for ``prevent_cse``, so no CSE merges the recomputed ops back into the forward ones (which
would keep the forward values alive again). Forward values nothing reads any more die after
the forward pass: that is the memory saved.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from mlir import ir

from mlax.dialect.transforms import RECOMPUTED_ATTR, SAVEABLE_ATTR
from mlax.passes.autodiff.emit import Emitter

T = TypeVar("T")


@dataclass(eq=False)
class Region:
    """One checkpointed call as linearized: its enclosing region, whether the values its
    policy saves are kept (every enclosing policy saves its call), and prevent_cse."""

    parent: Region | None
    saves: bool
    prevent_cse: bool

    def chain(self) -> list[Region]:
        """This region and its enclosing ones, innermost first."""
        regions, region = [], self
        while region is not None:
            regions.append(region)
            region = region.parent
        return regions


class Regions:
    """The checkpoint regions of one linearized function: which ops each one emitted."""

    def __init__(self, block: ir.Block, share_calls: bool = True) -> None:
        self.block = block
        self.region_of: dict[ir.Operation, Region] = {}
        self._open: list[Region] = []
        self._share_calls = share_calls

    def shares_calls(self) -> bool:
        """Whether a call met here may be linearized as a shared primal/linear pair of
        functions (vjp.py `linearize_call`): not inside a checkpoint, whose policy decides
        value by value, nor where the caller types values by the mesh axes they vary over."""
        return self._share_calls and not self._open

    def emit(self, fields: dict, call_saved: bool, emit: Callable[[], T]) -> T:
        """Run ``emit`` (which appends the linearized callee to the block) inside a new region
        of the checkpoint ``fields``; ``call_saved``: the enclosing policy saves the call."""
        if fields.get("policy") == "everything_saveable":  # as if there were no checkpoint
            return emit()
        parent = self._open[-1] if self._open else None
        saves = parent is None or (parent.saves and call_saved)
        region = Region(parent, saves, bool(fields.get("prevent_cse", True)))
        before = len(self.block.operations)
        self._open.append(region)
        try:
            result = emit()
        finally:
            self._open.pop()
        for op in list(self.block.operations)[before:]:
            self.region_of.setdefault(op.operation, region)  # nested regions claimed theirs first
        return result

    def mark_saved(self, values: Sequence[ir.Value]) -> None:
        """Values of one application the policy saves as a whole (a control-flow construct, a
        callback): their ops are marked saveable."""
        for value in values:
            if not isinstance(value.owner, ir.Block):
                value.owner.operation.attributes[SAVEABLE_ATTR] = ir.UnitAttr.get(value.context)

    def _region(self, value: ir.Value) -> Region | None:
        if isinstance(value.owner, ir.Block):
            return None
        return self.region_of.get(value.owner.operation)

    def kept(self, value: ir.Value, reader: ir.Operation) -> bool:
        """Whether ``reader`` reads ``value``'s forward value (else ``value`` is recomputed)."""
        inner = self._region(value)
        if inner is None:
            return True
        own = inner.chain()
        reader_region = self.region_of.get(reader)
        shared = set(reader_region.chain()) if reader_region is not None else set()
        for index, region in enumerate(own):
            if region in shared:  # C, the innermost region holding both
                if index == 0:
                    return region.saves and SAVEABLE_ATTR in value.owner.operation.attributes
                return own[index - 1].saves  # the output of the region D nested in C
        return True


class Rematerializer:
    """Primal values for the transpose: forward values, or recomputed ones (module docstring)."""

    def __init__(self, regions: Regions, forward: dict[ir.Value, ir.Value], point: ir.InsertionPoint) -> None:
        self.regions = regions
        self.forward = forward
        self.point = point
        self.recomputed: dict[ir.Value, ir.Value] = {}
        self.barriers: dict[ir.Value, ir.Value] = {}

    def value(self, value: ir.Value, reader: ir.Operation) -> ir.Value:
        """The value of the linearized function's primal ``value`` that ``reader`` uses."""
        if self.regions.kept(value, reader):
            return self.forward[value]
        self._recompute(value.owner.operation)
        return self.recomputed[value]

    def _recompute(self, root: ir.Operation) -> None:
        """Clone ``root`` and what it needs that is not kept, operands first (no recursion:
        a region can be long)."""
        pending: list[tuple[ir.Operation, bool]] = [(root, False)]
        while pending:
            op, ready = pending.pop()
            if op.results and op.results[0] in self.recomputed:
                continue
            if ready:
                self._clone(op)
                continue
            pending.append((op, True))
            pending.extend((v.owner.operation, False) for v in op.operands
                           if not self.regions.kept(v, op) and v not in self.recomputed)

    def _clone(self, op: ir.Operation) -> None:
        region = self.regions.region_of[op]
        operands = [(self._barrier(v, op.location) if region.prevent_cse else self.forward[v])
                    if self.regions.kept(v, op) else self.recomputed[v] for v in op.operands]
        clone = op.clone(ip=self.point)
        for i, v in enumerate(operands):
            clone.operands[i] = v
        strip_marks(clone)
        clone.attributes[RECOMPUTED_ATTR] = ir.UnitAttr.get(clone.context)
        self.recomputed.update(zip(op.results, clone.results, strict=True))

    def _barrier(self, value: ir.Value, location: ir.Location) -> ir.Value:
        if value not in self.barriers:
            barrier = Emitter(self.point, location)("optimization_barrier", self.forward[value])
            barrier.owner.attributes[RECOMPUTED_ATTR] = ir.UnitAttr.get(barrier.context)
            self.barriers[value] = barrier
        return self.barriers[value]


def strip_marks(op: ir.Operation) -> None:
    """A derivative program's copy of a checkpointed op belongs to no region: the policy's
    mark goes (a checkpoint around the derivative asks its own policy), the names stay."""
    if SAVEABLE_ATTR in op.attributes:
        del op.attributes[SAVEABLE_ATTR]
