"""jax.lax's Precision and dot-algorithm enums, re-exported so ``mlax.lax.Precision`` spells
them, and the canonical form of every contraction's ``precision=`` keyword.

Every mlax contraction (dot_general, dot, conv*, einsum, matmul, ...) takes jax's ``precision=``;
it becomes the dialect's per-operand pair (lhs, rhs) of "DEFAULT"/"HIGH"/"HIGHEST", which the
StableHLO lowering emits as ``precision_config`` and the GPU matmul obeys (TF32 unless HIGHEST).
The CPU backend and the interpreter always compute exactly, as XLA:CPU does. jax's dot algorithms
(DotAlgorithm, DotAlgorithmPreset) are not supported.
"""

from __future__ import annotations

from typing import Any

from jax.lax import DotAlgorithm, DotAlgorithmPreset, Precision

from mlax import configuration

__all__ = ["DotAlgorithm", "DotAlgorithmPreset", "Precision"]

_STRINGS = ("highest", "float32", "high", "bfloat16_3x", "tensorfloat32", "default", "bfloat16", "fastest")


def _one(value: Any) -> str | None:
    """The Precision name of one jax precision value (an enum member or one of its strings)."""
    if isinstance(value, Precision):
        return value.name
    if isinstance(value, str) and value in _STRINGS:
        return Precision(value).name
    return None


def canonicalize_precision(precision: Any, where: str) -> tuple[str, str]:
    """``precision`` as the dialect's (lhs, rhs) pair of Precision names, as jax's
    ``canonicalize_precision``: None takes ``jax_default_matmul_precision`` (unset: DEFAULT), one
    value applies to both operands. Anything else is a ValueError naming ``where``'s argument."""
    if precision is None:
        config = configuration.default_matmul_precision.value
        if config is None:
            return ("DEFAULT", "DEFAULT")
        if _one(config) is None:
            raise ValueError(f"{where}: jax_default_matmul_precision {config!r} names a dot algorithm, "
                             f"which mlax does not support; use one of {list(_STRINGS)} or None")
        return canonicalize_precision(config, where)
    if isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)) or (
            isinstance(precision, str) and precision in DotAlgorithmPreset.__members__):
        raise ValueError(f"{where}: precision {precision!r} is a dot algorithm, which mlax does not "
                         "support; give a lax.Precision, one of its strings or a pair of them")
    single = _one(precision)
    if single is not None:
        return (single, single)
    if isinstance(precision, (list, tuple)) and len(precision) == 2:
        pair = tuple(_one(p) for p in precision)
        if None not in pair and all(type(p) is type(precision[0]) for p in precision):
            return pair  # type: ignore[return-value]
    raise ValueError(f"{where}: precision must be None, a lax.Precision, a string in {list(_STRINGS)} or a "
                     f"pair of lax.Precision values or of strings, got {precision!r}")
