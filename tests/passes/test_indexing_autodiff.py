"""JVP and TRANSPOSE rules of gather and the scatters: tangents against jax.jvp on random
dimension numbers and modes, adjoints by the dot-product identity <L(t), c> == <t, L^T(c)>."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from jax import lax

from mlax.backends.interpreter import run_function
from mlax.passes.autodiff.transpose_rules import TRANSPOSE_RULES
from mlax.passes.registry import PassFailure
from tests.dialect.test_indexing_ops import JAX_MODES, JAX_SCATTERS
from tests.passes.indexing_cases import Case, jax_indices, random_case
from tests.passes.test_autodiff_jvp_rules import jax_jvp, jvp_module
from tests.passes.test_autodiff_transpose_rules import Case as LinearCase
from tests.passes.test_autodiff_transpose_rules import check_adjoint

pytestmark = pytest.mark.usefixtures("x64", "context")

# The ops a rule may apply to a tangent (the others only see primal values).
LINEAR = {"gather", "scatter", "scatter_add", "select", "mul", "div", "add", "broadcast_in_dim"}


def _mlax_jvp(name: str, attrs: dict, args: list[np.ndarray], diff: list[int],
              tangents: list[np.ndarray]) -> np.ndarray:
    module, tangent_args = jvp_module(name, attrs, args, diff)
    tainted = set(tangent_args)
    for op in module.body.operations[0].regions[0].blocks[0].operations:
        if op.operation.name != "func.return" and any(v in tainted for v in op.operands):
            assert op.operation.name.removeprefix("mlax.") in LINEAR, op.operation.name
            tainted.update(op.results)
    return run_function(module, "f", [*args, *tangents])[1]


def _jax_fn(name: str, case: Case) -> Any:
    indices, batching = jax_indices(case)
    if name == "gather":
        g = case.gather
        numbers = lax.GatherDimensionNumbers(g["offset_dims"], g["collapsed_slice_dims"],
                                             g["start_index_map"], g["operand_batching_dims"], batching)
        return lambda x: lax.gather(x, indices, numbers, g["slice_sizes"], mode=JAX_MODES[g["mode"]],
                                    fill_value=0 if g["mode"] == "fill" else None)
    s = case.scatter()
    numbers = lax.ScatterDimensionNumbers(s["update_window_dims"], s["inserted_window_dims"],
                                          s["scatter_dims_to_operand_dims"], s["input_batching_dims"],
                                          batching)
    return lambda x, u: JAX_SCATTERS[name](x, indices, u, numbers, mode=JAX_MODES[s["mode"]])


def _move_in_bounds(case: Case) -> None:
    """Every start index made to fit (where JAX's rules disagree with clamping or dropping)."""
    g = case.gather
    limits = [case.shape[d] - g["slice_sizes"][d] + 1 for d in g["start_index_map"]]
    vectors = np.moveaxis(case.indices, g["index_vector_dim"], -1) \
        if g["index_vector_dim"] < case.indices.ndim else case.indices[..., None]
    vectors[...] = np.abs(vectors) % np.maximum(limits, 1)


def _unique(case: Case) -> bool:
    indices, _ = jax_indices(case)
    vectors = indices.reshape(-1, indices.shape[-1])
    return len(np.unique(vectors, axis=0)) == len(vectors)


@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
@pytest.mark.parametrize("seed", range(6))
def test_gather_jvp(seed: int, mode: str) -> None:
    """A "fill" gather's filled windows have zero tangents (JAX's fill_value=0 rule)."""
    rng = np.random.default_rng(seed)
    case = random_case(rng, mode)
    x, t = rng.normal(size=case.shape), rng.normal(size=case.shape)
    actual = _mlax_jvp("gather", case.gather, [x, case.indices], [0], [t])
    np.testing.assert_allclose(actual, jax_jvp(_jax_fn("gather", case), [x], [0], [t]), rtol=1e-12)


# scatter (set) is left out where the case repeats an index: JAX orders duplicate sets differently.
SCATTER_JVP_CASES = [pytest.param(seed, mode, name, id=f"{seed}-{mode}-{name}")
                     for name in ("scatter_add", "scatter", "scatter_max", "scatter_min", "scatter_mul")
                     for mode in ("clip", "fill") for seed in range(4)
                     if name != "scatter" or _unique(random_case(np.random.default_rng(seed), mode))]


@pytest.mark.parametrize("seed,mode,name", SCATTER_JVP_CASES)
def test_scatter_jvp(seed: int, mode: str, name: str) -> None:
    """Ties of min/max (small integer values) share the tangent as in JAX; scatter (set) and
    scatter_mul compare where JAX's rules are exact (unique indices; operand tangent only)."""
    rng = np.random.default_rng(seed)
    case = random_case(rng, mode)
    if mode == "clip" and name in ("scatter_min", "scatter_max"):
        _move_in_bounds(case)  # JAX's extremal rule gives NaN where clip clamps a window
    x = rng.integers(-2, 3, size=case.shape).astype(np.float64)
    u = rng.integers(-2, 3, size=case.result).astype(np.float64)
    diff = [0] if name == "scatter_mul" else [0, 2]
    tangents = [rng.normal(size=a.shape) for a in (x, u)][:len(diff)]
    actual = _mlax_jvp(name, case.scatter(), [x, case.indices, u], diff, tangents)
    jax_diff = [0] if name == "scatter_mul" else [0, 1]
    expected = jax_jvp(_jax_fn(name, case), [x, u], jax_diff, tangents)
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12)


def test_scatter_set_jvp_with_duplicates() -> None:
    """The last of duplicate writes wins, with its tangent."""
    x, u = np.zeros(3), np.array([1.0, 2.0, 3.0])
    attrs = dict(update_window_dims=(), inserted_window_dims=(0,), input_batching_dims=(),
                 scatter_indices_batching_dims=(), scatter_dims_to_operand_dims=(0,), index_vector_dim=1,
                 mode="fill")
    indices = np.array([[2], [2], [0]])
    tangent = _mlax_jvp("scatter", attrs, [x, indices, u], [0, 2], [np.full(3, 5.0), np.array([7., 8., 9.])])
    np.testing.assert_array_equal(tangent, [9.0, 5.0, 8.0])


def test_scatter_mul_updates_tangent_is_refused() -> None:
    attrs = dict(update_window_dims=(), inserted_window_dims=(0,), input_batching_dims=(),
                 scatter_indices_batching_dims=(), scatter_dims_to_operand_dims=(0,), index_vector_dim=1,
                 mode="fill")
    with pytest.raises(PassFailure, match="scatter_mul with respect to its updates is not supported"):
        jvp_module("scatter_mul", attrs, [np.ones(3), np.zeros((2, 1), np.int32), np.ones(2)], [2])


ADJOINTS = [(name, mode) for name in ("gather", "scatter_add", "scatter")
            for mode in ("clip", "fill", "promise_in_bounds") if (name, mode) != ("gather", "fill")]


@pytest.mark.parametrize(("name", "mode"), ADJOINTS)
@pytest.mark.parametrize("seed", range(5))
def test_adjoint(seed: int, mode: str, name: str) -> None:
    """The rules are adjoints; for promise_in_bounds the gather/scatter_add pair is JAX's
    (gather clamps, its transpose drops), an adjoint only for in-bounds indices. A "fill"
    gather is not linear (it reads NaN); the JVP never applies it to a tangent."""
    rng = np.random.default_rng(seed)
    case = random_case(rng, mode)
    if mode == "promise_in_bounds" and name != "scatter":
        _move_in_bounds(case)
    x = rng.normal(size=case.shape)
    if name == "gather":
        check_adjoint(LinearCase("gather", [x, case.indices], (True, False), case.gather), rng)
        return
    u = rng.normal(size=case.result)
    for linear in ((True, False, True), (True, False, False), (False, False, True)):
        check_adjoint(LinearCase(name, [x, case.indices, u], linear, case.scatter()), rng)


def test_rules_are_registered() -> None:
    assert {"gather", "scatter", "scatter_add"} <= set(TRANSPOSE_RULES)
