"""mlax.numpy: creation."""

__all__: list[str] = []
