"""mlax.scipy.linalg (as jax.scipy.linalg): the structured and special matrices, which need no
decomposition (structured.py: Toeplitz, Hankel, circulant, companion, ... built from arrays;
sized.py: Hilbert, Pascal, Helmert, Hadamard built from a size), and the solvers on the
Cholesky, LU and triangular-solve primitives (decompositions.py). The other decompositions are
listed but not yet implemented: they need more LAPACK primitives, and dft needs complex
numbers."""

from __future__ import annotations

from mlax.not_yet import LAPACK, define_not_yet
from mlax.scipy.linalg import decompositions as _decompositions
from mlax.scipy.linalg import sized as _sized
from mlax.scipy.linalg import structured as _structured
from mlax.scipy.linalg.decompositions import *  # noqa: F403
from mlax.scipy.linalg.sized import *  # noqa: F403
from mlax.scipy.linalg.structured import *  # noqa: F403

NOT_YET = ("dft", "eigh", "eigh_tridiagonal", "expm", "expm_frechet", "funm", "hessenberg", "polar", "qr",
           "qr_multiply", "rsf2csf", "schur", "solve_sylvester", "sqrtm", "svd")
define_not_yet(globals(), "mlax.scipy.linalg", NOT_YET, LAPACK)

__all__ = [*_decompositions.__all__, *_sized.__all__, *_structured.__all__, *NOT_YET]
