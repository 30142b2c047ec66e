"""mlax-lower-to-linalg on dot_general: the lowered IR (named matmul / batch_matmul), executed,
agrees with the interpreter for any dimension numbers, every dtype and result_dtype."""

from __future__ import annotations

import numpy as np
import pytest

from mlax.dialect import dtypes
from tests.passes.test_lower_to_linalg import _floats, _i64s, _ints, check

# Float sums run in another order than NumPy's matmul: compare to a tolerance of the result type.
_RTOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5, np.dtype(np.float16): 2e-3,
         dtypes.bfloat16: 2e-2}


def _random(rng: np.random.Generator, dtype: type, shape: tuple[int, ...]) -> np.ndarray:
    """Finite random values (ints with INT_MIN/INT_MAX mixed in, so integer sums wrap)."""
    if np.dtype(dtype) == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if np.dtype(dtype).kind == "i":
        return _ints(rng, dtype, shape)
    return rng.normal(scale=2.0, size=shape).astype(dtype)


def _dot(lhs: np.ndarray, rhs: np.ndarray, lc: tuple, rc: tuple, lb: tuple = (), rb: tuple = (),
         result_dtype: type | None = None) -> None:
    dtype = np.dtype(result_dtype or lhs.dtype)
    lfree = [d for d in range(lhs.ndim) if d not in lc + lb]
    rfree = [d for d in range(rhs.ndim) if d not in rc + rb]
    shape = tuple([lhs.shape[d] for d in lb + tuple(lfree)] + [rhs.shape[d] for d in rfree])
    attrs = (f"{{lhs_contracting_dimensions = {_i64s(lc)}, rhs_contracting_dimensions = {_i64s(rc)}, "
             f"lhs_batch_dimensions = {_i64s(lb)}, rhs_batch_dimensions = {_i64s(rb)}, "
             f"result_dtype = {dtypes.mlir_name(dtype)}}}")
    check("dot_general", [lhs, rhs], attrs=attrs, result=(shape, dtype), rtol=_RTOL.get(dtype, 0.0))


# (lhs shape, rhs shape, lhs contracting, rhs contracting, lhs batch, rhs batch)
CONFIGS = [
    ((3, 4), (4, 5), (1,), (0,), (), ()),  # plain matmul: no transpose, no reshape
    ((4, 3), (5, 4), (0,), (1,), (), ()),  # both operands transposed
    ((2, 3, 4), (2, 4, 5), (2,), (1,), (0,), (0,)),  # batch_matmul as is
    ((3, 2, 4, 5), (5, 4, 2, 6), (3, 2), (0, 1), (1,), (2,)),  # batch inside, two contracting dims
    ((2, 3, 4), (3, 2, 4), (2,), (2,), (0, 1), (1, 0)),  # two batch dims, no free dims
    ((7,), (7,), (0,), (0,), (), ()),  # vector . vector: rank-0 result
    ((3, 4), (4,), (1,), (0,), (), ()),  # matrix . vector
    ((3,), (2, 3, 1), (0,), (1,), (), ()),  # vector . tensor
    ((3,), (4,), (), (), (), ()),  # outer product
    ((2, 3), (2,), (), (), (0,), (0,)),  # batch only: a scaling
    ((), (3, 2), (), (), (), ()),  # rank-0 lhs
    ((), (), (), (), (), ()),  # rank 0 . rank 0
    ((2, 3), (3, 2), (), (), (0, 1), (1, 0)),  # batch dims only: an elementwise product
    ((1, 4, 1), (4, 1), (1,), (0,), (), ()),  # size-1 dims
    ((5, 2, 3), (3, 5, 2), (0, 2), (1, 0), (), ()),  # contracting dims in operand order and reversed
]


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize(("ls", "rs", "lc", "rc", "lb", "rb"), CONFIGS)
def test_dimension_numbers(ls: tuple, rs: tuple, lc: tuple, rc: tuple, lb: tuple, rb: tuple, dtype: type,
                           rng: np.random.Generator) -> None:
    _dot(_random(rng, dtype, ls), _random(rng, dtype, rs), lc, rc, lb, rb)


@pytest.mark.parametrize(("operand", "result"), [
    (np.float64, None), (np.float16, None), (dtypes.bfloat16, None), (np.int8, None), (np.bool_, None),
    (np.int8, np.int32), (np.int32, np.int8), (np.int32, np.float32), (np.bool_, np.int32),
    (np.bool_, np.float16), (np.float16, np.float32), (np.float64, np.float32), (np.float32, np.float64),
    (np.float32, dtypes.bfloat16)])
def test_dtypes(operand: type, result: type | None, rng: np.random.Generator) -> None:
    """Batched, with a transposed rhs; bool contracts 9 elements (a count that i1 would wrap).
    Integers summed as floats stay small, so that the sums are exact in any order."""
    small = np.dtype(operand).kind == "i" and np.dtype(result or operand).kind == "f"
    lhs, rhs = ((rng.integers(-9, 10, size=shape) if small else _random(rng, operand, shape)).astype(operand)
                for shape in ((2, 3, 9), (9, 2, 4)))
    _dot(lhs, rhs, (2,), (0,), (0,), (1,), result)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_nan_inf(dtype: type, rng: np.random.Generator) -> None:
    lhs, rhs = _random(rng, dtype, (4, 6)), _random(rng, dtype, (6, 5))
    lhs[0, :] = _floats(rng, dtype, (6,))  # NaN, +-inf (inf * 0 = NaN, inf - inf = NaN), -0
    rhs[:, 1] = _floats(rng, dtype, (6,))
    lhs[2, 3] = np.inf
    _dot(lhs, rhs, (1,), (0,))


@pytest.mark.parametrize(("ls", "rs", "lc", "rc", "lb", "rb"), [
    ((0, 4), (4, 5), (1,), (0,), (), ()),  # no rows: an empty result
    ((3, 0), (0, 5), (1,), (0,), (), ()),  # contracting over nothing: zeros
    ((0, 2, 3), (0, 3, 2), (2,), (1,), (0,), (0,)),  # empty batch
    ((2, 0, 3), (2, 3, 0), (0, 2), (0, 1), (), ()),  # empty free dims on both sides
])
@pytest.mark.parametrize("dtype", [np.float32, np.bool_])
def test_empty(ls: tuple, rs: tuple, lc: tuple, rc: tuple, lb: tuple, rb: tuple, dtype: type,
               rng: np.random.Generator) -> None:
    _dot(_random(rng, dtype, ls), _random(rng, dtype, rs), lc, rc, lb, rb)


@pytest.mark.parametrize(("operand", "result"), [
    (np.uint8, None), (np.uint64, np.int64), (np.uint32, np.float32), (np.int8, np.uint32)])
def test_unsigned(operand: type, result: type | None, rng: np.random.Generator) -> None:
    """Unsigned operands widen with zero extension (uitofp to floats); products wrap."""
    info = np.iinfo(operand)
    lhs, rhs = (rng.integers(info.min, info.max, size=shape, dtype=operand, endpoint=True)
                for shape in ((3, 5), (5, 4)))
    _dot(lhs, rhs, (1,), (0,), result_dtype=result)
