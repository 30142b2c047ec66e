"""Under vmap a loop carry stays unbatched when nothing batched reaches it, as in jax's
``_batch_jaxpr`` fixpoint: a step counter updated in a nested cond (or scan, or a while) whose
other operands are batched, and the carries of a while whose predicate is a user primitive
that reduces the batch away (equinox's ``unvmap_any``). mlax-batch read every result of a
nested construct as batched once any operand was, so such a counter became batched (equinox's
``nonbatchable`` asserts in its checkpointed while_loop under vmap of grad) and
``out_axes=None`` refused it. Against jax on random values."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from jax.core import ShapedArray
from jax.interpreters import batching, mlir

import mlax
from mlax.extend_primitive import Primitive
from tests.oracle import assert_same

LIBS = (jax, mlax)


def _values(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-2, 2, shape).astype(np.float32)


def _unbatchable(cls: type) -> Any:
    """The identity, whose batching rule refuses a batched operand (equinox's nonbatchable)."""
    p = cls("unbatchable_test")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(p, mlir.lower_fun(lambda x: x, multiple_results=False))

    def refuse(args: Any, dims: Any) -> Any:
        if dims[0] is not None:
            raise ValueError("unbatchable_test got a batched operand")
        return p.bind(args[0]), None

    batching.primitive_batchers[p] = refuse
    return p.bind


PRIMITIVES = {jax: jax.extend.core.Primitive, mlax: Primitive}


def _counted_loop(lib: Any, nested: str, outer: str = "while") -> Any:
    """A loop over (counter, value): the counter advances in a nested construct that also
    updates the batched value, and is checked unbatched on each step."""
    lax, lnp = lib.lax, lib.numpy
    unbatchable = _unbatchable(PRIMITIVES[lib])

    def step(i: Any, v: Any) -> tuple[Any, Any]:
        i = unbatchable(i)
        if nested == "cond":
            return lax.cond(i % 2 == 0, lambda i, v: (i + 1, lnp.sin(v) * 2.0),
                            lambda i, v: (i + 1, v + 1.0), i, v)
        if nested == "scan":
            (i2, v2), _ = lax.scan(lambda c, _: ((c[0] + 1, lnp.cos(c[1]) + c[1]), None), (i, v), None,
                                   length=2)
            return i2, v2
        return lax.while_loop(lambda c: c[0] < i + 2, lambda c: (c[0] + 1, c[1] * 0.5 + 1.0), (i, v))

    def f(v: Any) -> tuple[Any, Any]:
        if outer == "scan":  # (reverse mode: its transpose is a loop with its own counter)
            return lax.scan(lambda c, _: (step(*c), None), (0, v), None, length=7)[0]
        return lax.while_loop(lambda c: c[0] < 7, lambda c: step(*c), (0, v))

    return f


@pytest.mark.parametrize("nested", ["cond", "scan", "while"])
def test_counter_of_a_nested_construct_stays_unbatched(nested: str) -> None:
    xs = _values(1, (4, 3))
    got = {lib: lib.vmap(_counted_loop(lib, nested), out_axes=(None, 0))(xs) for lib in LIBS}
    assert np.shape(got[mlax][0]) == np.shape(got[jax][0]) == ()
    assert_same(got[mlax][0], got[jax][0])
    assert_same(got[mlax][1], got[jax][1], rtol=2e-6)


@pytest.mark.parametrize("nested", ["cond", "scan"])
def test_counter_under_vmap_of_grad(nested: str) -> None:
    xs = _values(2, (3, 2))
    got = {}
    for lib in LIBS:
        f = _counted_loop(lib, nested, outer="scan")
        run = lib.jit(lib.vmap(lib.value_and_grad(lambda v, f=f, lib=lib: lib.numpy.sum(f(v)[1]))))
        got[lib] = run(xs)
    for a, b in zip(jax.tree_util.tree_leaves(got[mlax]), jax.tree_util.tree_leaves(got[jax]), strict=True):
        assert_same(a, b, rtol=2e-5)


def _unvmap_any(cls: type, lib: Any) -> Any:
    """Any element true, the batch reduced away: its batching rule returns an unbatched result."""
    p = cls("unvmap_any_test")
    p.def_impl(lambda x: np.any(x))
    p.def_abstract_eval(lambda x: ShapedArray((), np.bool_))
    mlir.register_lowering(p, mlir.lower_fun(lambda x: lib.numpy.any(x), multiple_results=False))
    batching.primitive_batchers[p] = lambda args, dims: (p.bind(args[0]), None)
    return p.bind


def test_while_on_an_unbatched_user_primitive_predicate_keeps_carries_unbatched() -> None:
    xs = _values(3, (5,))
    got = {}
    for lib, cls in ((jax, jax.extend.core.Primitive), (mlax, Primitive)):
        pred = _unvmap_any(cls, lib)

        def f(x: Any, pred: Any = pred, lib: Any = lib) -> tuple[Any, Any]:
            def body(c: Any) -> Any:
                i, v = c
                return i + 1, lib.numpy.where(v < 3.0, v + 0.75, v)

            return lib.lax.while_loop(lambda c: pred(c[1] < 3.0), body, (0, x))

        got[lib] = lib.vmap(f, out_axes=(None, 0))(xs)
    assert np.shape(got[mlax][0]) == ()
    assert_same(got[mlax][0], got[jax][0])
    assert_same(got[mlax][1], got[jax][1], rtol=2e-6)
