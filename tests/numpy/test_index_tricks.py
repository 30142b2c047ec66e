"""mlax.numpy index helpers (mgrid, ogrid, r_, c_, ix_, unravel_index, ravel_multi_index, the
triangle/diagonal/mask indices, fill_diagonal) against jax.numpy: values, dtypes and weak types,
eagerly and under mlax.jit, in both 64-bit modes for the index dtypes, and jnp's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.numpy.helpers import BF16, check_values, operand
from tests.oracle import assert_same, random_array

Spell = Callable[[Any], Callable[..., Any]]
Args = Callable[[np.random.Generator], tuple[Any, ...]]


def _ints(rng: np.random.Generator, shape: tuple[int, ...], low: int, high: int,
          dtype: Any = np.int32) -> np.ndarray:
    return rng.integers(low, high, size=shape).astype(dtype)


# name: (spelling for a module m, the random arguments). Slices and shapes are static.
CASES: dict[str, tuple[Spell, Args]] = {
    "mgrid_int": (lambda m: lambda: m.mgrid[0:4, -2:3:2], lambda r: ()),
    "mgrid_complex_step": (lambda m: lambda: m.mgrid[0:3, 0.0:1.0:5j], lambda r: ()),
    "mgrid_one_slice": (lambda m: lambda: m.mgrid[-1:1:0.5], lambda r: ()),
    "mgrid_empty_key": (lambda m: lambda: m.mgrid[()], lambda r: ()),
    "ogrid": (lambda m: lambda: m.ogrid[0:3:1.0, :2, 1:2:3j], lambda r: ()),
    "r_mixed": (lambda m: lambda a: m.r_[1, 2.5, a, -1:2], lambda r: (operand(r, np.int8, (3,)),)),
    "r_directive_2d": (lambda m: lambda a, b: m.r_["0,2,0", a, b],
                       lambda r: (operand(r, np.float32, (3,)), operand(r, np.float16, (3,)))),
    "r_directive_neg": (lambda m: lambda a, b: m.r_["1,3,-2", a, b],
                        lambda r: (operand(r, np.int16, (2, 3)), operand(r, np.int16, (2, 3)))),
    "r_row": (lambda m: lambda a: m.r_["r", a, a], lambda r: (operand(r, BF16, (4,)),)),
    "r_col": (lambda m: lambda a: m.r_["c", a, 3], lambda r: (operand(r, np.uint8, (2,)),)),
    "c_matrices": (lambda m: lambda a, b: m.c_[a, b],
                   lambda r: (operand(r, np.float32, (2, 3)), operand(r, np.int8, (2,)))),
    "c_row_directive": (lambda m: lambda a: m.c_["r", a, a], lambda r: (operand(r, np.int32, (3,)),)),
    "c_scalars": (lambda m: lambda: m.c_[1, 2.0], lambda r: ()),
    "ix_": (lambda m: lambda a, b, c: m.ix_(a, b, c),
            lambda r: (_ints(r, (3,), 0, 5, np.uint8), _ints(r, (0,), 0, 5, np.int8), _ints(r, (2,), -3, 3))),
    "unravel_c": (lambda m: lambda i: m.unravel_index(i, (3, 4, 2)), lambda r: (_ints(r, (2, 5), -30, 30),)),
    "unravel_scalar_shape": (lambda m: lambda i: m.unravel_index(i, 7), lambda r: (_ints(r, (6,), -9, 9),)),
    "unravel_uint": (lambda m: lambda i: m.unravel_index(i, (5, 6)),
                     lambda r: (_ints(r, (4,), 0, 40, np.uint8),)),
    "unravel_weak": (lambda m: lambda: m.unravel_index(17, (4, 5)), lambda r: ()),
    "ravel_wrap": (lambda m: lambda i, j: m.ravel_multi_index((i, j), (3, 5), mode="wrap"),
                   lambda r: (_ints(r, (4,), -6, 8), _ints(r, (4,), -6, 8, np.int8))),
    "ravel_clip_f": (lambda m: lambda i, j: m.ravel_multi_index((i, j), (4, 3), mode="clip", order="F"),
                     lambda r: (_ints(r, (2, 3), -6, 8), _ints(r, (3,), -6, 8))),
    "ravel_ignore_dtype": (lambda m: lambda i, j: m.ravel_multi_index((i, j), (4, 3), "ignore",
                                                                      dtype=np.int16),
                           lambda r: (_ints(r, (3,), 0, 4, np.uint8), _ints(r, (3,), 0, 3, np.uint8))),
    "ravel_uint8": (lambda m: lambda i, j: m.ravel_multi_index((i, j), (3, 4), mode="wrap"),
                    lambda r: (_ints(r, (3,), 0, 9, np.uint8), 1)),
    "tril_indices": (lambda m: lambda: m.tril_indices(4, -1, 5), lambda r: ()),
    "triu_indices": (lambda m: lambda: m.triu_indices(3, 1), lambda r: ()),
    "tril_indices_from": (lambda m: lambda a: m.tril_indices_from(a, 1),
                          lambda r: (operand(r, np.int8, (3, 5)),)),
    "triu_indices_from": (lambda m: lambda a: m.triu_indices_from(a),
                          lambda r: (operand(r, np.float32, (4, 2)),)),
    "diag_indices": (lambda m: lambda: m.diag_indices(4, 3), lambda r: ()),
    "diag_indices_from": (lambda m: lambda a: m.diag_indices_from(a),
                          lambda r: (operand(r, BF16, (3, 3, 3)),)),
    "mask_indices": (lambda m: lambda: m.mask_indices(4, m.triu, 1, size=6), lambda r: ()),
    "mask_indices_size": (lambda m: lambda: m.mask_indices(3, m.tril, size=8), lambda r: ()),
    "fill_diagonal_scalar": (lambda m: lambda a: m.fill_diagonal(a, 7, inplace=False),
                             lambda r: (operand(r, np.float32, (3, 5)),)),
    "fill_diagonal_values": (lambda m: lambda a, v: m.fill_diagonal(a, v, inplace=False),
                             lambda r: (operand(r, np.int16, (4, 4, 4)), operand(r, np.int16, (3,)))),
    "fill_diagonal_tall": (lambda m: lambda a, v: m.fill_diagonal(a, v, inplace=False),
                           lambda r: (operand(r, np.float16, (5, 2)), operand(r, np.float16, (2, 2)))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name: str, rng: np.random.Generator) -> None:
    spell, args = CASES[name]
    check_values(spell(mnp), spell(jnp), *args(rng))


@pytest.mark.parametrize("name", ["tril_indices", "diag_indices", "unravel_c", "ravel_wrap", "mgrid_int",
                                  "mask_indices"])
def test_index_dtypes_under_x64(name: str, x64: None, rng: np.random.Generator) -> None:
    spell, args = CASES[name]
    check_values(spell(mnp), spell(jnp), *args(rng))


def test_s_and_index_exp_are_numpys() -> None:
    assert mnp.s_ is jnp.s_ and mnp.index_exp is jnp.index_exp
    assert mnp.s_[1:2, ::3] == (slice(1, 2), slice(None, None, 3))


def test_concrete_only_forms(rng: np.random.Generator) -> None:
    """mode="raise" checks the indices on the host, so needs them concrete, as in jax."""
    i, j = _ints(rng, (5,), 0, 3), _ints(rng, (5,), 0, 4)
    assert_same(mnp.ravel_multi_index((i, j), (3, 4)), jnp.ravel_multi_index((i, j), (3, 4)))
    with pytest.raises(mlax.ConcretizationTypeError):
        mlax.jit(lambda a: mnp.ravel_multi_index((a, a), (3, 4)))(i)
    # without size, jnp.mask_indices works eagerly only (mlax's also under jit: its mask is a constant)
    assert_same(mnp.mask_indices(4, mnp.triu, -1), jnp.mask_indices(4, jnp.triu, -1))


@pytest.mark.parametrize("call, error", [
    (lambda m: m.ravel_multi_index((np.array([3]), np.array([0])), (3, 4)), ValueError),
    (lambda m: m.ravel_multi_index((np.array([1.0]), np.array([0])), (3, 4), "wrap", dtype=int), TypeError),
    (lambda m: m.ravel_multi_index((np.array([1]),), (3,), mode="bad"), ValueError),
    (lambda m: m.ravel_multi_index((np.array([1]),), (3,), order="K"), ValueError),
    (lambda m: m.ravel_multi_index((np.array([1]),), (300,), mode="wrap", dtype=np.int8), ValueError),
    (lambda m: m.ravel_multi_index((np.array([1]),), (3,), mode="wrap", dtype=np.float32), ValueError),
    (lambda m: m.unravel_index(np.array([1]), ((2, 3),)), ValueError),
    (lambda m: m.ix_(np.ones((2, 2), np.int32)), ValueError),
    (lambda m: m.ix_(np.ones(2, bool)), NotImplementedError),
    (lambda m: m.diag_indices(-1), ValueError),
    (lambda m: m.diag_indices_from(np.ones((2, 3))), ValueError),
    (lambda m: m.diag_indices_from(np.ones(3)), ValueError),
    (lambda m: m.tril_indices_from(np.ones((2, 2, 2))), ValueError),
    (lambda m: m.fill_diagonal(np.ones((2, 2)), 1.0), NotImplementedError),
    (lambda m: m.fill_diagonal(np.ones((2, 2)), 1.0, wrap=True, inplace=False), NotImplementedError),
    (lambda m: m.fill_diagonal(np.ones(2), 1.0, inplace=False), ValueError),
    (lambda m: m.fill_diagonal(np.ones((2, 3, 2)), 1.0, inplace=False), ValueError),
    (lambda m: m.r_["x,y", np.ones(2)], ValueError),
    (lambda m: m.r_[np.ones(2), "r"], ValueError),
    (lambda m: m.mgrid[0:np.ones((2, 2))], ValueError),
])
def test_errors_match_jax(call: Callable[[Any], Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        call(jnp)
    with pytest.raises(error):
        call(mnp)


def test_vmap_of_unravel_and_fill_diagonal(rng: np.random.Generator) -> None:
    import jax

    idx = _ints(rng, (3, 4), -15, 15)
    assert_same(mlax.vmap(lambda i: mnp.unravel_index(i, (2, 5)))(idx),
                jax.vmap(lambda i: jnp.unravel_index(i, (2, 5)))(idx))
    a, v = random_array(rng, (2, 3, 3), np.float32), random_array(rng, (2,), np.float32)
    assert_same(mlax.vmap(lambda x, s: mnp.fill_diagonal(x, s, inplace=False))(a, v),
                jax.vmap(lambda x, s: jnp.fill_diagonal(x, s, inplace=False))(a, v))
