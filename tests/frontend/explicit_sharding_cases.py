"""Explicit-sharding cases, each run on the real jax and on mlax and compared: the type jax
prints (``jax.typeof``), the result's ``.sharding`` (jax's own objects, so ``==`` compares
meshes with their axis types and specs entry by entry) and the values.

Shared by tests/frontend/test_explicit_sharding.py (the session's 4 devices) and
explicit_sharding_worker.py (1 and 8 devices, in a subprocess: the device count is fixed when
jaxlib's backend starts). A case is ``fn(ns, jnp, a, b, c)`` with ``ns`` jax or mlax; ``a`` is
split over ``x`` along dimension 0, ``b`` over ``y`` along dimension 1, ``c`` over ``y``
along dimension 0 (8x8 arrays, so any mesh of 1, 4 or 8 devices divides them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Case = Callable[..., Any]

# Results jax and mlax must agree on, eager and under jit (arguments passed to the jit).
CASES: dict[str, Case] = {
    "mul": lambda ns, jnp, a, b, c: a * 2,
    "add_broadcasting": lambda ns, jnp, a, b, c: a + b,
    "sum_sharded_dim": lambda ns, jnp, a, b, c: a.sum(0),
    "sum_other_dim": lambda ns, jnp, a, b, c: a.sum(1),
    "max": lambda ns, jnp, a, b, c: a.max(0),
    "argmax": lambda ns, jnp, a, b, c: a.argmax(1),
    "mean_all": lambda ns, jnp, a, b, c: a.mean(),
    "transpose": lambda ns, jnp, a, b, c: a.T,
    "dot_free_sharded": lambda ns, jnp, a, b, c: a @ c,
    "matvec": lambda ns, jnp, a, b, c: a @ jnp.ones(8),
    "einsum": lambda ns, jnp, a, b, c: jnp.einsum("ij,jk->ik", a, c),
    "reshape_split": lambda ns, jnp, a, b, c: a.reshape(8, 2, 4),
    "reshape_merge": lambda ns, jnp, a, b, c: a.reshape(64),
    "reshape_split_sharded": lambda ns, jnp, a, b, c: a.reshape(4, 2, 8),
    "expand_dims": lambda ns, jnp, a, b, c: a[None],
    "broadcast_to": lambda ns, jnp, a, b, c: jnp.broadcast_to(a[:, None, :], (8, 3, 8)),
    "concatenate": lambda ns, jnp, a, b, c: jnp.concatenate([a, a]),
    "concatenate_free": lambda ns, jnp, a, b, c: jnp.concatenate([a, a], 1),
    "stack": lambda ns, jnp, a, b, c: jnp.stack([a, a]),
    "cumsum_free": lambda ns, jnp, a, b, c: jnp.cumsum(a, 1),
    "sort_free": lambda ns, jnp, a, b, c: jnp.sort(a, 1),
    "pad": lambda ns, jnp, a, b, c: jnp.pad(a, ((0, 0), (1, 1))),
    "where": lambda ns, jnp, a, b, c: jnp.where(a > 3, a, 0.0),
    "astype": lambda ns, jnp, a, b, c: a.astype(jnp.int32),
    "tanh": lambda ns, jnp, a, b, c: jnp.tanh(a),
    "flip": lambda ns, jnp, a, b, c: a[::-1],
    "take": lambda ns, jnp, a, b, c: jnp.take(a, jnp.array([1, 2]), axis=1),
    "column": lambda ns, jnp, a, b, c: a[:, 1],
    "softmax": lambda ns, jnp, a, b, c: ns.nn.softmax(a, axis=-1),
    "softmax_sharded_dim": lambda ns, jnp, a, b, c: ns.nn.softmax(a, axis=0),
    "outer": lambda ns, jnp, a, b, c: a[:, :, None] * a[:, None, :],
    "dynamic_slice": lambda ns, jnp, a, b, c: ns.lax.dynamic_slice(a, (0, 0), (4, 4)),
    "zeros_like": lambda ns, jnp, a, b, c: jnp.zeros_like(a),
    "grad": lambda ns, jnp, a, b, c: ns.grad(lambda w: (jnp.tanh(a @ w) ** 2).sum())(c),
    "batched_eigh": lambda ns, jnp, a, b, c: jnp.linalg.eigh(
        a.reshape(8, 2, 4) @ jnp.swapaxes(a.reshape(8, 2, 4), 1, 2) + 4 * jnp.eye(2))[0],
    "batched_svd": lambda ns, jnp, a, b, c: jnp.linalg.svd(a.reshape(8, 4, 2))[1],
    "batched_triangular_solve": lambda ns, jnp, a, b, c: ns.lax.linalg.triangular_solve(
        a.reshape(8, 2, 4)[:, :, :2] + 4 * jnp.eye(2), a.reshape(8, 2, 4), left_side=True, lower=True),
}

# Results jax and mlax must agree on under jit only: jax's eager indexing takes other paths.
JIT_ONLY: dict[str, Case] = {
    "slice": lambda ns, jnp, a, b, c: a[2:6],
    "slice_prefix": lambda ns, jnp, a, b, c: a[:4],
}

# Ambiguous or unsupported shardings: jax's ShardingTypeError, with jax's message.
ERRORS: dict[str, Case] = {
    "dot_contracting_both_sharded": lambda ns, jnp, a, b, c: b @ c,
    "concatenate_mismatch": lambda ns, jnp, a, b, c: jnp.concatenate([a, b], 1),
    "cumsum_sharded_dim": lambda ns, jnp, a, b, c: jnp.cumsum(a, 0),
    "sort_sharded_dim": lambda ns, jnp, a, b, c: jnp.sort(a, 0),
    "dynamic_update_slice": lambda ns, jnp, a, b, c: ns.lax.dynamic_update_slice(a, jnp.ones((2, 8)), (0, 0)),
    "broadcast_mismatch": lambda ns, jnp, a, b, c: a + c,
    "repeated_axis": lambda ns, jnp, a, b, c: a @ a.T,
    "triangular_solve_split_matrix": lambda ns, jnp, a, b, c: ns.lax.linalg.triangular_solve(
        a, a, left_side=True, lower=True),
}


def arrays(ns: Any, mesh: Any) -> tuple[Any, Any, Any]:
    """The three operands, placed on ``mesh`` with ``ns.device_put``."""
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    rng = np.random.default_rng(0)
    values = [rng.standard_normal((8, 8)).astype(np.float32) for _ in range(3)]
    specs = [P("x"), P(None, "y"), P("y")]
    return tuple(ns.device_put(v, NamedSharding(mesh, s)) for v, s in zip(values, specs, strict=True))


def run(ns: Any, case: Case, mesh: Any, jitted: bool) -> Any:
    """``case`` on ``ns`` (jax or mlax) under ``ns.set_mesh(mesh)``, eager or jitted."""
    import importlib

    jnp = importlib.import_module(f"{ns.__name__}.numpy")
    a, b, c = arrays(ns, mesh)
    with ns.set_mesh(mesh):  # as jax's explicit-sharding guide does (its jit needs it for constants)
        if jitted:
            return ns.jit(lambda a, b, c: case(ns, jnp, a, b, c))(a, b, c)
        return case(ns, jnp, a, b, c)


def describe(ns: Any, result: Any) -> tuple[str, Any]:
    return str(ns.typeof(result)), result.sharding


def compare(case: Case, mesh: Any, jitted: bool) -> list[str]:
    """What differs between jax and mlax on ``case`` (empty: nothing)."""
    import jax

    import mlax

    expected = run(jax, case, mesh, jitted)
    got = run(mlax, case, mesh, jitted)
    problems = []
    if describe(jax, expected) != describe(mlax, got):
        problems.append(f"jax {describe(jax, expected)} != mlax {describe(mlax, got)}")
    if not np.allclose(np.asarray(expected), np.asarray(got), rtol=1e-5, atol=1e-5):
        problems.append("values differ")
    return problems


def error_of(ns: Any, case: Case, mesh: Any, jitted: bool) -> tuple[str, str]:
    try:
        run(ns, case, mesh, jitted)
    except Exception as error:  # noqa: BLE001 - the error is the result compared
        return type(error).__name__, str(error).split("\n")[0]
    return "no error", ""


def compare_error(case: Case, mesh: Any, jitted: bool) -> list[str]:
    import jax

    import mlax

    expected, got = error_of(jax, case, mesh, jitted), error_of(mlax, case, mesh, jitted)
    if expected[0] != got[0] or not got[1].startswith(expected[1]):
        return [f"jax raised {expected}, mlax {got}"]
    return []
