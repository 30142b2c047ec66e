"""Shape ops and their mlax.lax wrappers, checked against jax.lax eagerly and under jit."""

from __future__ import annotations

import jax
import ml_dtypes
import numpy as np
import pytest

import mlax
from mlax import lax
from mlax.dialect import TensorSpec, infer
from tests.oracle import assert_same, check_against_jax, random_array

DTYPES = (np.float32, np.int32, np.bool_, ml_dtypes.bfloat16)
# Rank 0, size-0 and size-1 dimensions, and ordinary ones.
SHAPES = ((), (0,), (1,), (5,), (2, 1), (3, 0, 2), (2, 3, 4), (1, 4, 1, 3))


# Every shape with two of the dtypes, every dtype with four of the shapes: shape ops do not
# look at values, and each jax reference call compiles, so the full product buys nothing.
CASES = [(shape, DTYPES[(i + k) % len(DTYPES)]) for i, shape in enumerate(SHAPES) for k in (0, 2)]


def _case_id(case: tuple[tuple[int, ...], type]) -> str:
    shape, dtype = case
    return f"{'x'.join(map(str, shape)) or 'scalar'}-{np.dtype(dtype).name}"


cases_param = pytest.mark.parametrize("shape, dtype", CASES, ids=map(_case_id, CASES))
nonscalar_cases = [c for c in CASES if c[0]]
nonscalar_param = pytest.mark.parametrize("shape, dtype", nonscalar_cases, ids=map(_case_id, nonscalar_cases))


def _same(name: str, *args: object, **kwargs: object):
    """A function applying ``lax.<name>`` with static ``args``/``kwargs`` after the operand(s)."""
    return (lambda x: getattr(lax, name)(x, *args, **kwargs),
            lambda x: getattr(jax.lax, name)(x, *args, **kwargs))


def _check(name: str, x: np.ndarray, *args: object, **kwargs: object) -> None:
    check_against_jax(*_same(name, *args, **kwargs), x)


# --- reshape, transpose, rev, broadcast ------------------------------------------------------------


@cases_param
def test_reshape(rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    size = x.size
    targets = [(size,), (1, size, 1), shape, shape[::-1]]
    if size % 2 == 0 and size:
        targets.append((2, size // 2))
    if size == 0:
        targets.append((0, 7))
    for target in targets:
        _check("reshape", x, target)
    perm = tuple(int(p) for p in rng.permutation(x.ndim))
    _check("reshape", x, (size,), perm)


def test_reshape_same_shape_emits_nothing(rng):
    x = random_array(rng, (2, 3), np.float32)
    text = mlax.jit(lambda x: lax.transpose(lax.reshape(x, (2, 3)), (0, 1))).lower(x).as_text("mlax")
    assert "mlax.reshape" not in text and "mlax.transpose" not in text


@cases_param
def test_transpose_and_rev(rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    for _ in range(2):
        _check("transpose", x, tuple(int(p) for p in rng.permutation(x.ndim)))
        dims = tuple(int(d) for d in rng.permutation(x.ndim)[: rng.integers(0, x.ndim + 1)])
        _check("rev", x, dims)


@cases_param
def test_broadcast_and_broadcast_in_dim(rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    _check("broadcast", x, (2, 0)[: rng.integers(0, 3)])
    _check("broadcast", x, (3,))
    # Insert a new dimension of size 2 at a random place; size-1 operand dimensions grow to 3.
    at = int(rng.integers(0, x.ndim + 1))
    dims = tuple(d if d < at else d + 1 for d in range(x.ndim))
    out = list(shape)
    out.insert(at, 2)
    out = tuple(3 if i in dims and out[i] == 1 else n for i, n in enumerate(out))
    _check("broadcast_in_dim", x, out, dims)


@cases_param
def test_squeeze_expand_dims_collapse(rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    ones = [d for d, n in enumerate(shape) if n == 1]
    _check("squeeze", x, tuple(d - x.ndim if rng.random() < 0.5 else d for d in ones))
    _check("squeeze", x, ())
    _check("expand_dims", x, (0,))
    _check("expand_dims", x, (-1, 0))
    for _ in range(4):
        start, stop = (int(v) for v in rng.integers(-x.ndim, x.ndim + 1, size=2))
        _check_or_both_raise("collapse", x, start, None if rng.random() < 0.3 else stop)


def _check_or_both_raise(name: str, x: np.ndarray, *args: object) -> None:
    """Where jax rejects the arguments mlax must too; elsewhere both agree."""
    try:
        _same(name, *args)[1](x)
    except (TypeError, ValueError):
        with pytest.raises(ValueError, match=name):
            _same(name, *args)[0](x)
        return
    _check(name, x, *args)


# --- static slices -------------------------------------------------------------------------------


def _random_bounds(rng, size: int) -> tuple[int, int]:
    start = int(rng.integers(0, size + 1))
    return start, int(rng.integers(start, size + 1))


@cases_param
def test_slice(rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    for _ in range(3):
        bounds = [_random_bounds(rng, n) for n in shape]
        starts, limits = [b[0] for b in bounds], [b[1] for b in bounds]
        strides = [int(s) for s in rng.integers(1, 4, size=x.ndim)]
        _check("slice", x, starts, limits, strides)
        _check("slice", x, starts, limits)


@nonscalar_param
def test_slice_in_dim_and_index_in_dim(rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    axis = int(rng.integers(-x.ndim, x.ndim))
    size = shape[axis]
    cases = [(None, None), _random_bounds(rng, size)]
    if size:
        cases += [(None, -1), (-size, None), (-1, size)]
    for start, limit in cases:
        _check("slice_in_dim", x, start, limit, int(rng.integers(1, 3)), axis)
    if size:
        for index in (0, size - 1, -1, -size):
            _check("index_in_dim", x, index, axis)
            _check("index_in_dim", x, index, axis, keepdims=False)


# --- dynamic slices ------------------------------------------------------------------------------


def _random_starts(rng, shape: tuple[int, ...]) -> list[int]:
    """Start indices that are in range, negative, or past either end (so they clamp)."""
    return [int(rng.integers(-2 * n - 2, 2 * n + 3)) for n in shape]


@cases_param
def test_dynamic_slice(rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    for _ in range(3):
        starts = _random_starts(rng, shape)
        sizes = [int(rng.integers(0, n + 1)) for n in shape]
        _check("dynamic_slice", x, starts, sizes)
        _check("dynamic_slice", x, [abs(s) for s in starts], sizes, allow_negative_indices=False)


@cases_param
def test_dynamic_update_slice(rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    for _ in range(3):
        starts = _random_starts(rng, shape)
        update = random_array(rng, [int(rng.integers(0, n + 1)) for n in shape], dtype)
        check_against_jax(lambda x, u, s=starts: lax.dynamic_update_slice(x, u, s),
                          lambda x, u, s=starts: jax.lax.dynamic_update_slice(x, u, s), x, update)


@pytest.mark.parametrize("index_dtype", (np.int32, np.int8, np.uint8, np.int16))
def test_traced_start_indices(rng, index_dtype):
    """Start indices passed as arguments become tracers under jit; negatives wrap, others clamp.

    XLA clamps in the index dtype, so an int8/uint8 index into a dimension of 300 overflows
    there; mlax widens such indices first, so the expectation uses int32 indices.
    """
    x = random_array(rng, (4, 300, 3), np.float32)
    update = random_array(rng, (2, 5, 3), np.float32)
    info = np.iinfo(index_dtype)
    for _ in range(4):
        i, j, k = (index_dtype(rng.integers(max(info.min, -12), min(info.max, 400))) for _ in range(3))
        check_against_jax(lambda x, *ijk: lax.dynamic_slice(x, ijk, (3, 4, 2)),
                          lambda x, *ijk: jax.lax.dynamic_slice(x, [np.int32(v) for v in ijk], (3, 4, 2)),
                          x, i, j, k)
        check_against_jax(lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j, 0)),
                          lambda x, u, *ij: jax.lax.dynamic_update_slice(x, u, (*map(np.int32, ij), 0)),
                          x, update, i, j)


def test_traced_start_indices_mixed_dtypes_and_arrays(rng):
    """mlax converts start indices of mixed dtypes to one (jax requires one dtype)."""
    x = random_array(rng, (5, 6), np.int32)
    i, j = np.int8(-2), np.int32(9)
    expected = jax.lax.dynamic_slice(x, (np.int32(i), j), (2, 3))
    for fn in (lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)), mlax.jit(
            lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)))):
        np.testing.assert_array_equal(fn(x, i, j), expected)
    # A 1-D array of start indices, traced or not; Python ints passed to jit are traced too.
    starts = np.array([3, -1], np.int32)
    check_against_jax(lambda x, s: lax.dynamic_slice(x, s, (2, 2)),
                      lambda x, s: jax.lax.dynamic_slice(x, s, (2, 2)), x, starts)
    check_against_jax(lambda x, i: lax.dynamic_index_in_dim(x, i, 1, keepdims=False),
                      lambda x, i: jax.lax.dynamic_index_in_dim(x, i, 1, keepdims=False), x, -3)


def test_allow_negative_indices_false(rng):
    """Without negative wrapping a traced negative index clamps to 0; a static one is an error (as jax)."""
    x = random_array(rng, (5, 6), np.float32)

    def fn(lax_module):
        return lambda x, i: lax_module.dynamic_slice(x, (i, 1), (2, 3), allow_negative_indices=False)

    assert_same(mlax.jit(fn(lax))(x, np.int32(-3)), jax.jit(fn(jax.lax))(x, np.int32(-3)))
    with pytest.raises(ValueError, match="index -3 is out of bounds .* allow_negative_indices=False"):
        fn(lax)(x, np.int32(-3))


@nonscalar_param
def test_dynamic_in_dim_variants(rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    axis = int(rng.integers(-x.ndim, x.ndim))
    size = shape[axis]
    index = int(rng.integers(-size - 2, size + 3))
    _check("dynamic_slice_in_dim", x, index, int(rng.integers(0, size + 1)), axis)
    if size:
        _check("dynamic_index_in_dim", x, index, axis)
        _check("dynamic_index_in_dim", x, index, axis, keepdims=False)
    sizes = list(shape)
    sizes[axis] = int(rng.integers(0, size + 1))
    update = random_array(rng, sizes, dtype)
    check_against_jax(lambda x, u: lax.dynamic_update_slice_in_dim(x, u, index, axis),
                      lambda x, u: jax.lax.dynamic_update_slice_in_dim(x, u, index, axis), x, update)
    if size:
        sizes[axis] = 1
        dropped = sizes[: axis % x.ndim] + sizes[axis % x.ndim + 1:]
        for u in (random_array(rng, sizes, dtype), random_array(rng, dropped, dtype)):
            check_against_jax(lambda x, u: lax.dynamic_update_index_in_dim(x, u, index, axis),
                              lambda x, u: jax.lax.dynamic_update_index_in_dim(x, u, index, axis), x, u)


# --- concatenate, pad --------------------------------------------------------------------------------


@nonscalar_param
def test_concatenate(rng, shape, dtype):
    dim = int(rng.integers(0, len(shape)))
    for count in (1, 2, 3):
        parts = []
        for _ in range(count):
            part = list(shape)
            part[dim] = int(rng.integers(0, 4))
            parts.append(random_array(rng, part, dtype))
        check_against_jax(lambda *xs: lax.concatenate(xs, dim),
                          lambda *xs: jax.lax.concatenate(xs, dim), *parts)


def test_concatenate_is_a_binary_chain(rng):
    xs = [random_array(rng, (2, n), np.float32) for n in (1, 2, 3, 4)]
    text = mlax.jit(lambda *xs: lax.concatenate(xs, 1)).lower(*xs).as_text("mlax")
    assert text.count('"mlax.concatenate"') == 3


@cases_param
def test_pad(rng, shape, dtype):
    x = random_array(rng, shape, dtype)
    value = random_array(rng, (), dtype)
    for _ in range(3):
        config = []
        for n in shape:
            interior = int(rng.integers(0, 3))
            grown = n + max(n - 1, 0) * interior
            low = int(rng.integers(-grown, 4))
            config.append((low, int(rng.integers(-(grown + low) if grown + low > 0 else 0, 4)), interior))
        check_against_jax(lambda x, v, c=config: lax.pad(x, v, c),
                          lambda x, v, c=config: jax.lax.pad(x, v, c), x, value)


def test_pad_scalar_padding_value_takes_operand_dtype(rng):
    """A Python scalar padding value takes the operand's dtype (jax.lax.pad would reject 1.5 here)."""
    x = random_array(rng, (3, 2), ml_dtypes.bfloat16)
    value = np.asarray(1.5, ml_dtypes.bfloat16)
    check_against_jax(lambda x: lax.pad(x, 1.5, [(1, -1, 1), (0, 2, 0)]),
                      lambda x: jax.lax.pad(x, value, [(1, -1, 1), (0, 2, 0)]), x)
    check_against_jax(lambda x: lax.pad(x, 0.0, [(0, 0, 0)] * 2), lambda x: x, x)


def test_weak_types_follow_the_operand():
    check_against_jax(lambda x: lax.reshape(lax.broadcast(x, (2,)), (1, 2)),
                      lambda x: jax.lax.reshape(jax.lax.broadcast(x, (2,)), (1, 2)), 2.5)


# --- errors --------------------------------------------------------------------------------------

X = np.arange(6, dtype=np.float32).reshape(2, 3)

ERRORS = [
    (lambda: lax.reshape(X, (4, 2)), ValueError, r"mlax\.reshape: cannot reshape \(2, 3\)"),
    (lambda: lax.reshape(X, (-1,)), ValueError, r"mlax\.reshape: shape \(-1,\) must be nonnegative"),
    (lambda: lax.reshape(X, (6,), (0, 0)), ValueError, r"mlax\.transpose: permutation \(0, 0\) is not"),
    (lambda: lax.transpose(X, (0,)), ValueError, r"mlax\.transpose: permutation \(0,\) is not a perm"),
    (lambda: lax.transpose(X, (-1, 0)), ValueError, "is not a permutation"),
    (lambda: lax.transpose(X, (0, 1.5)), TypeError, "transpose: permutation must be a sequence of ints"),
    (lambda: lax.slice(X, (0, 0), (3, 3)), ValueError, r"mlax\.slice: slice \[0:3\] of dimension 0"),
    (lambda: lax.slice(X, (2, 0), (1, 3)), ValueError, "out of bounds"),
    (lambda: lax.slice(X, (-1, 0), (1, 3)), ValueError, "out of bounds"),
    (lambda: lax.slice(X, (0,), (2,)), ValueError, r"start_indices \(0,\) must have one entry per"),
    (lambda: lax.slice(X, (0, 0), (2, 3), (0, 1)), ValueError, "strides .* must be positive"),
    (lambda: lax.slice_in_dim(X, -9, None, axis=1), ValueError, "out of bounds"),
    (lambda: lax.slice_in_dim(X, 0, 1, axis=2), ValueError, "slice_in_dim: axis 2 is out of bounds"),
    (lambda: lax.index_in_dim(X, 3, axis=1), IndexError, "index_in_dim: index 3 is out of bounds"),
    (lambda: lax.index_in_dim(X, -3, axis=0), IndexError, "index -3 is out of bounds for axis 0"),
    (lambda: lax.dynamic_slice(X, (0, 0), (3, 1)), ValueError, r"slice_sizes \(3, 1\) must be nonneg"),
    (lambda: lax.dynamic_slice(X, (0, 0), (-1, 1)), ValueError, "must be nonnegative"),
    (lambda: lax.dynamic_slice(X, (0,), (1, 1)), ValueError, "dynamic_slice: expected 2 start indices"),
    (lambda: lax.dynamic_slice(X, (0.5, 0), (1, 1)), TypeError, "start indices must be integer scalars"),
    (lambda: lax.dynamic_slice(X, (True, 0), (1, 1)), TypeError, "start indices must be integer scalars"),
    (lambda: lax.dynamic_slice(X, np.zeros((1, 2), np.int32), (1, 1)), TypeError, "must be 1-D"),
    (lambda: lax.dynamic_update_slice(X, np.zeros((3, 1), np.float32), (0, 0)), TypeError,
     r"update shape \(3, 1\) must have the operand's rank and fit"),
    (lambda: lax.dynamic_update_slice(X, np.zeros(1, np.float32), (0, 0)), TypeError, "operand's rank"),
    (lambda: lax.dynamic_update_slice(X, np.zeros((1, 1), np.int32), (0, 0)), TypeError,
     "operand and update must have the same dtype, got float32 and int32"),
    (lambda: lax.concatenate([X, X.astype(np.int32)], 0), TypeError, "operands must have the same dtype"),
    (lambda: lax.concatenate([X, np.zeros((2, 4), np.float32)], 0), ValueError, "differ outside dimension 0"),
    (lambda: lax.concatenate([X, X], 2), ValueError, "dimension 2 out of range"),
    (lambda: lax.concatenate([X, X], -1), ValueError, "dimension -1 out of range"),
    (lambda: lax.concatenate([X, X[0]], 0), ValueError, "operands of different rank"),
    (lambda: lax.concatenate([], 0), ValueError, "concatenate: needs at least one operand"),
    (lambda: lax.pad(X, np.int32(0), [(0, 0, 0)] * 2), TypeError, "padding_value must be a rank-0 tensor"),
    (lambda: lax.pad(X, np.zeros(2, np.float32), [(0, 0, 0)] * 2), TypeError, "rank-0"),
    (lambda: lax.pad(X, 0.0, [(0, 0, 0)]), ValueError, "edge_padding_low .* one entry per operand dim"),
    (lambda: lax.pad(X, 0.0, [(0, 0)] * 2), ValueError, r"pad: padding_config entries must be \(low"),
    (lambda: lax.pad(X, 0.0, [(0, 0, -1), (0, 0, 0)]), ValueError, "interior_padding .* nonnegative"),
    (lambda: lax.pad(X, 0.0, [(-2, -1, 0), (0, 0, 0)]), ValueError, r"negative result shape \(-1, 3\)"),
    (lambda: lax.rev(X, (2,)), ValueError, r"mlax\.rev: dimensions \(2,\) out of range for rank 2"),
    (lambda: lax.rev(X, (0, 0)), ValueError, "repeat a dimension"),
    (lambda: lax.broadcasted_iota(np.float32, (2, 3), 2), ValueError, r"mlax\.iota: dimension 2 out of"),
    (lambda: lax.squeeze(X, (0,)), ValueError, "squeeze: cannot squeeze dimensions"),
    (lambda: lax.squeeze(X, (3,)), ValueError, "squeeze: axis 3 is out of bounds"),
    (lambda: lax.expand_dims(X, (0, 0)), ValueError, "expand_dims: repeated axis"),
    (lambda: lax.expand_dims(X, (4,)), ValueError, "expand_dims: axis 4 is out of bounds"),
    (lambda: lax.collapse(X, 1, 0), ValueError, "collapse: invalid dimension range"),
    (lambda: lax.broadcast(X, (-1,)), ValueError, "negative dimension"),
    (lambda: lax.broadcast_in_dim(X, (2, 3), (1, 0)), ValueError, "strictly increasing"),
]


@pytest.mark.parametrize("fn, error, match", ERRORS, ids=[m for _, _, m in ERRORS])
def test_errors(fn, error, match):
    with pytest.raises(error, match=match):
        fn()


def test_errors_under_jit_name_the_op():
    with pytest.raises(ValueError, match=r"mlax\.slice: slice \[1:9\]"):
        mlax.jit(lambda x: lax.slice(x, (1, 0), (9, 3)))(X)
    with pytest.raises(TypeError, match="start indices must be integer scalars"):
        mlax.jit(lambda x, i: lax.dynamic_slice(x, (i, 0), (1, 1)))(X, np.float32(1))
    with pytest.raises(TypeError, match="slice_sizes must be static ints, got a traced value"):
        mlax.jit(lambda x, n: lax.dynamic_slice(x, (0, 0), n))(X, np.array([1, 1]))


# --- the dialect level ---------------------------------------------------------------------------


def test_dialect_start_indices_checks():
    f32, i32, i8 = (TensorSpec((2, 3), np.float32), TensorSpec((), np.int32), TensorSpec((), np.int8))
    out = infer("dynamic_slice", [f32, i32, i32], {"slice_sizes": (1, 2)})
    assert out == (TensorSpec((1, 2), np.float32),)
    assert infer("dynamic_slice", [TensorSpec((), np.float32)], {"slice_sizes": ()})[0].shape == ()
    with pytest.raises(TypeError, match="start indices must share one integer dtype, got int32, int8"):
        infer("dynamic_slice", [f32, i32, i8], {"slice_sizes": (1, 2)})
    with pytest.raises(TypeError, match="expected 2, got 1"):
        infer("dynamic_update_slice", [f32, f32, i32], {})
    with pytest.raises(TypeError, match="start index 1 must be a rank-0 integer tensor"):
        infer("dynamic_slice", [f32, i32, TensorSpec((1,), np.int32)], {"slice_sizes": (1, 2)})


def test_dialect_reference_clamps_and_crops():
    from mlax.dialect import get_op

    x = np.arange(10, dtype=np.int32)
    ds = get_op("dynamic_slice").reference
    np.testing.assert_array_equal(ds(x, np.int32(-5), slice_sizes=(3,)), [0, 1, 2])
    np.testing.assert_array_equal(ds(x, np.int32(99), slice_sizes=(3,)), [7, 8, 9])
    dus = get_op("dynamic_update_slice").reference
    np.testing.assert_array_equal(dus(x, np.array([-1, -2], np.int32), np.uint8(200)),
                                  [0, 1, 2, 3, 4, 5, 6, 7, -1, -2])
    pad = get_op("pad").reference
    out = pad(x[:4], np.int32(-7), edge_padding_low=(-2,), edge_padding_high=(-1,), interior_padding=(1,))
    np.testing.assert_array_equal(out, [1, -7, 2, -7])
