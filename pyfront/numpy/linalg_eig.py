"""`mlax.numpy.linalg.eig` and `eigvals`: jnp's general eigendecomposition on the eig primitive
(mlax.lax.linalg.eig). As jnp, the results are complex64 for f32 input and complex128 for f64,
whatever the eigenvalues; derivatives exist for the eigenvalues (eigvals), while eig's vectors
refuse them, as jax's (the primitive's ``enable_eigvec_derivs`` is off).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from mlax.lax.eig import eig as _lax_eig
from mlax.numpy.linalg_decompositions import _inexact, _square

__all__ = ["EigResult", "eig", "eigvals"]


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


def eig(a: Any) -> EigResult:
    """Eigenvalues and right eigenvectors (the columns) of each square matrix of ``a``."""
    (a,) = _inexact("jnp.linalg.eig", a)
    _square("jnp.linalg.eig", a)
    w, v = _lax_eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a: Any) -> Any:
    """The eigenvalues of each square matrix of ``a``, in LAPACK's order."""
    (a,) = _inexact("jnp.linalg.eigvals", a)
    _square("jnp.linalg.eigvals", a)
    return _lax_eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]
