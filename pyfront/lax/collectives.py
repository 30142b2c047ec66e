"""jax.lax's collectives over named axes: psum, pmean, pmax, pmin, all_gather, psum_scatter,
ppermute, all_to_all, axis_index, axis_size, those jax composes from them (pshuffle,
pswapaxes, pbroadcast), and pcast.

Each checks its axis names against the axes in scope (mlax.named_axes: a vmap's axis_name,
a shard_map's mesh axes; an unbound name is jax's NameError), maps over a pytree of
operands as jax does, and emits the dialect's tiled op (jax's untiled forms are a reshape
around it). Values that are not traced (constants, Python scalars) are the same on every
instance: psum of one is ``size * x`` computed at once, as jax does (``psum(1, "i")`` is the
axis size); the other collectives emit the op on the constant, which `mlax-batch` resolves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from jax import tree_util

from mlax import named_axes
from mlax.core import Tracer, abstractify, bind, current_trace
from mlax.errors import user_error
from mlax.lax.common import operand as as_operand
from mlax.lax.creation import full_like
from mlax.lax.elementwise import broadcast_select
from mlax.named_axes import AxisName
from mlax.sharding_types import made_varying

__all__ = ["all_gather", "all_to_all", "axis_index", "axis_size", "pbroadcast", "pcast", "pmax", "pmean",
           "pmin", "ppermute", "pshuffle", "psum", "psum_scatter", "pswapaxes"]


def _axes(axis_name: AxisName, api: str, axis_index_groups: Any = None) -> tuple[Any, ...]:
    """The names as a tuple, each checked bound (NameError naming it, as jax)."""
    if axis_index_groups is not None:
        raise user_error(NotImplementedError, f"{api}: axis_index_groups is not supported by mlax "
                         "(collectives run over whole named axes)", f"axis_index_groups of mlax.lax.{api}")
    names = named_axes.names_of(axis_name)
    for name in names:
        named_axes.frame_of(name)
    return names


def _attr(names: Sequence[Any]) -> tuple[str, ...]:
    return tuple(str(n) for n in names)


def _traced(x: Any) -> Any:
    """``x`` as a value of the current trace: a constant becomes one (collectives are always
    emitted where axes are bound, which is inside a trace)."""
    if isinstance(x, Tracer):
        return x
    x = as_operand(x)
    trace = current_trace()
    if trace is None:
        return x
    return Tracer(trace, trace.value_of(x), abstractify(x), "a constant operand of a collective")


def _canonical_axis(api: str, what: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise user_error(ValueError, f"{what} {axis} is out of bounds for array of dimension {ndim}",
                         f"{what} of mlax.lax.{api}")
    return int(axis) % ndim


# --- all-reduce ----------------------------------------------------------------------------------


def psum(x: Any, axis_name: AxisName, *, axis_index_groups: Any = None) -> Any:
    """All-reduce sum of ``x`` (a pytree) over ``axis_name``; booleans sum as int32 (jax)."""
    names = _axes(axis_name, "psum", axis_index_groups)
    if not names:
        return x
    size = named_axes.axis_size(names)

    def one(leaf: Any) -> Any:
        if not isinstance(leaf, Tracer):  # the same on every instance: jax's constant case
            if isinstance(leaf, bool | int | float | complex):
                return size * leaf
            value = np.asarray(leaf)
            if value.dtype == np.bool_:
                value = value.astype(np.int32)
            return as_operand(value * np.asarray(size, value.dtype))
        if leaf.dtype == np.bool_:
            leaf = bind("convert", leaf, new_dtype=np.dtype(np.int32))
        return bind("psum", leaf, axes=_attr(names))

    return tree_util.tree_map(one, x)


def pmean(x: Any, axis_name: AxisName, *, axis_index_groups: Any = None) -> Any:
    """All-reduce mean: psum divided by the number of instances along ``axis_name``."""
    total = psum(x, axis_name, axis_index_groups=axis_index_groups)
    size = named_axes.axis_size(_axes(axis_name, "pmean"))
    return tree_util.tree_map(lambda v: v / size, total)


def _extreme(kind: str) -> Any:
    def reduce(x: Any, axis_name: AxisName, *, axis_index_groups: Any = None) -> Any:
        names = _axes(axis_name, kind, axis_index_groups)
        if not names:
            return x
        return tree_util.tree_map(
            lambda leaf: bind(kind, leaf, axes=_attr(names)) if isinstance(leaf, Tracer) else leaf, x)

    reduce.__name__ = reduce.__qualname__ = kind
    reduce.__doc__ = f"All-reduce {kind[1:]}imum of ``x`` (a pytree) over ``axis_name``."
    return reduce


pmax = _extreme("pmax")
pmin = _extreme("pmin")


# --- gather / scatter ----------------------------------------------------------------------------


def all_gather(x: Any, axis_name: AxisName, *, axis_index_groups: Any = None, axis: int = 0,
               tiled: bool = False, to: str = "varying") -> Any:
    """Gather ``x`` from every instance along ``axis_name``: stacked at ``axis`` (a new
    dimension of the axis size) or, ``tiled``, concatenated along ``axis``."""
    if to not in ("varying", "reduced", "invarying"):
        raise user_error(ValueError, "Got unexpected `to` value for `jax.lax.all_gather`. Allowed `to` "
                         "values are: {'varying', 'reduced', 'invarying'}", "to of mlax.lax.all_gather")
    names = _axes(axis_name, "all_gather", axis_index_groups)
    if not names:
        return x
    size = named_axes.axis_size(names)

    def one(leaf: Any) -> Any:
        leaf = _traced(leaf)
        dim = _canonical_axis("all_gather", "axis", axis, leaf.ndim if tiled else leaf.ndim + 1)
        if not tiled:
            leaf = bind("reshape", leaf, shape=(*leaf.shape[:dim], 1, *leaf.shape[dim:]))
        return bind("all_gather", leaf, axes=_attr(names), dimension=dim, axis_size=size)

    return tree_util.tree_map(one, x)


def psum_scatter(x: Any, axis_name: AxisName, *, scatter_dimension: int = 0, axis_index_groups: Any = None,
                 tiled: bool = False) -> Any:
    """Sum ``x`` over ``axis_name`` and give instance ``j`` block ``j`` of ``scatter_dimension``
    (untiled: that dimension has the axis size and is dropped)."""
    names = _axes(axis_name, "psum_scatter", axis_index_groups)
    if not names:
        return x
    size = named_axes.axis_size(names)

    def one(leaf: Any) -> Any:
        leaf = _traced(leaf)
        dim = _canonical_axis("psum_scatter", "scatter_dimension", scatter_dimension, leaf.ndim)
        n = leaf.shape[dim]
        if tiled and n % size:
            raise user_error(ValueError, f"tiled reduce_scatter operand scatter dimension size {n} must be "
                             f"divisible by shard_count {size}", "x of mlax.lax.psum_scatter")
        if not tiled and n != size:
            raise user_error(ValueError, f"reduce_scatter operand scatter dimension size {n} must match "
                             f"shard count {size}", "x of mlax.lax.psum_scatter")
        out = bind("psum_scatter", leaf, axes=_attr(names), dimension=dim, axis_size=size)
        if tiled:
            return out
        return bind("reshape", out, shape=out.shape[:dim] + out.shape[dim + 1:])

    return tree_util.tree_map(one, x)


def all_to_all(x: Any, axis_name: AxisName, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Split ``split_axis`` into one block per instance, send block ``j`` to instance ``j``, and
    stack (or, ``tiled``, concatenate) the received blocks at ``concat_axis`` (jax's all_to_all)."""
    names = _axes(axis_name, "all_to_all", axis_index_groups)
    size = named_axes.axis_size(names)

    def one(leaf: Any) -> Any:
        leaf = _traced(leaf)
        split = _canonical_axis("all_to_all", "split_axis", split_axis, leaf.ndim)
        concat = _canonical_axis("all_to_all", "concat_axis", concat_axis, leaf.ndim)
        n = leaf.shape[split]
        if tiled and n % size:
            raise user_error(ValueError, f"The size of all_to_all split_axis ({n}) has to be divisible by "
                             f"the size of the named axis {axis_name} ({size})", "x of mlax.lax.all_to_all")
        if not tiled and n != size:
            raise user_error(ValueError, "all_to_all requires the size of the mapped axis axis_name to equal "
                             f"x.shape[split_axis], but they are {size} and {n} respectively.",
                             "x of mlax.lax.all_to_all")
        if not tiled and split != concat:  # jax: a new size-1 axis at concat receives the blocks
            if split < concat:
                concat += 1
            else:
                split += 1
            at = concat
            leaf = bind("reshape", leaf, shape=(*leaf.shape[:at], 1, *leaf.shape[at:]))
        out = bind("all_to_all", leaf, axes=_attr(names), split_dimension=split, concat_dimension=concat,
                   axis_size=size)
        if tiled or split == concat:
            return out
        return bind("reshape", out, shape=out.shape[:split] + out.shape[split + 1:])

    return tree_util.tree_map(one, x)


def ppermute(x: Any, axis_name: AxisName, perm: Sequence[tuple[int, int]]) -> Any:
    """Send ``x`` from instance ``source`` to ``destination`` for each pair of ``perm``; an
    instance no pair sends to gets zeros."""
    names = _axes(axis_name, "ppermute")
    size = named_axes.axis_size(names)
    pairs = [(int(s), int(d)) for s, d in perm]
    if any(not (0 <= i < size) for pair in pairs for i in pair):
        raise user_error(ValueError, f"ppermute perm {pairs} has an index outside the axis "
                         f"{axis_name} of size {size}", "perm of mlax.lax.ppermute")
    for what, ends in (("sources", [s for s, _ in pairs]), ("destinations", [d for _, d in pairs])):
        if len(set(ends)) != len(ends):
            raise user_error(ValueError, f"ppermute {what} must be unique, got {pairs}.",
                             "perm of mlax.lax.ppermute")
    flat = tuple(i for pair in pairs for i in pair)
    return tree_util.tree_map(lambda leaf: bind("ppermute", _traced(leaf), axes=_attr(names), pairs=flat), x)


def pshuffle(x: Any, axis_name: AxisName, perm: Sequence[int]) -> Any:
    """ppermute with the permutation as a list: instance i receives from instance perm[i]."""
    perm = [int(p) for p in perm]
    if set(perm) != set(range(len(perm))):
        raise user_error(ValueError, f"`perm` does not represent a permutation: {perm}",
                         "perm of mlax.lax.pshuffle")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)), strict=True)))


def pswapaxes(x: Any, axis_name: AxisName, axis: int, *, axis_index_groups: Any = None) -> Any:
    """Swap the named axis with the positional ``axis``: ``all_to_all(x, axis_name, axis, axis)``."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def pbroadcast(x: Any, axis_name: AxisName, source: int) -> Any:
    """Every instance gets instance ``source``'s value (jax's definition: the psum of ``x``
    masked to the source)."""
    at_source = axis_index(axis_name) == int(source)
    return psum(tree_util.tree_map(lambda leaf: broadcast_select(at_source, leaf, full_like(leaf, 0)), x),
                axis_name)


def pcast(x: Any, axis_name: AxisName, *, to: str) -> Any:
    """jax's cast between varying-axes types. ``to="varying"`` (jax's pvary) is the identity on
    values; mlax's reverse mode inside a checked shard_map body sums the cotangent where the
    value meets varying ones, which is the transpose jax gives it (passes/autodiff/varying.py).
    The explicit-sharding states ("reduced", "unreduced") are not supported."""
    if isinstance(axis_name, (set, frozenset)):
        raise user_error(TypeError, f"axis_name={axis_name} must be a tuple or a str. Got {axis_name}",
                         "axis_name of mlax.lax.pcast")
    allowed = ("reduced", "unreduced", "varying")
    if to not in allowed:
        raise user_error(ValueError, f"Got unexpected `to` value. Allowed `to` values are: {set(allowed)}",
                         "to of mlax.lax.pcast")
    if not axis_name:
        return x
    names = _axes(axis_name, "pcast")
    if to != "varying":
        raise user_error(NotImplementedError, f"pcast to {to!r} (explicit sharding's reduced states) is not "
                         "supported by mlax", "to of mlax.lax.pcast")
    return tree_util.tree_map(lambda leaf: made_varying(leaf, _attr(names)), x)  # its type varies now


# --- indices and sizes ---------------------------------------------------------------------------


def axis_index(axis_name: AxisName) -> Any:
    """This instance's index along ``axis_name`` (several names: linearized, the first major)."""
    names = _axes(axis_name, "axis_index")
    return bind("axis_index", axes=_attr(names), axis_size=named_axes.axis_size(names))


def axis_size(axis_name: AxisName) -> int:
    """The number of instances along ``axis_name`` (several names: the product)."""
    return named_axes.axis_size(_axes(axis_name, "axis_size"))
