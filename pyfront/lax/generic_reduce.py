"""jax.lax.reduce with any computation, and reduce_xor.

mlax's reduction ops each carry one monoid (sum, prod, max, min, and, or), no region. So
``reduce`` maps the monoids jax recognises (lax add/mul/max/min/bitwise and/or/xor with a
concrete scalar init value) to those ops, and folds any other computation as a balanced
tree: the reduced elements pair up, the computation (vmapped: jax calls it on scalars)
combines each pair, and the halves shrink until one element is left, which the init value
then joins from the left. That is log2(n) calls, and it is what XLA may do with a
computation it must treat as associative (jax requires it to be, with the init value an
identity). reduce_xor folds bitwise_xor the same way (booleans: the parity of a sum).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import lax as jax_lax
from jax import tree_util

from mlax.batching import vmap
from mlax.core import Tracer, abstractify
from mlax.dialect import dtypes as ir_dtypes
from mlax.lax import elementwise, reductions
from mlax.lax.common import operand as as_operand
from mlax.lax.shape import broadcast_in_dim, concatenate, reshape, slice_in_dim, transpose
from mlax.source_info import where

# (mlax op, jax op, reduction, identity for a dtype); bool max/min are or/and.
_MONOIDS = (
    (elementwise.add, jax_lax.add, "sum", lambda dt: 0),
    (elementwise.mul, jax_lax.mul, "prod", lambda dt: 1),
    (elementwise.max, jax_lax.max, "max", lambda dt: _extreme(dt, low=True)),
    (elementwise.min, jax_lax.min, "min", lambda dt: _extreme(dt, low=False)),
    (elementwise.bitwise_and, jax_lax.bitwise_and, "and", lambda dt: -1 if dt != np.bool_ else True),
    (elementwise.bitwise_or, jax_lax.bitwise_or, "or", lambda dt: 0),
    (elementwise.bitwise_xor, jax_lax.bitwise_xor, "xor", lambda dt: 0),
)
_BITWISE = {"and", "or", "xor"}


def _extreme(dtype: np.dtype, low: bool) -> Any:
    if dtype == np.bool_:
        return not low
    if ir_dtypes.is_float(dtype):
        return -np.inf if low else np.inf
    info = np.iinfo(dtype)
    return info.min if low else info.max


def _axes(fname: str, axes: Sequence[int], ndim: int) -> tuple[int, ...]:
    axes = tuple(int(a) for a in axes)
    if any(not 0 <= a < ndim for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"{fname}: dimensions {axes} must be distinct and in [0, {ndim}){where()}")
    return axes


def _as_rows(x: Any, axes: tuple[int, ...]) -> Any:
    """``x`` with the kept dimensions flattened into rows and the reduced ones into columns."""
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = transpose(x, kept + list(axes))
    return reshape(moved, (math.prod(x.shape[d] for d in kept), math.prod(x.shape[d] for d in axes)))


def _fold(combine: Combine, rows: list[Any]) -> list[Any]:
    """Combine the columns of the (rows, n) arrays pairwise until one column is left (n >= 1)."""
    n = rows[0].shape[1]
    while n > 1:
        half = n // 2
        left = [slice_in_dim(r, 0, half, axis=1) for r in rows]
        right = [slice_in_dim(r, half, 2 * half, axis=1) for r in rows]
        paired = combine(left, right)
        if n % 2:
            paired = [concatenate([p, slice_in_dim(r, n - 1, n, axis=1)], 1) for p, r in zip(paired, rows,
                                                                                           strict=True)]
        rows, n = paired, half + n % 2
    return [reshape(r, r.shape[:1]) for r in rows]


Combine = Callable[[list[Any], list[Any]], list[Any]]


def _elementwise(computation: Callable[[Any, Any], Any], tree: Any) -> Combine:
    """``computation`` on the elements of same-shaped flat lists of arrays (vmapped over them)."""
    unflat = functools.partial(tree_util.tree_unflatten, tree)
    mapped = vmap(lambda a, b: computation(unflat(a), unflat(b)))

    def combine(xs: list[Any], ys: list[Any]) -> list[Any]:
        shape = xs[0].shape
        flat = [[reshape(v, (math.prod(shape),)) for v in vs] for vs in (xs, ys)]
        out, out_tree = tree_util.tree_flatten(mapped(*flat))
        if out_tree != tree:
            raise TypeError(f"mlax.lax.reduce: the computation must return the structure of init_values, "
                            f"{tree}, got {out_tree}{where()}")
        return [reshape(v, shape) for v in out]

    return combine


def _tree_reduce(computation: Callable[[Any, Any], Any], tree: Any, operands: list[Any], inits: list[Any],
                 axes: tuple[int, ...]) -> list[Any]:
    shape = tuple(d for i, d in enumerate(operands[0].shape) if i not in axes)
    combine = _elementwise(computation, tree)
    rows = [_as_rows(x, axes) for x in operands]
    broadcast_inits = [broadcast_in_dim(i, rows[0].shape[:1], ()) for i in inits]
    if 0 in rows[0].shape:  # nothing to reduce, or nothing to keep
        out = broadcast_inits
    else:
        out = combine(broadcast_inits, _fold(combine, rows))
    return [reshape(o, shape) for o in out]


def _monoid(computation: Callable[..., Any], inits: list[Any]) -> tuple[str, bool] | None:
    """(reduction kind, whether the init value is its identity) for a recognised monoid."""
    if len(inits) != 1 or isinstance(inits[0], Tracer) or inits[0].shape != ():
        return None
    init = np.asarray(inits[0])
    for mine, theirs, kind, identity in _MONOIDS:
        if computation is mine or computation is theirs:
            if kind in _BITWISE and not (init.dtype == np.bool_ or ir_dtypes.is_int(init.dtype)):
                return None
            return kind, bool(init == np.asarray(identity(init.dtype)).astype(init.dtype))
    return None


def _reduce_monoid(kind: str, x: Any, axes: tuple[int, ...]) -> Any:
    if x.dtype == np.bool_ and kind in ("max", "min"):
        kind = {"max": "or", "min": "and"}[kind]
    if kind == "xor":
        return reduce_xor(x, axes)
    return getattr(reductions, f"reduce_{kind}")(x, axes)


def reduce(operands: Any, init_values: Any, computation: Callable[[Any, Any], Any],  # noqa: A001
           dimensions: Sequence[int]) -> Any:
    """Reduce ``operands`` (a pytree of arrays of one shape) over ``dimensions`` with
    ``computation``, starting from the scalar ``init_values`` (a pytree of the same structure)."""
    flat, tree = tree_util.tree_flatten(operands)
    inits, init_tree = tree_util.tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"mlax.lax.reduce: operands must have the same tree structure as init_values: "
                         f"{tree} vs. {init_tree}{where()}")
    if not flat:
        raise ValueError(f"mlax.lax.reduce: needs at least one operand{where()}")
    xs = [as_operand(x) for x in flat]
    inits = [as_operand(i) for i in inits]
    if len({abstractify(x).shape for x in xs}) != 1:
        raise ValueError(f"mlax.lax.reduce: operands must have one shape, got "
                         f"{[x.shape for x in xs]}{where()}")
    if any(i.shape != () for i in inits):
        raise ValueError(f"mlax.lax.reduce: init_values must be scalars, got shapes "
                         f"{[i.shape for i in inits]}{where()}")
    axes = _axes("mlax.lax.reduce", dimensions, xs[0].ndim)
    if not axes:  # XLA reduces nothing, and the init value does not join
        return tree_util.tree_unflatten(tree, xs)
    monoid = _monoid(computation, inits)
    if monoid is not None:
        kind, is_identity = monoid
        x, init = xs[0], elementwise.convert_element_type(inits[0], xs[0].dtype, inits[0].weak_type)
        out = _reduce_monoid(kind, x, axes)
        if not is_identity:
            out = computation(broadcast_in_dim(init, out.shape, ()), out)
        weak = x.weak_type and init.weak_type
        return tree_util.tree_unflatten(tree, [elementwise.convert_element_type(out, out.dtype, weak)])
    return tree_util.tree_unflatten(tree, _tree_reduce(computation, tree, xs, inits, axes))


def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise (booleans: logical) xor over ``axes``; empty gives zero."""
    x = as_operand(operand)
    axes = _axes("mlax.lax.reduce_xor", axes, x.ndim)
    if x.dtype == np.bool_:
        count = reductions.reduce_sum(elementwise.convert_element_type(x, np.int32), axes)
        return elementwise.ne(elementwise.bitwise_and(count, np.int32(1)), np.int32(0))
    if not ir_dtypes.is_int(x.dtype):
        raise TypeError(f"mlax.lax.reduce_xor: operand must be boolean or integer, got {x.dtype}{where()}")
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    rows = _as_rows(x, axes)
    if rows.shape[1] == 0:
        return broadcast_in_dim(np.zeros((), x.dtype), shape, ())
    (folded,) = _fold(lambda a, b: [elementwise.bitwise_xor(a[0], b[0])], [rows])
    return reshape(folded, shape)


__all__ = ["reduce", "reduce_xor"]
