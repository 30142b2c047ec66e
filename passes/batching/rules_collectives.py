"""Batching the collective ops (jax/_src/lax/parallel.py's batchers, batch dimension at 0).

Two cases, as in jax:

- The op's `axes` do not name the vmap's `axis_name`: it communicates along other axes,
  lane by lane, so it is batched like an elementwise op (its dimension attributes shift past
  the batch dimension). These are the table's rules, `COLLECTIVE_BATCH_RULES`.
- They do (`resolve_collective`, called by the driver even for unbatched operands, since
  `psum(1, "i")` and `axis_index("i")` depend on the axis without depending on a batched
  value): the lanes ARE the instances, so the communication becomes ordinary ops over the
  batch dimension. psum/pmax/pmin reduce it (an unbatched operand: psum multiplies by the
  size, pmax/pmin keep it), all_gather folds it into `dimension`, psum_scatter reduces it
  and splits `dimension` into the lanes, all_to_all exchanges blocks between the lanes,
  ppermute picks each destination's source lane (zeros where none sends), axis_index is an
  iota. Axes left over keep a smaller collective, resolved by the vmap that binds them.

Over several axes the linear index has the first axis major: axes before the vmap's are
`prefix`, after it `suffix`. all_gather = gather(prefix) of gather(vmap axis) of
gather(suffix); psum_scatter the other way round; axis_index combines the parts with the
sizes of prefix and suffix, which must come from the op's `axis_size`, so the vmap's axis
must be first or last there. all_to_all over the vmap's axis and others is two exchanges
(the lanes', then a residual all_to_all over the others); ppermute over several axes is
refused (jax's batcher refuses it too).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mlir import ir

from mlax.dialect import read_attributes
from mlax.dialect.ops.collectives import COLLECTIVES, REDUCE_KIND, pairs_of
from mlax.passes.autodiff.emit import Emitter, spec
from mlax.passes.registry import PassFailure

BatchRule = Callable[[Emitter, ir.Operation, list[ir.Value], list[bool], int], list[ir.Value]]
Batched = tuple[list[ir.Value], list[bool]]


def _name(op: ir.Operation) -> str:
    return op.name.removeprefix("mlax.")


def names_axis(op: ir.Operation, axis_name: str | None) -> bool:
    """Whether ``op`` is a collective over ``axis_name`` (the vmap being resolved)."""
    if axis_name is None or not op.name.startswith("mlax.") or _name(op) not in COLLECTIVES:
        return False
    return axis_name in read_attributes(op)["axes"]


def resolved_flags(op: ir.Operation, flags: list[bool]) -> list[bool]:
    """Whether `resolve_collective` returns ``op``'s result batched: the reductions and
    all_gather give every lane the same value; the others give each lane its own."""
    return [_name(op) not in (*REDUCE_KIND, "all_gather")]


# --- the op's axes do not name the vmap's: batched lane by lane ---------------------------------------


def _broadcast(e: Emitter, value: ir.Value, size: int) -> ir.Value:
    shape = spec(value).shape
    return e("broadcast_in_dim", value, shape=(size, *shape),
             broadcast_dimensions=tuple(range(1, len(shape) + 1)))


def _shifting(*dims: str) -> BatchRule:
    """The same collective with the dimension attributes ``dims`` moved past the batch."""

    def rule(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
             size: int) -> list[ir.Value]:
        attrs = read_attributes(op)
        attrs.update({d: attrs[d] + 1 for d in dims})
        return [e(_name(op), *operands, **attrs)]

    return rule


def _axis_index(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
                size: int) -> list[ir.Value]:
    """No operands, so the driver never batches it over another axis; the same on every lane."""
    return [_broadcast(e, e("axis_index", **read_attributes(op)), size)]


COLLECTIVE_BATCH_RULES: dict[str, BatchRule] = {
    **{name: _shifting() for name in (*REDUCE_KIND, "ppermute")},
    "all_gather": _shifting("dimension"),
    "psum_scatter": _shifting("dimension"),
    "all_to_all": _shifting("split_dimension", "concat_dimension"),
    "axis_index": _axis_index,
}


# --- the op's axes name the vmap's: the lanes are the instances -----------------------------------------


class _Axes:
    """The op's axes around the vmap's: before it (major), after it (minor), and their sizes
    where the op's axis_size determines them."""

    def __init__(self, op: ir.Operation, axis_name: str, size: int) -> None:
        self.op = op
        self.attrs = read_attributes(op)
        axes = tuple(self.attrs["axes"])
        at = axes.index(axis_name)
        self.prefix, self.suffix = axes[:at], axes[at + 1:]
        self.rest = self.prefix + self.suffix
        total = self.attrs.get("axis_size")
        self.rest_size = total // size if total is not None else None
        if total is not None and total != size * self.rest_size:
            raise PassFailure(f"mlax-batch: {op.name} over axes {list(axes)} has axis_size {total}, but "
                              f"the vmap over '{axis_name}' has size {size}, which does not divide it",
                              op.location)
        if total is not None and not self.rest and total != size:
            raise PassFailure(f"mlax-batch: {op.name} over axes {list(axes)} has axis_size {total}, but "
                              f"the vmap over '{axis_name}' has size {size}", op.location)

    def size_of(self, part: tuple[str, ...]) -> int:
        """The size of ``prefix`` or ``suffix`` (the other one must be empty)."""
        if self.prefix and self.suffix:
            raise PassFailure(
                f"mlax-batch: {self.op.name} over axes {list(self.prefix + self.suffix)} around the vmap's "
                "axis: the vmap's axis must be the first or the last of its axes (the sizes of the others "
                "are not known here)", self.op.location)
        return self.rest_size if part else 1

    def only(self) -> None:
        if self.rest:
            raise PassFailure(f"mlax-batch: {self.op.name} over several axes {list(self.attrs['axes'])} "
                              "cannot be resolved one vmap at a time; use one axis name", self.op.location)


def _move(e: Emitter, x: ir.Value, source: int, destination: int) -> ir.Value:
    rank = spec(x).ndim
    if source == destination:
        return x
    order = [d for d in range(rank) if d != source]
    order.insert(destination, source)
    return e("transpose", x, permutation=tuple(order))


def _merge(e: Emitter, x: ir.Value, dim: int) -> ir.Value:
    """Dimensions ``dim`` and ``dim + 1`` as one (``dim`` major)."""
    shape = spec(x).shape
    return e("reshape", x, shape=(*shape[:dim], shape[dim] * shape[dim + 1], *shape[dim + 2:]))


def _split(e: Emitter, x: ir.Value, dim: int, parts: int) -> ir.Value:
    """Dimension ``dim`` as (``parts``, the rest)."""
    shape = spec(x).shape
    return e("reshape", x, shape=(*shape[:dim], parts, shape[dim] // parts, *shape[dim + 1:]))


def _lanes(e: Emitter, x: ir.Value, batched: bool, size: int) -> ir.Value:
    return x if batched else _broadcast(e, x, size)


def _reduction(e: Emitter, axes: _Axes, x: ir.Value, batched: bool, size: int) -> Batched:
    kind = REDUCE_KIND[_name(axes.op)]
    if batched:
        out = e(f"reduce_{kind}", x, dimensions=(0,))
    elif kind == "sum":
        out = e("mul", x, e.full(x, size))
    else:
        out = x
    if axes.rest:
        out = e(_name(axes.op), out, axes=axes.rest)
    return [out], [False]


def _all_gather(e: Emitter, axes: _Axes, x: ir.Value, batched: bool, size: int) -> Batched:
    dim = axes.attrs["dimension"]
    if axes.suffix:
        x = _lanes(e, x, batched, size)
        x = e("all_gather", x, axes=axes.suffix, dimension=dim + 1, axis_size=axes.size_of(axes.suffix))
        batched = True
    if batched:
        stacked = _move(e, x, 0, dim)
    else:
        shape = spec(x).shape
        stacked = e("broadcast_in_dim", x, shape=(*shape[:dim], size, *shape[dim:]),
                    broadcast_dimensions=tuple(d + (d >= dim) for d in range(len(shape))))
    out = _merge(e, stacked, dim)
    if axes.prefix:
        out = e("all_gather", out, axes=axes.prefix, dimension=dim, axis_size=axes.size_of(axes.prefix))
    return [out], [False]


def _psum_scatter(e: Emitter, axes: _Axes, x: ir.Value, batched: bool, size: int) -> Batched:
    dim = axes.attrs["dimension"]
    if axes.prefix:
        x = _lanes(e, x, batched, size)
        x = e("psum_scatter", x, axes=axes.prefix, dimension=dim + 1, axis_size=axes.size_of(axes.prefix))
        batched = True
    total = e("reduce_sum", x, dimensions=(0,)) if batched else e("mul", x, e.full(x, size))
    out = _move(e, _split(e, total, dim, size), dim, 0)  # lane j takes block j
    if axes.suffix:
        out = e("psum_scatter", out, axes=axes.suffix, dimension=dim + 1, axis_size=axes.size_of(axes.suffix))
    return [out], [True]


def _exchange(e: Emitter, x: ir.Value, split: int, concat: int, size: int) -> ir.Value:
    """The all_to_all over the lanes of ``x`` (the lanes at dimension 0; ``split`` and ``concat``
    are dimensions of one lane's value): lane j receives block j of every lane's split
    dimension, concatenated in lane order. Split the dimension into (destination, block),
    bring the destination to the front and the source lane before the concat dimension, and
    fold the source into it."""
    x = _split(e, x, split + 1, size)  # (source, *s[:split], dest, block, ...)
    rank = spec(x).ndim - 2  # the rank of one lane's operand

    def position(t: int) -> int:  # where dimension t of a lane's operand (block for split) is
        return 1 + t + (t >= split)

    order = (1 + split, *(position(t) for t in range(concat)), 0, *(position(t) for t in range(concat, rank)))
    return _merge(e, e("transpose", x, permutation=order), 1 + concat)


def _swap(e: Emitter, x: ir.Value, dim: int, first: int, second: int) -> ir.Value:
    """Dimension ``dim``, read as (first, second, rest) digits, as (second, first, rest)."""
    shape = spec(x).shape
    digits = e("reshape", x, shape=(*shape[:dim], first, second, shape[dim] // (first * second),
                                    *shape[dim + 1:]))
    order = list(range(len(shape) + 2))
    order[dim], order[dim + 1] = dim + 1, dim
    return e("reshape", e("transpose", digits, permutation=tuple(order)), shape=shape)


def _all_to_all(e: Emitter, axes: _Axes, x: ir.Value, batched: bool, size: int) -> Batched:
    """Over the vmap's axis alone, an exchange between the lanes. Over it and others (it first
    or last of them, index = the axes' digits, first major), two exchanges: between the lanes
    by the lane digit of each block's destination, then a residual all_to_all over the others
    by the rest of it; blocks are reordered around them so that each arrives in the order of
    its source's index."""
    split, concat = axes.attrs["split_dimension"], axes.attrs["concat_dimension"]
    x = _lanes(e, x, batched, size)
    if not axes.rest:
        return [_exchange(e, x, split, concat, size)], [True]
    n = axes.size_of(axes.prefix or axes.suffix)
    d_split, d_concat = split + 1, concat + 1  # with the lanes at 0
    if axes.prefix:  # destination digits (rest, lane): the lane digit first
        x = _swap(e, x, d_split, n, size)
    x = _exchange(e, x, split, concat, size)  # the split dimension now (rest, block) per lane
    if split == concat:  # (source lane, rest, block): the rest digit first for the residual split
        x = _swap(e, x, d_split, size, n)
    out = e("all_to_all", x, axes=axes.rest, split_dimension=d_split, concat_dimension=d_concat, axis_size=n)
    if axes.suffix:  # arrived as (rest source, lane source, ...): the lane digit is the major one
        out = _swap(e, out, d_concat, n, size)
    return [out], [True]


def _ppermute(e: Emitter, axes: _Axes, x: ir.Value, batched: bool, size: int) -> Batched:
    """Each destination lane takes its source lane's slice; lanes no pair sends to get zeros."""
    axes.only()
    x = _lanes(e, x, batched, size)
    source = {d: s for s, d in pairs_of(axes.attrs["pairs"])}
    if any(not 0 <= i < size for pair in source.items() for i in pair):
        raise PassFailure(f"mlax-batch: {axes.op.name} pairs {pairs_of(axes.attrs['pairs'])} name a lane "
                          f"outside the vmap of size {size}", axes.op.location)
    shape = spec(x).shape
    zero = None
    pieces = []
    for lane in range(size):
        if lane in source:
            s = source[lane]
            pieces.append(e("slice", x, start_indices=(s, *[0] * (len(shape) - 1)),
                            limit_indices=(s + 1, *shape[1:]), strides=(1,) * len(shape)))
        else:
            zero = zero or e("broadcast_in_dim", e("constant", value=np.zeros((), spec(x).dtype)),
                             shape=(1, *shape[1:]), broadcast_dimensions=())
            pieces.append(zero)
    out = pieces[0]
    for piece in pieces[1:]:
        out = e("concatenate", out, piece, dimension=0)
    return [out], [True]


def _index(e: Emitter, axes: _Axes, size: int) -> Batched:
    """iota over the lanes, scaled by the size of the axes after it, plus the index over the others."""
    i32 = np.dtype(np.int32)
    lanes = e("iota", shape=(size,), dtype=i32, dimension=0)
    if not axes.rest:
        return [lanes], [True]
    rest = e("axis_index", axes=axes.rest, axis_size=axes.rest_size)
    if axes.suffix:
        inner = axes.size_of(axes.suffix)
        lanes = e("mul", lanes, e.full(lanes, inner))
    else:
        rest = e("mul", rest, e.full(rest, size))
    return [e("add", lanes, e("broadcast_in_dim", rest, shape=(size,), broadcast_dimensions=()))], [True]


def resolve_collective(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool], size: int,
                       axis_name: str) -> Batched:
    """``op``, a collective whose axes name ``axis_name``, on the lanes of the vmap binding it:
    its results and whether each carries the batch (at 0)."""
    axes = _Axes(op, axis_name, size)
    name = _name(op)
    if name == "axis_index":
        return _index(e, axes, size)
    (x,), (flag,) = operands, batched
    if name in REDUCE_KIND:
        return _reduction(e, axes, x, flag, size)
    resolve = {"all_gather": _all_gather, "psum_scatter": _psum_scatter, "all_to_all": _all_to_all,
               "ppermute": _ppermute}[name]
    return resolve(e, axes, x, flag, size)
