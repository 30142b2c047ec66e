"""mlax.ref, as ``jax.ref``: mutable array references (pyfront/refs.py has them)."""

from mlax.refs import (
    AbstractRef,
    Ref,
    addupdate,
    empty_ref,
    free_ref,
    freeze,
    get,
    new_ref,
    set,  # noqa: A004 (jax.ref.set)
    swap,
)

__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get", "new_ref", "set",
           "swap"]
