"""mlax.lax primitives that mark values for the transformation passes."""

from __future__ import annotations

from typing import Any

from jax import tree_util

from mlax.core import bind
from mlax.lax.common import operand
from mlax.prng import is_key


def stop_gradient(x: Any) -> Any:
    """The identity on every array of the pytree ``x``, with a zero derivative (as jax.lax); PRNG
    key arrays, which have no derivative, as they are."""
    return tree_util.tree_map(lambda leaf: leaf if is_key(leaf) else bind("stop_gradient", operand(leaf)), x)


__all__ = ["stop_gradient"]
