"""mlax.scipy.linalg's structured and special matrices against jax.scipy.linalg: random sizes
and dtypes, eagerly and under mlax.jit, gradients where the input is differentiable, vmap for a
few rows; and the not-yet names of mlax.scipy.linalg and mlax.numpy.linalg."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.scipy.linalg as jsl
import numpy as np
import pytest

import mlax
import mlax.numpy.linalg as mnp_linalg
import mlax.scipy.linalg as msl
from tests.oracle import assert_same, random_array

F32, I32 = np.float32, np.int32
RTOL = 4e-6  # a division by a broadcast scalar may round 1 ulp apart (XLA's reciprocal rewrite)


def _vec(*shape: int, dtype: Any = F32) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: random_array(rng, shape, dtype)


def _nonzero_lead(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    def make(rng: np.random.Generator) -> np.ndarray:
        a = random_array(rng, shape, F32)
        a[..., 0] = np.where(np.abs(a[..., 0]) < 0.5, 1.5, a[..., 0])
        return a
    return make


# name, kwargs (static), input generators; one row per construction path.
ARRAY_CASES = [
    ("toeplitz", {}, [_vec(5)]),
    ("toeplitz", {}, [_vec(3, dtype=np.int8), _vec(2, 4)]),
    ("toeplitz", {}, [_vec(2, 1, 3, dtype=np.uint8), _vec(4, 2, dtype=np.uint8)]),
    ("toeplitz", {}, [_vec(0)]),
    ("hankel", {}, [_vec(2, 4)]),
    ("hankel", {}, [_vec(3, dtype=I32), _vec(3, 5, dtype=I32)]),
    ("circulant", {}, [_vec(3, 4)]),
    ("circulant", {}, [_vec(5, dtype=np.bool_)]),
    ("leslie", {}, [_vec(2, 4), _vec(3)]),
    ("companion", {}, [_nonzero_lead(2, 5)]),
    ("companion", {}, [_vec(3, dtype=np.int16)]),
    ("fiedler", {}, [_vec(2, 5)]),
    ("fiedler", {}, [_vec(6, dtype=np.uint8)]),
    ("fiedler_companion", {}, [_nonzero_lead(6)]),
    ("fiedler_companion", {}, [_nonzero_lead(2, 3)]),
    ("fiedler_companion", {}, [_nonzero_lead(1)]),
    ("convolution_matrix", {"n": 5, "mode": "same"}, [_vec(3, dtype=I32)]),
    ("convolution_matrix", {"n": 3, "mode": "valid"}, [_vec(2, 6)]),
    ("convolution_matrix", {"n": 4}, [_vec(3)]),
    ("block_diag", {}, [_vec(2, 3), _vec(3), _vec(1, 2, dtype=np.int8)]),
    ("block_diag", {}, [_vec(dtype=I32), _vec(2, 2, dtype=I32)]),
]
SIZED_CASES = [("hilbert", (5,)), ("invhilbert", (4,)), ("pascal", (5,)), ("pascal", (4, "lower")),
               ("pascal", (3, "upper")), ("invpascal", (5,)), ("invpascal", (4, "lower")),
               ("invpascal", (3, "upper")), ("helmert", (5,)), ("helmert", (4, True)), ("helmert", (1,)),
               ("hadamard", (8,)), ("hadamard", (4, np.float32)), ("hadamard", (1,))]
GRAD_CASES = [i for i, (name, _, _) in enumerate(ARRAY_CASES)
              if name not in {"fiedler"} and all(g(np.random.default_rng(0)).dtype == F32
                                                 for g in ARRAY_CASES[i][2])]
VMAP_CASES = [0, 4, 6, 9]


def _inputs(index: int, seed: int) -> tuple[str, dict[str, Any], list[np.ndarray]]:
    name, kwargs, gens = ARRAY_CASES[index]
    rng = np.random.default_rng(seed)
    return name, kwargs, [g(rng) for g in gens]


def _fns(name: str, kwargs: dict[str, Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    return (lambda *a: getattr(msl, name)(*a, **kwargs)), (lambda *a: getattr(jsl, name)(*a, **kwargs))


def test_array_constructors_eager_and_jit() -> None:
    """All rows eagerly, then all rows in one mlax.jit (one compile)."""
    cases = [_inputs(i, 100 + i) for i in range(len(ARRAY_CASES))]
    expected = [_fns(name, kw)[1](*args) for name, kw, args in cases]
    for (name, kw, args), exp in zip(cases, expected, strict=True):
        assert_same(_fns(name, kw)[0](*args), exp, rtol=RTOL)
    jitted = mlax.jit(lambda all_args: [_fns(name, kw)[0](*args)
                                        for (name, kw, _), args in zip(cases, all_args, strict=True)])
    for actual, exp in zip(jitted([args for _, _, args in cases]), expected, strict=True):
        assert_same(actual, exp, rtol=RTOL, check_weak_type=False)


def test_python_scalars_and_edge_inputs() -> None:
    for name, args in [("block_diag", ()), ("block_diag", (1, 2.0)), ("toeplitz", (1.0,)),
                       ("circulant", (3,)), ("fiedler", (2.0,))]:
        assert_same(getattr(msl, name)(*args), getattr(jsl, name)(*args))
    c = np.array([np.inf, 1.0, -0.0], F32)  # the convolution spreads inf * 0 = NaN as in jax
    assert_same(msl.toeplitz(c), jsl.toeplitz(c))
    assert_same(msl.hankel(c, c[::-1]), jsl.hankel(c, c[::-1]))


@pytest.mark.parametrize("name,args", SIZED_CASES)
def test_sized_matrices(name: str, args: tuple[Any, ...]) -> None:
    assert_same(getattr(msl, name)(*args), getattr(jsl, name)(*args), rtol=1e-5, atol=1e-5)


def test_sized_matrices_x64() -> None:
    mlax.config.update("x64", True)
    try:
        for name, args in [("hilbert", (4,)), ("invhilbert", (4,)), ("invpascal", (4,)), ("helmert", (3,)),
                           ("hadamard", (4,))]:
            assert_same(getattr(msl, name)(*args), getattr(jsl, name)(*args), rtol=1e-12, atol=1e-12)
        a = np.random.default_rng(1).normal(size=(2, 4))
        assert_same(msl.toeplitz(a), jsl.toeplitz(a))
    finally:
        mlax.config.update("x64", False)


@pytest.mark.parametrize("index", GRAD_CASES)
def test_grad(index: int) -> None:
    name, kwargs, args = _inputs(index, 7 * index)
    mlax_fn, jax_fn = _fns(name, kwargs)
    weights = random_array(np.random.default_rng(index), np.shape(jax_fn(*args)), F32)
    argnums = tuple(range(len(args)))

    def loss(fn: Callable[..., Any]) -> Callable[..., Any]:
        return lambda *a: (fn(*a) * weights).sum()

    expected = jax.grad(loss(jax_fn), argnums)(*args)
    assert_same(mlax.grad(loss(mlax_fn), argnums)(*args), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("index", VMAP_CASES)
def test_vmap(index: int) -> None:
    name, kwargs, args = _inputs(index, 3 + index)
    mlax_fn, jax_fn = _fns(name, kwargs)
    batched = [np.stack([a, a[::-1] if a.ndim else a]) for a in args]
    assert_same(mlax.vmap(mlax_fn)(*batched), jax.vmap(jax_fn)(*batched), rtol=RTOL)


@pytest.mark.parametrize("name,args,kwargs", [
    ("hankel", (1.0,), {}), ("leslie", ([1.0], []), {}), ("leslie", ([1.0, 2.0, 3.0], [1.0]), {}),
    ("companion", ([1.0],), {}), ("fiedler_companion", (np.zeros(0, F32),), {}),
    ("convolution_matrix", ([1.0], 0), {}), ("convolution_matrix", ([1.0], 2), {"mode": "bad"}),
    ("convolution_matrix", (1.0, 2), {}), ("block_diag", (np.ones((1, 1, 1)),), {}),
    ("pascal", (3, "diag"), {}), ("invpascal", (3, "diag"), {}), ("helmert", (0,), {}),
    ("hadamard", (6,), {}), ("toeplitz", ([1.0], "x"), {}),
])
def test_errors_match_jax(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    with pytest.raises(Exception) as expected:
        getattr(jsl, name)(*args, **kwargs)
    with pytest.raises(expected.type):
        getattr(msl, name)(*args, **kwargs)


def test_no_name_is_not_yet() -> None:
    """Every jnp.linalg and jax.scipy.linalg name is built (none raises mlax's not-yet error)."""
    for module in (mnp_linalg, msl):
        assert all(not getattr(getattr(module, name), "mlax_not_yet", False) for name in module.__all__)


def test_namespace_and_redirect() -> None:
    assert mlax.scipy.linalg is msl
    assert set(msl.__all__) == {n for n in dir(jsl) if not n.startswith("_")} - {"annotations"}
