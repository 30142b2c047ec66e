"""Custom-derivative rules run only where a derivative needs them, as jax's: a rule that
raises (equinox's ``nondifferentiable``) is harmless for calls whose inputs are not
differentiated, and its own error, of its own type, reaches the user when one is; Python
scalars among a custom_vjp's residuals reach bwd as they are. Against jax on random values."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same

LIBS = ((jax, jnp), (mlax, mnp))


class Refused(RuntimeError):
    pass


def _nondiff_jvp(lib):
    @lib.custom_jvp
    def nd(x):
        return x

    @nd.defjvp
    def nd_rule(primals, tangents):
        raise Refused("Unexpected tangent: nd cannot be differentiated")

    return nd


def _nondiff_vjp(lib, symbolic_zeros: bool):
    @lib.custom_vjp
    def nd(x, y):
        return x * y

    def fwd(x, y):
        if symbolic_zeros and x.perturbed:
            raise Refused("Unexpected tangent: x of nd")
        if not symbolic_zeros:
            raise Refused("Unexpected tangent: nd cannot be differentiated")
        return nd(x.value, y.value), y.value

    def bwd(y, ct):
        return ct * y, None

    nd.defvjp(fwd, bwd, symbolic_zeros=symbolic_zeros)
    return nd


def test_custom_jvp_rule_that_raises_is_unused_without_tangents() -> None:
    rng = np.random.default_rng(0)
    x, y = (rng.uniform(-2, 2, (3,)).astype(np.float32) for _ in range(2))
    got = {}
    for lib, np_ in LIBS:
        nd = _nondiff_jvp(lib)

        def f(x, y, np_=np_, nd=nd):
            return np_.sum(np_.sin(x) * nd(y))

        got[lib] = (lib.grad(f)(x, y), lib.jit(lib.grad(f))(x, y),
                    lib.vmap(lib.grad(f))(x[:, None], y[:, None]),
                    lib.jvp(lambda x, f=f: f(x, y), (x,), (y,)), lib.jit(f)(x, y))
    for a, b in zip(jax.tree_util.tree_leaves(got[mlax]), jax.tree_util.tree_leaves(got[jax]), strict=True):
        assert_same(a, b, rtol=2e-6)


@pytest.mark.parametrize("how", ["grad", "jvp", "jit_grad"])
def test_custom_jvp_rule_error_when_needed(how: str) -> None:
    x = np.float32(1.5)
    for lib, np_ in LIBS:
        nd = _nondiff_jvp(lib)
        f = lambda x, nd=nd, np_=np_: np_.sin(nd(x))  # noqa: E731
        with pytest.raises(Refused, match="nd cannot be differentiated"):
            if how == "grad":
                lib.grad(f)(x)
            elif how == "jvp":
                lib.jvp(f, (x,), (x,))
            else:
                lib.jit(lib.grad(f))(x)


@pytest.mark.parametrize("symbolic_zeros", [False, True])
def test_custom_vjp_rules_that_raise(symbolic_zeros: bool) -> None:
    """With symbolic zeros, a fwd that refuses a perturbed x works when only y is
    differentiated; a plain fwd that raises is unused without gradients, else its error."""
    rng = np.random.default_rng(1)
    x, y = (rng.uniform(-2, 2, (4,)).astype(np.float32) for _ in range(2))
    results = {}
    for lib, np_ in LIBS:
        nd = _nondiff_vjp(lib, symbolic_zeros)

        def f(x, y, np_=np_, nd=nd):
            return np_.sum(nd(x, np_.cos(y)))

        results[lib] = [lib.jit(f)(x, y), f(x, y)]
        if symbolic_zeros:
            results[lib].append(lib.grad(f, argnums=1)(x, y))
        with pytest.raises(Refused, match="Unexpected tangent"):
            lib.grad(f)(x, y)
    for a, b in zip(results[mlax], results[jax], strict=True):
        assert_same(a, b, rtol=2e-6)


def test_custom_vjp_python_scalar_residuals_reach_bwd() -> None:
    rng = np.random.default_rng(2)
    x = rng.uniform(-2, 2, (3,)).astype(np.float32)
    grads = {}
    for lib, np_ in LIBS:
        seen = []

        def make(np_):
            return lambda x: np_.sin(x), lambda x: (np_.sin(x), (np_.cos(x), True, 2.5))

        primal, fwd = make(np_)
        f = lib.custom_vjp(primal)

        def bwd(res, ct, seen=seen):
            cos, flag, scale = res
            seen.append((flag, scale))
            return (ct * cos * scale,)

        f.defvjp(fwd, bwd)
        grads[lib] = lib.grad(lambda x, f=f, np_=np_: np_.sum(f(x)))(x)
        assert seen and all(flag is True and scale == 2.5 for flag, scale in seen), lib
    assert_same(grads[mlax], grads[jax], rtol=2e-6)
