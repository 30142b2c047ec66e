"""Matrices holding a NaN or an infinity: every decomposition gives NaN where jax does, in every
result, without a crash, a hang or LAPACK's complaints on stdout. jax's own svd never returns on
an infinity (?gesdd does not); mlax does not call it on such a matrix, whose results are NaN.
LAPACKE's NaN check, on in SciPy's OpenBLAS, had made routines return before writing their
outputs (getrf's unwritten pivots then crashed `inv`); jaxlib calls LAPACK itself and lets NaN
propagate, and does not call ?geev on a non-finite matrix."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest

import mlax
import mlax.lax.linalg
import mlax.numpy as mnp
import mlax.scipy.linalg as msl
from tests.oracle import run

FUNCTIONS = {
    "inv": (mnp.linalg.inv, jnp.linalg.inv), "solve": (lambda a: mnp.linalg.solve(a, a[..., :1]),
                                                      lambda a: jnp.linalg.solve(a, a[..., :1])),
    "det": (mnp.linalg.det, jnp.linalg.det), "lu": (mlax.lax.linalg.lu, jax.lax.linalg.lu),
    "cholesky": (mnp.linalg.cholesky, jnp.linalg.cholesky), "qr": (mnp.linalg.qr, jnp.linalg.qr),
    "eigh": (mnp.linalg.eigh, jnp.linalg.eigh), "svd": (mnp.linalg.svd, jnp.linalg.svd),
    "eig": (mnp.linalg.eig, jnp.linalg.eig), "schur": (msl.schur, jsl.schur),
    "hessenberg": (msl.hessenberg, jsl.hessenberg),
}


def _nan_pattern(results: Any) -> list[np.ndarray]:
    return [np.isnan(np.asarray(leaf)) for leaf in jax.tree_util.tree_leaves(results)]


@pytest.mark.parametrize("backend", ["eager", "cpu", "xla"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_nan_where_jax_has_nan(rng: np.random.Generator, capfd: pytest.CaptureFixture[str], backend: str,
                               name: str) -> None:
    ours, theirs = FUNCTIONS[name]
    a = rng.standard_normal((3, 5, 5)).astype(np.float32)
    a = a @ np.swapaxes(a, -1, -2) + 5 * np.eye(5, dtype=np.float32)  # positive definite where finite
    a[1, 2, 3] = np.nan
    a[2, 4, 0] = np.inf
    expected = jax.jit(theirs)(np.where(np.isinf(a), np.nan, a) if name == "svd" else a)
    got = run(ours, backend, a)
    for mine, jaxs in zip(_nan_pattern(got), _nan_pattern(expected), strict=True):
        np.testing.assert_array_equal(mine, jaxs)
    assert not _nan_pattern(got)[0][0].any()  # the finite matrix is untouched
    assert "illegal value" not in capfd.readouterr().out
