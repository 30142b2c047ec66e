"""jax.lax's random-number primitives and its general ragged product, listed but not yet in
mlax: what each needs is in its NotImplementedError."""

from __future__ import annotations

from mlax.not_yet import not_yet

__all__ = ["ragged_dot_general", "rng_bit_generator", "rng_uniform"]

rng_uniform = not_yet(
    "mlax.lax.rng_uniform", "needs a stateful random-number primitive (XLA's RngUniform), which mlax "
    "does not have; use mlax.random.uniform")
rng_bit_generator = not_yet(
    "mlax.lax.rng_bit_generator", "needs XLA's RngBitGenerator (Philox4x32 by default on CPU) to give "
    "jax's bits exactly, which mlax does not have; use mlax.random.bits")
ragged_dot_general = not_yet(
    "mlax.lax.ragged_dot_general", "needs a grouped matrix product for general ragged dimension numbers "
    "(batch dimensions, a ragged contracting or batch dimension), which mlax does not have; "
    "mlax.lax.ragged_dot covers lhs [m, k] by rhs [g, k, n]")
