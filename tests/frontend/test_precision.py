"""jax's `precision` on dot_general and convolutions, end to end, against jax: the op records it (as
make_jaxpr shows), the StableHLO lowering emits jax's own precision_config (the same multiset of
configs as jax's lowering of the same function, through grad and vmap too), the StableHLO importer
reads it back, `default_matmul_precision` applies where precision is None, and bad values raise
jax's ValueError. Values are exact on the CPU whatever the precision (as XLA:CPU).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import mlax
import mlax.numpy as mnp
from mlax import lax as mlax_lax

_NAME = re.compile(r"\b(DEFAULT|HIGHEST|HIGH)\b")
_CONFIG = re.compile(r"precision(?:_config)? = \[([^\]]*)\]")


def _configs(text: str) -> Counter[tuple[str, ...]]:
    """The precision configs of a StableHLO text (jax's pretty or mlax's generic form)."""
    return Counter(tuple(_NAME.findall(group)) for group in _CONFIG.findall(text))


def _jax_configs(fun: Callable[..., Any], *args: Any) -> Counter[tuple[str, ...]]:
    return _configs(jax.jit(fun).lower(*args).as_text())


def _mlax_configs(fun: Callable[..., Any], *args: Any) -> Counter[tuple[str, ...]]:
    return _configs(mlax.jit(fun, backend="xla").lower(*args).as_text("stablehlo", debug_info=False))


def _jaxpr_precisions(jaxpr: Any) -> list[tuple[str, str]]:
    """The precision param of every dot_general / conv of a (mlax or jax) jaxpr, None as DEFAULT."""
    found = []
    for eqn in jaxpr.jaxpr.eqns:
        if eqn.primitive.name in ("dot_general", "conv_general_dilated"):
            p = eqn.params["precision"]
            found.append(("DEFAULT", "DEFAULT") if p is None else tuple(getattr(x, "name", x) for x in p))
    return found


def _close(got: Any, want: Any, tol: float) -> None:
    """Values and dtype as jax's (exact f32 on the CPU whatever the precision)."""
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)
    assert np.asarray(got).dtype == np.asarray(want).dtype


def _random(r: np.random.Generator, *shape: int) -> np.ndarray:
    return r.standard_normal(shape).astype(np.float32)


PRECISIONS = [None, lax.Precision.HIGHEST, lax.Precision.HIGH, "highest", "float32", "bfloat16",
              "tensorfloat32", "fastest", ("highest", "default"), (lax.Precision.HIGH, lax.Precision.HIGHEST)]


@pytest.mark.parametrize("precision", PRECISIONS, ids=str)
def test_dot_general_records_and_lowers_precision(precision: Any) -> None:
    r = np.random.default_rng(abs(hash(str(precision))) % 2**32)
    b, m, k, n = (int(s) for s in r.integers(1, 6, 4))
    x, y = _random(r, b, m, k), _random(r, b, k, n)
    dims = (((2,), (1,)), ((0,), (0,)))
    ours = lambda x, y: mlax_lax.dot_general(x, y, dims, precision=precision)  # noqa: E731
    theirs = lambda x, y: lax.dot_general(x, y, dims, precision=precision)  # noqa: E731
    assert _jaxpr_precisions(mlax.make_jaxpr(ours)(x, y)) == _jaxpr_precisions(jax.make_jaxpr(theirs)(x, y))
    assert _mlax_configs(ours, x, y) == _jax_configs(theirs, x, y)
    for result in (ours(x, y), mlax.jit(ours)(x, y)):
        np.testing.assert_allclose(np.asarray(result), np.asarray(theirs(x, y)), rtol=1e-5, atol=1e-5)
        assert np.asarray(result).dtype == np.float32


@pytest.mark.parametrize("precision", [None, "highest", ("default", "high")], ids=str)
def test_conv_records_and_lowers_precision(precision: Any) -> None:
    r = np.random.default_rng(7)
    size, channels, features = (int(s) for s in r.integers(3, 7, 3))
    x, w = _random(r, 2, size, size, channels), _random(r, 3, 2, channels, features)
    spec = dict(window_strides=(1, 2), padding="SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                precision=precision)
    ours = lambda x, w: mlax_lax.conv_general_dilated(x, w, **spec)  # noqa: E731
    theirs = lambda x, w: lax.conv_general_dilated(x, w, **spec)  # noqa: E731
    assert _jaxpr_precisions(mlax.make_jaxpr(ours)(x, w)) == _jaxpr_precisions(jax.make_jaxpr(theirs)(x, w))
    assert _mlax_configs(ours, x, w) == _jax_configs(theirs, x, w)
    _close(mlax.jit(ours)(x, w), theirs(x, w), 1e-4)


NUMPY_CONTRACTIONS = {
    "dot": (lambda np_, x, y, p: np_.dot(x, y, precision=p), (4, 5), (5, 3)),
    "matmul": (lambda np_, x, y, p: np_.matmul(x, y, precision=p), (2, 4, 5), (5, 3)),
    "einsum": (lambda np_, x, y, p: np_.einsum("bij,jk->bik", x, y, precision=p), (2, 4, 5), (5, 3)),
    "tensordot": (lambda np_, x, y, p: np_.tensordot(x, y, 1, precision=p), (4, 5), (5, 3)),
    "inner": (lambda np_, x, y, p: np_.inner(x, y, precision=p), (4, 5), (3, 5)),
    "vdot": (lambda np_, x, y, p: np_.vdot(x, y, precision=p), (4, 5), (4, 5)),
    "convolve": (lambda np_, x, y, p: np_.convolve(x, y, precision=p), (7,), (3,)),
}


@pytest.mark.parametrize("name", sorted(NUMPY_CONTRACTIONS))
def test_numpy_contractions_pass_precision(name: str) -> None:
    fun, xs, ys = NUMPY_CONTRACTIONS[name]
    r = np.random.default_rng(len(name))
    x, y = _random(r, *xs), _random(r, *ys)
    for precision in ("highest", (lax.Precision.HIGH, lax.Precision.DEFAULT)):
        ours = lambda x, y, p=precision: fun(mnp, x, y, p)  # noqa: E731
        theirs = lambda x, y, p=precision: fun(jnp, x, y, p)  # noqa: E731
        assert _mlax_configs(ours, x, y) == _jax_configs(theirs, x, y)
        np.testing.assert_allclose(np.asarray(mlax.jit(ours)(x, y)), np.asarray(theirs(x, y)), rtol=1e-5,
                                   atol=1e-5)


def test_grad_and_vmap_keep_precision() -> None:
    r = np.random.default_rng(3)
    x, w = _random(r, 3, 4, 5), _random(r, 5, 6)
    k = _random(r, 2, 1, 3, 3)
    p = (lax.Precision.HIGHEST, lax.Precision.HIGH)

    def loss(lax_: Any, w: Any, x: Any, k: Any) -> Any:
        h = lax_.dot_general(x, w, (((2,), (0,)), ((), ())), precision=p)
        c = lax_.conv_general_dilated(h[:, None], k, (1, 1), "VALID", precision=("high", "highest"))
        return (c ** 2).sum()

    ours = mlax.grad(lambda w, x, k: loss(mlax_lax, w, x, k), argnums=(0, 1, 2))
    theirs = jax.grad(lambda w, x, k: loss(lax, w, x, k), argnums=(0, 1, 2))
    assert _mlax_configs(ours, w, x, k) == _jax_configs(theirs, w, x, k)
    for a, b in zip(mlax.jit(ours)(w, x, k), theirs(w, x, k), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-3)
    batched_ours = mlax.vmap(lambda x: mlax_lax.dot(x, w, precision=p), in_axes=1)
    batched_theirs = jax.vmap(lambda x: lax.dot(x, w, precision=p), in_axes=1)
    assert _mlax_configs(batched_ours, x) == _jax_configs(batched_theirs, x)
    _close(batched_ours(x), batched_theirs(x), 1e-5)
    _close(mlax.jit(batched_ours)(x), batched_theirs(x), 1e-5)


@pytest.mark.parametrize("config", ["float32", "bfloat16", "tensorfloat32", "highest"])
def test_default_matmul_precision_applies_where_precision_is_none(config: str) -> None:
    r = np.random.default_rng(11)
    x, y = _random(r, 3, 4), _random(r, 4, 2)
    pairs = [(jnp, jax, None), (jnp, jax, "default"), (mnp, mlax, None), (mnp, mlax, "default")]
    found = {}
    for np_, jax_, precision in pairs:
        with jax_.default_matmul_precision(config):
            text = (jax.jit if jax_ is jax else lambda f: mlax.jit(f, backend="xla"))(
                lambda x, y, np_=np_, precision=precision: np_.matmul(x, y, precision=precision)).lower(x, y)
            found[(jax_.__name__, precision)] = _configs(
                text.as_text() if jax_ is jax else text.as_text("stablehlo", debug_info=False))
    assert found[("mlax", None)] == found[("jax", None)]
    assert found[("mlax", "default")] == found[("jax", "default")] == Counter({("DEFAULT", "DEFAULT"): 1})


def test_stablehlo_import_reads_precision() -> None:
    r = np.random.default_rng(5)
    x, y = _random(r, 3, 4), _random(r, 4, 5)
    k = _random(r, 2, 3, 3, 3)

    def f(x: Any, y: Any, k: Any) -> Any:
        z = lax.dot(x, y, precision=("highest", "high"))
        return lax.conv(z[None, None], k[:1, :1], (1, 1), "SAME", precision="highest")

    imported = mlax.from_stablehlo(jax.jit(f).lower(x, y, k))
    assert _mlax_configs(imported, x, y, k) == _jax_configs(f, x, y, k)
    np.testing.assert_allclose(np.asarray(imported(x, y, k)), np.asarray(f(x, y, k)), rtol=1e-5, atol=1e-5)


BAD = ["fast", 3, ("highest",), ("highest", lax.Precision.HIGH), ["a", "b"]]


@pytest.mark.parametrize("bad", BAD, ids=str)
def test_bad_precision_raises_jax_error(bad: Any) -> None:
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="[Pp]recision"):
        lax.dot(x, x.T, precision=bad)
    with pytest.raises(ValueError, match="mlax.lax.dot_general: precision"):
        mlax_lax.dot(x, x.T, precision=bad)
    with pytest.raises(ValueError, match="mlax.lax.conv_general_dilated: precision"):
        mlax_lax.conv(x[None, None], x[None, None], (1, 1), "SAME", precision=bad)


def test_dot_algorithms_are_refused() -> None:
    x = np.ones((2, 3), np.float32)
    for algorithm in (lax.DotAlgorithmPreset.BF16_BF16_F32, "BF16_BF16_F32"):
        with pytest.raises(ValueError, match="dot algorithm"):
            mlax_lax.dot(x, x.T, precision=algorithm)
    with mlax.default_matmul_precision("BF16_BF16_F32"), pytest.raises(ValueError, match="dot algorithm"):
        mnp.dot(x, x.T)
