"""mlax.numpy: linalg."""

__all__: list[str] = []
