"""mlax.scipy."""

from mlax.scipy import special, stats  # noqa: F401
