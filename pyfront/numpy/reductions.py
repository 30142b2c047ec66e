"""mlax.numpy: reductions."""

__all__: list[str] = []
