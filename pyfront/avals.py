"""The abstract value of an array (`Aval`), below everything that has one: mlax.core's tracers,
mlax.array's Arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlax.dialect.tensor_spec import TensorSpec


@dataclass(frozen=True)
class Aval:
    """The abstract value of an array: static shape, dtype, JAX's weak-type flag and, under
    explicit sharding, the sharding of its type."""

    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool = False
    sharding: Any = None  # jax's type sharding (mlax.sharding_types); None: no mesh
    # the manual mesh axes a shard_map body's value varies over (jax's vma; mlax.sharding_types)
    vma: frozenset[str] = field(default=frozenset(), compare=False)

    @property
    def spec(self) -> TensorSpec:
        return TensorSpec(self.shape, self.dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"{self.dtype.name}{list(self.shape)}{weak}"
