"""A host callback that raises is jax's runtime error (``jax.errors.JaxRuntimeError``, which
equinox's filter_jit catches), also when it sits in a custom_jvp rule with symbolic zeros,
which `mlax-autodiff` traces while the program is lowered (the executable must know its
callbacks to raise their errors)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import mlax


def _checked(lib: Any) -> Any:
    """x, refusing negative values by a pure_callback in the primal and in the rule."""
    def refuse(x: Any) -> Any:
        if np.any(np.asarray(x) < 0):
            raise ValueError("negative input")
        return np.asarray(x)

    def check(x: Any) -> Any:
        return lib.pure_callback(refuse, jax.ShapeDtypeStruct(np.shape(x), np.float32), x)

    @lib.custom_jvp
    def f(x: Any) -> Any:
        return check(x)

    def rule(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        t = lib.numpy.zeros_like(x) if isinstance(t, jax.custom_derivatives.SymbolicZero) else t
        return check(x), t * 2.0

    f.defjvp(rule, symbolic_zeros=True)
    return f


def _run(lib: Any, how: str, x: np.ndarray) -> Any:
    f = _checked(lib)
    if how == "jit":
        return jax.block_until_ready(lib.jit(f)(x))
    return jax.block_until_ready(lib.jit(lambda x: lib.jvp(f, (x,), (x,)))(x)[0])


@pytest.mark.parametrize("how", ["jit", "jit_jvp"])
def test_raising_callback_is_jax_runtime_error(how: str) -> None:
    good = np.float32([1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(_run(mlax, how, good)), np.asarray(_run(jax, how, good)))
    with pytest.raises(jax.errors.JaxRuntimeError, match="negative input"):
        _run(mlax, how, np.float32([1.0, -2.0]))
    # (jax raises its runtime error, of the callback's exception type where that is a ValueError)
    with pytest.raises((jax.errors.JaxRuntimeError, ValueError), match="negative input"):
        _run(jax, how, np.float32([1.0, -2.0]))
