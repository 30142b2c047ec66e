"""Resharding one per-device value from one partition spec to another, with collectives.

The cheapest road for the common moves, a general one for the rest:

- same spec: nothing;
- dimension a split over axes A becomes whole while dimension b (whole) becomes split over
  A: one ``mlax.all_to_all`` (split b, concatenate a);
- a dimension's axes lose a minor run (``[x, y] -> [x]``): ``mlax.all_gather`` over the run;
  any other change of a split dimension gathers it whole first;
- a dimension gains a minor run of axes (``[] -> [x]``, ``[x] -> [x, y]``): a local
  ``mlax.dynamic_slice`` at ``axis_index(run) * local size`` (no communication).

Gathers come before slices, so an axis leaving one dimension is free before another
dimension takes it.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from mlax.dialect.attrs import Spec
from mlax.passes.autodiff.emit import Emitter, spec


def _all_to_all(source: Spec, target: Spec) -> tuple[int, int] | None:
    """(concat dimension, split dimension) when one all_to_all moves the axes of one
    dimension to another that was whole; None otherwise."""
    changed = [d for d, (s, t) in enumerate(zip(source, target, strict=True)) if s != t]
    if len(changed) != 2:
        return None
    for a, b in (changed, changed[::-1]):
        if source[a] and source[a] == target[b] and not source[b] and not target[a]:
            return a, b
    return None


def reshard(e: Emitter, value: ir.Value, source: Spec, target: Spec, axis_size) -> ir.Value:
    """``value`` (a device's block of a tensor sharded as ``source``) as its block under
    ``target``. ``axis_size(axes)`` is the product of the mesh sizes of ``axes``."""
    if source == target:
        return value
    moved = _all_to_all(source, target)
    if moved is not None:
        concat, split = moved
        return e("all_to_all", value, axes=source[concat], split_dimension=split, concat_dimension=concat,
                 axis_size=axis_size(source[concat]))
    current = list(source)
    for d, (now, want) in enumerate(zip(source, target, strict=True)):
        if now == want or want[:len(now)] == now:
            continue
        keep = want if now[:len(want)] == want else ()
        run = now[len(keep):]
        value = e("all_gather", value, axes=run, dimension=d, axis_size=axis_size(run))
        current[d] = keep
    return _slice(e, value, tuple(current), target, axis_size)


def _slice(e: Emitter, value: ir.Value, source: Spec, target: Spec, axis_size) -> ir.Value:
    """Each device keeps its block of the dimensions that gain a minor run of axes."""
    if source == target:
        return value
    shape = list(spec(value).shape)
    sizes = list(shape)
    starts = []
    zero = None
    for d, (now, want) in enumerate(zip(source, target, strict=True)):
        run = want[len(now):]
        if not run:
            zero = zero if zero is not None else e("constant", value=np.asarray(0, np.int32))
            starts.append(zero)
            continue
        sizes[d] = shape[d] // axis_size(run)
        index = e("axis_index", axes=run, axis_size=axis_size(run))
        block = e("constant", value=np.asarray(sizes[d], np.int32))
        starts.append(e("mul", index, block))
    return e("dynamic_slice", value, *starts, slice_sizes=tuple(sizes))
