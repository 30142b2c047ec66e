"""linalg ops: (to be defined)."""
