"""jnp.ufunc against jax: the methods of jnp's own ufuncs (add.reduce is sum, add.at an indexed
add, logaddexp.reduce a log-sum-exp...) and of frompyfunc's (the generic loops), on random
shapes, dtypes, axes, where masks and initial values; eagerly and under mlax.jit (both
backends); grad and vmap of the loop-based methods; the errors jax raises."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.numpy.helpers import check_both
from tests.oracle import assert_same, random_array

FLOAT_UFUNCS = ["add", "multiply", "subtract", "maximum", "minimum", "logaddexp", "logaddexp2"]
INT_UFUNCS = ["add", "multiply", "maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor",
              "logical_and", "logical_or", "logical_xor"]
TOL = dict(rtol=2e-5, atol=1e-5)


def _pyfunc(lib: Any, identity: Any = None) -> Any:
    """A binary function numpy has no ufunc for, as a ufunc of ``lib``."""
    return lib.frompyfunc(lambda a, b: a * 0.5 + b * b, 2, 1, identity=identity)


def _operand(rng: np.random.Generator, dtype: Any) -> np.ndarray:
    shape = tuple(int(d) for d in rng.integers(1, 5, size=int(rng.integers(1, 4))))
    return random_array(rng, shape, dtype, -2.0, 2.0)


@pytest.mark.parametrize("name", FLOAT_UFUNCS)
def test_reduce_float(rng: np.random.Generator, name: str) -> None:
    x = _operand(rng, np.float32)
    axis = int(rng.integers(-x.ndim, x.ndim))
    mask = rng.random(x.shape) < 0.7
    check_both(lambda m: lambda v: getattr(m, name).reduce(v, axis=axis), x, **TOL)
    check_both(lambda m: lambda v: getattr(m, name).reduce(v, axis=None, keepdims=True), x, **TOL)
    check_both(lambda m: lambda v: getattr(m, name).reduce(v, axis=axis, initial=0.5, where=mask), x, **TOL)


@pytest.mark.parametrize("name", INT_UFUNCS)
@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_])
def test_reduce_integer_and_bool(rng: np.random.Generator, name: str, dtype: Any) -> None:
    x = _operand(rng, dtype)
    axis = int(rng.integers(0, x.ndim))
    check_both(lambda m: lambda v: getattr(m, name).reduce(v, axis=axis), x)
    check_both(lambda m: lambda v: getattr(m, name).reduce(v, axis=None, keepdims=True), x)


@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "maximum", "logaddexp"])
def test_accumulate(rng: np.random.Generator, name: str) -> None:
    x = _operand(rng, np.float32)
    axis = int(rng.integers(0, x.ndim))
    check_both(lambda m: lambda v: getattr(m, name).accumulate(v, axis=axis), x, **TOL)


@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "maximum", "minimum", "logaddexp"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_at(rng: np.random.Generator, name: str, dtype: Any) -> None:
    """Repeated indices apply in turn; a scalar and an array of updates; a slice with an index."""
    x = random_array(rng, (5, 3), dtype, -2.0, 2.0)
    index = rng.integers(0, 5, size=4)
    updates = random_array(rng, (4, 3), dtype, -2.0, 2.0)
    check_both(lambda m: lambda v, u: getattr(m, name).at(v, index, u, inplace=False), x, updates, **TOL)
    check_both(lambda m: lambda v: getattr(m, name).at(v, (index, 1), dtype(1), inplace=False), x, **TOL)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "bitwise_or"])
def test_outer_and_reduceat(rng: np.random.Generator, name: str) -> None:
    a, b = random_array(rng, (2, 3), np.int32), random_array(rng, (4,), np.int32)
    check_both(lambda m: lambda u, v: getattr(m, name).outer(u, v), a, b)
    x = random_array(rng, (7, 2), np.int32)
    check_both(lambda m: lambda v: getattr(m, name).reduceat(v, np.array([0, 3, 1, 5, 6])), x)


def test_frompyfunc_methods(rng: np.random.Generator) -> None:
    x = _operand(rng, np.float32)
    y = random_array(rng, x.shape[-1:], np.float32)
    axis = int(rng.integers(0, x.ndim))
    mask = rng.random(x.shape) < 0.6
    check_both(lambda m: lambda u, v: _pyfunc(m)(u, v), x, y, **TOL)
    check_both(lambda m: lambda u: _pyfunc(m).reduce(u, axis=axis), x, **TOL)
    check_both(lambda m: lambda u: _pyfunc(m, identity=0.25).reduce(u, axis=axis, where=mask), x, **TOL)
    check_both(lambda m: lambda u: _pyfunc(m).accumulate(u, axis=axis), x, **TOL)
    check_both(lambda m: lambda u: _pyfunc(m).outer(u[..., 0], y), x, **TOL)
    flat = x.reshape(-1)
    check_both(lambda m: lambda u: _pyfunc(m).at(u, np.array([0, 0, flat.size - 1]), np.float32(1.5),
                                                 inplace=False), flat, **TOL)
    check_both(lambda m: lambda u: _pyfunc(m).reduceat(u, np.array([0, 2, 1])), flat, **TOL)


def test_grad_and_vmap_of_loop_methods(rng: np.random.Generator) -> None:
    x = random_array(rng, (4, 3), np.float32)

    def loss(lib: Any) -> Callable[[Any], Any]:
        f = _pyfunc(lib)
        return lambda v: (f.reduce(v, axis=0) * 2).sum() + f.accumulate(v, axis=1).sum()

    assert_same(mlax.grad(loss(mnp))(x), jax.grad(loss(jnp))(x), rtol=1e-5, atol=1e-6)
    assert_same(mlax.vmap(lambda v: _pyfunc(mnp).reduce(v))(x), jax.vmap(lambda v: _pyfunc(jnp).reduce(v))(x),
                rtol=1e-5)
    assert_same(mlax.grad(lambda v: mnp.logaddexp.reduce(v, axis=None))(x),
                jax.grad(lambda v: jnp.logaddexp.reduce(v, axis=None))(x), rtol=1e-5)


def test_identity_attributes_and_errors() -> None:
    for name in FLOAT_UFUNCS + INT_UFUNCS + ["negative"]:
        ours, theirs = getattr(mnp, name), getattr(jnp, name)
        assert isinstance(ours, mnp.ufunc)
        assert (ours.nin, ours.nout, ours.nargs, ours.identity, ours.__name__) == \
            (theirs.nin, theirs.nout, theirs.nargs, theirs.identity, theirs.__name__), name
    assert repr(mnp.add) == "<jnp.ufunc 'add'>"
    assert mnp.frompyfunc(abs, 1, 1) == mnp.frompyfunc(abs, 1, 1)
    x = np.arange(4.0, dtype=np.float32)
    with pytest.raises(NotImplementedError, match="in place"):
        mnp.add.at(x, 0, 1.0)
    with pytest.raises(ValueError, match="binary ufuncs"):
        mnp.negative.reduce(x)
    with pytest.raises(ValueError, match="identity"):
        mnp.maximum.reduce(x, where=x > 1)
    with pytest.raises(ValueError, match="zero-size"):
        _pyfunc(mnp).reduce(x[:0])
    with pytest.raises(ValueError, match="integer argument required"):
        mnp.bitwise_and.reduce(x)
    with pytest.raises(NotImplementedError):
        mnp.add(x, x, out=x)
