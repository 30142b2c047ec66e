"""mlax.new_ref: jax's mutable array references, which mlax does not have yet.

flax.nnx tells jax versions apart by ``hasattr(jax, "new_ref")``, so the name exists; calling
it raises a clear error. ``jax.Ref`` itself passes through (only isinstance checks use it,
and no mlax value is a Ref).
"""

from __future__ import annotations

from typing import Any

from mlax.errors import user_error


def new_ref(init_val: Any, *args: Any, **kwargs: Any) -> Any:
    """Not yet: mlax's programs are pure; mutable array references need effects in the dialect."""
    raise user_error(NotImplementedError, "mlax.new_ref is not implemented yet: mlax has no mutable array "
                     "references (jax.Ref); carry the value through your function instead",
                     "init_val of mlax.new_ref")


new_ref.mlax_not_yet = "needs mutable array references (effects) in the dialect"  # type: ignore[attr-defined]
