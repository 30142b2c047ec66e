"""A jit result typed on an abstract mesh no concrete mesh is known for (``reshard`` inside
``use_abstract_mesh``) lands, as jax's, on that mesh made concrete on the devices the program
ran on (pyfront/explicit_sharding.py `_on_devices_of`). Random values, against jax, on the
session's CPU devices (4: a 2x2 mesh)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import AxisType

import mlax
import mlax.numpy as mnp


def _run(ns, np_, value, shape, names, target):
    mesh = ns.make_mesh(shape, names, axis_types=(AxisType.Explicit,) * len(names))
    size = int(np.prod(shape))
    with ns.set_mesh(mesh):
        x = ns.device_put(np_.asarray(value), ns.P(*names[:1]))

        @ns.jit
        def f(x):
            abstract = ns.sharding.AbstractMesh((size,), ("A",), (AxisType.Explicit,))
            with ns.sharding.use_abstract_mesh(abstract):
                return ns.reshard(x, ns.P(*target)) * 3 - 1

        z = f(x)
    return z, str(ns.typeof(z)), z.sharding


@pytest.mark.parametrize("target", [("A", None), (None, "A")])
def test_result_on_the_abstract_mesh(target) -> None:
    n = len(jax.devices())
    shape, names = ((2, n // 2), ("X", "Y")) if n >= 4 else ((n,), ("X",))
    value = np.random.default_rng(3).standard_normal((2 * n, n)).astype(np.float32)
    want, want_type, want_sharding = _run(jax, jnp, value, shape, names, target)
    got, got_type, got_sharding = _run(mlax, mnp, value, shape, names, target)
    assert got_type == want_type
    assert got_sharding.spec == want_sharding.spec
    assert got_sharding.mesh.axis_names == want_sharding.mesh.axis_names
    assert list(got_sharding.mesh.devices.flat) == list(want_sharding.mesh.devices.flat)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
