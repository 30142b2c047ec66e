"""The array-API products of mlax.numpy (vecdot, matvec, vecmat, matrix_transpose, cross) and the
mlax.numpy.linalg namespace (trace and diagonal over the LAST two axes, matmul, tensordot, outer,
cross, vecdot, matrix_transpose, matrix_norm, vector_norm, multi_dot, matrix_power) against jax.numpy:
values, dtypes, weak types, eagerly and under mlax.jit; grad of cross and vecdot; vmap; errors,
including jnp.linalg's keyword-only options."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.numpy.helpers import BF16, check_values
from tests.oracle import assert_same, random_array

Spell = Callable[[Any], Callable[..., Any]]
# Contractions reorder sums: tolerances by operand dtype (integers stay exact).
TOL = {np.dtype(np.float32): (1e-5, 1e-5), np.dtype(np.float16): (1e-2, 1e-2), BF16: (2e-2, 5e-2)}
DTYPES = [np.dtype(np.float32), np.dtype(np.float16), BF16, np.dtype(np.int8), np.dtype(np.int32),
          np.dtype(np.uint8), np.dtype(np.bool_)]


def _arrays(rng: np.random.Generator, dtype: Any, *shapes: tuple[int, ...]) -> list[np.ndarray]:
    """Operands small enough that int8 sums of short products do not wrap."""
    if dtype.kind in "iu":
        return [random_array(rng, s, dtype) % 5 for s in shapes]
    return [random_array(rng, s, dtype, -2.0, 2.0) for s in shapes]


# name: (spelling for a module m, operand shapes)
CASES: dict[str, tuple[Spell, tuple[tuple[int, ...], ...]]] = {
    "vecdot": (lambda m: m.vecdot, ((2, 3, 4), (3, 4))),
    "vecdot_axis": (lambda m: lambda a, b: m.vecdot(a, b, axis=0), ((3, 1, 2), (3, 4, 2))),
    "vecdot_vectors": (lambda m: m.vecdot, ((5,), (5,))),
    "vecdot_empty": (lambda m: m.vecdot, ((2, 0), (0,))),
    "matvec": (lambda m: m.matvec, ((2, 3, 4), (4,))),
    "matvec_batch": (lambda m: m.matvec, ((3, 4), (2, 1, 4))),
    "vecmat": (lambda m: m.vecmat, ((2, 3), (3, 5))),
    "vecmat_batch": (lambda m: m.vecmat, ((4, 1, 3), (2, 3, 2))),
    "matrix_transpose": (lambda m: m.matrix_transpose, ((2, 3, 4),)),
    "cross3": (lambda m: m.cross, ((4, 3), (3,))),
    "cross2": (lambda m: m.cross, ((2, 2), (2,))),
    "cross23": (lambda m: lambda a, b: m.cross(a, b, axisa=0, axisb=-1, axisc=0), ((2, 4), (4, 3))),
    "cross_axis": (lambda m: lambda a, b: m.cross(a, b, axis=1), ((2, 3, 2), (2, 3, 2))),
    "linalg_trace": (lambda m: m.linalg.trace, ((2, 3, 4),)),
    "linalg_trace_offset_dtype": (lambda m: lambda a: m.linalg.trace(a, offset=-1, dtype=np.float32),
                                  ((3, 4, 4),)),
    "linalg_diagonal": (lambda m: lambda a: m.linalg.diagonal(a, offset=1), ((2, 3, 4),)),
    "linalg_matmul": (lambda m: m.linalg.matmul, ((2, 3, 4), (4, 2))),
    "linalg_tensordot": (lambda m: lambda a, b: m.linalg.tensordot(a, b, axes=([0, 2], [1, 0])),
                         ((3, 2, 4), (4, 3))),
    "linalg_tensordot_int": (lambda m: lambda a, b: m.linalg.tensordot(a, b, axes=1), ((2, 3), (3, 2))),
    "linalg_outer": (lambda m: m.linalg.outer, ((3,), (4,))),
    "linalg_cross": (lambda m: lambda a, b: m.linalg.cross(a, b, axis=0), ((3, 2), (3, 1))),
    "linalg_vecdot": (lambda m: lambda a, b: m.linalg.vecdot(a, b, axis=-2), ((3, 2), (4, 3, 2))),
    "linalg_matrix_transpose": (lambda m: m.linalg.matrix_transpose, ((3, 2),)),
    "linalg_multi_dot": (lambda m: lambda a, b, c, d: m.linalg.multi_dot([a, b, c, d]),
                         ((3,), (3, 5), (5, 2), (2, 4))),
    "linalg_multi_dot_two_vectors": (lambda m: lambda a, b: m.linalg.multi_dot([a, b]), ((4,), (4,))),
    "linalg_matrix_power": (lambda m: lambda a: m.linalg.matrix_power(a, 5), ((2, 3, 3),)),
    "linalg_matrix_power_0": (lambda m: lambda a: m.linalg.matrix_power(a, 0), ((3, 3),)),
    "linalg_multi_dot_matrices": (lambda m: lambda a, b, c: m.linalg.multi_dot([a, b, c]),
                                  ((2, 6), (6, 3), (3, 1))),
}
CASE_PARAMS = [pytest.param(name, DTYPES[k % len(DTYPES)], id=f"{name}-{DTYPES[k % len(DTYPES)].name}")
               for k, name in enumerate(CASES)]


@pytest.mark.parametrize("name, dtype", CASE_PARAMS)
def test_matches_jax(name: str, dtype: np.dtype, rng: np.random.Generator) -> None:
    spell, shapes = CASES[name]
    rtol, atol = TOL.get(dtype, (None, 0.0))
    check_values(spell(mnp), spell(jnp), *_arrays(rng, dtype, *shapes), rtol=rtol, atol=atol)


NORMS: dict[str, Spell] = {
    "vector_2": lambda m: lambda a: m.linalg.vector_norm(a),
    "vector_inf_axis": lambda m: lambda a: m.linalg.vector_norm(a, axis=1, ord=np.inf),
    "vector_neginf_keep": lambda m: lambda a: m.linalg.vector_norm(a, axis=(0, 2), keepdims=True,
                                                                    ord=-np.inf),
    "vector_1": lambda m: lambda a: m.linalg.vector_norm(a, ord=1, axis=-1),
    "vector_0": lambda m: lambda a: m.linalg.vector_norm(a, ord=0, axis=0),
    "vector_3": lambda m: lambda a: m.linalg.vector_norm(a, ord=3, axis=2),
    "matrix_fro": lambda m: lambda a: m.linalg.matrix_norm(a),
    "matrix_1_keep": lambda m: lambda a: m.linalg.matrix_norm(a, ord=1, keepdims=True),
    "matrix_neginf": lambda m: lambda a: m.linalg.matrix_norm(a, ord=-np.inf),
}


@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.int16)],
                         ids=lambda d: d.name)
@pytest.mark.parametrize("name", sorted(NORMS))
def test_norms(name: str, dtype: np.dtype, rng: np.random.Generator) -> None:
    (a,) = _arrays(rng, dtype, (2, 3, 4))
    check_values(NORMS[name](mnp), NORMS[name](jnp), a, rtol=TOL.get(dtype, (2e-6,))[0])


def test_vector_norm_empty_and_weak() -> None:
    norm = lambda m: lambda a: m.linalg.vector_norm(a, ord=np.inf)  # noqa: E731
    check_values(norm(mnp), norm(jnp), np.zeros((0, 3), np.float32))
    check_values(lambda: mnp.linalg.vector_norm(3.0), lambda: jnp.linalg.vector_norm(3.0))


def test_numpy_trace_keeps_first_axes(rng: np.random.Generator) -> None:
    """mlax.numpy.trace/diagonal stay NumPy's (axes 0 and 1); only the linalg ones use the last two."""
    (a,) = _arrays(rng, np.dtype(np.float32), (3, 4, 5))
    check_values(mnp.trace, jnp.trace, a, rtol=1e-6)
    check_values(mnp.diagonal, jnp.diagonal, a)


def test_grad_of_cross_and_vecdot(rng: np.random.Generator) -> None:
    a, b = (random_array(rng, (4, 3), np.float32) for _ in range(2))

    def loss(m: Any) -> Callable[..., Any]:
        return lambda x, y: m.sum(m.cross(x, y) ** 2) + m.sum(m.vecdot(x, y) * m.arange(4.0))

    assert_same(mlax.grad(loss(mnp), argnums=(0, 1))(a, b), jax.grad(loss(jnp), argnums=(0, 1))(a, b),
                rtol=1e-5)


def test_vmap(rng: np.random.Generator) -> None:
    a, v = random_array(rng, (3, 2, 4), np.float32), random_array(rng, (3, 4), np.float32)
    assert_same(mlax.vmap(mnp.matvec)(a, v), jax.vmap(jnp.matvec)(a, v), rtol=1e-6)
    m = random_array(rng, (3, 4, 4), np.float32)
    assert_same(mlax.vmap(mnp.linalg.trace)(m), jax.vmap(jnp.linalg.trace)(m), rtol=1e-6)


@pytest.mark.parametrize("call, error", [
    (lambda m: m.linalg.trace(np.ones((2, 2)), 1), TypeError),
    (lambda m: m.linalg.diagonal(np.ones((2, 2)), 1), TypeError),
    (lambda m: m.linalg.tensordot(np.ones((2, 2)), np.ones((2, 2)), 1), TypeError),
    (lambda m: m.linalg.outer(np.ones((2, 2)), np.ones(2)), ValueError),
    (lambda m: m.linalg.cross(np.ones((2, 2)), np.ones((2, 2))), ValueError),
    (lambda m: m.linalg.multi_dot([]), ValueError),
    (lambda m: m.linalg.multi_dot([np.ones((2, 2)), np.ones((2, 2, 2)), np.ones(2)]), ValueError),
    (lambda m: m.linalg.multi_dot([np.ones((2, 3)), np.ones((2, 2))]), ValueError),
    (lambda m: m.linalg.vector_norm(np.ones(3), ord="inf"), ValueError),
    (lambda m: m.linalg.vector_norm(np.ones(3, np.int32), ord=0), ValueError),
    (lambda m: m.matrix_transpose(np.ones(3)), ValueError),
    (lambda m: m.linalg.matrix_power(np.ones((2, 3)), 2), TypeError),
    (lambda m: m.linalg.matrix_power(np.ones((2, 2)), 1.5), TypeError),
    (lambda m: m.vecdot(np.ones((2, 3)), np.ones((2, 4))), ValueError),
    (lambda m: m.matvec(np.ones((2, 3)), 2.0), ValueError),
    (lambda m: m.vecmat(np.ones((2, 3)), np.ones((3, 3, 4))), ValueError),
    (lambda m: m.cross(np.ones(4), np.ones(3)), ValueError),
    (lambda m: m.cross(np.ones(3, bool), np.ones(3, bool)), TypeError),
    (lambda m: m.vecdot(np.ones(3), [1.0, 2.0, 3.0]), TypeError),
])
def test_errors_match_jax(call: Callable[[Any], Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        call(jnp)
    with pytest.raises(error):
        call(mnp)
