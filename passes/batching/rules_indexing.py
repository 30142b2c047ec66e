"""Batch rules of gather and the scatters, and of dynamic_slice / dynamic_update_slice with
batched start indices (which become a gather / scatter). JAX's _gather_batching_rule and
_scatter_batching_rule with bdim 0:

* only the operand batched: the batch is one more window dimension (slice size = batch),
  the first offset (update window) dimension, so it lands at result dimension 0;
* the indices batched: the batch is a batching dimension pair (operand_batching_dims /
  input_batching_dims 0 with start_indices_batching_dims 0); an unbatched operand (and
  unbatched updates) are broadcast first, except that a gather of an unbatched operand just
  treats the indices' batch as one more batch dimension.

Every other dimension number shifts by one on the side that gained the batch dimension.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.autodiff.emit import Emitter, spec

BatchRule = Callable[[Emitter, ir.Operation, list[ir.Value], list[bool], int], list[ir.Value]]


def _up(dims: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(d) + 1 for d in dims)


def _batched(e: Emitter, value: ir.Value, is_batched: bool, size: int) -> ir.Value:
    """``value`` with a leading batch dimension (replicated if it has none)."""
    if is_batched:
        return value
    shape = spec(value).shape
    return e("broadcast_in_dim", value, shape=(size, *shape), broadcast_dimensions=_up(range(len(shape))))


def _gather(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
            size: int) -> list[ir.Value]:
    a = read_attributes(op)
    operand, indices = operands
    if not batched[1]:
        return [e("gather", operand, indices, offset_dims=(0, *_up(a["offset_dims"])),
                  collapsed_slice_dims=_up(a["collapsed_slice_dims"]),
                  operand_batching_dims=_up(a["operand_batching_dims"]),
                  start_indices_batching_dims=tuple(a["start_indices_batching_dims"]),
                  start_index_map=_up(a["start_index_map"]), index_vector_dim=a["index_vector_dim"],
                  slice_sizes=(size, *a["slice_sizes"]), mode=a["mode"])]
    common = dict(offset_dims=_up(a["offset_dims"]), index_vector_dim=a["index_vector_dim"] + 1,
                  mode=a["mode"])
    if not batched[0]:
        return [e("gather", operand, indices, collapsed_slice_dims=tuple(a["collapsed_slice_dims"]),
                  operand_batching_dims=tuple(a["operand_batching_dims"]),
                  start_indices_batching_dims=_up(a["start_indices_batching_dims"]),
                  start_index_map=tuple(a["start_index_map"]), slice_sizes=tuple(a["slice_sizes"]), **common)]
    return [e("gather", operand, indices, collapsed_slice_dims=_up(a["collapsed_slice_dims"]),
              operand_batching_dims=(0, *_up(a["operand_batching_dims"])),
              start_indices_batching_dims=(0, *_up(a["start_indices_batching_dims"])),
              start_index_map=_up(a["start_index_map"]), slice_sizes=(1, *a["slice_sizes"]), **common)]


def _scatter(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
             size: int) -> list[ir.Value]:
    a = read_attributes(op)
    name = op.name.removeprefix("mlax.")
    operand, updates = (_batched(e, operands[i], batched[i], size) for i in (0, 2))
    indices = operands[1]
    shifted = dict(inserted_window_dims=_up(a["inserted_window_dims"]),
                   scatter_dims_to_operand_dims=_up(a["scatter_dims_to_operand_dims"]), mode=a["mode"])
    if not batched[1]:
        return [e(name, operand, indices, updates, update_window_dims=(0, *_up(a["update_window_dims"])),
                  input_batching_dims=_up(a["input_batching_dims"]),
                  scatter_indices_batching_dims=tuple(a["scatter_indices_batching_dims"]),
                  index_vector_dim=a["index_vector_dim"], **shifted)]
    return [e(name, operand, indices, updates, update_window_dims=_up(a["update_window_dims"]),
              input_batching_dims=(0, *_up(a["input_batching_dims"])),
              scatter_indices_batching_dims=(0, *_up(a["scatter_indices_batching_dims"])),
              index_vector_dim=a["index_vector_dim"] + 1, **shifted)]


# --- dynamic slicing at batched start indices ------------------------------------------------------


def _start_matrix(e: Emitter, starts: list[ir.Value], batched: list[bool], size: int) -> ir.Value:
    """The start indices as a (batch, rank) tensor: column d is start d of each example."""
    columns = [e("reshape", s, shape=(size, 1)) if b else
               e("broadcast_in_dim", s, shape=(size, 1), broadcast_dimensions=())
               for s, b in zip(starts, batched, strict=True)]
    matrix = columns[0]
    for column in columns[1:]:
        matrix = e("concatenate", matrix, column, dimension=1)
    return matrix


def dynamic_slice_as_gather(e: Emitter, op: ir.Operation, operands: list[ir.Value], batched: list[bool],
                            size: int) -> list[ir.Value]:
    """dynamic_slice with batched start indices: a gather of one window per example."""
    sizes = tuple(read_attributes(op)["slice_sizes"])
    operand = _batched(e, operands[0], batched[0], size)
    matrix = _start_matrix(e, operands[1:], batched[1:], size)
    dims = tuple(range(1, len(sizes) + 1))
    return [e("gather", operand, matrix, offset_dims=dims, collapsed_slice_dims=(),
              operand_batching_dims=(0,), start_indices_batching_dims=(0,), start_index_map=dims,
              index_vector_dim=1, slice_sizes=(1, *sizes), mode="clip")]


def dynamic_update_slice_as_scatter(e: Emitter, op: ir.Operation, operands: list[ir.Value],
                                    batched: list[bool], size: int) -> list[ir.Value]:
    """dynamic_update_slice with batched start indices: a scatter of one window per example."""
    operand, update = (_batched(e, v, b, size) for v, b in zip(operands[:2], batched[:2], strict=True))
    matrix = _start_matrix(e, operands[2:], batched[2:], size)
    dims = tuple(range(1, spec(operand).ndim))
    return [e("scatter", operand, matrix, update, update_window_dims=dims, inserted_window_dims=(),
              input_batching_dims=(0,), scatter_indices_batching_dims=(0,), scatter_dims_to_operand_dims=dims,
              index_vector_dim=1, mode="clip")]


INDEXING_BATCH_RULES: dict[str, BatchRule] = {
    "gather": _gather,
    **{name: _scatter for name in ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max")},
}
