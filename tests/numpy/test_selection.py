"""mlax.numpy selection and assembly (put, put_along_axis, place, extract, compress, choose,
delete, piecewise, partition, argpartition, block, resize, rollaxis, apply_along_axis,
apply_over_axes, fromfunction) against jax.numpy: values, dtypes, weak types, eagerly and under
mlax.jit; the forms that need concrete inputs eagerly; gradients of the written values; vmap."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.numpy.helpers import BF16, check_values, operand
from tests.oracle import assert_same, check_against_jax, random_array

Spell = Callable[[Any], Callable[..., Any]]
Args = Callable[[np.random.Generator], tuple[Any, ...]]


def _ints(rng: np.random.Generator, shape: tuple[int, ...], low: int, high: int,
          dtype: Any = np.int32) -> np.ndarray:
    return rng.integers(low, high, size=shape).astype(dtype)


def _distinct(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Distinct values (partition's order among ties is jax's top_k's, not a property to pin)."""
    return rng.permutation(np.prod(shape, dtype=int)).reshape(shape).astype(dtype)


CASES: dict[str, tuple[Spell, Args]] = {
    "put_drop": (lambda m: lambda a, i, v: m.put(a, i, v, inplace=False),
                 lambda r: (operand(r, np.float32, (3, 4)), _ints(r, (5,), -14, 14), operand(r,
                            np.float32, (2,)))),
    "put_clip": (lambda m: lambda a, i: m.put(a, i, 2.5, mode="clip", inplace=False),
                 lambda r: (operand(r, BF16, (2, 3)), _ints(r, (2, 2), -9, 9))),
    "put_wrap": (lambda m: lambda a, i, v: m.put(a, i, v, mode="wrap", inplace=False),
                 lambda r: (operand(r, np.int8, (5,)), _ints(r, (4,), -12, 12), operand(r, np.int8, (3,)))),
    "put_empty": (lambda m: lambda a, i: m.put(a, i, 1, inplace=False),
                  lambda r: (operand(r, np.uint8, (3,)), _ints(r, (0,), 0, 3))),
    "put_along_axis": (lambda m: lambda a, i, v: m.put_along_axis(a, i, v, axis=1, inplace=False),
                       lambda r: (operand(r, np.float32, (3, 4, 2)), _ints(r, (3, 1, 2), -4, 4),
                                  operand(r, np.float32, (1, 2)))),
    "put_along_none": (lambda m: lambda a, i: m.put_along_axis(a, i, -1, None, inplace=False),
                       lambda r: (operand(r, np.int16, (2, 3)), _ints(r, (3,), 0, 6))),
    "place": (lambda m: lambda a, k, v: m.place(a, k, v, inplace=False),
              lambda r: (operand(r, np.float16, (3, 4)), operand(r, np.bool_, (12,)), operand(r,
                         np.float16, (3,)))),
    "extract_size": (lambda m: lambda c, a: m.extract(c, a, size=5, fill_value=-7),
                     lambda r: (operand(r, np.bool_, (2, 4)), operand(r, np.int32, (2, 4)))),
    "compress_size": (lambda m: lambda c, a: m.compress(c, a, axis=1, size=2, fill_value=9.5),
                      lambda r: (operand(r, np.int8, (5,)), operand(r, np.float32, (2, 4, 3)))),
    "choose_wrap": (lambda m: lambda a, x, y: m.choose(a, [x, y, 3], mode="wrap"),
                    lambda r: (_ints(r, (2, 3), -5, 5), operand(r, np.float32, (3,)), operand(r,
                               np.int8, (2, 1)))),
    "choose_clip": (lambda m: lambda a, x, y: m.choose(a, [x, y], mode="clip"),
                    lambda r: (_ints(r, (4,), -3, 4, np.uint8), operand(r, BF16, (4,)), operand(r, BF16,
                               ()))),
    "delete_int": (lambda m: lambda a: m.delete(a, -2, axis=1), lambda r: (operand(r, np.float32, (2, 4)),)),
    "delete_slice": (lambda m: lambda a: m.delete(a, slice(1, None, 2), axis=0),
                     lambda r: (operand(r, np.int16, (5, 2)),)),
    "delete_unique": (lambda m: lambda a, i: m.delete(a, i, assume_unique_indices=True),
                      lambda r: (operand(r, np.float32, (2, 3)), np.array([4, -1, 0]))),
    "piecewise": (lambda m: lambda x: m.piecewise(x, [x < -1, x > 1], [lambda v: v * 2, lambda v: -v, 0.5]),
                  lambda r: (operand(r, np.float32, (3, 4), specials=False),)),
    "piecewise_int": (lambda m: lambda x: m.piecewise(x, [x % 2 == 0], [lambda v, k: v // k], 3),
                      lambda r: (operand(r, np.int32, (5,)),)),
    "partition": (lambda m: lambda a: m.partition(a, 2), lambda r: (_distinct(r, (3, 5), np.float32),)),
    "partition_axis0_uint": (lambda m: lambda a: m.partition(a, -1, axis=0),
                             lambda r: (_distinct(r, (4, 3), np.uint8),)),
    "argpartition": (lambda m: lambda a: m.argpartition(a, 1, axis=1),
                     lambda r: (_distinct(r, (2, 4, 3), np.int16),)),
    "argpartition_uint": (lambda m: lambda a: m.argpartition(a, 3), lambda r: (_distinct(r, (6,),
                                                                               np.uint32),)),
    "block_2d": (lambda m: lambda a, b: m.block([[a, b], [b, a]]),
                 lambda r: (operand(r, np.float32, (2, 2)), operand(r, np.int8, (2, 2)))),
    "block_promote_rank": (lambda m: lambda a, b: m.block([a, b, 1.5]),
                           lambda r: (operand(r, np.int32, (3,)), operand(r, np.int32, (1, 2)))),
    "block_scalar": (lambda m: lambda a: m.block(a), lambda r: (operand(r, np.float16, (2, 3)),)),
    "resize_grow": (lambda m: lambda a: m.resize(a, (3, 5)), lambda r: (operand(r, np.int8, (2, 3)),)),
    "resize_scalar_weak": (lambda m: lambda: m.resize(2.5, 4), lambda r: ()),
    "resize_empty": (lambda m: lambda a: m.resize(a, (2, 2)), lambda r: (operand(r, np.float32, (0, 3)),)),
    "rollaxis": (lambda m: lambda a: m.rollaxis(a, 2, 1), lambda r: (operand(r, np.float32, (2, 3, 4, 1)),)),
    "rollaxis_end": (lambda m: lambda a: m.rollaxis(a, 0, 3), lambda r: (operand(r, np.int8, (2, 3, 4)),)),
    "apply_along_axis": (lambda m: lambda a: m.apply_along_axis(lambda v: v[:2] * m.sum(v), 1, a),
                         lambda r: (operand(r, np.float32, (2, 4, 3), specials=False),)),
    "apply_along_axis_args": (lambda m: lambda a: m.apply_along_axis(m.roll, -1, a, 1),
                              lambda r: (operand(r, np.int16, (3, 4)),)),
    "apply_over_axes": (lambda m: lambda a: m.apply_over_axes(m.sum, a, [0, 2]),
                        lambda r: (operand(r, np.float32, (2, 3, 4), specials=False),)),
    "fromfunction": (lambda m: lambda: m.fromfunction(lambda i, j: i * 10 + j, (3, 4)), lambda r: ()),
    "fromfunction_int": (lambda m: lambda: m.fromfunction(lambda i, j, k: i - j * k, (2, 3, 2), dtype=int),
                         lambda r: ()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name: str, rng: np.random.Generator) -> None:
    spell, args = CASES[name]
    check_values(spell(mnp), spell(jnp), *args(rng), atol=1e-6)


# Data-dependent shapes or host-side checks: concrete inputs (eager), as in jax.
EAGER: dict[str, tuple[Spell, Args]] = {
    "extract": (lambda m: lambda c, a: m.extract(c, a), lambda r: (operand(r, np.int8, (3, 4)),
                                                                   operand(r, np.float32, (3, 4)))),
    "compress": (lambda m: lambda c, a: m.compress(c, a, axis=0),
                 lambda r: (operand(r, np.bool_, (3,)), operand(r, np.float32, (3, 2)))),
    "compress_flat_short": (lambda m: lambda c, a: m.compress(c, a),
                            lambda r: (operand(r, np.bool_, (4,)), operand(r, np.uint8, (3, 2)))),
    "choose_raise": (lambda m: lambda a, x, y: m.choose(a, [x, y]),
                     lambda r: (_ints(r, (5,), 0, 2), operand(r, np.float32, (5,)), operand(r,
                                np.float32, ()))),
    "delete_array": (lambda m: lambda a: m.delete(a, np.array([0, 2, 2, -1]), axis=1),
                     lambda r: (operand(r, np.int32, (2, 5)),)),
    "delete_mask": (lambda m: lambda a: m.delete(a, np.array([True, False, True])),
                    lambda r: (operand(r, np.float32, (3,)),)),
}


@pytest.mark.parametrize("name", sorted(EAGER))
def test_concrete_forms(name: str, rng: np.random.Generator) -> None:
    spell, args = EAGER[name]
    check_against_jax(spell(mnp), spell(jnp), *args(rng), jit=False)


def test_concrete_forms_refuse_tracers(rng: np.random.Generator) -> None:
    a = operand(rng, np.float32, (4,))
    for fn in (lambda c: mnp.compress(c, a), lambda c: mnp.extract(c, a),
               lambda c: mnp.choose(c.astype(int), [a, a]), lambda c: mnp.delete(a, c)):
        with pytest.raises(mlax.ConcretizationTypeError):
            mlax.jit(fn)(np.array([True, False, True, True]))


@pytest.mark.parametrize("call, error", [
    (lambda m: m.put(np.ones(3), np.array([0]), 1.0), ValueError),
    (lambda m: m.put(np.ones(3), np.array([0]), 1.0, mode="raise", inplace=False), NotImplementedError),
    (lambda m: m.put(np.ones(3), np.array([0]), 1.0, mode="bad", inplace=False), ValueError),
    (lambda m: m.put_along_axis(np.ones((2, 2)), np.zeros(2, int), 1.0, 0), ValueError),
    (lambda m: m.put_along_axis(np.ones((2, 2)), np.zeros(2, int), 1.0, 0, inplace=False), ValueError),
    (lambda m: m.put_along_axis(np.ones((2, 2)), np.zeros((1, 2), int), np.ones(3), 0, inplace=False),
     ValueError),
    (lambda m: m.place(np.ones(3), np.ones(2, bool), 1.0, inplace=False), ValueError),
    (lambda m: m.place(np.ones(3), np.ones(3, bool), np.ones(0), inplace=False), ValueError),
    (lambda m: m.compress(np.ones((2, 2), bool), np.ones(4)), ValueError),
    (lambda m: m.compress(np.ones(2, bool), np.ones(4), size=5), ValueError),
    (lambda m: m.choose(np.array([0.5]), [np.ones(1)]), ValueError),
    (lambda m: m.choose(np.array([0]), [np.ones(1)], mode="bad"), ValueError),
    (lambda m: m.delete(np.ones(3), np.array([0.5])), ValueError),
    (lambda m: m.delete(np.ones(3), np.array([True])), ValueError),
    (lambda m: m.piecewise(np.ones(3), [np.ones(3, bool)], [1, 2, 3]), ValueError),
    (lambda m: m.partition(np.ones(3), 3), ValueError),
    (lambda m: m.block([]), ValueError),
    (lambda m: m.block((np.ones(2),)), ValueError),
    (lambda m: m.block([np.ones(2), [np.ones(2)]]), ValueError),
    (lambda m: m.resize(np.ones(2), (-1, 2)), ValueError),
    (lambda m: m.rollaxis(np.ones((2, 3)), 0, 3), ValueError),
    (lambda m: m.apply_over_axes(lambda a, ax: m.sum(a), np.ones((2, 2, 2)), [0]), ValueError),
])
def test_errors_match_jax(call: Callable[[Any], Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        call(jnp)
    with pytest.raises(error):
        call(mnp)


def _written_values(m: Any) -> Callable[..., Any]:
    """A scalar of everything the scatters write, for grad: the values and the untouched rest."""
    def fn(a: Any, v: Any) -> Any:
        put = m.put(a, np.array([0, 5, -1]), v, inplace=False)
        along = m.put_along_axis(a, np.array([[1], [0]]), v[:2, None], axis=1, inplace=False)
        return m.sum(put * put) + m.sum(along * m.arange(6.0).reshape(2, 3))

    return fn


def test_grad_of_put_and_put_along_axis(rng: np.random.Generator) -> None:
    a, v = random_array(rng, (2, 3), np.float32), random_array(rng, (3,), np.float32)
    grads = mlax.grad(_written_values(mnp), argnums=(0, 1))(a, v)
    assert_same(grads, jax.grad(_written_values(jnp), argnums=(0, 1))(a, v), rtol=1e-6)


def test_vmap(rng: np.random.Generator) -> None:
    a, i = random_array(rng, (3, 2, 4), np.float32), _ints(rng, (3, 2, 1), 0, 4)
    put = lambda m: lambda x, k: m.put_along_axis(x, k, 0.0, axis=1, inplace=False)  # noqa: E731
    assert_same(mlax.vmap(put(mnp))(a, i), jax.vmap(put(jnp))(a, i))
    part = lambda m: lambda x: m.partition(x, 1)  # noqa: E731
    d = _distinct(rng, (3, 5), np.float32)
    assert_same(mlax.vmap(part(mnp))(d), jax.vmap(part(jnp))(d))
