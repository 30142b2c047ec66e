"""JVP, TRANSPOSE and batch rules of sort_permutation / apply_permutation / top_k, without
the drivers: the JVPs of a sort and of top_k against jax.jvp, the adjoint by the dot-product
identity on random permutations of random shapes, and the batched ops against the ops per
example for every batched/unbatched pattern (batch sizes 0, 1, 3)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from jax import lax
from mlir import ir

from mlax.backends.interpreter import run_function
from mlax.dialect.registry import get_op
from mlax.dialect.tensor_spec import TensorSpec
from tests.passes.test_autodiff_jvp_rules import jvp_module
from tests.passes.test_autodiff_transpose_rules import Case, check_adjoint
from tests.passes.test_batching_rules import batch_module, check, patterns

F32, I32 = np.dtype(np.float32), np.dtype(np.int32)


@pytest.fixture(autouse=True)
def _mlax_context(context: ir.Context) -> None:
    """Every test builds IR in the fresh context of tests/passes/conftest.py."""


def _permutation(rng: np.random.Generator, shape: tuple[int, ...], dimension: int) -> np.ndarray:
    return np.argsort(rng.random(shape), axis=dimension).astype(I32)


@pytest.mark.parametrize(("shape", "dimension"), [((5,), 0), ((3, 4), 0), ((2, 3, 4), 2), ((1, 0), 1)])
def test_adjoint(shape: tuple[int, ...], dimension: int, rng: np.random.Generator) -> None:
    x = rng.standard_normal(shape)
    check_adjoint(Case("apply_permutation", [x, _permutation(rng, shape, dimension)], (True, False),
                       {"dimension": dimension}), rng)


def test_jvp_of_sort(rng: np.random.Generator) -> None:
    """sort = apply_permutation(x, sort_permutation(x)): the tangent follows its value (ties
    keep their order, as jax's sort_jvp)."""
    x = np.round(rng.standard_normal((3, 6)), 0).astype(F32)
    t = rng.standard_normal((3, 6)).astype(F32)
    order = np.argsort(x, 1, kind="stable").astype(I32)
    module, _ = jvp_module("apply_permutation", {"dimension": 1}, [x, order], [0])
    _, tangent = run_function(module, "f", [x, order, t])
    _, expected = jax.jvp(lambda a: lax.sort(a, dimension=1), (x,), (t,))
    np.testing.assert_array_equal(tangent, np.asarray(expected))
    module, _ = jvp_module("sort_permutation", {"dimension": 1}, [x], [0])
    _, zero = run_function(module, "f", [x, t])
    assert not zero.any()


@pytest.mark.parametrize(("shape", "k"), [((6,), 3), ((2, 3, 5), 5), ((4, 3), 0)])
def test_jvp_of_top_k(shape: tuple[int, ...], k: int, rng: np.random.Generator) -> None:
    """The tangent at each chosen index (ties: the lower index, as the values)."""
    x = np.round(rng.standard_normal(shape), 0).astype(F32)
    t = rng.standard_normal(shape).astype(F32)
    module, _ = jvp_module("top_k", {"k": k}, [x], [0])
    _, _, tangent, index_tangent = run_function(module, "f", [x, t])
    _, expected = jax.jvp(lambda a: lax.top_k(a, k)[0], (x,), (t,))
    np.testing.assert_array_equal(tangent, np.asarray(expected))
    assert not index_tangent.any()


@pytest.mark.parametrize("size", [0, 1, 3])
def test_batch_top_k(size: int, rng: np.random.Generator) -> None:
    module = batch_module("top_k", {"k": 2}, [((3, 5), F32)], [True], size)
    x = np.round(rng.standard_normal((size, 3, 5)), 0).astype(F32)
    values, indices = run_function(module, "f", [x])
    for i in range(size):
        want = run_function(module, "orig", [x[i]])
        np.testing.assert_array_equal(values[i], want[0])
        np.testing.assert_array_equal(indices[i], want[1])
    assert values.shape == indices.shape == (size, 3, 2)


@pytest.mark.parametrize("batched", patterns(2), ids=str)
@pytest.mark.parametrize("size", [0, 1, 3])
def test_batch_apply_permutation(batched: list[bool], size: int, rng: np.random.Generator) -> None:
    shape = (2, 5)
    x = rng.standard_normal((size, *shape) if batched[0] else shape).astype(F32)
    p = _permutation(rng, (size, *shape) if batched[1] else shape, -1)
    check("apply_permutation", {"dimension": 1}, [(shape, F32), (shape, I32)], batched, size, rng, [x, p])


@pytest.mark.parametrize("dtype", [F32, np.dtype(np.uint8), np.dtype(np.bool_)])
@pytest.mark.parametrize("size", [0, 3])
def test_batch_sort_permutation(dtype: np.dtype, size: int, rng: np.random.Generator) -> None:
    check("sort_permutation", {"dimension": 0}, [((4, 3), dtype)], [True], size, rng)


def test_rank0_is_rejected() -> None:
    with pytest.raises(ValueError, match="rank at least 1"):
        get_op("sort_permutation").infer(TensorSpec((), F32), dimension=0)
