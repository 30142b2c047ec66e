"""A custom_vjp bwd may give None for a whole argument, or for a subtree of one, and a
None where the primal has None (an empty subtree): zeros, as jax reads it (equinox's
filter_custom_vjp returns ``(grads, None, None)`` with Nones inside ``grads``)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import mlax
from tests.oracle import assert_same

RNG = np.random.default_rng(3536)


def _f(lib: Any, bwd_cts: Any) -> Any:
    @lib.custom_vjp
    def f(a, b, c):
        return a[0] * 2.0 + b["w"].sum() + c

    def fwd(a, b, c):
        return f(a, b, c), (a[0],)

    def bwd(res, g):
        return bwd_cts(res, g)

    f.defvjp(fwd, bwd)
    return f


CASES = {
    # None in place of a primal None, a whole argument None, a subtree None
    "none_leaf": lambda r, g: ((g * 3.0, None), None, g),
    "whole_args": lambda r, g: (None, None, g * r[0]),
    "subtree": lambda r, g: ((g, None), {"w": None, "v": None}, None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bwd_nones_as_jax(case: str) -> None:
    a0 = RNG.normal(size=(3,)).astype(np.float32)
    w = RNG.normal(size=(2,)).astype(np.float32)
    c = RNG.normal(size=(3,)).astype(np.float32)

    def run(lib: Any) -> Any:
        f = _f(lib, CASES[case])
        loss = lambda a, b, c: f(a, b, c).sum()  # noqa: E731
        return lib.grad(loss, argnums=(0, 1, 2))((a0, None), {"w": w, "v": w * 2}, c)

    assert_same(run(mlax), run(jax), rtol=1e-6, atol=1e-6)


def test_wrong_structure_is_jax_error() -> None:
    f = _f(mlax, lambda r, g: ((g, g, g), None, g))
    with pytest.raises(TypeError, match="same container"):
        mlax.grad(lambda a: f(a, {"w": np.ones(2, np.float32)}, a[0]).sum())((np.ones(3, np.float32), None))
