"""comparison ops: (to be defined)."""
