"""mlax-lower-to-stablehlo on gather and scatter: random dimension numbers (batching included),
index types and modes, run by XLA and compared bit for bit with the interpreter, and with jax.

`check_op` (one mlax op against the interpreter) is shared by the other StableHLO op tests.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import numpy as np
import pytest
from jax import lax

from mlax.dialect import dtypes
from mlax.dialect.registry import OPS
from tests.passes.indexing_cases import SCATTERS, Case, attr_text, jax_indices, random_case
from tests.passes.stablehlo_harness import (
    Shape,
    assert_bits_equal,
    check_against_interpreter,
    op_module,
    run_on_xla,
)
from tests.passes.test_indexing_lowering import DTYPES, INDEX_TYPES, MODES, _values
from tests.passes.test_lower_to_linalg import _floats

pytestmark = pytest.mark.usefixtures("x64")  # 64-bit operands and indices reach XLA unchanged


def check_op(op: str, args: Sequence[np.ndarray], results: Sequence[tuple[Shape, np.dtype]] | None = None,
             attrs: str = "", rtol: float = 0.0) -> None:
    """XLA and the interpreter agree on one op (results default to one like ``args[0]``)."""
    results = results or [(args[0].shape, args[0].dtype)]
    check_against_interpreter(op_module(op, args, results, attrs), "f", list(args), rtol)


@pytest.mark.parametrize("seed", range(24))
def test_gather(seed: int) -> None:
    rng = np.random.default_rng(seed)
    case = random_case(rng, MODES[seed % 3], index_dtype=INDEX_TYPES[seed % len(INDEX_TYPES)])
    dtype = DTYPES[seed % len(DTYPES)]
    check_op("gather", [_values(rng, dtype, case.shape), case.indices], [(case.result, dtype)],
             attr_text(case.gather))


def _unique_starts(case: Case) -> bool:
    """Whether no two update windows of the case's scatter overlap in the operand (after
    clamping): a plain scatter's winner is unspecified in XLA otherwise."""
    zeros, ones = np.zeros(case.shape, np.int32), np.ones(case.result, np.int32)
    counts = OPS["scatter_add"].reference(zeros, case.indices, ones, **case.scatter())
    return counts.size == 0 or counts.max() <= 1


@pytest.mark.parametrize("seed", range(30))
def test_scatter(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    name = SCATTERS[seed % len(SCATTERS)]
    for _ in range(100):  # plain scatter: a case without overlapping windows
        case = random_case(rng, MODES[seed % 3], index_dtype=INDEX_TYPES[seed % len(INDEX_TYPES)])
        if name != "scatter" or _unique_starts(case):
            break
    else:
        raise AssertionError("no random scatter without overlapping windows")
    dtype = DTYPES[seed % len(DTYPES)]
    x, updates = _values(rng, dtype, case.shape), _values(rng, dtype, case.result)
    check_op(name, [x, case.indices, updates], attrs=attr_text(case.scatter()))


@pytest.mark.parametrize("index_dtype", [np.uint32, np.uint64, np.int64, np.uint8, np.int16],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mode", MODES)
def test_index_types_past_the_signed_range(index_dtype: type, mode: str, rng: np.random.Generator) -> None:
    """Unsigned indices above the signed maximum (and the extremes of signed ones) are far out of
    range, never negative: clamped high, filled or dropped as the interpreter does."""
    info = np.iinfo(index_dtype)
    indices = np.array([[0], [info.max], [info.max // 2 + 1], [3], [info.min], [1]], index_dtype)
    x = _floats(rng, np.float32, (5, 3))
    gather = {"offset_dims": (1,), "collapsed_slice_dims": (0,), "operand_batching_dims": (),
              "start_indices_batching_dims": (), "start_index_map": (0,), "index_vector_dim": 1,
              "slice_sizes": (1, 3), "mode": mode}
    check_op("gather", [x, indices], [((6, 3), np.float32)], attr_text(gather))
    case = Case(x.shape, indices, gather, (6, 3))
    for name in ("scatter_add", "scatter_max"):
        check_op(name, [x, indices, _floats(rng, np.float32, (6, 3))], attrs=attr_text(case.scatter()))


@pytest.mark.parametrize("name", SCATTERS[1:])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, dtypes.bfloat16, np.int8, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_duplicates_combine_in_order(name: str, dtype: type) -> None:
    """Every update lands on one of two rows: the order of combination shows in the rounding
    (f16, bf16), and min/max see NaN, signed zeros and infinities at one position."""
    rng = np.random.default_rng(7)
    x = _values(rng, dtype, (2, 3))
    indices = rng.integers(-1, 3, size=(12, 1)).astype(np.int32)
    updates = _values(rng, dtype, (12, 3))
    if np.dtype(dtype).kind == "f":
        updates = (updates * 1000).astype(dtype)
    attrs = dict(update_window_dims=(1,), inserted_window_dims=(0,), input_batching_dims=(),
                 scatter_indices_batching_dims=(), scatter_dims_to_operand_dims=(0,), index_vector_dim=1,
                 mode="fill")
    check_op(name, [x, indices, updates], attrs=attr_text(attrs))


def test_plain_scatter_duplicates_last_wins_on_cpu(rng: np.random.Generator) -> None:
    """XLA does not specify which duplicate a plain scatter keeps; its CPU backend keeps the last
    in row-major order, as the interpreter (this pins today's behaviour, not a guarantee)."""
    x = _floats(rng, np.float32, (3, 2))
    indices = np.array([[1], [0], [1], [2], [1]], np.int32)
    attrs = dict(update_window_dims=(1,), inserted_window_dims=(0,), input_batching_dims=(),
                 scatter_indices_batching_dims=(), scatter_dims_to_operand_dims=(0,), index_vector_dim=1,
                 mode="clip")
    check_op("scatter", [x, indices, _floats(rng, np.float32, (5, 2))], attrs=attr_text(attrs))


_JAX_MODES = {"clip": lax.GatherScatterMode.CLIP, "fill": lax.GatherScatterMode.FILL_OR_DROP,
              "promise_in_bounds": lax.GatherScatterMode.PROMISE_IN_BOUNDS}


def _jax_numbers(case: Case) -> tuple[np.ndarray, lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers]:
    indices, batching = jax_indices(case)
    g = case.gather
    gather = lax.GatherDimensionNumbers(g["offset_dims"], g["collapsed_slice_dims"], g["start_index_map"],
                                        g["operand_batching_dims"], batching)
    scatter = lax.ScatterDimensionNumbers(g["offset_dims"], g["collapsed_slice_dims"], g["start_index_map"],
                                          g["operand_batching_dims"], batching)
    return indices, gather, scatter


@pytest.mark.parametrize("seed", range(12))
def test_against_jax(seed: int) -> None:
    """The same gather and scatter_add written with jax.lax give the same bits on XLA (signed
    indices only: jax converts unsigned ones its own way)."""
    rng = np.random.default_rng(300 + seed)
    mode = MODES[seed % 3]
    case = random_case(rng, mode, index_dtype=[np.int32, np.int64, np.int8][seed % 3])
    x = _floats(rng, np.float32, case.shape)
    updates = _floats(rng, np.float32, case.result)
    indices, gather, scatter = _jax_numbers(case)
    text = op_module("gather", [x, case.indices], [(case.result, np.float32)], attr_text(case.gather))
    got = run_on_xla(text, "f", [x, case.indices])[0]
    want = lax.gather(x, indices, gather, case.gather["slice_sizes"], mode=_JAX_MODES[mode],
                      fill_value=np.nan if mode == "fill" else None)
    assert_bits_equal(got, np.asarray(want))
    if not case.shape:  # jax's rank-0 scatter fails in XLA's scatter simplifier (mlax reshapes it)
        return
    got = run_on_xla(op_module("scatter_add", [x, case.indices, updates], [(x.shape, np.float32)],
                               attr_text(case.scatter())), "f", [x, case.indices, updates])[0]
    scatter_add = jax.jit(lambda x, i, u: lax.scatter_add(x, i, u, scatter, mode=_JAX_MODES[mode]))
    want = scatter_add(x, indices, updates)
    assert_bits_equal(got, np.asarray(want))


def test_numpy_indexing_program(rng: np.random.Generator) -> None:
    """Front-end indexing on XLA (``x[i]``, ``.at[...]`` updates, take, dynamic batch indexing)
    bit for bit as the interpreter backend and as jax."""
    from tests.passes.test_lower_to_stablehlo_control_flow import check_program

    x, y = _floats(rng, np.float32, (5, 6)), _floats(rng, np.float32, (5, 4))
    i, j = np.array([3, -2, 0, 7], np.int32), np.array([[1, 0], [4, 2], [0, 0], [3, 9]], np.int32)

    def make(lax, np_):
        def f(x, y, i, j):
            return (x[i], x[j[:, 0], j[:, 1]], x.at[i].set(-x[:4]), x.at[j[:, 0]].add(x[:4]),
                    x.at[:, i % 6].max(y), x.at[j[:, 0], 1:3].mul(2.0), np_.take(x, i, axis=1, mode="clip"),
                    np_.take_along_axis(x[:, :2], np_.abs(j) % 5, axis=0))
        return f

    check_program(make, (x, y, i, j), rtol=0.0)
