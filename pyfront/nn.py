"""mlax.nn: neural-network functions (as jax.nn)."""
