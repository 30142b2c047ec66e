"""mlax.lax.linalg.eig: jax's general eigendecomposition (its `jax.lax.linalg.eig` signature), on
the dialect's eig op (dialect/ops/eig.py).

As jax's wrapper, it returns a list: the eigenvalues, then the left and the right eigenvectors
when asked for. ``enable_eigvec_derivs`` is jax's opt-in to derivatives of eigenvectors (valid
only for distinct eigenvalues); ``implementation`` and ``use_magma`` choose GPU libraries in jax,
so mlax accepts only their CPU meaning.
"""

from __future__ import annotations

from typing import Any

from mlax.core import bind
from mlax.lax.common import operand as as_operand


def eig(x: Any, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation: Any = None,
        use_magma: bool | None = None) -> list[Any]:
    """Eigenvalues (and left/right eigenvectors, the columns) of each square matrix of ``x``."""
    if implementation is not None and getattr(implementation, "name", implementation) not in ("LAPACK",
                                                                                             "lapack"):
        raise ValueError("Only the lapack implementation is supported on CPU.")
    del use_magma  # a GPU library in jax
    out = bind("eig", as_operand(x), compute_left_eigenvectors=bool(compute_left_eigenvectors),
               compute_right_eigenvectors=bool(compute_right_eigenvectors),
               enable_eigvec_derivs=bool(enable_eigvec_derivs))
    return list(out) if isinstance(out, (list, tuple)) else [out]
