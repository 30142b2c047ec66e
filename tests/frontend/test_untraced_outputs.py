"""What jax's transformations give back as it was: outputs and aux leaves the function did not
trace (a Python float, a NumPy array, a string) come back unchanged from jvp, vjp, grad,
value_and_grad, jacrev and linearize, as in jax (equinox's filter_jvp / filter_vjp return
their non-differentiable outputs that way). Also jvp's ``has_aux``, jacfwd of Python scalars
and the NumPy view of objects with ``__jax_array__``. Checked against jax's results on random
inputs."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same

RNG = np.random.default_rng(3535)
CLOSE = {"rtol": 2e-6, "atol": 1e-6}


def _x() -> np.ndarray:
    return RNG.normal(size=(3,)).astype(np.float32)


def _aux_and_scalar(lib: Any) -> Any:
    """A function of a vector whose aux holds traced and untraced leaves of every kind."""
    const = np.arange(2, dtype=np.float32)

    def f(x):
        return lib.numpy.sum(lib.numpy.sin(x) * x), {"t": lib.numpy.cos(x), "f": 2.5, "i": 3, "b": True,
                                                     "np": const, "s": "tag"}
    return f


def _same_aux(actual: dict[str, Any], expected: dict[str, Any]) -> None:
    assert actual.keys() == expected.keys()
    for key in ("f", "i", "b", "s"):  # untraced: the very objects
        assert type(actual[key]) is type(expected[key]) and actual[key] == expected[key]
    assert type(actual["np"]) is np.ndarray and type(expected["np"]) is np.ndarray
    np.testing.assert_array_equal(actual["np"], expected["np"])
    assert_same(actual["t"], expected["t"], **CLOSE)


def test_untraced_aux_leaves_come_back_as_they_were() -> None:
    x = _x()
    for call in (lambda lib, f: lib.vjp(f, x, has_aux=True)[2],
                 lambda lib, f: lib.grad(f, has_aux=True)(x)[1],
                 lambda lib, f: lib.value_and_grad(f, has_aux=True)(x)[0][1],
                 lambda lib, f: lib.jacrev(f, has_aux=True)(x)[1],
                 lambda lib, f: lib.linearize(f, x, has_aux=True)[2]):
        _same_aux(call(mlax, _aux_and_scalar(mlax)), call(jax, _aux_and_scalar(jax)))
    gm, _ = mlax.grad(_aux_and_scalar(mlax), has_aux=True)(x)
    gj, _ = jax.grad(_aux_and_scalar(jax), has_aux=True)(x)
    assert_same(gm, gj, **CLOSE)


def test_jvp_has_aux_as_jax() -> None:
    x, t = _x(), _x()
    om, tm, am = mlax.jvp(_aux_and_scalar(mlax), (x,), (t,), has_aux=True)
    oj, tj, aj = jax.jvp(_aux_and_scalar(jax), (x,), (t,), has_aux=True)
    assert_same(om, oj, **CLOSE)
    assert_same(tm, tj, **CLOSE)
    _same_aux(am, aj)
    inside = mlax.jit(lambda x, t: mlax.jvp(lambda v: (v * 2.0, v + 1.0), (x,), (t,), has_aux=True))(x, t)
    assert_same(inside[2], x + np.float32(1.0), **CLOSE)
    with pytest.raises(TypeError, match="two-element tuple"):
        mlax.jvp(lambda v: v, (x,), (t,), has_aux=True)


def test_jvp_gives_untraced_outputs_back() -> None:
    x, t = _x(), _x()
    const = RNG.normal(size=(2,))

    def f(lib):
        return lambda v: (2.0, v * 3.0, const, lib.numpy.ones(2))

    (pm, tm), (pj, tj) = mlax.jvp(f(mlax), (x,), (t,)), jax.jvp(f(jax), (x,), (t,))
    assert pm[0] == pj[0] == 2.0 and type(pm[0]) is float
    assert pm[2] is const and pj[2] is const
    for a, b in zip([*pm[1:2], *pm[3:], *tm], [*pj[1:2], *pj[3:], *tj], strict=True):
        assert_same(a, b, **CLOSE)  # traced outputs and all tangents: arrays, as jax's (zeros for constants)


def test_jacfwd_of_python_scalars() -> None:
    for f in (lambda lib: (lambda u: (u * 2.0).sum()), lambda lib: (lambda u: lib.numpy.sin(u) ** 2)):
        v = float(RNG.normal())
        assert_same(mlax.jacfwd(f(mlax))(v), jax.jacfwd(f(jax))(v), **CLOSE)
    aux_m = mlax.jacfwd(lambda v: ((v * 2.0).sum(), 1.5), has_aux=True)(2.0)
    aux_j = jax.jacfwd(lambda v: ((v * 2.0).sum(), 1.5), has_aux=True)(2.0)
    assert_same(aux_m[0], aux_j[0])
    assert aux_m[1] == aux_j[1] == 1.5


class _Boxed:
    """An object standing for an array through ``__jax_array__`` (as flax.nnx's Variables; its
    NumPy conversion needs a concrete value)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    @property
    def dtype(self) -> Any:
        return self.value.dtype

    @property
    def shape(self) -> Any:
        return self.value.shape

    def __jax_array__(self) -> Any:
        return self.value

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return np.asarray(self.value, dtype)


def test_asarray_reads_jax_array_under_transformations() -> None:
    x, w = _x(), _x()

    def loss(lib):
        return lambda w, x: lib.numpy.dot(x, lib.numpy.asarray(_Boxed(w))) ** 2

    for transform, xs in ((lambda lib, f: lib.grad(f), x), (lambda lib, f: lib.jit(lib.grad(f)), x),
                          (lambda lib, f: lib.vmap(lib.grad(f), in_axes=(None, 0)), np.stack([x, w]))):
        got = transform(mlax, loss(mlax))(w, xs)
        want = transform(jax, loss(jax))(w, xs)
        assert_same(got, want, **CLOSE)
    assert_same(mnp.asarray(_Boxed(mnp.asarray(x))), jnp.asarray(_Boxed(jnp.asarray(x))))
