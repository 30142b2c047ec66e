"""x[index] and x.at[index].op(v) against jax.numpy, eager and jitted, for basic indices."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same, check_against_jax, random_array

SHAPE = (4, 5, 6)
INDICES = [
    0, -1, 3, np.int64(2), np.int32(-4),
    np.s_[:], np.s_[1:3], np.s_[::2], np.s_[::-1], np.s_[-2:], np.s_[3:1], np.s_[10:], np.s_[-10:2],
    np.s_[::-3], np.s_[4:0:-2], np.s_[::7],
    np.s_[1, 2], np.s_[1, 2, 3], np.s_[-1, -2, -3], np.s_[1, :, 2], np.s_[:, 1:4:2, ::-2],
    np.s_[None], np.s_[None, 1], np.s_[:, None, :, None], np.s_[1, None, ..., None],
    np.s_[...], np.s_[..., 1], np.s_[1, ...], np.s_[..., ::2, 0], np.s_[0, ..., 0], np.s_[..., None],
    np.s_[()], (np.int8(1), slice(None)), np.s_[:, ::-10], np.s_[2:, -1, 1::3],
    np.s_[-3:-1, None, ::-1, 4], np.s_[:, :, :], np.s_[1:2, 4:5, 5:], np.s_[::-1, ::-1, ::-1],
    np.s_[0, 0:0],
]
IDS = [repr(i).replace(" ", "") for i in INDICES]
UPDATES = ["set", "add", "multiply", "mul", "min", "max", "subtract"]


def check_on_arrays(f: object, x: object, *rest: object) -> None:
    """``f(array, *rest)`` with x as an mlax array and as a jax array (methods agree by name)."""
    jax_fn = jax.jit(lambda a, *r: f(jnp.asarray(a), *r))  # one XLA compile, not one per op
    check_against_jax(lambda a, *r: f(mnp.asarray(a), *r), jax_fn, x, *rest)


@pytest.mark.parametrize("index", INDICES, ids=IDS)
def test_getitem(index: object, rng: np.random.Generator) -> None:
    x = random_array(rng, SHAPE, np.float32)
    check_on_arrays(lambda a: a[index], x)


@pytest.mark.parametrize("k", range(len(INDICES)), ids=IDS)
def test_at_update(k: int, rng: np.random.Generator) -> None:
    """The update methods in turn, with values of the indexed shape, then a broadcast scalar."""
    x = random_array(rng, SHAPE, np.float32)
    index, method = INDICES[k], UPDATES[k % len(UPDATES)]
    values = random_array(rng, np.empty(SHAPE)[index].shape, np.float32)
    for v in (values, np.float32(rng.uniform(-3, 3))):
        check_on_arrays(lambda a, u: getattr(a.at[index], method)(u), x, v)


# bool is left out of the arithmetic updates (add, multiply, ...): only set, get, min and max.
AT_METHOD_DTYPES = [pytest.param(method, dtype, id=f"{np.dtype(dtype).name}-{method}")
                    for dtype in (np.float32, np.int32, np.uint8, ml_dtypes.bfloat16, np.bool_)
                    for method in UPDATES + ["get", "apply"]
                    if dtype != np.bool_ or method in ("set", "get", "min", "max")]


@pytest.mark.parametrize("method,dtype", AT_METHOD_DTYPES)
def test_at_methods_dtypes(method: str, dtype: type, rng: np.random.Generator) -> None:
    x = random_array(rng, (3, 7), dtype)
    index = np.s_[1:, ::-3]
    v = random_array(rng, (2, 3), dtype)
    if method == "get":
        check_on_arrays(lambda a: a.at[index].get(), x)
    elif method == "apply":
        check_on_arrays(lambda a: a.at[index].apply(lambda t: t * 2), x)
    else:
        check_on_arrays(lambda a, u: getattr(a.at[index], method)(u), x, v)


@pytest.mark.filterwarnings("ignore:scatter inputs have incompatible types:FutureWarning")
def test_at_casts_values_to_the_array_dtype(rng: np.random.Generator) -> None:
    x = random_array(rng, (4,), np.int32)
    check_on_arrays(lambda a: a.at[1:3].set(2.75), x)
    w = mnp.asarray(2.0)  # weakly typed: the result keeps x's weak type, like jax
    assert_same(w.at[()].set(5), jnp.asarray(2.0).at[()].set(5))
    zeros = np.zeros(3, np.float32)
    assert_same(mnp.asarray(zeros).at[1].set(np.float32(5)), jnp.asarray(zeros).at[1].set(np.float32(5)))


@pytest.mark.parametrize("index", [(), Ellipsis, None, (None, ...), (..., None, None)], ids=repr)
def test_rank0(index: object, rng: np.random.Generator) -> None:
    x = random_array(rng, (), np.float32)
    check_on_arrays(lambda a: a[index], x)
    check_on_arrays(lambda a: a.at[index].set(7.0), x)


@pytest.mark.parametrize("index", [np.s_[:, 1], np.s_[1:], np.s_[..., ::-1], np.s_[:, None, 2:0:-1]],
                         ids=repr)
def test_size0(index: object, rng: np.random.Generator) -> None:
    x = random_array(rng, (0, 3), np.float32)
    check_on_arrays(lambda a: a[index], x)
    check_on_arrays(lambda a: a.at[index].add(1.0), x)


def test_original_unchanged(rng: np.random.Generator) -> None:
    x_np = random_array(rng, (3, 4), np.float32)
    before = x_np.copy()
    x = mnp.asarray(x_np)
    for update in (lambda r: r.set(9.0), lambda r: r.add(1.0), lambda r: r.max(100.0)):
        y = update(x.at[1:, ::2])
        assert not np.array_equal(np.asarray(y), before)
        np.testing.assert_array_equal(np.asarray(x), before)
    mlax.jit(lambda a: a.at[0].set(1.0))(x)
    np.testing.assert_array_equal(np.asarray(x), before)
    np.testing.assert_array_equal(x_np, before)


DYNAMIC = [
    (lambda a, i: a[i], lambda a, i: a[i]),
    (lambda a, i: a[i, 1:3], lambda a, i: a[i, 1:3]),
    (lambda a, i: a[::-1, i], lambda a, i: a[::-1, i]),
    (lambda a, i: a[None, ..., i], lambda a, i: a[None, ..., i]),
    (lambda a, i: a.at[i].set(9.0), lambda a, i: a.at[i].set(9.0)),
    (lambda a, i: a.at[i, ::2].add(9.0), lambda a, i: a.at[i, ::2].add(9.0)),
    (lambda a, i: a.at[1:, i].multiply(3.0), lambda a, i: a.at[1:, i].multiply(3.0)),
    (lambda a, i: a.at[i, -1].max(50.0), lambda a, i: a.at[i, -1].max(50.0)),
]


@pytest.mark.parametrize("k", range(len(DYNAMIC)))
def test_traced_scalar_index(k: int, rng: np.random.Generator) -> None:
    """Dynamic indices: reads clamp after negative wrap-around, out-of-bounds updates are dropped."""
    mlax_fn, jax_fn = DYNAMIC[k]
    x = random_array(rng, (5, 5), np.float32)
    f, g = mlax.jit(mlax_fn), jax.jit(jax_fn)
    for i in (-8, -6, -5, -1, 0, 4, 5, 9):
        expected = g(x, np.int32(i))
        assert_same(f(x, np.int32(i)), expected)
        assert_same(mlax_fn(mnp.asarray(x), mnp.asarray(np.int32(i))), expected)  # eager, concrete index
        assert_same(f(x, np.int8(i)), g(x, np.int8(i)))


def test_two_traced_indices(rng: np.random.Generator) -> None:
    x = random_array(rng, (4, 3, 5), np.float32)
    fns = (lambda a, i, j: (a[i, :, j], a.at[i, 1:, j].add(1.0)),)
    f, g = mlax.jit(fns[0]), jax.jit(fns[0])
    for i, j in ((0, 0), (3, -1), (-2, 4), (4, 1), (1, -6)):
        assert_same(f(x, i, j), g(x, i, j))
        assert_same(f(x, np.uint32(i % 8), np.int16(j)), g(x, np.uint32(i % 8), np.int16(j)))


def test_iteration_and_len(rng: np.random.Generator) -> None:
    x = random_array(rng, (3, 2), np.float32)
    assert len(mnp.asarray(x)) == 3
    for row, expected in zip(mnp.asarray(x), x, strict=True):
        np.testing.assert_array_equal(np.asarray(row), expected)


ERRORS = [
    (np.s_[1, 2, 3], IndexError, "Too many indices: array is 2-dimensional, but 3 were indexed"),
    (np.s_[..., 1, ...], IndexError, "single ellipsis"),
    (np.s_[1.0], TypeError, "Indexer must have integer or boolean type, got indexer with type float"),
    (np.s_["a"], TypeError, "Indexer must have integer or boolean type"),
    (np.s_[1.5:], IndexError, "slice bounds must be static integers"),
]


@pytest.mark.parametrize("index, error, match", ERRORS, ids=[m for _, _, m in ERRORS])
def test_errors(index: object, error: type, match: str) -> None:
    x = mnp.asarray(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    with pytest.raises(error, match=match):
        x[index]
    with pytest.raises(error, match=match):
        x.at[index].set(1.0)


@pytest.mark.parametrize("index", [np.s_[5], np.s_[0, -5], np.s_[1, 9, None], np.s_[-4:, 4]],
                         ids=["past", "negative", "with-newaxis", "after-slice"])
def test_static_out_of_bounds_ints_act_as_jax(index: object) -> None:
    """jax.numpy does not raise for an out-of-range int: reads clamp, updates are dropped."""
    import jax.numpy as jnp

    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    for f in (lambda a: a[index], lambda a: a.at[index].set(-1.0), lambda a: a.at[index].add(5.0),
              lambda a: a.at[index].get(mode="fill", fill_value=-2.0)):
        expected = np.asarray(f(jnp.asarray(x)))
        for actual in (f(mnp.asarray(x)), mlax.jit(f)(x)):
            np.testing.assert_array_equal(np.asarray(actual), expected)


def test_traced_errors() -> None:
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    with pytest.raises(IndexError, match="slice bounds must be static"):
        mlax.jit(lambda a, i: a[i:])(x, 1)
    with pytest.raises(TypeError, match="integer or boolean type, got indexer with type float32"):
        mlax.jit(lambda a, i: a[i])(x, np.float32(1))


def test_update_errors() -> None:
    x = mnp.asarray(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    with pytest.raises(ValueError, match=r"at\[...\].set: cannot broadcast update values of shape \(3,\)"):
        x.at[0].set(np.ones(3))
    with pytest.raises(ValueError, match="cannot broadcast update values of shape \\(2, 4\\)"):
        x.at[0].add(np.ones((2, 4)))


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype:UserWarning")  # jax in x32 mode
def test_under_x64(x64: bool, rng: np.random.Generator) -> None:
    x = random_array(rng, (4, 6), np.float64)
    check_on_arrays(lambda a, i: (a[i, ::-2], a.at[i, 1::2].add(1.5), a.at[-1].set(i)), x, np.int64(-3))
    check_on_arrays(lambda a, i: a.at[i].multiply(2.0), x, 2)
