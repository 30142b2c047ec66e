"""mlax.scipy."""

from mlax.scipy import special  # noqa: F401
