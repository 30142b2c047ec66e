"""mlax.lax linalg primitives."""

__all__: list[str] = []
