"""Donated arguments as jax's: each output takes a donated argument of its shape and dtype (in
jax's order), lives at that argument's address, and the argument is deleted; an argument no
output can take stays, with jax's warning. Checked against jax on the same random values."""

from __future__ import annotations

import warnings
from typing import Any

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mlax
import mlax.numpy as jnp

RNG = np.random.default_rng(11)


def _run(jit: Any, lib: Any, fun: Any, donate: tuple[int, ...], *values: np.ndarray) -> tuple[Any, ...]:
    """Outputs, which argument each output lives at (None: none), and which arguments are deleted."""
    args = [lib.asarray(v) for v in values]
    pointers = [a.unsafe_buffer_pointer() for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = jit(fun, donate_argnums=donate)(*args)
    at = [pointers.index(o.unsafe_buffer_pointer()) if o.unsafe_buffer_pointer() in pointers else None
          for o in outs]
    return [np.asarray(o) for o in outs], at, [a.is_deleted() for a in args]


CASES = [
    ("one", lambda x: (x * 2 + 1,), (0,), [(5,)]),
    ("pairs in order", lambda x, y: (y - x, x * y), (0, 1), [(3,), (3,)]),
    ("other shape unused", lambda x, y: (x.sum() + y,), (0, 1), [(4,), ()]),
    ("not donated kept", lambda x, y: (x + y,), (1,), [(2, 3), (2, 3)]),
    ("more outputs", lambda x: (x + 1, x - 1, x * 3), (0,), [(4, 2)]),
]


@pytest.mark.parametrize("name,fun,donate,shapes", CASES, ids=[c[0] for c in CASES])
def test_donation_matches_jax(name: str, fun: Any, donate: tuple[int, ...], shapes: list[Any]) -> None:
    values = [RNG.normal(size=s).astype(np.float32) for s in shapes]
    ours = _run(mlax.jit, jnp, fun, donate, *values)
    theirs = _run(jax.jit, jjnp, fun, donate, *values)
    for a, b in zip(ours[0], theirs[0], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert ours[1:] == theirs[1:]


def test_unusable_donation_warns_as_jax() -> None:
    x = jnp.asarray(RNG.normal(size=(3,)).astype(np.float32))
    with pytest.warns(UserWarning, match="Some donated buffers were not usable: float32\\[3\\]"):
        out = mlax.jit(lambda x: x.sum(), donate_argnums=0)(x)
    assert not x.is_deleted()
    np.testing.assert_allclose(out, np.asarray(x).sum(), rtol=1e-6)


def test_a_buffer_another_array_views_is_not_overwritten() -> None:
    base = jnp.arange(6.0)
    view = base.reshape(2, 3)  # an eager reshape may share the buffer
    before = np.asarray(view).copy()
    out = mlax.jit(lambda z: z * 3 + 1, donate_argnums=0)(base)
    assert base.is_deleted()
    np.testing.assert_array_equal(np.asarray(view), before)
    np.testing.assert_array_equal(np.asarray(out), np.arange(6.0, dtype=np.float32) * 3 + 1)


def test_broadcast_constant_gets_a_buffer_of_its_own() -> None:
    zeros = jnp.zeros((1000,))
    pointer = zeros.unsafe_buffer_pointer()
    assert jnp.zeros((1000,)).unsafe_buffer_pointer() != pointer
    out = mlax.jit(lambda z: z.at[0].add(1.0), donate_argnums=0)(zeros)
    assert zeros.is_deleted() and out.unsafe_buffer_pointer() == pointer
    assert float(out[0]) == 1.0 and float(out[1:].sum()) == 0.0
