"""Advanced indexing (integer arrays, boolean masks, ints mixed with them) through gather and
scatter: x[index], x.at[index].op(v, mode=...), take, take_along_axis against jax.numpy,
eagerly and under jit, with static and traced indices (negative and out of bounds), plus
grad and vmap through them."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.numpy.indexing import take, take_along_axis
from tests.oracle import assert_same, check_against_jax, random_array

SHAPE = (4, 5, 6)
A = np.array
INDICES = [
    A([0, 3, -1, 5, -6]),
    A([[1, 2], [0, -4]]),
    np.s_[:, A([4, 0, 9])],
    np.s_[A([1, 2]), :, A([0, 5])],
    np.s_[A([1, 2]), A([0, -5])],
    np.s_[:, A([[1], [2]]), A([0, 5, -1])],
    np.s_[..., A([1, -1])],
    np.s_[None, A([1, 0]), None, 1:3],
    np.s_[1, :, A([0, 2])],
    np.s_[A([0, 1]), 2],
    np.s_[::-1, A([0, 3])],
    np.s_[1::2, A([1]), ::-2],
    np.s_[A([], np.int32)],
    np.s_[A([0, 2, 1], np.uint8), -1],
    np.s_[A([True, False, True, True])],
    np.s_[:, A([True, False, False, True, True])],
    np.s_[A([[True, False, True, False, False]] * 4)],
    np.s_[A([3, 3, 0, 3]), 1:4],
    np.s_[True],
    np.s_[False, 1],
    np.s_[..., A(True)],
]
IDS = [f"i{k}" for k in range(len(INDICES))]
UPDATES = ["set", "add", "multiply", "min", "max", "subtract"]


def check_on_arrays(f: object, x: object, *rest: object, **kwargs: object) -> None:
    jax_fn = jax.jit(lambda a, *r: f(jnp.asarray(a), *r))
    check_against_jax(lambda a, *r: f(mnp.asarray(a), *r), jax_fn, x, *rest, **kwargs)


@pytest.mark.parametrize("index", INDICES, ids=IDS)
def test_getitem(index: object, rng: np.random.Generator) -> None:
    x = random_array(rng, SHAPE, np.float32)
    check_on_arrays(lambda a: a[index], x)


@pytest.mark.parametrize("k", range(len(INDICES)), ids=IDS)
def test_at_update(k: int, rng: np.random.Generator) -> None:
    """Each update method in turn (duplicate indices combine), with values of the indexed shape
    and a broadcast scalar; out-of-bounds updates are dropped."""
    x = random_array(rng, SHAPE, np.float32)
    index, method = INDICES[k], UPDATES[k % len(UPDATES)]
    if method == "set" and k in (0, 1, 17):
        method = "add"  # XLA leaves the winner of duplicate sets unspecified
    shape = jnp.zeros(SHAPE)[index].shape
    for v in (random_array(rng, shape, np.float32), np.float32(rng.uniform(-3, 3))):
        check_on_arrays(lambda a, u: getattr(a.at[index], method)(u), x, v)


@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds", "drop"])
@pytest.mark.parametrize("k", [0, 2, 3, 5, 8, 11], ids=[IDS[k] for k in [0, 2, 3, 5, 8, 11]])
def test_modes(k: int, mode: str, rng: np.random.Generator) -> None:
    x = random_array(rng, SHAPE, np.float32)
    index = INDICES[k]
    check_on_arrays(lambda a: a.at[index].get(mode=mode), x)
    if mode != "promise_in_bounds":
        check_on_arrays(lambda a: a.at[index].add(1.5, mode=mode), x)
    if mode in ("fill", "drop"):
        check_on_arrays(lambda a: a.at[index].get(mode=mode, fill_value=-7.0), x)


def test_basic_index_with_mode(rng: np.random.Generator) -> None:
    """A mode (or fill_value) sends even basic indices through gather/scatter, as in JAX."""
    x = random_array(rng, (3, 4), np.float32)
    for index in (np.s_[5], np.s_[-4, 1:3], np.s_[1, ::-1], np.s_[2]):
        check_on_arrays(lambda a, index=index: (
            a.at[index].get(mode="fill"), a.at[index].set(2.0, mode="clip"), a.at[index].get(mode="clip"),
            a.at[index].get(fill_value=9.0, mode="fill")), x)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, ml_dtypes.bfloat16, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_dtypes(dtype: type, rng: np.random.Generator) -> None:
    x = random_array(rng, (5, 3), dtype)
    index = np.s_[A([4, -1, 7, 0, -9]), 1:]
    v = random_array(rng, (5, 2), dtype)
    check_on_arrays(lambda a, u: (a[index], a.at[index].get(mode="fill"), a.at[index].set(u),
                                  a.at[index].max(u), a.at[index].min(u)), x, v)
    if dtype != np.bool_:
        check_on_arrays(lambda a, u: (a.at[index].add(u), a.at[index].multiply(u)), x, v)


TRACED = [
    lambda a, i: a[i],
    lambda a, i: a[:, i],
    lambda a, i: a[i, i],
    lambda a, i: a.at[i].add(1.0),
    lambda a, i: a.at[:, i].set(0.0),
    lambda a, i: a.at[i].get(mode="fill"),
    lambda a, i: a.at[i, i].max(2.0),
]


@pytest.mark.parametrize("k", range(len(TRACED)))
def test_traced_index_arrays(k: int, rng: np.random.Generator) -> None:
    x = random_array(rng, (5, 5), np.float32)
    for i in (A([0, 4, -1, -5]), A([[7, -6], [2, 2]]), A([1], np.uint8), A([9, -9], np.int8)):
        check_on_arrays(TRACED[k], x, i)


def test_traced_scalar_with_array(rng: np.random.Generator) -> None:
    """A traced scalar next to an array index is one more (rank-0) advanced index."""
    x = random_array(rng, (4, 5), np.float32)
    f = lambda a, i: (a[i, A([0, 4, 7])], a.at[A([1, -1]), i].add(3.0))  # noqa: E731
    for i in (0, -2, 9):
        check_on_arrays(f, x, np.int32(i))


def test_rank0_and_size0(rng: np.random.Generator) -> None:
    check_on_arrays(lambda a: (a[A([0, 1])], a.at[A([1])].add(1.0)), random_array(rng, (3,), np.float32))
    check_on_arrays(lambda a: (a[:, A([0, 1, 0])], a.at[:, A([1])].set(1.0)),
                    random_array(rng, (0, 3), np.float32))
    check_on_arrays(lambda a: a[A([], np.int32), 1], random_array(rng, (2, 3), np.float32))


def test_lists_in_a_tuple_index_as_numpy(rng: np.random.Generator) -> None:
    """A list inside a tuple index is an integer array, as in NumPy and jax; a list as the whole
    index is jax's TypeError (tests/frontend/test_api_errors.py)."""
    x = random_array(rng, (4, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(mnp.asarray(x)[1, [2, 0]]), x[1, [2, 0]])
    np.testing.assert_array_equal(np.asarray(mnp.asarray(x)[([0, 3, 3],)]), x[[0, 3, 3]])


def test_boolean_mask_errors() -> None:
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    with pytest.raises(IndexError, match="Array boolean indices must be concrete"):
        mlax.jit(lambda a, m: a[m])(x, A([True, False, True]))
    with pytest.raises(IndexError, match="Array boolean indices must be concrete"):
        mlax.jit(lambda a, m: a[m, 1])(x, np.bool_(True))
    with pytest.raises(IndexError, match="boolean index of shape \\(2,\\) does not match"):
        mnp.asarray(x)[A([True, False])]
    with pytest.raises(IndexError, match="shape mismatch: indexing arrays could not be broadcast"):
        mnp.asarray(x)[A([0, 1]), A([0, 1, 2])]
    with pytest.raises(TypeError, match="Indexer must have integer or boolean type"):
        mnp.asarray(x)[A([0.5])]


def test_grad(rng: np.random.Generator) -> None:
    x = random_array(rng, (5, 3), np.float32)
    y = random_array(rng, (4, 3), np.float32)
    i = A([0, 4, 4, -1])
    j = A([1, 7, -9, 2])  # out of bounds: clamped reads, dropped writes (and their gradients)

    def loss(a: object, b: object, np_: object) -> object:
        gathered = a[i] * a[j] + a.at[:, A([2, 0])].get(mode="fill", fill_value=0.0).sum()
        updated = a.at[j].add(b * 2.0).at[i].set(b)
        return np_.sum(gathered ** 2) + np_.sum(updated * a) + np_.sum(a.at[i].max(b))

    expected = jax.jit(jax.grad(lambda a, b: loss(a, b, jnp), argnums=(0, 1)))(x, y)
    assert_same(mlax.grad(lambda a, b: loss(a, b, mnp), argnums=(0, 1))(x, y), expected, rtol=1e-5)
    assert_same(mlax.jit(mlax.grad(lambda a, b: loss(a, b, mnp), argnums=(0, 1)))(x, y), expected, rtol=1e-5)


def test_vmap(rng: np.random.Generator) -> None:
    xs = random_array(rng, (3, 5, 4), np.float32)
    idx = np.stack([A([0, 4, -1]), A([2, 2, 9]), A([-6, 1, 3])]).astype(np.int32)
    vs = random_array(rng, (3, 3, 4), np.float32)
    fns = [
        (lambda x, i: x[i], (0, 0)),
        (lambda x, i: x[i], (None, 0)),
        (lambda x, i: x[:, i], (0, None)),
        (lambda x, i: x.at[i].add(1.0), (0, 0)),
        (lambda x, i: x.at[i].set(2.0), (None, 0)),
        (lambda x, i: x[i[0]], (0, 0)),
    ]
    for f, axes in fns:
        args = (xs if axes[0] == 0 else xs[0], idx if axes[1] == 0 else idx[0])
        expected = jax.jit(jax.vmap(f, in_axes=axes))(*args)
        assert_same(mlax.jit(mlax.vmap(f, in_axes=axes))(*args), expected)
    scatter = lambda x, i, v: x.at[i].add(v)  # noqa: E731
    assert_same(mlax.jit(mlax.vmap(scatter))(xs, idx, vs), jax.jit(jax.vmap(scatter))(xs, idx, vs))


@pytest.mark.parametrize("mode", [None, "clip", "fill", "wrap"])
def test_take(mode: str | None, rng: np.random.Generator) -> None:
    x = random_array(rng, (4, 3), np.float32)
    i = A([[0, -1], [5, 2], [-7, 3]])
    for axis in (None, 0, 1, -1):
        check_against_jax(lambda a, j, axis=axis: take(a, j, axis=axis, mode=mode),
                          jax.jit(lambda a, j, axis=axis: jnp.take(a, j, axis=axis, mode=mode)), x, i)
    if mode in (None, "fill"):
        check_against_jax(lambda a, j: take(a, j, axis=0, mode=mode, fill_value=-1.0),
                          jax.jit(lambda a, j: jnp.take(a, j, axis=0, mode=mode, fill_value=-1.0)), x, i)


@pytest.mark.parametrize("mode", [None, "clip", "fill"])
def test_take_along_axis(mode: str | None, rng: np.random.Generator) -> None:
    x = random_array(rng, (4, 3, 2), np.float32)
    for axis, shape in ((0, (5, 3, 2)), (1, (4, 2, 1)), (-1, (1, 3, 4)), (None, (7,))):
        i = rng.integers(-8, 8, size=shape).astype(np.int32)
        check_against_jax(lambda a, j, axis=axis: take_along_axis(a, j, axis, mode=mode),
                          jax.jit(lambda a, j, axis=axis: jnp.take_along_axis(a, j, axis, mode=mode)), x, i)


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype:UserWarning")  # jax in x32 mode
def test_under_x64(x64: bool, rng: np.random.Generator) -> None:
    x = random_array(rng, (4, 6), np.float64)
    i = A([3, -1, 9, -7], np.int64)
    check_on_arrays(lambda a, j: (a[j], a[:, j], a.at[j, 1::2].add(1.5), a.at[j].get(mode="fill")), x, i)


@pytest.mark.parametrize("mode", [None, "clip", "fill", "promise_in_bounds"])
def test_lax_wrappers(mode: str | None, rng: np.random.Generator) -> None:
    """mlax.lax.gather/scatter* take jax.lax's dimension numbers and modes (enum or string)."""
    from jax import lax as jlax

    x = random_array(rng, (5, 3), np.float32)
    i = A([[4], [-1], [7], [1]], np.int32)
    u = random_array(rng, (4, 3), np.float32)
    gather = jlax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    scatter = jlax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                           scatter_dims_to_operand_dims=(0,))
    jmode = jlax.GatherScatterMode.from_any(mode) if mode else None
    for name in ("scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max"):
        check_against_jax(lambda a, b, name=name: getattr(mlax.lax, name)(a, i, b, scatter, mode=jmode),
                          jax.jit(lambda a, b, name=name: getattr(jlax, name)(a, i, b, scatter, mode=mode)),
                          x, u)
    check_against_jax(lambda a: mlax.lax.gather(a, i, gather, (1, 3), mode=mode),
                      jax.jit(lambda a: jlax.gather(a, i, gather, (1, 3), mode=mode)), x)
    if mode == "fill":
        check_against_jax(lambda a: mlax.lax.gather(a, i, gather, (1, 3), mode=mode, fill_value=2.5),
                          jax.jit(lambda a: jlax.gather(a, i, gather, (1, 3), mode=mode, fill_value=2.5)), x)


def test_apply(rng: np.random.Generator) -> None:
    """apply with unique indices (a repeated index gets ``func`` once in mlax, per update in JAX)."""
    x = random_array(rng, (5, 3), np.float32)
    check_on_arrays(lambda a: (a.at[A([4, 0, 9]), 1:].apply(lambda t: t * 2 + 1),
                               a.at[A([1, -1])].apply(jnp.sin if isinstance(a, jax.Array) else mnp.sin)), x)
