"""A user primitive's batching rule may return an output unbatched (batch dimension None, as
equinox's unvmap_any does): the output stays unbatched under vmap, as in jax, so a cond on it
runs one branch and ``out_axes=None`` accepts it."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from jax.core import ShapedArray
from jax.interpreters import batching, mlir

import mlax
from mlax.extend_primitive import Primitive


def any_of_all(cls: type, xnp: Any) -> Any:
    """True where any element of any batch member is: its batching rule reduces the batch away."""
    p = cls("any_of_all")
    p.def_impl(lambda x: np.any(x))
    p.def_abstract_eval(lambda x: ShapedArray((), np.bool_))
    mlir.register_lowering(p, mlir.lower_fun(lambda x: xnp.any(x), multiple_results=False))
    batching.primitive_batchers[p] = lambda args, dims: (p.bind(args[0]), None)
    return p.bind


@pytest.mark.parametrize("flags", [[False, False, False], [False, True, False]])
def test_cond_on_unbatched_output_runs_one_branch(flags: list[bool]) -> None:
    xs = np.array(flags)

    def run(lib: Any, cls: type) -> tuple[Any, int]:
        prim = any_of_all(cls, lib.numpy)
        calls = []

        def taken(x: Any) -> Any:
            lib.debug.callback(lambda: calls.append(1))
            return x + 1.0

        f = lib.vmap(lambda p, x: lib.lax.cond(prim(p), taken, lambda x: x - 1.0, x))
        out = f(xs, np.arange(3, dtype=np.float32))
        lib.block_until_ready(out)
        return np.asarray(out), len(calls)

    ours, theirs = run(mlax, Primitive), run(jax, jax.extend.core.Primitive)
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert ours[1] == theirs[1]


def test_out_axes_none_accepts_it() -> None:
    xs = np.array([False, True])
    ours = mlax.vmap(any_of_all(Primitive, mlax.numpy), out_axes=None)(xs)
    theirs = jax.vmap(any_of_all(jax.extend.core.Primitive, jax.numpy), out_axes=None)(xs)
    assert np.shape(ours) == np.shape(theirs) == ()
    assert bool(ours) == bool(theirs)
