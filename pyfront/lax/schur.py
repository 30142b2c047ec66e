"""mlax.lax.linalg.schur: jax's Schur decomposition (its `jax.lax.linalg.schur` signature), on the
dialect's schur op (dialect/ops/schur.py).

As jax's wrapper, it returns a list: T, then Z when asked for. jax's CPU lowering refuses
``sort_eig_vals`` (NotImplementedError, the same here, at the call) and ignores
``select_callable``, which only a sorting LAPACK call would use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlax.core import bind
from mlax.errors import user_error
from mlax.lax.common import operand as as_operand


def schur(x: Any, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: Callable[..., Any] | None = None) -> list[Any]:
    """The Schur form T (and the Schur vectors Z, A = Z T Z^H) of each square matrix of ``x``."""
    del select_callable  # unused without sorting, as in jax
    if sort_eig_vals:
        raise user_error(NotImplementedError, "The sort feature of LAPACK's gees routine is not implemented.",
                         "sort_eig_vals of mlax.lax.linalg.schur")
    out = bind("schur", as_operand(x), compute_schur_vectors=bool(compute_schur_vectors))
    return list(out) if isinstance(out, (list, tuple)) else [out]
