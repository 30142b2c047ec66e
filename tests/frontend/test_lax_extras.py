"""The jax.lax names of issue 17 against jax.lax: random shapes, values and dtypes, eagerly and
under mlax.jit (native and XLA backends); gradients against jax.grad where they are defined
(associative_scan, cumlogsumexp, conv_transpose, ragged_dot, custom_root and
custom_linear_solve); vmap on a few rows; jax's errors for bad arguments."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.lax as mlx
import mlax.numpy as mnp
from tests.oracle import assert_same, check_against_jax, random_array

BF16 = np.dtype(ml_dtypes.bfloat16)
RNG = np.random.default_rng(17)


def arr(shape: tuple[int, ...], dtype: Any = np.float32, low: float = -3.0, high: float = 3.0) -> np.ndarray:
    return random_array(RNG, shape, dtype, low, high)


def both(spell: Callable[[Any, Any], Callable[..., Any]]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``spell(lax, numpy)`` for mlax and for jax: one row written once for both libraries."""
    return spell(mlx, mnp), spell(jax.lax, jnp)


def _argmax_pair(lx: Any) -> Callable[[Any, Any], Any]:
    def combine(a: Any, b: Any) -> Any:
        take = lx.gt(b[0], a[0])
        return lx.select(take, b[0], a[0]), lx.select(take, b[1], a[1])

    return combine


def _scatter_numbers() -> Any:
    return jax.lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                           scatter_dims_to_operand_dims=(0,))


# (id, spell(lax, numpy) -> function, arguments, rtol): every function jitted as it is.
CASES = [
    ("select_n_int", lambda lx, nx: lambda w, *c: lx.select_n(w, *c),
     (np.arange(12, dtype=np.int32).reshape(3, 4) % 5, *(arr((3, 4)) for _ in range(5))), None),
    ("select_n_bool_scalar", lambda lx, nx: lambda c0, c1: lx.select_n(np.bool_(True), c0, c1),
     (arr((2, 3), np.int8), arr((2, 3), np.int8)), None),
    ("full", lambda lx, nx: lambda: (lx.full((2, 3), 1.5), lx.full((4,), 7, np.int8),
                                       lx.full((), np.float16(2))), (), None),
    ("full_like", lambda lx, nx: lambda x: (lx.full_like(x, 2.7), lx.full_like(x, 1, np.float32, (3, 1)),
                                              lx.full_like(2.0, 3)), (arr((2, 2), np.int16),), None),
    ("empty_shape", lambda lx, nx: lambda: lx.empty((2, 0, 3), np.float32), (), None),
    ("broadcast_to_rank", lambda lx, nx: lambda x: (lx.broadcast_to_rank(x, 4), lx.broadcast_to_rank(x, 1)),
     (arr((2, 3)),), None),
    ("tile", lambda lx, nx: lambda x: lx.tile(x, (2, 1, 3)), (arr((2, 3, 1), BF16),), None),
    ("split", lambda lx, nx: lambda x: lx.split(x, (1, 0, 3), axis=-1), (arr((2, 4), np.uint8),), None),
    ("stack_unstack", lambda lx, nx: lambda a, b: (lx.stack([a, b], -1), lx.unstack(a, 1)),
     (arr((3, 2)), arr((3, 2))), None),
    ("index_take", lambda lx, nx: lambda x, i, j: lx.index_take(x, (i, j), (0, 2)),
     (arr((5, 3, 4)), np.array([0, -1, 4, 7], np.int32), np.array([3, -4, 1, 2], np.int32)), None),
    ("reduce_xor", lambda lx, nx: lambda x, b: (lx.reduce_xor(x, (0, 2)), lx.reduce_xor(b, (1,))),
     (arr((3, 5, 4), np.int32), arr((3, 7), np.bool_)), None),
    ("reduce_monoids", lambda lx, nx: lambda x, f: (
        lx.reduce(x, np.int32(0), lx.add, (1,)), lx.reduce(x, np.int32(-1), lx.bitwise_and, (0, 1)),
        lx.reduce(f, -np.inf, lx.max, (0,)), lx.reduce(f, np.float32(2), lx.mul, (1,)),
        lx.reduce(x, np.int32(0), lx.bitwise_xor, (0,))),
     (arr((4, 6), np.int32), arr((3, 5))), 1e-6),
    ("reduce_general", lambda lx, nx: lambda x, i: lx.reduce((x, i), (np.float32(-np.inf), np.int32(0)),
                                                               _argmax_pair(lx), (1,)),
     (arr((3, 7)), np.broadcast_to(np.arange(7, dtype=np.int32), (3, 7)).copy()), None),
    ("clz", lambda lx, nx: lambda a, b, c: (lx.clz(a), lx.clz(b), lx.clz(c)),
     (np.array([0, 1, -1, 127, 64], np.int8), arr((9,), np.uint32) * 40000, arr((6,), np.int32) ** 3), None),
    ("reduce_precision", lambda lx, nx: lambda x, y: (
        lx.reduce_precision(x, 5, 10), lx.reduce_precision(x, 8, 7), lx.reduce_precision(x, 4, 3),
        lx.reduce_precision(y, 3, 0)),
     (np.concatenate([arr((20,)) * 10.0 ** RNG.integers(-30, 30, 20), [np.nan, np.inf, -0.0, 65520.0]]
                     ).astype(np.float32), arr((8,), np.float16)), None),
    ("associative_scan", lambda lx, nx: lambda x, m: (
        lx.associative_scan(nx.add, x, axis=1), lx.associative_scan(nx.maximum, x, reverse=True, axis=1),
        lx.associative_scan(lambda a, b: (nx.matmul(a[0], b[0]), a[1] * b[1]), (m, m[:, 0, 0]))),
     (arr((3, 11), np.int32), arr((6, 2, 2))), 1e-5),
    ("cumlogsumexp", lambda lx, nx: lambda x: (lx.cumlogsumexp(x, 1), lx.cumlogsumexp(x, 0, reverse=True)),
     (arr((5, 9)) * 10,), 1e-5),
    ("conv_transpose", lambda lx, nx: lambda x, k: (
        lx.conv_transpose(x, k, (2, 1), "SAME"),
        lx.conv_transpose(x, k, (1, 2), "VALID", rhs_dilation=(2, 1)),
        lx.conv_transpose(x, k, (2, 2), ((1, 0), (2, 1)), transpose_kernel=True,
                          use_consistent_padding=True)),
     (arr((2, 5, 6, 3)), arr((3, 2, 3, 3))), 1e-5),
    ("conv_patches_local", lambda lx, nx: lambda x, w: (
        lx.conv_general_dilated_patches(x, (2, 3), (1, 2), "SAME"),
        lx.conv_general_dilated_local(x, w, (1, 2), "SAME", (2, 3))),
     (arr((2, 3, 5, 6)), arr((4, 18, 5, 3))), 1e-5),
    ("approx_k", lambda lx, nx: lambda x: (lx.approx_max_k(x, 3),
                                           lx.approx_min_k(x, 2, reduction_dimension=0),
                                             lx.approx_max_k(x, 2, reduction_dimension=0)),
     (RNG.integers(-3, 3, (6, 7)).astype(np.float32),), None),
    ("ragged_dot", lambda lx, nx: lambda x, w, g: (lx.ragged_dot(x, w, g),
                                                   lx.ragged_dot(x, w, g, preferred_element_type=np.float32)),
     (arr((9, 4), BF16), arr((3, 4, 2), BF16), np.array([2, 0, 5], np.int32)), 1e-2),
    ("optimization_barrier", lambda lx, nx: lambda x, y: lx.optimization_barrier((x * 2, y)),
     (arr((3,)), arr((2,), np.int8)), None),
    ("composite", lambda lx, nx: lambda x: lx.composite(lambda v, *, k: v * k, "my.scale")(x, k=3.0),
     (arr((4,)),), None),
    ("platform_dependent", lambda lx, nx: lambda x: lx.platform_dependent(x, cpu=nx.sin, default=nx.cos),
     (arr((4,)),), 1e-6),
    ("scatter_apply", lambda lx, nx: lambda x: lx.scatter_apply(
        x, np.array([[1], [3], [1], [9]], np.int32), lambda v: v * 2 + 1, _scatter_numbers(),
        update_shape=(4, 3)),
     (arr((6, 3)),), None),
]


@pytest.mark.parametrize(("spell", "args", "rtol"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_against_jax(spell: Callable[..., Any], args: tuple[Any, ...], rtol: float | None) -> None:
    mine, theirs = both(spell)
    check_against_jax(mine, jax.jit(theirs), *args, rtol=rtol, atol=1e-6 if rtol else 0.0)


def test_dtype_and_precision_names() -> None:
    for value in (1, 1.0, True, np.int64(2), np.float16(1), "bfloat16", np.uint8, arr((2,), np.int8)):
        assert mlx.dtype(value) == jax.lax.dtype(value)
    assert mlx.Precision is jax.lax.Precision
    x, w = arr((2, 3)), arr((3, 4))
    for fn in (lambda lx, nx: lx.dot(x, w, precision=lx.Precision.HIGHEST, preferred_element_type=np.float32),
               lambda lx, nx: nx.einsum("ij,jk", x, w, precision="highest"),
               lambda lx, nx: nx.matmul(x, w, precision=(lx.Precision.HIGH, lx.Precision.DEFAULT))):
        assert_same(fn(mlx, mnp), fn(jax.lax, jnp), rtol=1e-6)


# (id, spell(lax, numpy) -> scalar loss, arguments): mlax.grad against jax.grad in every argument.
GRADS = [
    # composing affine maps (a linear recurrence): associative, not commutative
    ("associative_scan", lambda lx, nx: lambda x, y: (lx.associative_scan(
        lambda p, q: (p[0] * q[0], p[1] * q[0] + q[1]), (x, y), axis=1)[1] ** 2).sum(),
     (arr((2, 7)), arr((2, 7)))),
    ("cumlogsumexp", lambda lx, nx: lambda x: (lx.cumlogsumexp(x, 1, reverse=True) * nx.arange(6.0)).sum(),
     (arr((3, 6)),)),
    ("conv_transpose", lambda lx, nx: lambda x, k: (lx.conv_transpose(x, k, (2, 2), "SAME") ** 2).sum(),
     (arr((1, 4, 5, 2)), arr((3, 3, 2, 3)))),
    ("ragged_dot", lambda lx, nx: lambda x, w: nx.tanh(lx.ragged_dot(x, w, np.array([3, 1, 2]))).sum(),
     (arr((7, 3)), arr((3, 3, 2)))),
]


@pytest.mark.parametrize(("spell", "args"), [g[1:] for g in GRADS], ids=[g[0] for g in GRADS])
def test_grad_against_jax(spell: Callable[..., Any], args: tuple[Any, ...]) -> None:
    mine, theirs = both(spell)
    argnums = tuple(range(len(args)))
    expected = jax.jit(jax.grad(theirs, argnums))(*args)
    assert_same(mlax.grad(mine, argnums)(*args), expected, rtol=1e-4, atol=1e-5)


def _newton_root(lx: Any, nx: Any) -> Callable[[Any, Any], Any]:
    def cube_of_root(a: Any, b: Any) -> Any:
        f = lambda y: y ** 3 + b * y - a  # noqa: E731
        solve = lambda f, y0: lx.fori_loop(0, 30, lambda i, y: y - f(y) / (3 * y ** 2 + b), y0)  # noqa: E731
        return lx.custom_root(f, nx.ones_like(a), solve, lambda g, y: y / g(1.0)) ** 2

    return cube_of_root


def _iterative_solve(lx: Any, nx: Any) -> Callable[[Any, Any], Any]:
    def solved(a: Any, b: Any) -> Any:
        matrix = a @ a.T + 3 * nx.eye(3)
        mv = lambda x: matrix @ x  # noqa: E731
        richardson = lambda mv, rhs: lx.fori_loop(0, 80, lambda i, x: x + 0.1 * (rhs - mv(x)),  # noqa: E731
                                                   nx.zeros_like(rhs))
        return nx.sin(lx.custom_linear_solve(mv, b, richardson, symmetric=True)).sum()

    return solved


@pytest.mark.parametrize("spell", [_newton_root, _iterative_solve], ids=["root", "linear_solve"])
def test_solvers(spell: Callable[..., Any]) -> None:
    """Values eagerly and jitted; gradients by implicit differentiation, against jax's."""
    mine, theirs = both(spell)
    root = spell is _newton_root
    a, b = (arr((), low=1, high=3), np.float32(0.5)) if root else (arr((3, 3)) / 3, arr((3,)))
    check_against_jax(mine, theirs, a, b, rtol=1e-4, atol=1e-5)
    assert_same(mlax.grad(mine, (0, 1))(a, b), jax.grad(theirs, (0, 1))(a, b), rtol=1e-3, atol=1e-5)


def test_vmap() -> None:
    x, w = arr((4, 3, 8)), np.arange(4 * 8, dtype=np.int32).reshape(4, 8) % 3
    fns = both(lambda lx, nx: lambda x, w: (lx.cumlogsumexp(x, 1), lx.associative_scan(nx.add, x, axis=0),
                                              lx.select_n(w, x[0], x[1], x[2]), lx.clz(w),
                                              lx.reduce(x, np.float32(0), lx.add, (0,))))
    assert_same(mlax.vmap(fns[0])(x, w), jax.jit(jax.vmap(fns[1]))(x, w), rtol=1e-5, atol=1e-6)


ERRORS = [
    (ValueError, lambda lx: lx.select_n(np.int32(0))),
    (TypeError, lambda lx: lx.select_n(np.float32(0), np.ones(2), np.ones(2))),
    (TypeError, lambda lx: lx.select_n(np.bool_(True), *[np.ones(2)] * 3)),
    (TypeError, lambda lx: lx.full((2,), np.ones(2))),
    (TypeError, lambda lx: lx.tile(np.ones((2, 2)), (2,))),
    (ValueError, lambda lx: lx.split(np.ones(4), (1, 2))),
    (ValueError, lambda lx: lx.stack([np.ones(2), np.ones(3)])),
    (ValueError, lambda lx: lx.reduce((np.ones(2),), (0.0, 0.0), lx.add, (0,))),
    (ValueError, lambda lx: lx.approx_max_k(np.ones(3, np.float32), 4)),
    (ValueError, lambda lx: lx.approx_max_k(np.ones(3, np.int32), 1)),
    (ValueError, lambda lx: lx.platform_dependent(1.0, gpu=lambda x: x)),
]


@pytest.mark.parametrize(("error", "call"), ERRORS)
def test_errors_as_jax(error: type[Exception], call: Callable[[Any], Any]) -> None:
    with pytest.raises(error):
        call(jax.lax)
    with pytest.raises(error):
        call(mlx)


def test_not_supported_is_explicit() -> None:
    with pytest.raises(NotImplementedError, match="aggregate_to_topk"):
        mlx.approx_max_k(arr((8,)), 2, aggregate_to_topk=False)
    with pytest.raises(NotImplementedError, match="group_offset"):
        mlx.ragged_dot(arr((2, 2)), arr((1, 2, 2)), np.array([2], np.int32),
                       group_offset=np.zeros(1, np.int32))


@pytest.mark.parametrize("dimension", [0, 1, 2])
def test_approx_max_k_values_are_the_operands(dimension: int) -> None:
    """Along any dimension the values are the operand's own (its -0.0 stays -0.0, though the
    ranking adds zero off the last dimension), ties the lower index first, as jax's; eagerly,
    under jit, and the gradient."""
    x = RNG.integers(-3, 3, (4, 5, 6)).astype(np.float32)
    x[x == 0] = -0.0
    want = jax.lax.approx_max_k(x, 3, dimension)
    for run in (lambda f: f, mlax.jit):
        got = run(lambda v: mlx.approx_max_k(v, 3, dimension))(x)
        np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))
        np.testing.assert_array_equal(np.asarray(got[0]), np.asarray(want[0]))
        np.testing.assert_array_equal(np.signbit(np.asarray(got[0])), np.signbit(np.asarray(want[0])))
    finite = arr((4, 5, 6))
    weights = arr(tuple(2 if i == dimension else n for i, n in enumerate(finite.shape)))
    grad = mlax.grad(lambda v: (mlx.approx_max_k(v, 2, dimension)[0] * weights).sum())(finite)
    want_grad = jax.grad(lambda v: (jax.lax.approx_max_k(v, 2, dimension)[0] * weights).sum())(finite)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(want_grad))
