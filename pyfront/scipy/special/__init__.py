"""mlax.scipy.special (as jax.scipy.special)."""
