"""``eval_shape`` of a function taking Refs gives jax's shapes and leaves the refs as they were
(pyfront/ref_type.py `refs_as_values`). Random values, against jax."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import mlax
import mlax.numpy as mnp

RNG = np.random.default_rng(5)


def _run(ns, np_, value, scale):
    def f(r, s):
        r[...] = r[...] * s + 1.0
        r[0] = r[1]
        return {"sum": np_.sum(r[...]), "rows": r[...][:2].astype(np_.int32)}

    ref = ns.new_ref(np_.asarray(value))
    out = ns.eval_shape(f, ref, scale)
    return out, np.asarray(ref[...])


def test_eval_shape_with_ref_arguments() -> None:
    value = RNG.standard_normal((4, 3)).astype(np.float32)
    scale = np.float32(RNG.uniform(0.5, 2))
    want, want_after = _run(jax, jnp, value, scale)
    got, got_after = _run(mlax, mnp, value, scale)
    assert jax.tree.map(lambda s: (s.shape, s.dtype, s.weak_type), got) == \
        jax.tree.map(lambda s: (s.shape, s.dtype, s.weak_type), want)
    np.testing.assert_array_equal(got_after, value)
    np.testing.assert_array_equal(want_after, value)
