"""transforms ops: (to be defined)."""
