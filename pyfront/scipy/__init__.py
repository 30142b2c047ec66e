"""mlax.scipy."""

from mlax.scipy import linalg, ndimage, signal, special, stats  # noqa: F401
