"""Helpers for the mlax.numpy tests: random operands of every dtype (Python scalars too),
and checks of abstract results (dtype, weak type, shape via jax.eval_shape: no XLA compile) and
of values (eager and under mlax.jit) against jax.numpy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mlax.numpy as mnp
from tests.oracle import check_against_jax, random_array

SHAPES = [(), (3,), (0,), (1, 4), (2, 0), (2, 1, 3), (3, 2, 2)]
BF16 = np.dtype(ml_dtypes.bfloat16)
# Python scalars are named by their type; they are weakly typed (bool is not).
DTYPES = [np.dtype(d) for d in (np.float32, np.float16, BF16, np.int8, np.int16, np.int32, np.uint8,
                                np.uint32, np.bool_)] + [float, int, bool]
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5])


def is_python(dtype: Any) -> bool:
    """Whether ``dtype`` names a Python scalar type (``np.dtype(bool) == bool``, so by identity)."""
    return any(dtype is t for t in (float, int, bool))


def random_shape(rng: np.random.Generator) -> tuple[int, ...]:
    return SHAPES[int(rng.integers(len(SHAPES)))]


def operand(rng: np.random.Generator, dtype: Any, shape: tuple[int, ...] | None = None,
            specials: bool = True) -> Any:
    """A random value: an array of ``dtype`` (floats with specials mixed in) or a Python scalar."""
    if is_python(dtype):
        return dtype(random_array(rng, (), {float: np.float32, int: np.int32, bool: np.bool_}[dtype]))
    shape = random_shape(rng) if shape is None else shape
    x = random_array(rng, shape, dtype)
    if specials and (np.dtype(dtype).kind == "f" or dtype == BF16):
        pick = rng.random(shape) < 0.25
        x = np.where(pick, rng.choice(SPECIALS, size=shape), x).astype(dtype)
    return x


def on_jax(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` under ``jax.jit`` with Python scalars static, as they are concrete in eager jnp
    (one XLA compile per call instead of one per primitive)."""
    def run(*args: Any) -> Any:
        return jax.jit(_with_static_scalars(fn, args))(*_split_static(args)[1])

    return run


def _split_static(args: tuple[Any, ...]) -> tuple[list[int], list[Any]]:
    """Positions and values of the arguments that are not Python scalars."""
    traced = [i for i, a in enumerate(args) if not is_python(type(a))]
    return traced, [args[i] for i in traced]


def _with_static_scalars(fn: Callable[..., Any], args: tuple[Any, ...]) -> Callable[..., Any]:
    """``fn`` as a function of the non-scalar ``args`` only, the Python scalars closed over."""
    traced, _ = _split_static(args)

    def call(*arrays: Any) -> Any:
        full = list(args)
        for i, x in zip(traced, arrays, strict=True):
            full[i] = x
        return fn(*full)

    return call


def check_abstract(mlax_fn: Callable[..., Any], jax_fn: Callable[..., Any], *args: Any) -> None:
    """Same result shapes, dtypes and weak types as JAX (or the same exception class), without
    compiling: Python scalars stay concrete, arrays are abstract."""
    try:
        expected = jax.eval_shape(_with_static_scalars(jax_fn, args), *_split_static(args)[1])
    except (TypeError, ValueError, NotImplementedError) as err:
        with pytest.raises(type(err)):
            mlax_fn(*args)
        return
    actual = mlax_fn(*args)
    exp_leaves, exp_tree = jax.tree_util.tree_flatten(expected)
    act_leaves, act_tree = jax.tree_util.tree_flatten(actual)
    assert act_tree == exp_tree
    for a, e in zip(act_leaves, exp_leaves, strict=True):
        got = (tuple(a.shape), np.dtype(a.dtype), a.weak_type)
        assert got == (e.shape, np.dtype(e.dtype), e.weak_type), f"{args}: {got} != {e}"


def check_values(mlax_fn: Callable[..., Any], jax_fn: Callable[..., Any], *args: Any, **kw: Any) -> None:
    """Values, dtypes and weak types against JAX, eager and under mlax.jit (or the same exception)."""
    try:
        expected = on_jax(jax_fn)(*args)
    except (TypeError, ValueError, NotImplementedError) as err:
        with pytest.raises(type(err)):
            mlax_fn(*args)
        return
    check_against_jax(mlax_fn, lambda *_: expected, *args, **kw)


def check_both(spell: Callable[[Any], Callable[..., Any]], *args: Any, **kw: Any) -> None:
    """``check_values`` of one spelling, ``spell(lib)``, with lib = mlax.numpy and jax.numpy."""
    check_values(spell(mnp), spell(jnp), *args, **kw)
