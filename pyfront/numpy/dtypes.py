"""mlax.numpy: dtypes."""

__all__: list[str] = []
