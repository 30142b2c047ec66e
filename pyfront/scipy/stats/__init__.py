"""mlax.scipy.stats (as jax.scipy.stats): the distributions that JAX libraries use at import
(optax imports ``norm``)."""

from mlax.scipy.stats import norm  # noqa: F401
