"""mlax.eval_shape and mlax.ShapeDtypeStruct against jax's: shapes, dtypes, weak types and
tree structures of random functions on random arguments of every kind JAX accepts."""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import ALL_DTYPES, FLOAT_DTYPES, assert_same, random_array, random_shape


def _described(tree: Any) -> Any:
    """A pytree of ShapeDtypeStructs as comparable (shape, dtype, weak_type) triples."""
    def describe(s: Any) -> Any:
        assert type(s) is jax.ShapeDtypeStruct
        return (s.shape, np.dtype(s.dtype), s.weak_type)

    return jax.tree.map(describe, tree)


def assert_same_structs(actual: Any, expected: Any) -> None:
    assert jax.tree.structure(actual) == jax.tree.structure(expected)
    assert _described(actual) == _described(expected)


def program(np_mod: Any, x: Any, y: Any, *, scale: Any = 2) -> Any:
    """Elementwise, reduction, reshape and matmul results in a nested output tree."""
    z = x * scale + y
    return {"sum": np_mod.sum(z, axis=0), "pair": (np_mod.tanh(z.astype(np_mod.float32)), z.reshape(-1)),
            "mm": np_mod.matmul(z, z.T), "scalar": scale * 1, "none": None}


class DuckArray:
    """Anything with shape and dtype passes, as in JAX (weak_type read when present)."""

    def __init__(self, shape: tuple[int, ...], dtype: Any, weak_type: bool = False) -> None:
        self.shape, self.dtype, self.weak_type = shape, np.dtype(dtype), weak_type


def _argument_kinds(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> list[tuple[Any, Any]]:
    """The same abstract argument as (mlax-side, jax-side) values of each kind."""
    value = random_array(rng, shape, dtype)
    weak = bool(rng.integers(2))
    return [(value, value), (mnp.asarray(value), jnp.asarray(value)),
            (jnp.asarray(value), jnp.asarray(value)),
            (jax.ShapeDtypeStruct(shape, dtype), jax.ShapeDtypeStruct(shape, dtype)),
            (mlax.ShapeDtypeStruct(shape, dtype, weak_type=weak),
             jax.ShapeDtypeStruct(shape, dtype, weak_type=weak)),
            (DuckArray(shape, dtype, weak), DuckArray(shape, dtype, weak))]


def test_shape_dtype_struct_is_jaxs() -> None:
    assert mlax.ShapeDtypeStruct is jax.ShapeDtypeStruct
    assert {"eval_shape", "ShapeDtypeStruct"} <= set(dir(mlax))


@pytest.mark.parametrize("case", range(10))
def test_random_arguments_match_jax(rng: np.random.Generator, case: int) -> None:
    shape = random_shape(rng, max_rank=1, max_dim=4) + (int(rng.integers(1, 4)),)
    dtype = ALL_DTYPES[int(rng.integers(len(ALL_DTYPES)))]
    kinds = _argument_kinds(rng, shape, dtype)
    scale = [2, 1.5, True, np.float32(0.5)][int(rng.integers(4))]
    for (mx, jx), (my, jy) in zip(kinds, reversed(kinds), strict=True):
        expected = jax.eval_shape(functools.partial(program, jnp), jx, jy, scale=scale)
        assert_same_structs(mlax.eval_shape(functools.partial(program, mnp), mx, my, scale=scale), expected)


@pytest.mark.parametrize("value", [1.0, 3, True, np.float16(2), np.int64(7), None, (), [1.0, {"a": 2}]],
                         ids=repr)
def test_python_scalars_numpy_scalars_and_empty_trees(value: Any) -> None:
    assert_same_structs(mlax.eval_shape(lambda v: v, value), jax.eval_shape(lambda v: v, value))
    assert_same_structs(mlax.eval_shape(lambda: value), jax.eval_shape(lambda: value))


def test_64_bit_dtypes_are_canonicalized(x64: None) -> None:
    struct = jax.ShapeDtypeStruct((2,), np.float64)
    assert mlax.eval_shape(lambda v: v + 1, struct) == jax.eval_shape(lambda v: v + 1, struct)
    assert mlax.eval_shape(lambda v: v, np.int64(1)).dtype == np.int64


def test_64_bit_dtypes_narrow_without_x64() -> None:
    struct = jax.ShapeDtypeStruct((2,), np.float64)
    assert_same_structs(mlax.eval_shape(lambda v: v, struct), jax.eval_shape(lambda v: v, struct))
    assert mlax.eval_shape(lambda v: v, struct).dtype == np.float32


def test_nothing_runs_or_is_allocated() -> None:
    huge = jax.ShapeDtypeStruct((200_000, 100_000), np.float32)  # 80 GB if it were real
    calls = []

    def fun(a: Any, b: Any) -> Any:
        calls.append(1)
        return mnp.tanh(a @ b.T).sum(axis=1)

    assert mlax.eval_shape(fun, huge, huge) == jax.ShapeDtypeStruct((200_000,), np.float32)
    assert calls == [1]  # traced once, as JAX does


def test_a_jitted_function(rng: np.random.Generator) -> None:
    x = random_array(rng, (3, 2), np.float32)
    expected = jax.eval_shape(jax.jit(functools.partial(program, jnp)), x, x)
    assert_same_structs(mlax.eval_shape(mlax.jit(functools.partial(program, mnp)), x, x), expected)


def test_a_jitted_function_keeps_its_static_arguments(rng: np.random.Generator) -> None:
    def reshaped(np_mod: Any, x: Any, rows: int, *, scale: Any) -> Any:
        return np_mod.reshape(x, (rows, -1)) * scale

    for x, rows, scale in [(random_array(rng, (6,), np.int16), 2, 3),
                           (jax.ShapeDtypeStruct((12,), np.float16), 4, 0.5)]:
        expected = jax.eval_shape(jax.jit(functools.partial(reshaped, jnp), static_argnums=1,
                                          static_argnames="scale"), x, rows, scale=scale)
        jitted = mlax.jit(functools.partial(reshaped, mnp), static_argnums=1, static_argnames="scale")
        assert_same_structs(mlax.eval_shape(jitted, x, rows, scale=scale), expected)


def test_inside_jit_with_traced_arguments_and_closures(rng: np.random.Generator) -> None:
    x = random_array(rng, (4, 3), np.float32)

    def outer(np_mod: Any, eval_shape: Any, v: Any) -> Any:
        shapes = eval_shape(lambda a: (np_mod.outer(a, v[0]), a.sum() * 2.0), v)
        return np_mod.zeros(shapes[0].shape, shapes[0].dtype) + v.sum(), shapes[1].shape

    expected = jax.jit(lambda v: outer(jnp, jax.eval_shape, v)[0])(x)
    assert_same(mlax.jit(lambda v: outer(mnp, mlax.eval_shape, v)[0])(x), expected, rtol=1e-6)


@pytest.mark.parametrize("transform", ["grad", "vmap"])
def test_under_grad_and_vmap(rng: np.random.Generator, transform: str) -> None:
    x = random_array(rng, (5, 3), FLOAT_DTYPES[0])
    seen: dict[str, Any] = {}

    def fun(name: str, np_mod: Any, eval_shape: Any, v: Any) -> Any:
        seen[name] = eval_shape(lambda a: np_mod.sum(a * v, axis=-1), v)  # per example under vmap
        return np_mod.sum(np_mod.sin(v) * np_mod.ones(seen[name].shape)[..., None])

    mlax_fn = getattr(mlax, transform)(functools.partial(fun, "mlax", mnp, mlax.eval_shape))
    jax_fn = getattr(jax, transform)(functools.partial(fun, "jax", jnp, jax.eval_shape))
    assert_same(mlax_fn(x), jax_fn(x), rtol=1e-5)
    assert_same_structs(seen["mlax"], seen["jax"])


@pytest.mark.parametrize("bad", ["a string", object(), len], ids=["str", "object", "function"])
def test_non_array_arguments_are_type_errors_as_in_jax(bad: Any) -> None:
    with pytest.raises(TypeError):
        jax.eval_shape(lambda v: v, [1.0, bad])
    with pytest.raises(TypeError, match=r"abstract array.*path v\[1\]"):
        mlax.eval_shape(lambda v: v, [1.0, bad])


def test_other_errors_are_jaxs_types() -> None:
    for call in (lambda ev: ev(3), lambda ev: ev(lambda: "out")):
        with pytest.raises(TypeError):
            call(jax.eval_shape)
        with pytest.raises(TypeError):
            call(mlax.eval_shape)
    with pytest.raises(TypeError, match="int4"):
        mlax.eval_shape(lambda v: v, jax.ShapeDtypeStruct((2,), ml_dtypes.int4))  # no int4 in mlax
