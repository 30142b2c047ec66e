"""Batch rules of `mlax-batch`: for each mlax op, the ops that compute it on batched operands.

Every batched value carries its batch dimension at position 0 (JAX's batching rules with
bdim 0), so a rule mostly shifts the op's dimension attributes by one and prepends the
batch size to its static shapes; unbatched operands are broadcast only where the op needs
operands of one shape. dot_general never loops: the batch becomes a batch dimension when
both sides carry it, else a free dimension moved to the front (JAX's
_dot_general_batch_rule). Ops without operands (constant, iota) are never batched by the
driver; their rule clones and broadcasts so the table covers the whole dialect.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from mlir import ir

from mlax.dialect import OPS, read_attributes
from mlax.passes.autodiff.emit import Emitter, spec
from mlax.passes.batching.rules_collectives import COLLECTIVE_BATCH_RULES
from mlax.passes.batching.rules_decompositions import DECOMPOSITION_BATCH_RULES
from mlax.passes.batching.rules_fft import FFT_BATCH_RULES
from mlax.passes.batching.rules_indexing import (
    INDEXING_BATCH_RULES,
    dynamic_slice_as_gather,
    dynamic_update_slice_as_scatter,
)
from mlax.passes.batching.rules_sorting import SORTING_BATCH_RULES
from mlax.passes.batching.rules_windowed import WINDOWED_BATCH_RULES

BatchRule = Callable[[Emitter, ir.Operation, list[ir.Value], list[bool], int], list[ir.Value]]
# A new value of an attribute from (its value, the batch size).
AttrRewrite = Callable[[Any, int], Any]


def _name(op: ir.Operation) -> str:
    return op.name.removeprefix("mlax.")


def _shifted(dims: Sequence[int]) -> tuple[int, ...]:
    """Dimension numbers of the unbatched value, renumbered past the leading batch dimension."""
    return tuple(d + 1 for d in dims)


def broadcast_batch(e: Emitter, value: ir.Value, size: int) -> ir.Value:
    """``value`` replicated along a new leading batch dimension of ``size``."""
    shape = spec(value).shape
    return e("broadcast_in_dim", value, shape=(size, *shape),
             broadcast_dimensions=_shifted(range(len(shape))))


def _move_to_front(e: Emitter, value: ir.Value, dim: int) -> ir.Value:
    if dim == 0:
        return value
    rank = spec(value).ndim
    return e("transpose", value, permutation=(dim, *(d for d in range(rank) if d != dim)))


def _all_batched(e: Emitter, operands: list[ir.Value], batched: list[bool], size: int) -> list[ir.Value]:
    return [v if b else broadcast_batch(e, v, size) for v, b in zip(operands, batched, strict=True)]


# --- elementwise ---------------------------------------------------------------------------------


def _unary(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
           size: int) -> list[ir.Value]:
    """bitcast_convert: maps each element, or the minor dimension where the width changes."""
    return e.many(_name(op), *operands, **read_attributes(op))


def _to_result_shape(e: Emitter, value: ir.Value, is_batched: bool, shape: tuple[int, ...],
                     size: int) -> ir.Value:
    """An operand of an n-ary elementwise op in batched form; select's predicate and clamp's
    bounds may be rank 0: unbatched they stay so, batched ((size,)) they broadcast."""
    own = spec(value).shape[1:] if is_batched else spec(value).shape
    if own == shape:
        return value if is_batched else broadcast_batch(e, value, size)
    if is_batched:
        return e("broadcast_in_dim", value, shape=(size, *shape), broadcast_dimensions=(0,))
    return value


def _elementwise(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
                 size: int) -> list[ir.Value]:
    """Ops with the ``elementwise`` trait (dialect/registry.py): operands of one shape (or a
    rank-0 predicate/bounds): match them, then apply the op."""
    shape = spec(op.results[0]).shape
    args = [_to_result_shape(e, v, b, shape, size) for v, b in zip(operands, batched, strict=True)]
    return e.many(_name(op), *args, **read_attributes(op))


def _operandless(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
                 size: int) -> list[ir.Value]:
    """constant/iota: the same value for every example."""
    return [broadcast_batch(e, v, size) for v in e.many(_name(op), **read_attributes(op))]


# --- reductions and shape ops: attributes shift by one -----------------------------------------------


def _shift_attrs(**how: AttrRewrite) -> BatchRule:
    """A one-operand op whose named attributes are rewritten by ``how[name](value, size)``."""

    def rule(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
             size: int) -> list[ir.Value]:
        attrs = read_attributes(op)
        attrs.update({k: f(attrs[k], size) for k, f in how.items()})
        return e.many(_name(op), *operands, **attrs)

    return rule


def _dims(value: Any, size: int) -> tuple[int, ...]:
    return _shifted(value)


def _axis(value: Any, size: int) -> int:
    return int(value) + 1


def _prepend_size(value: Any, size: int) -> tuple[int, ...]:
    return (size, *value)


def _prepend(first: int) -> AttrRewrite:
    return lambda value, size: (first, *value)


_REDUCE = _shift_attrs(dimensions=_dims)
_AXIS = _shift_attrs(axis=_axis)
_STRUCTURAL: dict[str, BatchRule] = {
    "broadcast_in_dim": _shift_attrs(shape=_prepend_size,
                                     broadcast_dimensions=lambda v, size: (0, *_shifted(v))),
    "reshape": _shift_attrs(shape=_prepend_size),
    "transpose": _shift_attrs(permutation=lambda v, size: (0, *_shifted(v))),
    "rev": _shift_attrs(dimensions=_dims),
    "sharding_constraint": _shift_attrs(sharding=lambda v, size: ((), *v)),  # the batch is not split
    "slice": _shift_attrs(start_indices=_prepend(0), limit_indices=_prepend_size, strides=_prepend(1)),
    **{name: _REDUCE for name in OPS if name.startswith("reduce_")},
    **{name: _AXIS for name in ("argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin")},
}


def _concatenate(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
                 size: int) -> list[ir.Value]:
    lhs, rhs = _all_batched(e, operands, batched, size)
    return [e("concatenate", lhs, rhs, dimension=read_attributes(op)["dimension"] + 1)]


def _pad(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
         size: int) -> list[ir.Value]:
    """No padding along the batch; a batched padding value (JAX's _pad_batch_rule) pads with
    zero, then selects each example's value where a padded mask says the element is padding."""
    attrs = read_attributes(op)
    config = {k: (0, *attrs[k]) for k in ("edge_padding_low", "edge_padding_high", "interior_padding")}
    x = operands[0] if batched[0] else broadcast_batch(e, operands[0], size)
    value = operands[1]
    if not batched[1]:
        return [e("pad", x, value, **config)]
    padded = e("pad", x, e("constant", value=np.zeros((), spec(value).dtype)), **config)
    mask = e("pad", _true_like(e, x), e("constant", value=np.asarray(False)), **config)
    fill = e("broadcast_in_dim", value, shape=spec(padded).shape, broadcast_dimensions=(0,))
    return [e("select", mask, padded, fill)]


def _true_like(e: Emitter, x: ir.Value) -> ir.Value:
    true = e("constant", value=np.asarray(True))
    return e("broadcast_in_dim", true, shape=spec(x).shape, broadcast_dimensions=())


# --- dynamic slicing --------------------------------------------------------------------------------


def _zero_first(e: Emitter, starts: list[ir.Value]) -> list[ir.Value]:
    """Unbatched start indices with a leading 0 for the batch dimension (sliced whole)."""
    dtype = spec(starts[0]).dtype if starts else np.dtype(np.int32)
    return [e("constant", value=np.asarray(0, dtype)), *starts]


def _dynamic_slice(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
                   size: int) -> list[ir.Value]:
    """Batched start indices: a gather (rules_indexing.py); else one slice of the whole batch."""
    if any(batched[1:]):
        return dynamic_slice_as_gather(e, op, operands, batched, size)
    sizes = read_attributes(op)["slice_sizes"]
    return [e("dynamic_slice", operands[0], *_zero_first(e, operands[1:]), slice_sizes=(size, *sizes))]


def _dynamic_update_slice(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
                          size: int) -> list[ir.Value]:
    """Batched start indices: a scatter (rules_indexing.py); else one update of the whole batch."""
    if any(batched[2:]):
        return dynamic_update_slice_as_scatter(e, op, operands, batched, size)
    x, update = _all_batched(e, operands[:2], batched[:2], size)
    return [e("dynamic_update_slice", x, update, *_zero_first(e, operands[2:]))]


# --- dot_general ---------------------------------------------------------------------------------


def _dot_general(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
                 size: int) -> list[ir.Value]:
    """Both sides batched: a new leading batch dimension. One side: a free dimension of that
    side, which the result places after the batch (and lhs free) dimensions; moved to 0."""
    a = read_attributes(op)
    lb, rb = tuple(a["lhs_batch_dimensions"]), tuple(a["rhs_batch_dimensions"])
    lc, rc = tuple(a["lhs_contracting_dimensions"]), tuple(a["rhs_contracting_dimensions"])
    if batched[0]:
        lb, lc = _shifted(lb), _shifted(lc)
    if batched[1]:
        rb, rc = _shifted(rb), _shifted(rc)
    if all(batched):
        lb, rb = (0, *lb), (0, *rb)
        position = 0
    elif batched[0]:
        position = len(lb)
    else:
        position = spec(operands[0]).ndim - len(lc)  # after the batch and lhs free dimensions
    out = e("dot_general", *operands, lhs_contracting_dimensions=lc, rhs_contracting_dimensions=rc,
            lhs_batch_dimensions=lb, rhs_batch_dimensions=rb, result_dtype=a["result_dtype"],
            precision=a["precision"])
    return [_move_to_front(e, out, position)]


# --- the table ------------------------------------------------------------------------------------

BATCH_RULES: dict[str, BatchRule] = {
    **{name: _elementwise for name, d in OPS.items() if d.elementwise},
    "bitcast_convert": _unary,
    "constant": _operandless,
    "iota": _operandless,
    **_STRUCTURAL,
    "concatenate": _concatenate,
    "pad": _pad,
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    "dot_general": _dot_general,
    **WINDOWED_BATCH_RULES,
    **INDEXING_BATCH_RULES,
    **SORTING_BATCH_RULES,
    **COLLECTIVE_BATCH_RULES,
    **DECOMPOSITION_BATCH_RULES,
    **FFT_BATCH_RULES,
}
