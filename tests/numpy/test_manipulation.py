"""mlax.numpy array manipulation against jax.numpy: values, shapes, dtypes, eager and jitted."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import check_against_jax, random_array

# name -> (function of the numpy module (mnp or jnp), argument shapes)
CASES = {
    "reshape": (lambda m: lambda x: m.reshape(x, (3, -1)), [(2, 3, 2)]),
    "reshape_split": (lambda m: lambda x: m.reshape(x, (1, 2, 1, 3)), [(6,)]),
    "reshape_scalar": (lambda m: lambda x: m.reshape(x, (1, 1)), [()]),
    "reshape_to_scalar": (lambda m: lambda x: m.reshape(x, ()), [(1, 1)]),
    "reshape_empty": (lambda m: lambda x: m.reshape(x, (3, 0)), [(0, 3)]),
    "reshape_F": (lambda m: lambda x: m.reshape(x, (3, 2, 2), order="F"), [(2, 6)]),
    "method_reshape": (lambda m: lambda x: x.reshape(4, 3), [(2, 6)]),
    "ravel": (lambda m: lambda x: m.ravel(x), [(2, 3, 4)]),
    "ravel_F": (lambda m: lambda x: m.ravel(x, order="F"), [(2, 3, 4)]),
    "ravel_scalar": (lambda m: lambda x: m.ravel(x), [()]),
    "transpose": (lambda m: lambda x: m.transpose(x), [(2, 3, 4)]),
    "transpose_axes": (lambda m: lambda x: m.transpose(x, (1, -1, 0)), [(2, 3, 4)]),
    "transpose_scalar": (lambda m: lambda x: m.transpose(x), [()]),
    "T": (lambda m: lambda x: x.T, [(2, 3)]),
    "permute_dims": (lambda m: lambda x: m.permute_dims(x, (2, 0, 1)), [(2, 3, 4)]),
    "swapaxes": (lambda m: lambda x: m.swapaxes(x, 0, -1), [(2, 3, 4)]),
    "moveaxis": (lambda m: lambda x: m.moveaxis(x, (0, 1), (-1, 0)), [(2, 3, 4, 5)]),
    "moveaxis_int": (lambda m: lambda x: m.moveaxis(x, 0, 2), [(2, 3, 4)]),
    "expand_dims_tuple": (lambda m: lambda x: m.expand_dims(x, (0, -1)), [(2, 3)]),
    "expand_dims_mid": (lambda m: lambda x: m.expand_dims(x, 1), [(2, 3)]),
    "expand_dims_scalar": (lambda m: lambda x: m.expand_dims(x, 0), [()]),
    "squeeze_all": (lambda m: lambda x: m.squeeze(x), [(1, 3, 1)]),
    "squeeze_axis": (lambda m: lambda x: m.squeeze(x, -1), [(1, 3, 1)]),
    "squeeze_empty": (lambda m: lambda x: m.squeeze(x, 1), [(0, 1)]),
    "broadcast_to": (lambda m: lambda x: m.broadcast_to(x, (2, 3, 4)), [(3, 1)]),
    "broadcast_to_scalar": (lambda m: lambda x: m.broadcast_to(x, (2,)), [()]),
    "broadcast_to_empty": (lambda m: lambda x: m.broadcast_to(x, (2, 0)), [(0,)]),
    "broadcast_arrays": (lambda m: lambda x, y: m.broadcast_arrays(x, y), [(3, 1), (4,)]),
    "concatenate": (lambda m: lambda x, y: m.concatenate([x, y]), [(2, 3), (4, 3)]),
    "concatenate_neg_axis": (lambda m: lambda x, y, z: m.concatenate((x, y, z), axis=-1),
                             [(2, 3), (2, 0), (2, 1)]),
    "concatenate_none": (lambda m: lambda x, y: m.concatenate([x, y], axis=None), [(2, 3), (4,)]),
    "concat": (lambda m: lambda x, y: m.concat([x, y], axis=1), [(2, 3), (2, 2)]),
    "stack": (lambda m: lambda x, y, z: m.stack([x, y, z], axis=1), [(2, 3)] * 3),
    "stack_neg": (lambda m: lambda x, y: m.stack((x, y), axis=-1), [(2, 3)] * 2),
    "stack_scalars": (lambda m: lambda x, y: m.stack([x, y]), [(), ()]),
    "unstack": (lambda m: lambda x: m.unstack(x, axis=1), [(2, 3)]),
    "hstack_1d": (lambda m: lambda x, y: m.hstack([x, y]), [(3,), (2,)]),
    "hstack_2d": (lambda m: lambda x, y: m.hstack([x, y]), [(2, 3), (2, 1)]),
    "vstack": (lambda m: lambda x, y: m.vstack([x, y]), [(3,), (3,)]),
    "vstack_2d": (lambda m: lambda x, y: m.vstack([x, y]), [(2, 3), (1, 3)]),
    "dstack": (lambda m: lambda x, y: m.dstack([x, y]), [(3,), (3,)]),
    "column_stack": (lambda m: lambda x, y: m.column_stack([x, y]), [(3,), (3, 2)]),
    "split_sections": (lambda m: lambda x: m.split(x, 3), [(6, 4)]),
    "split_indices": (lambda m: lambda x: m.split(x, [1, 3], axis=1), [(2, 4)]),
    "array_split": (lambda m: lambda x: m.array_split(x, 3), [(7,)]),
    "array_split_more": (lambda m: lambda x: m.array_split(x, 4, axis=-1), [(2, 3)]),
    "hsplit": (lambda m: lambda x: m.hsplit(x, 2), [(3, 4)]),
    "vsplit": (lambda m: lambda x: m.vsplit(x, [1]), [(3, 4)]),
    "dsplit": (lambda m: lambda x: m.dsplit(x, 2), [(1, 2, 4)]),
    "tile": (lambda m: lambda x: m.tile(x, (2, 1, 2)), [(2, 3)]),
    "tile_scalar": (lambda m: lambda x: m.tile(x, 3), [()]),
    "tile_zero": (lambda m: lambda x: m.tile(x, (2, 0)), [(3,)]),
    "repeat_flat": (lambda m: lambda x: m.repeat(x, 2), [(2, 3)]),
    "repeat_axis": (lambda m: lambda x: m.repeat(x, np.array([1, 0, 2]), axis=1), [(2, 3)]),
    "repeat_runs": (lambda m: lambda x: m.repeat(x, np.array([2, 2, 1, 1, 3]), axis=0), [(5,)]),
    "repeat_zero": (lambda m: lambda x: m.repeat(x, 0, axis=-1), [(2, 3)]),
    "repeat_total_pad": (lambda m: lambda x: m.repeat(x, np.array([1, 2, 0]), total_repeat_length=6), [(3,)]),
    "repeat_total_cut": (lambda m: lambda x: m.repeat(x, 2, total_repeat_length=3), [(3,)]),
    "flip_all": (lambda m: lambda x: m.flip(x), [(2, 3, 4)]),
    "flip_axis": (lambda m: lambda x: m.flip(x, -1), [(2, 3)]),
    "flip_tuple": (lambda m: lambda x: m.flip(x, (0, 2)), [(2, 3, 4)]),
    "flip_scalar": (lambda m: lambda x: m.flip(x), [()]),
    "fliplr": (lambda m: lambda x: m.fliplr(x), [(2, 3)]),
    "flipud": (lambda m: lambda x: m.flipud(x), [(2, 3)]),
    "rot90": (lambda m: lambda x: m.rot90(x), [(2, 3)]),
    "rot90_k2": (lambda m: lambda x: m.rot90(x, 2), [(2, 3)]),
    "rot90_k3_axes": (lambda m: lambda x: m.rot90(x, 3, axes=(1, 2)), [(2, 3, 4)]),
    "rot90_neg": (lambda m: lambda x: m.rot90(x, -1, axes=(-1, 0)), [(2, 3, 4)]),
    "pad_constant": (lambda m: lambda x: m.pad(x, 2), [(2, 3)]),
    "pad_constant_value": (lambda m: lambda x: m.pad(x, ((1, 2), (0, 3)), constant_values=7), [(2, 3)]),
    "pad_constant_pairs": (lambda m: lambda x: m.pad(x, ((1, 2), (3, 1)), constant_values=((1, 2), (3, 4))),
                           [(2, 3)]),
    "pad_constant_pair": (lambda m: lambda x: m.pad(x, (1, 2)), [(2, 3)]),
    "pad_edge": (lambda m: lambda x: m.pad(x, ((1, 3), (2, 0)), mode="edge"), [(2, 3)]),
    "pad_wrap": (lambda m: lambda x: m.pad(x, ((4, 2), (1, 5)), mode="wrap"), [(2, 3)]),
    "pad_reflect": (lambda m: lambda x: m.pad(x, ((5, 2), (1, 7)), mode="reflect"), [(3, 3)]),
    "pad_reflect_one": (lambda m: lambda x: m.pad(x, 3, mode="reflect"), [(1,)]),
    "pad_symmetric": (lambda m: lambda x: m.pad(x, ((5, 2), (1, 7)), mode="symmetric"), [(3, 2)]),
    "pad_scalar": (lambda m: lambda x: m.pad(x, 2), [()]),
    "pad_empty": (lambda m: lambda x: m.pad(x, ((1, 1), (0, 2))), [(0, 3)]),
    "roll_flat": (lambda m: lambda x: m.roll(x, 2), [(2, 3)]),
    "roll_axes": (lambda m: lambda x: m.roll(x, (1, -3), (0, 1)), [(2, 3)]),
    "roll_big": (lambda m: lambda x: m.roll(x, 7, axis=-1), [(2, 3)]),
    "roll_one_axis_two_shifts": (lambda m: lambda x: m.roll(x, (1, 2), axis=1), [(2, 5)]),
    "roll_empty": (lambda m: lambda x: m.roll(x, 1, axis=0), [(0, 3)]),
    "atleast_1d": (lambda m: lambda x: m.atleast_1d(x), [()]),
    "atleast_2d": (lambda m: lambda x, y: m.atleast_2d(x, y), [(), (3,)]),
    "atleast_3d": (lambda m: lambda x, y, z: m.atleast_3d(x, y, z), [(3,), (2, 3), (1, 2, 3, 4)]),
    "append_flat": (lambda m: lambda x, y: m.append(x, y), [(2, 3), (2,)]),
    "append_axis": (lambda m: lambda x, y: m.append(x, y, axis=1), [(2, 3), (2, 1)]),
    "insert_scalar": (lambda m: lambda x: m.insert(x, 1, 5), [(2, 3)]),
    "insert_axis": (lambda m: lambda x, v: m.insert(x, -1, v, axis=1), [(2, 3), (2,)]),
    "insert_rows": (lambda m: lambda x, v: m.insert(x, 3, v, axis=0), [(3, 2), (2, 2)]),
    "insert_sequence": (lambda m: lambda x, v: m.insert(x, np.array([3, 0, 3, -1]), v, axis=0),
                        [(3, 2), (4, 1)]),
    "insert_slice": (lambda m: lambda x: m.insert(x, slice(0, 3, 2), 7, axis=1), [(2, 3)]),
    "concatenate_array": (lambda m: lambda x: m.concatenate(x), [(3, 2, 4)]),
    "diagonal": (lambda m: lambda x: m.diagonal(x), [(3, 4)]),
    "diagonal_offset": (lambda m: lambda x: m.diagonal(x, 1), [(3, 4)]),
    "diagonal_neg_offset": (lambda m: lambda x: m.diagonal(x, -2), [(4, 3)]),
    "diagonal_axes": (lambda m: lambda x: m.diagonal(x, -1, 2, 1), [(2, 3, 4)]),
    "diagonal_empty": (lambda m: lambda x: m.diagonal(x, 5), [(3, 4)]),
}
# Every case in float32 and in one of the other dtypes, in turn (keeps the run short).
OTHER_DTYPES = [np.int8, np.bool_, ml_dtypes.bfloat16, np.uint32]
PARAMS = [pytest.param(name, dtype, id=f"{name}-{np.dtype(dtype).name}")
          for i, name in enumerate(CASES) for dtype in (np.float32, OTHER_DTYPES[i % len(OTHER_DTYPES)])]


@pytest.mark.parametrize("name, dtype", PARAMS)
def test_against_jax(name: str, dtype: type, rng: np.random.Generator) -> None:
    make, shapes = CASES[name]
    args = [random_array(rng, s, dtype) for s in shapes]
    check_against_jax(make(mnp), jax.jit(make(jnp)), *args)  # one XLA compile, not one per op


def test_broadcast_shapes() -> None:
    assert mnp.broadcast_shapes((3, 1), (4,), ()) == jnp.broadcast_shapes((3, 1), (4,), ()) == (3, 4)
    assert mnp.broadcast_shapes((0, 1), (1, 5)) == (0, 5)


@pytest.mark.parametrize("fname", ["concatenate", "stack", "hstack", "vstack", "append"])
def test_mixed_dtypes_promote(fname: str, rng: np.random.Generator) -> None:
    x, y = random_array(rng, (2, 3), np.int8), random_array(rng, (2, 3), np.float16)

    def call(m: object) -> object:
        fn = getattr(m, fname)
        return (lambda a, b: fn(a, b)) if fname == "append" else (lambda a, b: fn([a, b]))

    check_against_jax(call(mnp), jax.jit(call(jnp)), x, y)


def test_python_scalars_stay_weak() -> None:
    check_against_jax(lambda x: mnp.stack([x, 2.0]), lambda x: jnp.stack([x, 2.0]), np.float32(1.5))
    assert mnp.concatenate([mnp.asarray([1.0]), mnp.asarray([2.0])]).weak_type is False


def test_concatenate_dtype_argument(rng: np.random.Generator) -> None:
    x = random_array(rng, (3,), np.float32)
    check_against_jax(lambda a: mnp.concatenate([a, a], dtype=np.int32),
                      lambda a: jnp.concatenate([a, a], dtype=np.int32), x)


def test_split_points_beyond_the_axis_follow_numpy(rng: np.random.Generator) -> None:
    """jax.numpy rejects these; NumPy (and mlax) clamp them and return empty pieces."""
    x = random_array(rng, (5,), np.float32)
    for actual, expected in zip(mnp.split(x, [2, 10, 7]), np.split(x, [2, 10, 7]), strict=True):
        np.testing.assert_array_equal(np.asarray(actual), expected)


def test_roll_traced_shift(rng: np.random.Generator) -> None:
    x = random_array(rng, (3, 5), np.float32)
    f = mlax.jit(lambda a, s: mnp.roll(a, s, axis=1))
    g = jax.jit(lambda a, s: jnp.roll(a, s, axis=1))
    for s in (-7, -1, 0, 2, 5, 11):
        np.testing.assert_array_equal(np.asarray(f(x, s)), np.asarray(g(x, s)))
    f2 = mlax.jit(lambda a, s: mnp.roll(a, (s, 2), axis=(0, 1)))
    np.testing.assert_array_equal(np.asarray(f2(x, -4)), np.asarray(jnp.roll(x, (-4, 2), axis=(0, 1))))


def test_asarray_of_traced_list(rng: np.random.Generator) -> None:
    x = random_array(rng, (2,), np.float32)
    check_against_jax(lambda a: mnp.asarray([a, a, a]), lambda a: jnp.asarray([a, a, a]), x)


def test_pad_traced_constant(rng: np.random.Generator) -> None:
    x = random_array(rng, (2, 3), np.float32)
    widths = ((1, 0), (2, 1))
    check_against_jax(lambda a, c: mnp.pad(a, widths, constant_values=c),
                      jax.jit(lambda a, c: jnp.pad(a, widths, constant_values=c)), x, np.float32(4.5))


def test_inputs_not_modified(rng: np.random.Generator) -> None:
    x = random_array(rng, (3, 4), np.float32)
    before = x.copy()
    mnp.pad(x, 2, mode="reflect")
    mnp.flip(mnp.asarray(x))
    np.testing.assert_array_equal(x, before)


ERRORS = [
    (lambda x: mnp.reshape(x, (5, -1)), ValueError, "reshape: cannot reshape array of size 6"),
    (lambda x: mnp.reshape(x, (-1, -1)), ValueError, "only one dimension may be -1"),
    (lambda x: mnp.reshape(x, (2, 3), order="K"), ValueError, "order must be 'C' or 'F'"),
    (lambda x: mnp.transpose(x, (0, 0)), ValueError, "transpose: repeated axis"),
    (lambda x: mnp.transpose(x, (0,)), ValueError, "don't match an array of rank 2"),
    (lambda x: mnp.swapaxes(x, 0, 2), np.exceptions.AxisError, "swapaxes: axis 2 is out of bounds"),
    (lambda x: mnp.expand_dims(x, 3), np.exceptions.AxisError, "expand_dims: axis 3 is out of bounds"),
    (lambda x: mnp.squeeze(x, 0), ValueError, "squeeze: cannot squeeze axis 0 of size 2"),
    (lambda x: mnp.moveaxis(x, (0, 1), 0), ValueError, "moveaxis: source"),
    (lambda x: mnp.broadcast_to(x, (4, 3)), ValueError, "broadcast_to: cannot broadcast an array of shape"),
    (lambda x: mnp.broadcast_arrays(x, np.ones(4)), ValueError, "broadcast_arrays: shapes"),
    (lambda x: mnp.concatenate([x[0, 0], x[0, 0]]), ValueError, "zero-dimensional arrays cannot be"),
    (lambda x: mnp.concatenate([x, np.ones((2, 2))], axis=0), TypeError, "concatenate: shapes"),
    (lambda x: mnp.concatenate([]), ValueError, "need at least one array"),
    (lambda x: mnp.stack([x, np.ones((3, 2))]), ValueError, "stack: all input arrays must have the same"),
    (lambda x: mnp.split(x, 4, axis=1), ValueError, "split: array split does not result in an equal"),
    (lambda x: mnp.array_split(x, 0), ValueError, "number of sections must be larger than 0"),
    (lambda x: mnp.vsplit(x[0], 1), ValueError, "vsplit: needs an array of rank >= 2"),
    (lambda x: mnp.tile(x, (-1,)), ValueError, "tile: reps must be non-negative"),
    (lambda x: mnp.repeat(x, [1, 2]), ValueError, "repeat: repeats must be non-negative"),
    (lambda x: mnp.repeat(x, 1.5), TypeError, "repeat: repeats must be integers"),
    (lambda x: mnp.fliplr(x[0]), ValueError, "fliplr: needs an array of rank >= 2"),
    (lambda x: mnp.rot90(x, axes=(1, 1)), ValueError, "rot90: repeated axis"),
    (lambda x: mnp.pad(x, -1), ValueError, "pad: pad_width must be non-negative"),
    (lambda x: mnp.pad(x, ((1, 2, 3),)), ValueError, "pad: pad_width"),
    (lambda x: mnp.pad(x, 1, mode="mean"), NotImplementedError, "pad: mode='mean' is not supported"),
    (lambda x: mnp.pad(x, 1, mode="bogus"), ValueError, "pad: unknown mode 'bogus'"),
    (lambda x: mnp.pad(x, 1, mode="reflect", reflect_type="odd"), NotImplementedError, "reflect_type"),
    (lambda x: mnp.pad(x, 1, mode="edge", constant_values=1), ValueError, "unsupported keyword"),
    (lambda x: mnp.pad(x[:0], 1, mode="wrap"), ValueError, "can't extend empty axis 0"),
    (lambda x: mnp.roll(x, (1, 2, 3), axis=(0, 1)), ValueError, "roll: shift and axis must have the same"),
    (lambda x: mnp.insert(x, 5, 1.0, axis=1), IndexError, "insert: index 5 is out of bounds for axis 1"),
    (lambda x: mnp.diagonal(x[0]), ValueError, "diagonal: needs an array of rank >= 2"),
]


@pytest.mark.parametrize("fn, error, match", ERRORS, ids=[m for _, _, m in ERRORS])
def test_errors(fn: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        fn(mnp.asarray(np.arange(6.0, dtype=np.float32).reshape(2, 3)))


def test_traced_shape_is_an_error() -> None:
    with pytest.raises(TypeError, match="reshape: the new shape must be static"):
        mlax.jit(lambda x, n: mnp.reshape(x, (n, -1)))(np.ones(6, np.float32), 2)


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype:UserWarning")  # jax in x32 mode
def test_under_x64(x64: bool, rng: np.random.Generator) -> None:
    x, y = random_array(rng, (2, 3), np.int64), random_array(rng, (2, 3), np.float32)

    def fns(m: object) -> object:
        return lambda a, b, s: (m.concatenate([a, b]), m.stack([a, b], -1), m.roll(a, s, 1),
                                m.pad(b, 1, mode="reflect"), m.repeat(a, 2, axis=0))

    check_against_jax(fns(mnp), jax.jit(fns(jnp)), x, y, np.int64(-4))


@pytest.mark.parametrize(("fname", "axis"), [("expand_dims", range(0, 1)), ("expand_dims", range(1, 3)),
                                             ("sum", range(2)), ("max", range(1, 3))])
def test_range_axes(fname: str, axis: range, rng: np.random.Generator) -> None:
    """A range of axes is a sequence of axes, as in jax (distrax's Normal passes one)."""
    x = random_array(rng, (2, 3, 4), np.float32)
    check_against_jax(lambda v: getattr(mnp, fname)(v, axis), lambda v: getattr(jnp, fname)(v, axis), x,
                      rtol=1e-6)


@pytest.mark.parametrize("fname", ["zeros", "ones", "empty"])
def test_shape_given_as_an_integer_array(fname: str, rng: np.random.Generator) -> None:
    """A 1-D integer array of sizes is a shape, as in jax (distrax passes jnp.shape-like arrays)."""
    sizes = rng.integers(1, 4, size=int(rng.integers(1, 4))).astype(np.int32)
    for shape in (sizes, mnp.asarray(sizes)):
        got = getattr(mnp, fname)(shape)
        want = getattr(jnp, fname)(sizes)
        assert got.shape == want.shape and got.dtype == want.dtype
    with pytest.raises(TypeError):
        getattr(mnp, fname)(sizes.astype(np.float32))
