"""mlax.scipy.linalg (as jax.scipy.linalg): the structured and special matrices, which need no
decomposition (structured.py: Toeplitz, Hankel, circulant, companion, ... built from arrays;
sized.py: Hilbert, Pascal, Helmert, Hadamard, DFT built from a size), the solvers on the
Cholesky, LU and triangular-solve primitives (decompositions.py), qr/svd/eigh/polar on the
spectral primitives (spectral.py), the matrix exponential (matrix_functions.py) and schur,
rsf2csf, sqrtm, funm and solve_sylvester on the Schur decomposition (schur_functions.py)."""

from __future__ import annotations

from mlax.scipy.linalg import decompositions as _decompositions
from mlax.scipy.linalg import householder as _householder
from mlax.scipy.linalg import matrix_functions as _matrix_functions
from mlax.scipy.linalg import schur_functions as _schur_functions
from mlax.scipy.linalg import sized as _sized
from mlax.scipy.linalg import spectral as _spectral
from mlax.scipy.linalg import structured as _structured
from mlax.scipy.linalg.decompositions import *  # noqa: F403
from mlax.scipy.linalg.householder import *  # noqa: F403
from mlax.scipy.linalg.matrix_functions import *  # noqa: F403
from mlax.scipy.linalg.schur_functions import *  # noqa: F403
from mlax.scipy.linalg.sized import *  # noqa: F403
from mlax.scipy.linalg.spectral import *  # noqa: F403
from mlax.scipy.linalg.structured import *  # noqa: F403

__all__ = [*_decompositions.__all__, *_matrix_functions.__all__, *_sized.__all__, *_structured.__all__,
           *_spectral.__all__, *_householder.__all__, *_schur_functions.__all__]
