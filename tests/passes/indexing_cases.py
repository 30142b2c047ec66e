"""Random valid gather/scatter configurations shared by the indexing tests.

A case is an operand shape, start indices (in range, negative and past the end) and the
dimension numbers of a gather; the matching scatter uses the same numbers (the updates
have the gather's result shape), as the gather's transpose does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlax.dialect.registry import OPS
from mlax.dialect.tensor_spec import TensorSpec

SCATTERS = ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"]


@dataclass
class Case:
    shape: tuple[int, ...]
    indices: np.ndarray
    gather: dict
    result: tuple[int, ...]

    def scatter(self, mode: str | None = None) -> dict:
        g = self.gather
        return {"update_window_dims": g["offset_dims"], "inserted_window_dims": g["collapsed_slice_dims"],
                "input_batching_dims": g["operand_batching_dims"],
                "scatter_indices_batching_dims": g["start_indices_batching_dims"],
                "scatter_dims_to_operand_dims": g["start_index_map"],
                "index_vector_dim": g["index_vector_dim"], "mode": mode or g["mode"]}


def _subset(rng: np.random.Generator, items: list[int], p: float = 0.5) -> list[int]:
    return [i for i in items if rng.random() < p]


def random_case(rng: np.random.Generator, mode: str = "clip", index_dtype: type = np.int32,
                max_rank: int = 3, batching: bool = True) -> Case:
    rank = int(rng.integers(0, max_rank + 1))
    shape = tuple(int(n) for n in rng.choice([0, 1, 2, 3, 4, 5], size=rank, p=[.05, .15, .2, .2, .2, .2]))
    dims = list(rng.permutation(rank))
    start_map = _subset(rng, dims, 0.6)
    rest = [d for d in dims if d not in start_map and shape[d]]
    operand_batching = sorted(_subset(rng, rest, 0.4)) if batching else []
    collapsed = sorted(_subset(rng, [d for d in start_map if shape[d]], 0.6))
    sizes = []
    for d, n in enumerate(shape):
        if d in collapsed or d in operand_batching:
            sizes.append(1)
        else:
            sizes.append(int(rng.integers(0, n + 1)))
    batch = [int(n) for n in rng.integers(1, 4, size=int(rng.integers(0, 3)))]
    order = list(rng.permutation(len(batch) + len(operand_batching)))
    batch_shape = [0] * len(order)  # the indices' dimensions but the index vector one
    for slot, n in zip(order[len(operand_batching):], batch, strict=True):
        batch_shape[slot] = n
    for slot, a in zip(order, operand_batching, strict=False):
        batch_shape[slot] = shape[a]
    k = len(start_map)
    index_vector_dim = int(rng.integers(0, len(batch_shape) + 1))
    full = list(batch_shape)
    if not (k == 1 and index_vector_dim == len(full) and rng.random() < 0.5):
        full.insert(index_vector_dim, k)
    indices_batching = [int(b) if b < index_vector_dim else int(b) + 1 for b in order[:len(operand_batching)]]
    limit = max(shape, default=1) + 2
    low = -2 if np.dtype(index_dtype).kind == "i" else 0
    indices = rng.integers(low, limit, size=full).astype(index_dtype)
    n_offset = len([d for d in range(rank) if d not in collapsed and d not in operand_batching])
    result_rank = len(batch_shape) + n_offset
    offset_dims = sorted(int(d) for d in rng.choice(result_rank, size=n_offset, replace=False))
    attrs = {"offset_dims": tuple(offset_dims), "collapsed_slice_dims": tuple(collapsed),
             "operand_batching_dims": tuple(operand_batching),
             "start_indices_batching_dims": tuple(indices_batching),
             "start_index_map": tuple(int(d) for d in start_map), "index_vector_dim": index_vector_dim,
             "slice_sizes": tuple(sizes), "mode": mode}
    result = OPS["gather"].infer(TensorSpec(shape, np.float32), TensorSpec(indices.shape, indices.dtype),
                                 **attrs)
    return Case(shape, indices, attrs, tuple(result.shape))


def jax_indices(case: Case) -> tuple[np.ndarray, tuple[int, ...]]:
    """jax.lax wants the index vector last: the indices with it moved there (or added), and the
    start-indices batching dimensions renumbered."""
    ivd, indices = case.gather["index_vector_dim"], case.indices
    if ivd == indices.ndim:
        return indices[..., None], case.gather["start_indices_batching_dims"]
    moved = np.moveaxis(indices, ivd, -1)
    return moved, tuple(b if b < ivd else b - 1 for b in case.gather["start_indices_batching_dims"])


def attr_text(attrs: dict) -> str:
    """The attribute dictionary of an op in MLIR syntax."""
    parts = []
    for key, value in attrs.items():
        if isinstance(value, str):
            parts.append(f'{key} = "{value}"')
        elif isinstance(value, tuple):
            parts.append(f"{key} = array<i64{': ' if value else ''}{', '.join(map(str, value))}>")
        else:
            parts.append(f"{key} = {value} : i64")
    return "{" + ", ".join(parts) + "}"
