"""compare, select and clamp, and their mlax.lax wrappers, checked against jax.lax."""

from __future__ import annotations

import itertools

import jax
import numpy as np
import pytest

import mlax
from mlax import lax
from mlax.core import bind
from tests.oracle import (
    ALL_DTYPES,
    FIXED_SHAPES,
    FLOAT_DTYPES,
    Case,
    assert_same,
    check_against_jax,
    check_cases,
    random_array,
    random_shape,
)

COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.5], np.float32)


def _grid(values: np.ndarray, repeat: int = 2) -> Case:
    columns = zip(*itertools.product(values, repeat=repeat), strict=True)
    return tuple(np.array(column, values.dtype) for column in columns)


def _shapes(rng: np.random.Generator) -> list[tuple[int, ...]]:
    return [random_shape(rng), random_shape(rng), *FIXED_SHAPES]


def _random(rng: np.random.Generator, shape: tuple[int, ...], dtype: object) -> np.ndarray:
    return np.asarray(random_array(rng, shape, dtype))


# --- compare ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", COMPARISONS)
def test_compare(rng, name):
    """Every dtype on random values with ties, NaN/inf/signed zeros, unsigned and boolean order."""
    cases: list[Case] = []
    for dtype in ALL_DTYPES:
        for shape in _shapes(rng):
            x = _random(rng, shape, dtype)
            cases.append((x, np.where(rng.random(shape) < 0.3, x, _random(rng, shape, dtype))))
        if dtype in FLOAT_DTYPES:
            cases.append(_grid(SPECIAL.astype(dtype)))
    cases += [_grid(np.array([0, 1, 200, 255], np.uint8)), _grid(np.array([False, True]))]
    check_cases(getattr(lax, name), getattr(jax.lax, name), cases)


@pytest.mark.parametrize("name", COMPARISONS)
def test_compare_python_scalars(rng, name):
    x = _random(rng, (4, 3), np.float32)
    check_against_jax(lambda v: getattr(lax, name)(v, 0.5), lambda v: getattr(jax.lax, name)(v, 0.5), x)
    check_against_jax(lambda v: getattr(lax, name)(1, v), lambda v: getattr(jax.lax, name)(np.int8(1), v),
                      _random(rng, (2, 0), np.int8))


# --- select ----------------------------------------------------------------------------------


def test_select(rng):
    cases: list[Case] = []
    for dtype in ALL_DTYPES:
        for shape in _shapes(rng):
            on_true, on_false = _random(rng, shape, dtype), _random(rng, shape, dtype)
            cases.append((rng.random(shape) < 0.5, on_true, on_false))
            cases.append((np.asarray(rng.random() < 0.5), on_true, on_false))  # rank-0 pred
    x = np.array([np.nan, -0.0, 0.0, np.inf], np.float32)
    cases.append((np.array([True, True, False, False]), x, x[::-1].copy()))
    check_cases(lax.select, jax.lax.select, cases, signbits=True)


def test_select_weak_types():
    for pred in (True, np.bool_(False)):
        assert_same(lax.select(pred, 1.0, 2.0), jax.lax.select(pred, 1.0, 2.0))
        assert_same(mlax.jit(lax.select)(pred, 1.0, 2.0), jax.jit(jax.lax.select)(pred, 1.0, 2.0))
    f32 = np.float32(3)
    assert_same(lax.select(True, f32, 2.0), jax.lax.select(True, f32, np.float32(2.0)))


def test_select_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError, match=r"mlax\.select: pred must have boolean \(i1\) element type, got i"):
        lax.select(np.zeros((2, 3), np.int32), x, x)
    with pytest.raises(TypeError, match=r"mlax\.select: pred must have the shape of on_true \(2, 3\) or be "
                                        r"rank 0, got \(3,\)"):
        lax.select(np.zeros((3,), bool), x, x)
    with pytest.raises(TypeError, match=r"mlax\.select: on_true and on_false must have the same dtype"):
        lax.select(True, x, x.astype(np.int32))
    with pytest.raises(TypeError, match=r"mlax\.select: on_true and on_false must have the same shape"):
        mlax.jit(lax.select)(True, x, x[0])


# --- clamp -----------------------------------------------------------------------------------


def test_clamp(rng):
    """Full-shape, rank-0 and mixed bounds, min > max (gives max), NaN and signed zeros."""
    cases: list[Case] = []
    for dtype in ALL_DTYPES:
        for shape in _shapes(rng):
            x = _random(rng, shape, dtype)
            lo, hi = np.sort(_random(rng, (2, *shape), dtype), axis=0)
            lo0, hi0 = np.sort(_random(rng, (2,), dtype))
            cases += [(lo, x, hi), (lo0, x, hi0), (lo0, x, hi), (hi0, x, lo0)]
        if dtype in FLOAT_DTYPES:
            cases.append(_grid(SPECIAL.astype(dtype), repeat=3))
    check_cases(lax.clamp, jax.lax.clamp, cases, signbits=True)


def test_clamp_python_scalars_and_weak_types(rng):
    x = random_array(rng, (3, 2), np.float32)
    check_against_jax(lambda v: lax.clamp(-1.0, v, 0.5), lambda v: jax.lax.clamp(-1.0, v, 0.5), x)
    xi = random_array(rng, (5,), np.int8)
    check_against_jax(lambda v: lax.clamp(-3, v, 7),
                      lambda v: jax.lax.clamp(np.int8(-3), v, np.int8(7)), xi)
    assert_same(lax.clamp(0.0, 2.0, 1.0), jax.lax.clamp(0.0, 2.0, 1.0))
    assert_same(mlax.jit(lax.clamp)(0.0, 2.0, 1.0), jax.jit(jax.lax.clamp)(0.0, 2.0, 1.0))


def test_clamp_errors():
    x = np.zeros((3,), np.float32)
    with pytest.raises(TypeError, match=r"mlax\.clamp: min must have the operand's dtype float32, got int32"):
        lax.clamp(np.int32(0), x, np.float32(1))
    with pytest.raises(TypeError, match=r"mlax\.clamp: max must have the shape of operand \(3,\) or be "
                                        r"rank 0, got \(2,\)"):
        lax.clamp(np.float32(0), x, np.ones(2, np.float32))
    with pytest.raises(TypeError, match=r"mlax\.clamp: min must have the shape"):
        mlax.jit(lax.clamp)(np.ones((1,), np.float32), x, np.float32(1))


# --- errors shared by compare, IR -----------------------------------------------------------


def test_compare_errors():
    x = np.zeros((2,), np.float32)
    with pytest.raises(TypeError, match=r"mlax\.compare: lhs and rhs must have the same dtype"):
        lax.lt(x, x.astype(np.float16))
    with pytest.raises(TypeError, match=r"mlax\.compare: lhs and rhs must have the same shape"):
        mlax.jit(lax.eq)(x, np.zeros((3,), np.float32))
    with pytest.raises(ValueError, match=r"mlax\.compare: comparison_direction must be one of .*got 'LTE'"):
        bind("compare", x, x, comparison_direction="LTE")


def test_make_mlir_shows_the_ops():
    def f(x, y):
        return lax.select(lax.ge(x, y), lax.clamp(0.0, x, 1.0), y)

    text = mlax.make_mlir(f)(np.ones(3, np.float32), np.ones(3, np.float32))
    assert '"mlax.compare"(%arg0, %arg1) {comparison_direction = "GE"}' in text
    assert "-> tensor<3xi1>" in text
    assert '"mlax.clamp"' in text and '"mlax.select"' in text
