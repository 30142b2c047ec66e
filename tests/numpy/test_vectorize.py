"""mlax.numpy.vectorize against jax.numpy.vectorize: loop dimensions broadcast and become
nested vmaps (the function sees the core shapes only), generalized-ufunc signatures, excluded
positional and keyword arguments, None arguments, under jit / grad / vmap, jax's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same

RNG = np.random.default_rng(0)


def _r(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape).astype(np.float32)


def _both(make: Callable[[Any], Callable[..., Any]], *args: Any, **kwargs: Any) -> None:
    """``make(np_module)(*args)`` with mlax.numpy against jax.numpy, eagerly and under jit."""
    expected = make(jnp)(*args, **kwargs)
    assert_same(make(mnp)(*args, **kwargs), expected, rtol=1e-6)
    assert_same(mlax.jit(lambda *a: make(mnp)(*a, **kwargs))(*args), expected, rtol=1e-6)


def test_elementwise_broadcasting(x64: bool) -> None:
    def make(np_: Any) -> Callable[..., Any]:
        def f(x: Any, y: Any) -> Any:
            assert x.shape == y.shape == ()  # the function sees one element at a time
            return np_.sin(x) * y + 1
        return np_.vectorize(f)

    _both(make, _r(3, 1, 4), _r(5, 4))
    _both(make, _r(2, 3), np.float32(2.0))
    _both(make, np.arange(3), 2.5)


@pytest.mark.parametrize(("signature", "shapes", "body"), [
    ("(n),(n)->()", [(3, 1, 4), (5, 4)], lambda np_, x, y: np_.dot(x, y)),
    ("(m,n),(n)->(m)", [(2, 3, 4), (4,)], lambda np_, a, v: np_.matmul(a, v)),
    ("(n)->(n)", [(2, 5)], lambda np_, x: np_.cumsum(x)),
    ("()->(k)", [(3,)], lambda np_, x: np_.stack([x, 2 * x])),
    ("(n)->(),()", [(4, 3)], lambda np_, x: (x.sum(), x.max())),
    ("(n),()->()", [(1, 4), (3, 1)], lambda np_, x, s: (x * s).sum()),
    ("(),()->()", [(2,), (3, 1)], lambda np_, x, y: x - y),
], ids=["dot", "matvec", "cumsum", "new-core-dim", "two-outputs", "mixed", "scalar-sig"])
def test_signatures(signature: str, shapes: list[tuple[int, ...]], body: Any) -> None:
    args = [_r(*s) for s in shapes]
    _both(lambda np_: np_.vectorize(lambda *a: body(np_, *a), signature=signature), *args)


def test_excluded_arguments() -> None:
    def make(np_: Any) -> Callable[..., Any]:
        def f(x: Any, axis: int, scale: Any, *, mode: str = "sum") -> Any:
            assert isinstance(axis, int) and scale.shape == ()
            return (x.sum(axis) if mode == "sum" else x.max(axis)) * scale
        return np_.vectorize(f, excluded={1, "mode"}, signature="(m,n),()->(k)")

    x, scale = _r(3, 2, 4), _r(3)
    assert_same(make(mnp)(x, 0, scale, mode="max"), make(jnp)(x, 0, scale, mode="max"), rtol=1e-6)
    assert_same(make(mnp)(x, 1, scale), make(jnp)(x, 1, scale), rtol=1e-6)


def test_keyword_arguments_that_are_not_excluded_are_dropped() -> None:
    """jax 0.10.2 passes only the positional arguments and excluded keywords on."""
    for np_ in (mnp, jnp):
        out = np_.vectorize(lambda x, y=1.0: x + y)(np.ones(3, np.float32), y=5.0)
        np.testing.assert_array_equal(np.asarray(out), np.full(3, 2.0, np.float32))


def test_none_arguments() -> None:
    def make(np_: Any) -> Callable[..., Any]:
        return np_.vectorize(lambda x, w: x if w is None else x * w)

    _both(make, _r(3, 2), None)


def test_grad_and_vmap() -> None:
    f = mnp.vectorize(lambda x, y: mnp.dot(x, y) ** 2, signature="(n),(n)->()")
    g = jnp.vectorize(lambda x, y: jnp.dot(x, y) ** 2, signature="(n),(n)->()")
    x, y = _r(3, 4), _r(4)
    assert_same(mlax.grad(lambda x: f(x, y).sum())(x), jax.grad(lambda x: g(x, y).sum())(x), rtol=1e-5)
    ys = _r(2, 4)
    assert_same(mlax.vmap(f, in_axes=(None, 0))(x, ys), jax.vmap(g, in_axes=(None, 0))(x, ys), rtol=1e-5)


ERRORS = [
    (ValueError, "not a valid gufunc signature", lambda np_: np_.vectorize(np.sum, signature="(n)->")(_r(3))),
    (ValueError, "not a valid gufunc signature", lambda np_: np_.vectorize(np.sum, signature="n->()")(_r(3))),
    (TypeError, "wrong number of positional arguments",
     lambda np_: np_.vectorize(lambda x, y: x, signature="(n),(n)->()")(_r(3))),
    (ValueError, "inconsistent size for core dimension",
     lambda np_: np_.vectorize(np_.dot, signature="(n),(n)->()")(_r(3), _r(4))),
    (ValueError, "does not have enough dimensions",
     lambda np_: np_.vectorize(np_.sum, signature="(m,n)->()")(_r(3))),
    (ValueError, "output shape .* does not match core dimensions",
     lambda np_: np_.vectorize(lambda x: x, signature="(n)->()")(_r(2, 3))),
    (TypeError, "output must be a tuple",
     lambda np_: np_.vectorize(lambda x: x.sum(), signature="(n)->(),()")(_r(3))),
    (TypeError, "wrong number of output arguments",
     lambda np_: np_.vectorize(lambda x: (x.sum(),) * 3, signature="(n)->(),()")(_r(3))),
    (TypeError, "can only exclude integer or string arguments",
     lambda np_: np_.vectorize(np_.sin, excluded={1.5})),
    (ValueError, "contains negative numbers", lambda np_: np_.vectorize(np_.sin, excluded={-1})),
    (ValueError, "Cannot pass None",
     lambda np_: np_.vectorize(lambda x, y: x, signature="(n),(n)->(n)")(_r(3), None)),
    (ValueError, "Incompatible shapes for broadcasting", lambda np_: np_.vectorize(np_.add)(_r(2), _r(3))),
]


@pytest.mark.parametrize(("error", "match", "call"), ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(error: type[Exception], match: str, call: Callable[[Any], Any]) -> None:
    with pytest.raises(error, match=match):
        call(mnp)
    with pytest.raises(error):
        call(jnp)


def test_wraps_the_function() -> None:
    def my_function(x: Any) -> Any:
        """Doc."""
        return x

    v = mnp.vectorize(my_function)
    assert (v.__name__, v.__doc__) == ("my_function", "Doc.")
