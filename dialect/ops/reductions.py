"""reductions ops: (to be defined)."""
