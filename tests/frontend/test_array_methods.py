"""Operators and jax.Array methods on mlax.Array and on tracers, against jax.Array."""

from __future__ import annotations

import operator

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same, random_array

METHODS = [
    ("sum", ()), ("sum", (0,)), ("mean", ()), ("max", (1,)), ("min", ()), ("prod", (0,)),
    ("argmax", ()), ("argmin", (1,)), ("all", ()), ("any", (0,)), ("std", ()), ("var", (1,)),
    ("cumsum", (1,)), ("cumprod", ()), ("ravel", ()), ("flatten", ()), ("squeeze", ()),
    ("reshape", ((4, 3),)), ("reshape", (4, -1)), ("astype", (np.int32,)), ("transpose", ()),
    ("transpose", ((1, 0),)), ("clip", (-0.5, 0.5)), ("round", ()), ("swapaxes", (0, 1)),
    ("dot", (np.ones((4, 2), np.float32),)), ("sort", ()), ("sort", (0,)), ("argsort", ()),
    ("take", (np.array([0, 5, 11]),)),
    ("copy", ()), ("ptp", ()), ("ptp", (1,)), ("repeat", (2,)), ("repeat", (2, 1)), ("diagonal", ()),
    ("diagonal", (1,)), ("argpartition", (2,)), ("argpartition", (1, 0)),
]


@pytest.mark.parametrize("name, args", METHODS, ids=[f"{m}{a}" for m, a in METHODS])
def test_methods_match_jax(rng: np.random.Generator, name: str, args: tuple) -> None:
    x = random_array(rng, (3, 4), np.float32, -1.5, 1.5)
    expected = getattr(jnp.asarray(x), name)(*args)
    assert_same(getattr(mnp.asarray(x), name)(*args), expected, rtol=2e-6)
    assert_same(mlax.jit(lambda v: getattr(v, name)(*args))(x), expected, rtol=2e-6)


BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
          operator.pow, operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]
INT_BINARY = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]


@pytest.mark.parametrize("op", BINARY + INT_BINARY, ids=lambda op: op.__name__)
def test_operators_with_scalars_and_arrays(rng: np.random.Generator, op) -> None:
    is_int = op in INT_BINARY
    dtype = np.int32 if is_int else np.float32
    x = random_array(rng, (2, 3), dtype, 0.5, 2.0)
    y = random_array(rng, (3,), dtype, 0.5, 2.0)
    if is_int:
        x, y = np.abs(x) % 7 + 1, np.abs(y) % 5 + 1
    for lhs, rhs in ((x, y), (x, 2), (3, x)):
        def run(a, b, module):
            a = module.asarray(a) if isinstance(a, np.ndarray) else a
            b = module.asarray(b) if isinstance(b, np.ndarray) else b
            return op(a, b)

        assert_same(run(lhs, rhs, mnp), run(lhs, rhs, jnp), rtol=2e-6)
    assert_same(mlax.jit(lambda a, b: op(a, b))(x, y), jax.jit(lambda a, b: op(a, b))(x, y), rtol=2e-6)


def test_unary_operators_and_matmul(rng: np.random.Generator) -> None:
    x = random_array(rng, (3, 3), np.float32)
    for fn in (operator.neg, operator.pos, abs, lambda v: v @ v, lambda v: v.T, lambda v: v.mT,
               lambda v: divmod(v, 0.7)):
        assert_same(fn(mnp.asarray(x)), fn(jnp.asarray(x)), rtol=2e-6)
        assert_same(mlax.jit(fn)(x), jax.jit(fn)(x), rtol=2e-6)
    i = random_array(rng, (4,), np.int32)
    assert_same(~mnp.asarray(i), ~jnp.asarray(i))


def test_iteration_len_and_indexing_on_tracers(rng: np.random.Generator) -> None:
    x = random_array(rng, (3, 2), np.float32)

    def f(v):
        rows = list(v)
        return rows[0] + rows[-1] * len(v) + v[1, ::-1] + v[..., 0][None, 1]

    assert_same(mlax.jit(f)(x), jax.jit(f)(x), rtol=2e-6)
    assert_same(f(mnp.asarray(x)), f(jnp.asarray(x)), rtol=2e-6)


def test_at_updates_leave_input_unchanged(rng: np.random.Generator) -> None:
    x = mnp.asarray(random_array(rng, (4, 3), np.float32))
    before = np.array(x)
    y = x.at[1:3, 0].add(10.0).at[0].set(-1.0).at[-1, ::2].multiply(2.0)
    expected = jnp.asarray(before).at[1:3, 0].add(10.0).at[0].set(-1.0).at[-1, ::2].multiply(2.0)
    assert_same(y, expected, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(x), before)
    assert_same(x.at[2].min(0.0), jnp.asarray(before).at[2].min(0.0))
    assert_same(x.at[:, 1].max(0.5), jnp.asarray(before).at[:, 1].max(0.5))
    assert_same(x.at[3, 2].get(), jnp.asarray(before).at[3, 2].get())


def test_compress_trace_and_sizes_match_jax(rng: np.random.Generator) -> None:
    """``x.compress(c)`` takes the condition first (``compress(c, x)``); ``trace`` is an array
    method on mlax.Array (a tracer's ``trace`` is its Trace); ``itemsize``/``nbytes`` as jax's."""
    x = random_array(rng, (3, 4), np.float32)
    condition = np.array([True, False, True])
    assert_same(mnp.asarray(x).compress(condition, axis=0), jnp.asarray(x).compress(condition, axis=0))
    assert_same(mnp.asarray(x).trace(), jnp.asarray(x).trace(), rtol=2e-6)
    for dtype in (np.float32, np.int8, np.float16):
        a = x.astype(dtype)
        expected = (jnp.asarray(a).itemsize, jnp.asarray(a).nbytes)
        assert (mnp.asarray(a).itemsize, mnp.asarray(a).nbytes) == expected
        traced = mlax.eval_shape(lambda v: mnp.zeros((v.itemsize, v.nbytes)), a)
        assert traced.shape == expected


def test_tracers_and_arrays_are_weakly_referable(rng: np.random.Generator) -> None:
    """As jax's (tensorflow_probability's bijector caches keep weak references to values)."""
    import weakref

    x = random_array(rng, (3,), np.float32)
    seen = []

    def f(v):
        ref = weakref.ref(v)
        seen.append(ref() is v)
        return v * 2

    assert_same(mlax.jit(f)(x), jax.jit(f)(x))
    array = mnp.asarray(x)
    assert weakref.ref(array)() is array
    assert seen == [True, True]
