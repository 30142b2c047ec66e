"""mlax.lax reductions primitives."""

__all__: list[str] = []
