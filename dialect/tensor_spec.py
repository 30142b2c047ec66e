"""TensorSpec: the static shape and dtype of a value, as inference rules see it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from mlax.dialect import dtypes


@dataclass(frozen=True)
class TensorSpec:
    """Shape and dtype of an mlax value (all mlax shapes are static)."""

    shape: tuple[int, ...]
    dtype: np.dtype

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def to_mlir(self) -> ir.RankedTensorType:
        return ir.RankedTensorType.get(list(self.shape), dtypes.to_mlir(self.dtype))

    @staticmethod
    def from_mlir(t: ir.Type) -> TensorSpec:
        rt = ir.RankedTensorType(t)
        return TensorSpec(tuple(rt.shape), dtypes.from_mlir(rt.element_type))

    def __str__(self) -> str:
        dims = "x".join(str(d) for d in self.shape)
        return f"tensor<{dims + 'x' if dims else ''}{dtypes.mlir_name(self.dtype)}>"
