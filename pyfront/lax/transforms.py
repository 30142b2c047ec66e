"""mlax.lax primitives that mark values for the transformation passes."""

from __future__ import annotations

from typing import Any

from jax import tree_util

from mlax.core import bind
from mlax.lax.common import operand as operand_of
from mlax.prng import is_key


def stop_gradient(x: Any) -> Any:
    """The identity on every array of the pytree ``x``, with a zero derivative (as jax.lax); PRNG
    key arrays, which have no derivative, as they are."""
    return tree_util.tree_map(
        lambda leaf: leaf if is_key(leaf) else bind("stop_gradient", operand_of(leaf)), x)


def optimization_barrier(operand: Any) -> Any:
    """jax.lax.optimization_barrier: the pytree ``operand`` unchanged, each array through an
    ``mlax.optimization_barrier``, so no compiler pass merges what is computed from it with
    what is computed the same way from the original values (jax's takes the whole pytree as
    one op, which also keeps XLA from scheduling its values apart; mlax's arrays are apart)."""
    return tree_util.tree_map(
        lambda leaf: leaf if is_key(leaf) else bind("optimization_barrier", operand_of(leaf)), operand)


__all__ = ["optimization_barrier", "stop_gradient"]
