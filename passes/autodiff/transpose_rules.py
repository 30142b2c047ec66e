"""TRANSPOSE rules: the adjoint of each op that JVP rules emit linearly in the tangents.

Reverse mode (vjp.py) visits the linear ops of a linearized function backwards; the rule of
an op maps the cotangent of its result to cotangents of its linear operands (operands given
as None), treating its other operands as constants of the linear map. Each adjoint is the
one JAX uses (jax/_src/lax/lax.py, slicing.py), written with mlax ops, and always returns
exactly the operand's type. Every linear op has one result, so rules see a single cotangent.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np
from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.autodiff.emit import Emitter, MaybeValue, spec
from mlax.passes.autodiff.transpose_rules_collectives import COLLECTIVE_TRANSPOSE_RULES
from mlax.passes.autodiff.transpose_rules_complex import COMPLEX_TRANSPOSE_RULES
from mlax.passes.autodiff.transpose_rules_decompositions import DECOMPOSITION_TRANSPOSE_RULES
from mlax.passes.autodiff.transpose_rules_fft import FFT_TRANSPOSE_RULES
from mlax.passes.autodiff.transpose_rules_indexing import INDEXING_TRANSPOSE_RULES
from mlax.passes.autodiff.transpose_rules_sorting import SORTING_TRANSPOSE_RULES
from mlax.passes.autodiff.transpose_rules_windowed import WINDOWED_TRANSPOSE_RULES
from mlax.passes.registry import PassFailure

TransposeRule = Callable[[Emitter, ir.Operation, list[MaybeValue], list[MaybeValue]], list[MaybeValue]]
_Rule = Callable[[Emitter, ir.Operation, ir.Value, list[MaybeValue]], list[MaybeValue]]


# --- emission helpers that skip identities ------------------------------------------------------

def _reshape(e: Emitter, x: ir.Value, shape: Sequence[int]) -> ir.Value:
    return x if spec(x).shape == tuple(shape) else e("reshape", x, shape=tuple(shape))


def _reduce_sum(e: Emitter, x: ir.Value, dims: Sequence[int]) -> ir.Value:
    return e("reduce_sum", x, dimensions=tuple(dims)) if dims else x


def _transpose(e: Emitter, x: ir.Value, permutation: Sequence[int]) -> ir.Value:
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return x
    return e("transpose", x, permutation=permutation)


def _convert(e: Emitter, x: ir.Value, dtype: np.dtype) -> ir.Value:
    return x if spec(x).dtype == dtype else e("convert", x, new_dtype=np.dtype(dtype))


def _scalar(e: Emitter, value: object, dtype: np.dtype) -> ir.Value:
    return e("constant", value=np.asarray(value, dtype=dtype))


def _require_one_linear(op: ir.Operation, operands: list[MaybeValue]) -> None:
    """Products are linear in one factor only; the JVP rules never make both factors linear."""
    if (operands[0] is None) == (operands[1] is None):
        raise PassFailure(f"mlax-autodiff: {op.name} is linear in exactly one of its two operands "
                          f"in a linearized function, got both", op.location)


# --- elementwise ----------------------------------------------------------------------------------

def _add(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    return [ct if x is None else None for x in operands]


def _sub(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    lhs, rhs = operands
    return [ct if lhs is None else None, e("neg", ct) if rhs is None else None]


def _neg(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    return [e("neg", ct)]


def _mul(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    _require_one_linear(op, operands)
    lhs, rhs = operands
    return [e("mul", ct, rhs) if lhs is None else None, e("mul", lhs, ct) if rhs is None else None]


def _div(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    numerator, denominator = operands
    if numerator is not None or denominator is None:
        raise PassFailure(f"mlax-autodiff: {op.name} is linear only in its numerator", op.location)
    return [e("div", ct, denominator), None]


def _convert_back(e: Emitter, op: ir.Operation, ct: ir.Value,
                  operands: list[MaybeValue]) -> list[MaybeValue]:
    return [_convert(e, ct, spec(op.operands[0]).dtype)]


def _select(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    """The cotangent flows into the branch each element came from; the other branch gets 0."""
    pred, on_true, on_false = operands
    zeros = e.zeros(ct)
    return [None,
            e("select", pred, ct, zeros) if on_true is None else None,
            e("select", pred, zeros, ct) if on_false is None else None]


# --- dot_general --------------------------------------------------------------------------------

def _work_dtype(a: np.dtype, b: np.dtype) -> np.dtype:
    """The float type holding both the result and operand types (f16 with bf16: f32)."""
    if a == b:
        return a
    if a.itemsize != b.itemsize:
        return max(a, b, key=lambda d: d.itemsize)
    return np.dtype(np.float32)


def _dot_general(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    """JAX's _dot_general_transpose_lhs/rhs: contract the cotangent with the constant operand
    over the constant's free dimensions (and batch), then permute into the operand's order."""
    _require_one_linear(op, operands)
    a = read_attributes(op)
    contracting = (a["lhs_contracting_dimensions"], a["rhs_contracting_dimensions"])
    batch = (a["lhs_batch_dimensions"], a["rhs_batch_dimensions"])
    ranks = [spec(v).ndim for v in op.operands]
    kept = [[d for d in range(ranks[s]) if d not in contracting[s] and d not in batch[s]] for s in (0, 1)]
    this = 0 if operands[0] is None else 1
    other = 1 - this
    constant = operands[other]
    n_batch = len(batch[0])
    # Result dimensions: batch, lhs kept, rhs kept.
    first_kept = n_batch + (len(kept[0]) if other == 1 else 0)
    ct_other_dims = tuple(range(first_kept, first_kept + len(kept[other])))
    dtype = spec(op.operands[this]).dtype
    work = _work_dtype(dtype, spec(ct).dtype)
    product = e("dot_general", _convert(e, ct, work), _convert(e, constant, work),
                lhs_contracting_dimensions=ct_other_dims, rhs_contracting_dimensions=tuple(kept[other]),
                lhs_batch_dimensions=tuple(range(n_batch)), rhs_batch_dimensions=tuple(batch[other]),
                result_dtype=work, precision=a["precision"])  # unswapped, as jax's rule
    # The product's dimensions are the operand's batch, kept, then contracting dimensions in the
    # order of their partners in the constant.
    by_partner = [contracting[this][i] for i in np.argsort(contracting[other], kind="stable")]
    order = list(batch[this]) + kept[this] + by_partner
    result = _convert(e, _transpose(e, product, np.argsort(order)), dtype)
    return [result if s == this else None for s in (0, 1)]


# --- shape ops ------------------------------------------------------------------------------------

def _broadcast_in_dim(e: Emitter, op: ir.Operation, ct: ir.Value,
                      operands: list[MaybeValue]) -> list[MaybeValue]:
    """Sum over the added and the expanded (size 1 -> n) dimensions, then restore the 1s."""
    a = read_attributes(op)
    shape = spec(op.operands[0]).shape
    kept = {d for i, d in enumerate(a["broadcast_dimensions"]) if shape[i] == a["shape"][d]}
    summed = [d for d in range(len(a["shape"])) if d not in kept]
    return [_reshape(e, _reduce_sum(e, ct, summed), shape)]


def _reshape_back(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    return [_reshape(e, ct, spec(op.operands[0]).shape)]


def _transpose_back(e: Emitter, op: ir.Operation, ct: ir.Value,
                    operands: list[MaybeValue]) -> list[MaybeValue]:
    return [_transpose(e, ct, np.argsort(read_attributes(op)["permutation"]))]


def _rev(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    return [e("rev", ct, dimensions=read_attributes(op)["dimensions"])]


def _sharding_constraint(e: Emitter, op: ir.Operation, ct: ir.Value,
                         operands: list[MaybeValue]) -> list[MaybeValue]:
    """The identity with a layout: the cotangent gets the same constraint (jax's rule)."""
    return [e("sharding_constraint", ct, sharding=read_attributes(op)["sharding"])]


def _optimization_barrier(e: Emitter, op: ir.Operation, ct: ir.Value,
                          operands: list[MaybeValue]) -> list[MaybeValue]:
    """The identity behind a barrier: the cotangent goes back through one."""
    return [e("optimization_barrier", ct)]


def _reduce_sum_back(e: Emitter, op: ir.Operation, ct: ir.Value,
                     operands: list[MaybeValue]) -> list[MaybeValue]:
    shape = spec(op.operands[0]).shape
    reduced = set(read_attributes(op)["dimensions"])
    if not reduced:
        return [ct]
    kept = tuple(d for d in range(len(shape)) if d not in reduced)
    return [e("broadcast_in_dim", ct, shape=shape, broadcast_dimensions=kept)]


def _cumsum(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    a = read_attributes(op)
    return [e("cumsum", ct, axis=a["axis"], reverse=1 - a["reverse"])]


def _slice(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    """Zeros around the window and between strided elements (JAX's _slice_transpose_rule)."""
    a = read_attributes(op)
    sizes = spec(op.operands[0]).shape
    starts, strides = a["start_indices"], a["strides"]
    ends = [s + (n - 1) * k + 1 if n else s for s, n, k in zip(starts, spec(ct).shape, strides, strict=True)]
    return [e("pad", ct, _scalar(e, 0, spec(ct).dtype), edge_padding_low=tuple(starts),
              edge_padding_high=tuple(d - end for d, end in zip(sizes, ends, strict=True)),
              interior_padding=tuple(k - 1 for k in strides))]


def _pad(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    """Operand: undo the edge padding (cropped elements get 0), then take every (interior+1)-th
    element. Padding value: the sum of the cotangent over the padded positions, picked by a
    mask, so non-finite cotangents of operand positions do not leak into it."""
    a = read_attributes(op)
    low, high, interior = a["edge_padding_low"], a["edge_padding_high"], a["interior_padding"]
    operand, value = operands
    dtype = spec(ct).dtype
    ct_operand = ct_value = None
    if operand is None:
        unpadded = e("pad", ct, _scalar(e, 0, dtype), edge_padding_low=tuple(-x for x in low),
                     edge_padding_high=tuple(-x for x in high), interior_padding=(0,) * len(low))
        ct_operand = e("slice", unpadded, start_indices=(0,) * len(low), limit_indices=spec(unpadded).shape,
                       strides=tuple(i + 1 for i in interior))
    if value is None:
        shape = spec(op.operands[0]).shape
        holes = e("broadcast_in_dim", _scalar(e, False, np.bool_), shape=shape, broadcast_dimensions=())
        padded = e("pad", holes, _scalar(e, True, np.bool_), edge_padding_low=low, edge_padding_high=high,
                   interior_padding=interior)
        ct_value = _reduce_sum(e, e("select", padded, ct, e.zeros(ct)), range(len(shape)))
    return [ct_operand, ct_value]


def _window(e: Emitter, ct: ir.Value, dimension: int, start: int, size: int) -> ir.Value:
    """``ct[..., start:start + size, ...]`` along ``dimension``."""
    shape = spec(ct).shape
    starts = tuple(start if d == dimension else 0 for d in range(len(shape)))
    limits = tuple(start + size if d == dimension else n for d, n in enumerate(shape))
    return e("slice", ct, start_indices=starts, limit_indices=limits, strides=(1,) * len(shape))


def _concatenate(e: Emitter, op: ir.Operation, ct: ir.Value, operands: list[MaybeValue]) -> list[MaybeValue]:
    dimension = read_attributes(op)["dimension"]
    split = spec(op.operands[0]).shape[dimension]
    total = spec(ct).shape[dimension]
    lhs, rhs = operands
    return [_window(e, ct, dimension, 0, split) if lhs is None else None,
            _window(e, ct, dimension, split, total - split) if rhs is None else None]


def _dynamic_slice(e: Emitter, op: ir.Operation, ct: ir.Value,
                   operands: list[MaybeValue]) -> list[MaybeValue]:
    """Write the cotangent into zeros at the same (identically clamped) start indices."""
    indices = operands[1:]
    return [e("dynamic_update_slice", e.zeros(op.operands[0].type), ct, *indices)] + [None] * len(indices)


def _dynamic_update_slice(e: Emitter, op: ir.Operation, ct: ir.Value,
                          operands: list[MaybeValue]) -> list[MaybeValue]:
    """Operand: the cotangent with the overwritten window zeroed; update: that window."""
    operand, update, *indices = operands
    update_type = op.operands[1].type
    return [e("dynamic_update_slice", ct, e.zeros(update_type), *indices) if operand is None else None,
            e("dynamic_slice", ct, *indices, slice_sizes=spec(update_type).shape) if update is None else None,
            ] + [None] * len(indices)


def _single_result(rule: _Rule) -> TransposeRule:
    """Adapts a rule of one cotangent (every linear op has one result) to the table's signature."""
    @functools.wraps(rule)
    def transpose(e: Emitter, op: ir.Operation, cts: list[MaybeValue],
                  operands: list[MaybeValue]) -> list[MaybeValue]:
        (ct,) = cts
        return rule(e, op, ct, operands)
    return transpose


TRANSPOSE_RULES: dict[str, TransposeRule] = {name: _single_result(rule) for name, rule in {
    "add": _add,
    "sub": _sub,
    "neg": _neg,
    "mul": _mul,
    "div": _div,
    "convert": _convert_back,
    "select": _select,
    "dot_general": _dot_general,
    "broadcast_in_dim": _broadcast_in_dim,
    "reshape": _reshape_back,
    "transpose": _transpose_back,
    "rev": _rev,
    "sharding_constraint": _sharding_constraint,
    "optimization_barrier": _optimization_barrier,
    "reduce_sum": _reduce_sum_back,
    "cumsum": _cumsum,
    "slice": _slice,
    "pad": _pad,
    "concatenate": _concatenate,
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    **WINDOWED_TRANSPOSE_RULES,
    **INDEXING_TRANSPOSE_RULES,
    **SORTING_TRANSPOSE_RULES,
    **COLLECTIVE_TRANSPOSE_RULES,
    **COMPLEX_TRANSPOSE_RULES,
    **DECOMPOSITION_TRANSPOSE_RULES,
    **FFT_TRANSPOSE_RULES,
}.items()}
