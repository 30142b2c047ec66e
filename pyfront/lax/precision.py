"""jax.lax's Precision and dot-algorithm enums, re-exported so ``mlax.lax.Precision`` spells
them. Every mlax contraction (dot_general, dot, conv*, einsum, matmul, ...) takes jax's
``precision=`` and ``preferred_element_type=`` keywords; ``precision`` is accepted and not
used: mlax always contracts at the full precision of the accumulation type.
"""

from jax.lax import DotAlgorithm, DotAlgorithmPreset, Precision

__all__ = ["DotAlgorithm", "DotAlgorithmPreset", "Precision"]
