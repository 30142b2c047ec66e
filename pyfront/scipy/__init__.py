"""mlax.scipy."""

from mlax.scipy import linalg, special, stats  # noqa: F401
