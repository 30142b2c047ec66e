"""reduce and reduce_window -> mlax's reductions, by what their bodies compute (patterns.py).

Windows that span one whole axis, padded on one side (jax's cumsum and friends), become
mlax's cumulative ops. An init value that is the monoid's identity (what jax writes) adds
nothing; any other init value, known or traced, is combined once with the result (exact for
max/min, which are idempotent, and for a reduce, where XLA applies it once). A sum
reduce_window with padding or base dilation and another init value is refused: XLA fills the
padding with the init.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mlir import ir

import mlax.lax as lax
from mlax.dialect import dtypes
from mlax.import_stablehlo.core import (
    Entry,
    Importer,
    integer,
    ints,
    pairs,
    producer,
    single_block,
    unsupported,
    value_spec,
)
from mlax.import_stablehlo.patterns import arg_extreme, monoid

CONVERTERS: dict[str, Entry] = {}

_REDUCE = {"sum": lax.reduce_sum, "prod": lax.reduce_prod, "max": lax.reduce_max, "min": lax.reduce_min,
           "and": lax.reduce_and, "or": lax.reduce_or}
_COMBINE = {"sum": lax.add, "prod": lax.mul, "max": lax.max, "min": lax.min, "and": lax.bitwise_and,
            "or": lax.bitwise_or}
_WINDOW = {"sum": lax.reduce_window_sum, "max": lax.reduce_window_max, "min": lax.reduce_window_min}
_CUMULATIVE = {"sum": lax.cumsum, "prod": lax.cumprod, "max": lax.cummax, "min": lax.cummin}


def identity(kind: str, dtype: np.dtype) -> np.ndarray:
    """The identity of a monoid in ``dtype`` (max: -inf or the lowest integer, and: all ones...)."""
    dtype = np.dtype(dtype)
    if kind in ("sum", "or"):
        return np.zeros((), dtype)
    if kind == "prod":
        return np.ones((), dtype)
    if kind == "and":
        return np.array(True) if dtypes.is_bool(dtype) else np.array(-1).astype(dtype)
    low = kind == "max"
    if dtypes.is_bool(dtype):
        return np.array(not low)
    if dtypes.is_float(dtype):
        return np.array(-np.inf if low else np.inf, dtype)
    info = np.iinfo(dtype)
    return np.array(info.min if low else info.max, dtype)


def _is_identity(imp: Importer, init: ir.Value, kind: str, dtype: np.dtype) -> bool:
    value = imp.concrete(init)
    return value is not None and bool(np.all(value == identity(kind, dtype)))


def _body_error(op: ir.Operation) -> Exception:
    return unsupported(op, "a body that is neither one of add, multiply, maximum, minimum, and, or over its "
                           "arguments nor jax's argmax/argmin pair (mlax reduces by those alone)")


def reduce(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    n = len(op.results)
    inputs, inits = args[:n], args[n:]
    dims = ints(op, "dimensions")
    block = single_block(op, 0)
    kinds = [monoid(block, i, i, n + i) for i in range(n)]
    if all(kinds):
        outs = []
        for i, kind in enumerate(kinds):
            out = _REDUCE[kind](inputs[i], dims)
            if not _is_identity(imp, op.operands[n + i], kind, value_spec(op, op.operands[i]).dtype):
                out = _COMBINE[kind](out, inits[i])
            outs.append(out)
        return outs
    kind = arg_extreme(block) if n == 2 else None
    if kind is None:
        raise _body_error(op)
    return _arg_reduce(imp, op, kind, inputs, dims)


def _arg_reduce(imp: Importer, op: ir.Operation, kind: str, inputs: list[Any], dims: list[int]) -> list[Any]:
    """jax's argmax/argmin: a reduce of (values, iota along the axis) from (identity, 0)."""
    values, _ = inputs
    iota = producer(op.operands[1])
    dtype, index_dtype = (value_spec(op, v).dtype for v in op.operands[:2])
    if len(dims) != 1 or iota is None or iota.name != "stablehlo.iota" \
            or integer(iota, "iota_dimension") != dims[0]:
        raise unsupported(op, f"an arg{kind} over dimensions {dims} whose indices are not an iota along the "
                              "reduced dimension")
    index_init = imp.concrete(op.operands[3])
    if not _is_identity(imp, op.operands[2], kind, dtype) or index_init is None or np.any(index_init != 0):
        raise unsupported(op, f"an arg{kind} whose init values are not ({identity(kind, dtype)}, 0)")
    return [_REDUCE[kind](values, dims), getattr(lax, f"arg{kind}")(values, dims[0], index_dtype)]


def reduce_window(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    if len(op.results) != 1:
        raise unsupported(op, f"{len(op.results)} operands (mlax's reduce_window takes one)")
    x, init = args
    spec = value_spec(op, op.operands[0])
    rank = len(spec.shape)
    kind = monoid(single_block(op, 0), 0, 0, 1)
    ones = [1] * rank
    window, strides = ints(op, "window_dimensions"), ints(op, "window_strides", ones)
    padding, base = pairs(op, "padding", rank), ints(op, "base_dilations", ones)
    dilation = ints(op, "window_dilations", ones)
    identity_init = kind is not None and _is_identity(imp, op.operands[1], kind, spec.dtype)
    scan = _cumulative(spec.shape, window, strides, padding, base, dilation)
    if kind in _CUMULATIVE and identity_init and scan is not None:
        return [_CUMULATIVE[kind](x, *scan)]
    if kind not in _WINDOW:
        raise unsupported(op, "a body that is not add, maximum or minimum over the two arguments (or a "
                              "cumulative product)")
    out = _WINDOW[kind](x, window, strides, padding, base, dilation)
    if identity_init:
        return [out]
    if kind == "sum" and (any(p != (0, 0) for p in padding) or base != ones):
        raise unsupported(op, "a windowed sum whose init value is not 0, with padding or base dilation (the "
                              "padding takes the init value)")
    return [_COMBINE[kind](out, init)]


def _cumulative(shape: tuple[int, ...], window: list[int], strides: list[int], padding: list[tuple[int, int]],
                base: list[int], dilation: list[int]) -> tuple[int, bool] | None:
    """(axis, reverse) if the windows are those of a cumulative reduction along one axis (how
    jax writes cumsum/cumprod/cummax/cummin): the whole axis, padded before (or after) by all
    but one element, stride 1, no dilation; else None."""
    axes = [d for d, n in enumerate(window) if n != 1]
    if len(axes) != 1 or any(s != 1 for s in strides + base + dilation):
        return None
    (axis,) = axes
    n = shape[axis]
    others = all(p == (0, 0) for d, p in enumerate(padding) if d != axis)
    if window[axis] != n or not others or padding[axis] not in ((n - 1, 0), (0, n - 1)):
        return None
    return axis, padding[axis] == (0, n - 1)


CONVERTERS.update({
    "stablehlo.reduce": Entry(reduce, "mlax.reduce_{sum,prod,max,min,and,or}, mlax.argmax/argmin"),
    "stablehlo.reduce_window": Entry(reduce_window,
                                     "mlax.reduce_window_{sum,max,min}, mlax.cum{sum,prod,max,min}"),
})
