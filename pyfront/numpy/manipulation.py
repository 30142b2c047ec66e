"""mlax.numpy: manipulation."""

__all__: list[str] = []
