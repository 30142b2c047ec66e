"""mlax.experimental.checkify (served as jax.experimental.checkify): user checks
functionalized by checkify, eager checks, and jax's errors, against jax on random values."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify as jax_checkify

import mlax
import mlax.numpy as mnp
from mlax.experimental import checkify as mlax_checkify

LIBS = ((jax, jnp, jax_checkify), (mlax, mnp, mlax_checkify))


def _positive(np_, checkify):
    def f(x):
        checkify.check(np_.all(x > 0), "{x} needs to be positive, sum {s}", x=x, s=np_.sum(x))
        checkify.check(np_.all(x < 10), "too large")
        return 1 / x

    return f


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("where", ["eager", "jit_outside", "jit_inside"])
def test_checkify_collects_user_checks(sign: float, where: str) -> None:
    x = np.random.default_rng(0).uniform(0.5, 2.0, (3,)).astype(np.float32) * np.float32(sign)
    messages, outs = {}, {}
    for lib, np_, checkify in LIBS:
        f = _positive(np_, checkify)
        checked = {"eager": checkify.checkify(f), "jit_outside": lib.jit(checkify.checkify(f)),
                   "jit_inside": checkify.checkify(lib.jit(f))}[where]
        err, out = checked(x)
        messages[lib], outs[lib] = err.get(), np.asarray(out)
        if sign < 0:
            with pytest.raises(checkify.JaxRuntimeError, match="needs to be positive"):
                err.throw()
        else:
            err.throw()
    np.testing.assert_allclose(outs[mlax], outs[jax], rtol=1e-6)
    if sign > 0:
        assert messages[mlax] is None and messages[jax] is None
    else:
        assert messages[mlax] == messages[jax]


def test_check_outside_checkify() -> None:
    for lib, np_, checkify in LIBS:
        checkify.check(np_.array(True), "fine")  # concrete and true: nothing
        with pytest.raises(checkify.JaxRuntimeError, match="bad 3"):
            checkify.check(np_.array(False), "bad {}", np_.array(3))
        with pytest.raises(ValueError, match="not functionalized"):
            lib.jit(lambda x, np_=np_, c=checkify: c.check(x > 0, "no"))(np.float32(1.0))
        with pytest.raises(TypeError, match="scalar pred"):
            checkify.check(np_.array([True, False]), "not a scalar")
        with pytest.raises(TypeError, match="PyTrees of arrays"):
            checkify.check(np_.array(True), "{}", "a string")


def test_check_error_merges_into_checkify_and_error_is_a_pytree() -> None:
    x = np.float32(-2.0)
    got = {}
    for lib, np_, checkify in LIBS:
        def inner_f(x, np_=np_, c=checkify):
            x = np_.asarray(x)
            c.check(x > 0, "inner {}", x)
            return x

        inner = checkify.checkify(inner_f)

        def outer(x, inner=inner, c=checkify):
            err, y = inner(x)
            c.check_error(err)
            return y * 2

        err, out = checkify.checkify(outer)(x)
        got[lib] = (err.get(), float(out),
                    len(jax.tree_util.tree_leaves(err)) > 0)
    assert got[mlax] == got[jax]


def test_jitted_function_repr_is_jax_s() -> None:
    def f(x):
        return x

    assert repr(mlax.jit(f)) == repr(jax.jit(f))
    assert type(mlax.jit(f)).__name__ == type(jax.jit(f)).__name__ == "PjitFunction"  # (chex reads it)


def test_message_formats_arrays_as_jax_does(rng: np.random.Generator) -> None:
    """A format argument is an Array in the message (``{d!r}`` of a dict shows ``Array(...)``),
    as jax's: chex matches ``'b': Array(nan``."""
    x = rng.standard_normal(3).astype(np.float32)
    x[1] = np.nan
    messages = []
    for lib, np_, checkify in LIBS:
        def f(v, np_=np_, checkify=checkify):
            checkify.check(np_.all(np_.isfinite(v)), "bad {v} {d!r}", v=v, d={"b": v[1], "c": v})
            return v

        error, _ = checkify.checkify(lib.jit(f))(x)
        messages.append(error.get())
    assert messages[0] == messages[1]
    assert "'b': Array(nan, dtype=float32)" in messages[1]


def test_typed_key_arrays_are_format_arguments() -> None:
    """A typed PRNG key array is a jax.Array, so a check may format it (chex's tree asserts)."""
    messages = []
    for lib, np_, checkify in LIBS:
        def f(keys, x, np_=np_, checkify=checkify):
            checkify.check(np_.all(x > 0), "bad {k} {x}", k=keys, x=x)
            return x

        error, _ = checkify.checkify(lib.jit(f))(lib.random.split(lib.random.key(1)), np.float32(-1.5))
        messages.append(error.get())
    assert messages[0] == messages[1]
