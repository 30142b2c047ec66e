"""Typed PRNG key arrays (mlax.random.key) against jax.random.key: the same dtype object, the
same data, bits and samples for the same seed, eagerly and under jit, vmap, grad, control flow
and eval_shape on every backend; keys as pytree leaves; jax's error types for misuse."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.random as jr
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
import mlax.random as mr
from mlax import dtypes as mlax_dtypes
from mlax.prng import PRNGKeyArray
from tests.oracle import assert_same

SEEDS = (0, 7, -1, 2**31 - 1, np.int32(-7), np.uint32(4_000_000_000))
CLOSE = {"rtol": 1e-6, "atol": 1e-6}  # normals: erf_inv's log1p (docs/random.md)
LOGITS = np.random.default_rng(0).normal(size=(3, 5)).astype(np.float32)
P = np.array([0.125, 0.25, 0.5, 0.125], np.float32)


RNG = np.random.default_rng(2026)


def _seed() -> int:
    return int(RNG.integers(0, 2**31))


def assert_keys(actual: Any, expected: Any) -> None:
    """Key arrays of the same shape and dtype over the same data."""
    assert isinstance(actual, PRNGKeyArray)
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    np.testing.assert_array_equal(np.asarray(mr.key_data(actual)), np.asarray(jr.key_data(expected)))


def assert_like(actual: Any, expected: Any) -> None:
    """One leaf of a result: keys as keys, arrays bit for bit (dtype and weak type too)."""
    if jax.dtypes.issubdtype(expected.dtype, jax.dtypes.prng_key):
        assert_keys(actual, expected)
    else:
        assert_same(actual, expected, **CLOSE)


def assert_trees(actual: Any, expected: Any) -> None:
    assert jax.tree.structure(actual) == jax.tree.structure(expected)
    for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected), strict=True):
        assert_like(a, e)


# -- the key type ------------------------------------------------------------------------------

def test_key_is_a_typed_scalar() -> None:
    for seed in SEEDS:
        key, jkey = mr.key(seed), jr.key(seed)
        assert key.shape == () and key.ndim == 0 and key.size == 1
        assert key.dtype == jkey.dtype and type(key.dtype) is type(jkey.dtype)
        assert key.itemsize == jkey.itemsize == 8 and key.nbytes == 8
        assert_keys(key, jkey)
        np.testing.assert_array_equal(np.asarray(mr.key_data(key)), np.asarray(mr.PRNGKey(seed)))
    key = mr.key(3)
    assert jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)
    assert jax.dtypes.issubdtype(key.dtype, jax.dtypes.extended)
    assert mnp.issubdtype(key.dtype, jax.dtypes.prng_key)
    assert mlax_dtypes.issubdtype(key.dtype, mlax_dtypes.prng_key)
    assert not mnp.issubdtype(key.dtype, mnp.integer) and not mnp.issubdtype(key.dtype, mnp.floating)
    assert mr.PRNGKey(3).dtype == np.uint32  # PRNGKey stays raw
    (leaf,) = jax.tree.leaves({"k": key})  # a pytree leaf, as jax's
    assert leaf is key


def test_keys_under_x64(x64: None) -> None:
    for seed in (2**40 + 3, -1, np.uint64(2**63 + 5)):
        assert_keys(mr.key(seed), jr.key(seed))
        assert_trees([mr.bits(mr.key(seed), (3,)), mr.split(mr.key(seed))],
                     [jr.bits(jr.key(seed), (3,)), jr.split(jr.key(seed))])


def test_str_and_repr_match_jax() -> None:
    seed = _seed()
    for make in (lambda r: r.key(seed), lambda r: r.split(r.key(seed), 3),
                 lambda r: r.split(r.key(seed), (2, 0))):
        assert repr(make(mr)) == repr(make(jr))
        assert str(make(mr)) == str(make(jr))
    seen = []
    mlax.jit(lambda k: seen.append(repr(k)) or 0)(mr.split(mr.key(0), 2))
    jax.jit(lambda k: seen.append(repr(k)) or 0)(jr.split(jr.key(0), 2))
    assert seen[0] == seen[1] == "JitTracer(key<fry>[2])"


def test_key_impl_and_impl_arguments() -> None:
    key, jkey = mr.key(1), jr.key(1)
    assert mr.key_impl(key) == jr.key_impl(jkey) == "threefry2x32"
    assert mr.key_impl(mr.PRNGKey(1)) == jr.key_impl(jr.PRNGKey(1))
    for kwargs in ({"impl": "threefry2x32"}, {"dtype": jkey.dtype}, {"impl": jr.key_impl(jkey)},
                   {"dtype": "threefry2x32"}):
        assert_keys(mr.key(9, **kwargs), jr.key(9, **kwargs))
        data = np.asarray(jr.key_data(jr.split(jkey, 3)))
        assert_keys(mr.wrap_key_data(data, **kwargs), jr.wrap_key_data(data, **kwargs))
    assert_keys(mr.clone(key), jr.clone(jkey))


def test_key_data_round_trips() -> None:
    keys = mr.split(mr.key(_seed()), (2, 3))
    data = mr.key_data(keys)
    assert data.shape == (2, 3, 2) and data.dtype == np.uint32
    back = mr.wrap_key_data(data)
    assert back.shape == (2, 3) and bool(mnp.all(back == keys))
    raw = RNG.integers(0, 2**32, (4, 2), dtype=np.uint32)
    assert_keys(mr.wrap_key_data(raw), jr.wrap_key_data(raw))
    np.testing.assert_array_equal(np.asarray(mr.key_data(mr.wrap_key_data(raw))), raw)
    np.testing.assert_array_equal(np.asarray(mr.key_data(raw)), np.asarray(jr.key_data(raw)))  # raw keys
    assert_keys(mlax.jit(mr.wrap_key_data)(raw), jr.wrap_key_data(raw))
    np.testing.assert_array_equal(np.asarray(mlax.jit(mr.key_data)(back)), np.asarray(data))


def test_indexing_and_shapes_match_jax() -> None:
    seed = _seed()
    keys, jkeys = mr.split(mr.key(seed), (3, 4)), jr.split(jr.key(seed), (3, 4))
    cases: list[Callable[[Any], Any]] = [
        lambda k: k[0], lambda k: k[1:], lambda k: k[..., 2], lambda k: k[:, None],
        lambda k: k[np.array([2, 0])], lambda k: k[np.array([True, False, True])], lambda k: k[1, -1],
        lambda k: k.reshape(2, 6), lambda k: k.reshape((4, 3)), lambda k: k.ravel(), lambda k: k.T,
        lambda k: k.transpose(1, 0), lambda k: k.reshape(3, 1, 4).squeeze(),
        lambda k: k.reshape(3, 1, 4).squeeze(1), lambda k: k.swapaxes(0, 1), lambda k: k.copy(),
        lambda k: list(k)[2], lambda k: k[0] == k[0], lambda k: k != k[1],
    ]
    for case in cases:
        assert_like(case(keys), case(jkeys))
        assert_like(mlax.jit(case)(keys), case(jkeys))
    assert len(keys) == len(jkeys) == 3 and [k.shape for k in keys] == [(4,)] * 3


# -- the same bits as jax, with typed keys -----------------------------------------------------

def _draw(r: Any, k: Any) -> list[Any]:
    return [r.split(k), r.split(k, (2, 3)), r.fold_in(k, 12345), r.bits(k, (3, 4)), r.uniform(k, (5,)),
            r.normal(k, (4,)), r.randint(k, (6,), -5, 17), r.bernoulli(k, 0.3, (7,)), r.gumbel(k, (3,)),
            r.categorical(k, LOGITS), r.choice(k, 5, (3,)), r.choice(k, 4, (6,), p=P), r.permutation(k, 6),
            r.truncated_normal(k, -1.0, 2.0, (4,)), r.bits(r.fold_in(r.split(k)[1], 3), (2,))]


@pytest.mark.parametrize("seed", [0, 42, 2**32 + 5])
def test_samplers_match_jax(seed: int) -> None:
    expected = jax.jit(lambda k: _draw(jr, k))(jr.key(seed))
    assert_trees(_draw(mr, mr.key(seed)), expected)


def test_samplers_under_jit_on_every_backend(backend: str) -> None:
    seed = _seed()
    expected = jax.jit(lambda k: _draw(jr, k))(jr.key(seed))
    assert_trees(mlax.jit(lambda k: _draw(mr, k))(mr.key(seed)), expected)
    # keys closed over, and made inside the program
    key, short = mr.key(seed), lambda r, k: [r.split(k), r.fold_in(k, 3), r.uniform(k, (3,))]
    assert_trees(mlax.jit(lambda: short(mr, key))(), short(jr, jr.key(seed)))
    assert_trees(mlax.jit(lambda s: short(mr, mr.key(s)))(np.int32(seed)), short(jr, jr.key(np.int32(seed))))


def test_pytrees_of_keys_under_jit(backend: str) -> None:
    seed = _seed()

    def f(r: Any, tree: dict[str, Any]) -> dict[str, Any]:
        a, b = tree["a"], tree["b"]
        return {"split": r.split(a, 3), "folded": [r.fold_in(b[0], 1), b[1]], "x": r.normal(b[1], (2,))}

    make = lambda r: {"a": r.key(seed), "b": [r.split(r.key(seed + 1))[0], r.key(seed + 2)]}  # noqa: E731
    assert_trees(mlax.jit(lambda t: f(mr, t))(make(mr)), f(jr, make(jr)))


# -- transformations ---------------------------------------------------------------------------

def test_vmap_over_keys(backend: str) -> None:
    seed = _seed()
    keys, jkeys = mr.split(mr.key(seed), 4), jr.split(jr.key(seed), 4)
    cases: list[tuple[Callable[[Any, Any], Any], dict[str, Any], Callable[[Any], tuple[Any, ...]]]] = [
        (lambda r, k: r.normal(k, (3,)), {}, lambda k: (k,)),
        (lambda r, k: r.split(k), {}, lambda k: (k,)),
        (lambda r, k: r.split(k, 3), {"out_axes": -1}, lambda k: (k,)),
        (lambda r, k: r.split(k, 3), {"out_axes": 1}, lambda k: (k,)),
        (lambda r, k: r.fold_in(k, 7), {"in_axes": -1}, lambda k: (k,)),
        (lambda r, t: r.uniform(t["k"], (2,)), {"in_axes": ({"k": 0},)}, lambda k: ({"k": k},)),
    ]
    for fun, kwargs, args in cases:
        expected = jax.vmap(lambda *a, fun=fun: fun(jr, *a), **kwargs)(*args(jkeys))
        assert_trees(mlax.vmap(lambda *a, fun=fun: fun(mr, *a), **kwargs)(*args(keys)), expected)
    # an unbatched key beside batched data; a batch of 2-d keys; keys made per example
    xs = RNG.normal(size=3).astype(np.float32)
    assert_trees(mlax.vmap(lambda k, x: mr.normal(k) + x, in_axes=(None, 0))(keys[0], xs),
                 jax.vmap(lambda k, x: jr.normal(k) + x, in_axes=(None, 0))(jkeys[0], xs))
    grid, jgrid = mr.split(mr.key(seed), (2, 3)), jr.split(jr.key(seed), (2, 3))
    assert_trees(mlax.vmap(mlax.vmap(lambda k: mr.uniform(k, (2,))), in_axes=1)(grid),
                 jax.vmap(jax.vmap(lambda k: jr.uniform(k, (2,))), in_axes=1)(jgrid))
    seeds = np.arange(seed % 1000, seed % 1000 + 5)
    assert_trees(mlax.vmap(mr.key)(seeds), jax.vmap(jr.key)(seeds))


def test_grad_with_keys(backend: str) -> None:
    seed = _seed()
    x = RNG.normal(size=3).astype(np.float32)

    def loss(r: Any, x: Any, k: Any) -> Any:
        return (x * r.normal(k, (3,)) + r.uniform(k, (3,)) * x * x).sum()

    key, jkey = mr.key(seed), jr.key(seed)
    expected = jax.grad(lambda x, k: loss(jr, x, k))(x, jkey)
    assert_same(mlax.grad(lambda x, k: loss(mr, x, k))(x, key), expected, **CLOSE)  # a key argument
    assert_same(mlax.grad(lambda x: loss(mr, x, key))(x), expected, **CLOSE)  # a closed-over key
    assert_same(mlax.jit(mlax.grad(lambda x, k: loss(mr, x, k)))(x, key), expected, **CLOSE)
    value, aux = mlax.grad(lambda x, k: (loss(mr, x, k), mr.split(k)), has_aux=True)(x, key)
    jvalue, jaux = jax.grad(lambda x, k: (loss(jr, x, k), jr.split(k)), has_aux=True)(x, jkey)
    assert_same(value, jvalue, **CLOSE)
    assert_keys(aux, jaux)
    with pytest.raises(TypeError):
        jax.grad(lambda k, x: x * 2.0)(jkey, 1.0)
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        mlax.grad(lambda k, x: x * 2.0)(key, 1.0)  # jax names the dtype key<fry>, mlax the data's
    assert_keys(mlax.lax.stop_gradient(key), jax.lax.stop_gradient(jkey))
    assert_trees(mlax.lax.stop_gradient({"k": key, "x": x}), jax.lax.stop_gradient({"k": jkey, "x": x}))


def test_control_flow_with_keys_in_the_carry(backend: str) -> None:
    seed = _seed()

    def cases(r: Any, lax: Any, key: Any) -> list[Any]:
        step = lambda k, _: (r.split(k)[0], r.normal(k))  # noqa: E731
        return [
            lax.scan(step, key, None, length=4),
            lax.scan(lambda c, k: (c + r.uniform(k), r.split(k)), 0.0, r.split(key, 3)),  # keys as xs
            lax.fori_loop(0, 3, lambda i, k: r.fold_in(k, i), key),
            lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, r.split(c[1])[1]), (0, key)),
            lax.cond(True, lambda k: r.split(k)[0], lambda k: k, key),
            lax.cond(False, lambda k: r.split(k)[0], lambda k: k, key),
            lax.map(lambda k: r.normal(k, (2,)), r.split(key, 3)),
        ]

    expected = cases(jr, jax.lax, jr.key(seed))
    assert_trees(cases(mr, mlax.lax, mr.key(seed)), expected)
    assert_trees(mlax.jit(lambda k: cases(mr, mlax.lax, k))(mr.key(seed)), expected)


def test_eval_shape_of_keys() -> None:
    key_struct = jax.ShapeDtypeStruct((), jr.key_dtype())
    cases: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
        (lambda r: r.key(0), ()), (lambda r, k: r.split(k, (2, 3)), (key_struct,)),
        (lambda r, k: r.normal(k, (4,)), (key_struct,)),
        (lambda r, k: {"a": k, "b": r.fold_in(k, 3), "c": r.uniform(k, (3,))}, (key_struct,)),
    ]
    for fun, args in cases:
        expected = jax.eval_shape(lambda *a, fun=fun: fun(jr, *a), *args)
        assert mlax.eval_shape(lambda *a, fun=fun: fun(mr, *a), *args) == expected
        concrete = [mr.key(1) for _ in args]  # concrete keys are read for their types alone
        assert mlax.eval_shape(lambda *a, fun=fun: fun(mr, *a), *concrete) == expected


# -- errors: jax's types -----------------------------------------------------------------------

ERRORS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("wrap float data", lambda r, k: r.wrap_key_data(np.zeros(2, np.float32))),
    ("wrap int32 data", lambda r, k: r.wrap_key_data(np.zeros(2, np.int32))),
    ("wrap bad shape", lambda r, k: r.wrap_key_data(np.zeros(3, np.uint32))),
    ("wrap scalar", lambda r, k: r.wrap_key_data(np.zeros((), np.uint32))),
    ("wrap list", lambda r, k: r.wrap_key_data([1, 2])),
    ("wrap a key", lambda r, k: r.wrap_key_data(k)),
    ("key of a key", lambda r, k: r.key(k)),
    ("PRNGKey of a key", lambda r, k: r.PRNGKey(k)),
    ("key of an array", lambda r, k: r.key(np.arange(3))),
    ("unknown impl", lambda r, k: r.key(0, impl="nope")),
    ("impl of a bad type", lambda r, k: r.key(0, impl=3)),
    ("impl and dtype", lambda r, k: r.key(0, impl="threefry2x32", dtype=k.dtype)),
    ("key_data of an int", lambda r, k: r.key_data(3)),
    ("key_data of bad data", lambda r, k: r.key_data(np.zeros(2, np.int32))),
    ("split a batch", lambda r, k: r.split(r.split(k))),
    ("normal of a batch", lambda r, k: r.normal(r.split(k))),
    ("key + 1", lambda r, k: k + 1),
    ("1.0 * key", lambda r, k: np.float32(1.0) * k),
    ("numpy of a key", lambda r, k: np.asarray(k)),
    ("bool of a key", lambda r, k: bool(k)),
    ("len of a scalar key", lambda r, k: len(k)),
    ("iterate a scalar key", lambda r, k: list(k)),
    ("key == int", lambda r, k: k == 1),
    ("key == raw key", lambda r, k: k == r.PRNGKey(0)),
    ("too many indices", lambda r, k: r.split(k)[0, 1]),
    ("fold in a key", lambda r, k: r.fold_in(k, k)),
    ("uniform minval key", lambda r, k: r.uniform(k, minval=k)),
    ("randint bound key", lambda r, k: r.randint(k, (), k, 3)),
    ("hash a key", lambda r, k: hash(k)),
    ("truncated_normal bound key", lambda r, k: r.truncated_normal(k, k, 1.0)),
    ("bernoulli p key", lambda r, k: r.bernoulli(k, k)),
    ("categorical logits keys", lambda r, k: r.categorical(k, r.split(k, 3))),
    ("normal of key dtype", lambda r, k: r.normal(k, (2,), k.dtype)),
]


def _raised(call: Callable[[], Any]) -> type[BaseException]:
    with pytest.raises(Exception) as info:
        call()
    return info.type


@pytest.mark.parametrize(("name", "call"), ERRORS, ids=[name for name, _ in ERRORS])
def test_errors_match_jax_types(name: str, call: Callable[[Any, Any], Any]) -> None:
    expected = _raised(lambda: call(jr, jr.key(0)))
    actual = _raised(lambda: call(mr, mr.key(0)))
    assert issubclass(actual, expected) or issubclass(expected, actual), (name, actual, expected)


def test_jax_ops_on_mlax_keys_error_cleanly() -> None:
    key = mr.key(0)
    for call in (lambda: mnp.add(key, 1), lambda: mlax.lax.add(key, key)):  # (jnp.stack takes keys)
        with pytest.raises(TypeError):
            call()
    with pytest.raises(TypeError, match="Pred must be a scalar"):  # jax 0.10.2: an AttributeError
        mlax.lax.cond(key, lambda: 1, lambda: 2)
    with pytest.raises(ValueError, match="rank should be at least 1"):
        mlax.vmap(lambda k: k)(key)
    with pytest.raises(ValueError, match="no leading axis"):
        mlax.lax.scan(lambda c, k: (c, k), 0, key)
    with pytest.raises(NotImplementedError, match="RngBitGenerator"):  # rbg keys, but not their bits
        mr.uniform(mr.key(0, impl="rbg"))


KEY_NUMPY_OPS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "asarray": lambda np_, ks, c: np_.asarray(ks),
    "array": lambda np_, ks, c: np_.array(ks),
    "broadcast_to": lambda np_, ks, c: np_.broadcast_to(ks[:1], (2, 3)),
    "reshape": lambda np_, ks, c: np_.reshape(ks, (3, 1)),
    "stack": lambda np_, ks, c: np_.stack([ks, ks[::-1]], axis=-1),
    "concatenate": lambda np_, ks, c: np_.concatenate([ks, ks[:1]]),
    "concatenate_none": lambda np_, ks, c: np_.concatenate([ks[None], ks[None]], axis=None),
    "where": lambda np_, ks, c: np_.where(c, ks, ks[::-1]),
    "where_scalar_condition": lambda np_, ks, c: np_.where(c[0], ks, ks[::-1]),
    "astype_own_dtype": lambda np_, ks, c: np_.astype(np_.where(c, ks, ks[::-1]), ks.dtype),
}


@pytest.mark.parametrize("op", sorted(KEY_NUMPY_OPS))
def test_key_arrays_through_numpy_functions(op: str) -> None:
    """jnp's shape functions and where take typed keys and give keys, as jax's (flax.nnx's
    Rngs broadcasts and compares its keys so)."""
    seed = int(RNG.integers(0, 2**31))
    cond = RNG.random(3) < 0.5
    fn = KEY_NUMPY_OPS[op]
    want = fn(jax.numpy, jr.split(jr.key(seed), 3), cond)
    for run in (lambda ks: fn(mnp, ks, cond), mlax.jit(lambda ks: fn(mnp, ks, cond))):
        got = run(mr.split(mr.key(seed), 3))
        assert got.dtype == want.dtype and got.shape == want.shape
        assert_same(mr.key_data(got), jr.key_data(want))
    ks = mr.split(mr.key(seed), 3)
    assert bool(mnp.array_equal(ks, ks)) and not bool(mnp.array_equal(ks, ks[::-1]))
    assert bool(jax.numpy.array_equal(jr.split(jr.key(seed), 3), jr.split(jr.key(seed), 3)))
    jks = jr.split(jr.key(seed), 3)
    assert_same(mnp.isclose(ks, ks[1]), jax.numpy.isclose(jks, jks[1]))  # keys: equality, as jax's
    assert bool(mnp.allclose(ks, ks)) and not bool(mnp.allclose(ks[0], ks[1]))


def test_enable_custom_prng_makes_legacy_keys_typed() -> None:
    """Under ``jax_enable_custom_prng`` PRNGKey, split and fold_in give typed keys, as jax's
    (the context manager and config.update both), eagerly and under jit; off again, raw."""
    seed = _seed()
    raw = np.asarray(jr.PRNGKey(seed))
    make = mlax.jit(lambda: mr.PRNGKey(seed))
    assert make().dtype == np.uint32
    with mlax.enable_custom_prng():
        key = mr.PRNGKey(seed)
        jitted = make()  # the option is part of the trace context: retraced
        raw_split = mr.split(raw, 3)
        folded = mr.fold_in(mr.PRNGKey(seed), 5)
        bits = mr.uniform(key, (4,))
    with jax.enable_custom_prng():
        jkey = jr.PRNGKey(seed)
        jsplit = jr.split(jr.PRNGKey(seed), 3)
        jfolded = jr.fold_in(jr.PRNGKey(seed), 5)
        jbits = jr.uniform(jkey, (4,))
    for actual, expected in ((key, jkey), (jitted, jkey), (raw_split, jsplit), (folded, jfolded)):
        assert_keys(actual, expected)
    assert_same(bits, jbits)
    assert mr.PRNGKey(seed).dtype == np.uint32 and not mlax.config.jax_enable_custom_prng
    assert make().dtype == np.uint32
    mlax.config.update("jax_enable_custom_prng", True)
    try:
        assert_keys(mr.PRNGKey(seed), jr.key(seed))
    finally:
        mlax.config.update("jax_enable_custom_prng", False)
    assert mr.PRNGKey(seed).dtype == np.uint32
