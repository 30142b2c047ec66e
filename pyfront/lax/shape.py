"""mlax.lax shape primitives."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlax.core import bind
from mlax.lax.common import operand


def broadcast_in_dim(x: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> Any:
    """Broadcast ``x`` to ``shape``; operand dimension i maps to ``broadcast_dimensions[i]``."""
    x = operand(x)
    shape = tuple(int(d) for d in shape)
    broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
    if x.shape == shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    return bind("broadcast_in_dim", x, shape=shape, broadcast_dimensions=broadcast_dimensions)


__all__ = ["broadcast_in_dim"]
