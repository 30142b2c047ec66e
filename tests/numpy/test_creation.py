"""mlax.numpy array creation against jax.numpy: values, dtypes and weak types (eager and
jitted, with traced fill values, bounds and offsets where jnp allows them), x64 defaults, errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.numpy.helpers import (
    check_values,
    operand,
)

BF16 = ml_dtypes.bfloat16


class _Duck:
    """Not an array: only ``.shape`` and ``.dtype``, as jnp's ``*_like`` functions ask."""

    def __init__(self, dtype: Any = np.int8) -> None:
        self.shape, self.dtype = (2, 2), np.dtype(dtype)


def both(build: Callable[[Any], Any]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``build(mnp)`` and ``build(jnp)``: one spelling of a call for both libraries."""
    return build(mnp), build(jnp)


# name -> (call taking the numpy module and returning a function, its arguments)
CASES: dict[str, tuple[Callable[[Any], Callable[..., Any]], tuple[Any, ...]]] = {
    "zeros": (lambda m: lambda: m.zeros((2, 3)), ()),
    "zeros_int_shape_dtype": (lambda m: lambda: m.zeros(4, m.int8), ()),
    "ones_empty": (lambda m: lambda: m.ones((0, 3), bool), ()),
    "ones_bf16": (lambda m: lambda: m.ones((2, 1, 2), BF16), ()),
    "empty": (lambda m: lambda: m.empty((3,), np.uint8), ()),
    "zeros_scalar": (lambda m: lambda: m.zeros(()), ()),
    "full_weak_int": (lambda m: lambda v: m.full((2,), v), (3,)),
    "full_weak_float": (lambda m: lambda v: m.full((2, 2), v), (2.5,)),
    "full_bool": (lambda m: lambda v: m.full(3, v), (True,)),
    "full_numpy_scalar": (lambda m: lambda v: m.full((2,), v), (np.int8(-4),)),
    "full_dtype": (lambda m: lambda v: m.full((2, 3), v, np.float16), (7,)),
    "full_array": (lambda m: lambda v: m.full((2, 3), v), (np.array([1.5, -2.0, 3.0], np.float32),)),
    "full_array_dtype": (lambda m: lambda v: m.full((4, 1), v, np.int32), (np.array([[2.7]]),)),
    "zeros_like": (lambda m: lambda a: m.zeros_like(a), (np.arange(6, dtype=np.int8).reshape(2, 3),)),
    "zeros_like_weak": (lambda m: lambda a: m.zeros_like(a), (2.5,)),
    "ones_like_dtype_shape": (lambda m: lambda a: m.ones_like(a, np.float16, (3, 1)), (np.ones(2),)),
    "empty_like": (lambda m: lambda a: m.empty_like(a), (np.ones((2, 0), bool),)),
    "full_like_weak": (lambda m: lambda a: m.full_like(a, 2.5), (3,)),
    "full_like_int": (lambda m: lambda a: m.full_like(a, 2.7), (np.ones(3, np.int8),)),
    "full_like_array": (lambda m: lambda a, v: m.full_like(a, v), (np.ones((2, 3)), np.arange(3))),
    "full_like_traced_fill": (lambda m: lambda a, v: m.full_like(a, v, shape=(4,)), (np.ones(2), 1.5)),
    "arange_stop": (lambda m: lambda: m.arange(5), ()),
    "arange_float_stop": (lambda m: lambda: m.arange(4.5), ()),
    "arange_start_stop": (lambda m: lambda: m.arange(-3, 4), ()),
    "arange_step": (lambda m: lambda: m.arange(1, 11, 3), ()),
    "arange_negative_step": (lambda m: lambda: m.arange(5, -4, -2), ()),
    "arange_float_step": (lambda m: lambda: m.arange(0, 1, 0.1), ()),
    "arange_float16_step": (lambda m: lambda: m.arange(0.5, 3, 0.3, dtype=np.float16), ()),
    "arange_dtype": (lambda m: lambda: m.arange(5, dtype=np.int8), ()),
    "arange_numpy_scalar": (lambda m: lambda: m.arange(np.int8(5)), ()),
    "arange_float_dtype": (lambda m: lambda: m.arange(2, 7, dtype=float), ()),
    "arange_empty": (lambda m: lambda: m.arange(5, 1), ()),
    "arange_array_arg": (lambda m: lambda: m.arange(np.asarray(4, np.int8)), ()),
    "linspace": (lambda m: lambda: m.linspace(0, 1, 5), ()),
    "linspace_default": (lambda m: lambda: m.linspace(-2.5, 7), ()),
    "linspace_int": (lambda m: lambda: m.linspace(0, 10, 5, dtype=int), ()),
    "linspace_int8": (lambda m: lambda: m.linspace(-7, 7, 4, dtype=np.int8), ()),
    "linspace_no_endpoint": (lambda m: lambda: m.linspace(0, 1, 4, endpoint=False, retstep=True), ()),
    "linspace_one": (lambda m: lambda: m.linspace(0, 1, 1, retstep=True), ()),
    "linspace_one_open": (lambda m: lambda: m.linspace(0.0, 1.0, 1, endpoint=False, retstep=True), ()),
    "linspace_zero": (lambda m: lambda: m.linspace(0, 1, 0, retstep=True), ()),
    "linspace_two": (lambda m: lambda: m.linspace(3, -1, 2, retstep=True), ()),
    "linspace_float16": (lambda m: lambda a: m.linspace(a, 1, 3), (np.float16(0.25),)),
    "linspace_traced": (lambda m: lambda a, b: m.linspace(a, b, 6, retstep=True), (np.float32(-1.5), 2.0)),
    "linspace_arrays": (lambda m: lambda a, b: m.linspace(a, b, 3, axis=1),
                        (np.array([0.0, 1.0], np.float32), np.array([[2.0], [5.0]], np.float32))),
    "linspace_arrays_last_axis": (lambda m: lambda a: m.linspace(a, 10, 4, axis=-1),
                                  (np.arange(3, dtype=np.float32),)),
    "logspace": (lambda m: lambda: m.logspace(0, 2, 5), ()),
    "logspace_base": (lambda m: lambda a: m.logspace(a, 3, 4, endpoint=False, base=2.0, axis=1),
                      (np.array([-1.0, 0.5], np.float32),)),
    "logspace_int": (lambda m: lambda: m.logspace(0, 3, 4, dtype=np.int32), ()),
    "geomspace": (lambda m: lambda: m.geomspace(1, 1000, 4), ()),
    "geomspace_negative": (lambda m: lambda: m.geomspace(-1.0, -16.0, 5, endpoint=False), ()),
    "geomspace_axis": (lambda m: lambda a: m.geomspace(a, 64.0, 3, axis=-1),
                       (np.array([1.0, 2.0], np.float32),)),
    "indices": (lambda m: lambda: m.indices((2, 3)), ()),
    "indices_sparse": (lambda m: lambda: m.indices((2, 1, 3), np.int8, sparse=True), ()),
    "indices_none": (lambda m: lambda: m.indices(()), ()),
    "diagflat": (lambda m: lambda v: m.diagflat(v, -1), (np.arange(4.0).reshape(2, 2),)),
    "eye": (lambda m: lambda: m.eye(3), ()),
    "eye_rect_k": (lambda m: lambda: m.eye(2, 4, 1), ()),
    "eye_negative_k": (lambda m: lambda: m.eye(4, 3, -2, dtype=np.int8), ()),
    "eye_far_k": (lambda m: lambda: m.eye(2, k=5, dtype=bool), ()),
    "eye_traced_k": (lambda m: lambda k: m.eye(3, 4, k), (np.int32(1),)),
    "eye_empty": (lambda m: lambda: m.eye(0, 2), ()),
    "identity": (lambda m: lambda: m.identity(3, np.uint8), ()),
    "tri": (lambda m: lambda: m.tri(3), ()),
    "tri_rect": (lambda m: lambda: m.tri(3, 5, -1, dtype=np.int32), ()),
    "tri_k": (lambda m: lambda: m.tri(4, 2, 2, dtype=bool), ()),
    "tril": (lambda m: lambda a: m.tril(a), (np.arange(12.0).reshape(3, 4),)),
    "tril_k": (lambda m: lambda a: m.tril(a, -1), (np.arange(24).reshape(2, 3, 4),)),
    "triu": (lambda m: lambda a: m.triu(a), (np.arange(12.0).reshape(4, 3),)),
    "triu_k": (lambda m: lambda a: m.triu(a, 2), (np.ones((2, 1, 3, 3), bool),)),
    "triu_weak": (lambda m: lambda a: m.triu(m.full((2, 2), a)), (1.5,)),
    "meshgrid_xy": (lambda m: lambda a, b: m.meshgrid(a, b), (np.arange(2), np.arange(3.0))),
    "meshgrid_ij": (lambda m: lambda a, b, c: m.meshgrid(a, b, c, indexing="ij"),
                    (np.arange(2), np.arange(3), np.arange(4.0))),
    "meshgrid_sparse": (lambda m: lambda a, b, c: m.meshgrid(a, b, c, sparse=True),
                        (np.arange(2), np.arange(3), np.arange(4.0))),
    "meshgrid_one": (lambda m: lambda a: m.meshgrid(a), (np.arange(3),)),
    "diag_make": (lambda m: lambda v: m.diag(v), (np.arange(1, 4, dtype=np.float32),)),
    "diag_make_k": (lambda m: lambda v: m.diag(v, 2), (np.arange(1, 4),)),
    "diag_make_negative_k": (lambda m: lambda v: m.diag(v, -1), (np.array([True, False]),)),
    "diag_extract": (lambda m: lambda v: m.diag(v), (np.arange(12).reshape(3, 4),)),
    "diag_extract_k": (lambda m: lambda v: m.diag(v, -1), (np.arange(12.0).reshape(3, 4),)),
    "copy": (lambda m: lambda a: m.copy(a), (2,)),
    "copy_array": (lambda m: lambda a: m.copy(a), (np.arange(3, dtype=np.uint8),)),
    "array": (lambda m: lambda: m.array([[1, 2], [3, 4]], dtype=np.float16), ()),
    "asarray_scalar": (lambda m: lambda: m.asarray(2.5), ()),
    # jax's duck typing: anything with .shape and .dtype (a ShapeDtypeStruct, weak or not, is
    # never weak; its 64-bit dtype is canonicalized)
    "zeros_like_struct": (lambda m: lambda: m.zeros_like(jax.ShapeDtypeStruct((2, 3), np.float32)), ()),
    "ones_like_weak_struct": (lambda m: lambda: m.ones_like(jax.ShapeDtypeStruct((2,), np.float32,
                                                                                 weak_type=True)), ()),
    "empty_like_struct": (lambda m: lambda: m.empty_like(jax.ShapeDtypeStruct((4,), np.int8)), ()),
    "zeros_like_struct_f64": (lambda m: lambda: m.zeros_like(jax.ShapeDtypeStruct((2,), np.float64)), ()),
    "zeros_like_struct_dtype_shape": (lambda m: lambda: m.zeros_like(
        jax.ShapeDtypeStruct((2,), np.float32), dtype=np.int32, shape=(3, 1)), ()),
    "full_like_struct": (lambda m: lambda: m.full_like(jax.ShapeDtypeStruct((2, 3), np.float16), 7), ()),
    "full_like_struct_array_fill": (
        lambda m: lambda a: m.full_like(jax.ShapeDtypeStruct((2, 3), np.float32), a), (np.arange(3.0),)),
    "full_like_duck": (lambda m: lambda: m.full_like(_Duck(), 3.5), ()),
    "ones_like_duck_bool": (lambda m: lambda: m.ones_like(_Duck(np.bool_)), ()),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_creation_matches_jax(name: str) -> None:
    build, args = CASES[name]
    # atol: linspace's start * (1 - t) + stop * t cancels near 0, where XLA may fuse into an FMA
    check_values(*both(build), *args, atol=1e-6)


@pytest.mark.parametrize("name", ["zeros", "full_weak_float", "arange_step", "linspace_int", "eye",
                                  "tri", "full_like_weak", "arange_stop"])
def test_creation_under_x64(name: str, x64: bool) -> None:
    build, args = CASES[name]
    check_values(*both(build), *args)


def test_random_fill_values(rng: np.random.Generator) -> None:
    for dtype in (np.float32, np.int8, BF16, np.uint8, bool, float, int):
        value = operand(rng, dtype, ())
        check_values(lambda v: mnp.full((2, 1), v), lambda v: jnp.full((2, 1), v), value)
        like = operand(rng, dtype, (3,))
        check_values(lambda a: mnp.ones_like(a), lambda a: jnp.ones_like(a), like)


def test_linspace_random_bounds(rng: np.random.Generator) -> None:
    start, stop = rng.normal(size=(2, 1)).astype(np.float32), rng.normal(size=(3,)).astype(np.float32)
    for num, endpoint, axis in ((7, True, 0), (5, False, 2), (2, True, -1)):
        m, j = both(lambda lib, n=num, e=endpoint, ax=axis:
                    lambda a, b: lib.linspace(a, b, n, e, True, axis=ax))
        check_values(m, j, start, stop, atol=1e-6)


def test_linspace_float16_random_bounds_exact(rng: np.random.Generator) -> None:
    # jnp's ``iota / div`` runs as ``iota * (1 / div)`` (XLA's rewrite); in float16 the two differ
    # by several ulps, so mlax must take the product too. The step is exact in float32 as well.
    start, stop = (rng.normal(size=(2, 8)) * 20).astype(np.float16)
    for num, endpoint in ((11, True), (7, False)):
        m, j = both(lambda lib, n=num, e=endpoint: lambda a, b: lib.linspace(a, b, n, e, axis=-1))
        check_values(m, j, start, stop)
        m, j = both(lambda lib, n=num, e=endpoint: lambda a, b: lib.linspace(a, b, n, e, True)[1])
        check_values(m, j, start.astype(np.float32), stop.astype(np.float32))


def test_tril_triu_random(rng: np.random.Generator) -> None:
    m = operand(rng, np.float32, (2, 3, 4))
    for k in (-2, 0, 1, 5):
        check_values(lambda a, k=k: mnp.tril(a, k), lambda a, k=k: jnp.tril(a, k), m)
        check_values(lambda a, k=k: mnp.triu(a, k), lambda a, k=k: jnp.triu(a, k), m)


def test_errors() -> None:
    with pytest.raises(TypeError, match="zeros: negative dimensions"):
        mnp.zeros((2, -1))
    with pytest.raises(TypeError, match="full: shape must be integers"):
        mnp.full((2.5,), 1)
    with pytest.raises(mlax.ConcretizationTypeError, match="arange argument 'stop'"):
        mlax.jit(lambda n: mnp.arange(n))(3)
    with pytest.raises(ValueError, match="arange: arguments must be scalars"):
        mnp.arange(np.arange(3))
    with pytest.raises(ValueError, match="linspace: number of samples, -1"):
        mnp.linspace(0, 1, -1)
    with pytest.raises(ValueError, match="tril: argument must be at least 2D"):
        mnp.tril(np.ones(3))
    with pytest.raises(ValueError, match="meshgrid: arguments must be 1D"):
        mnp.meshgrid(np.ones((2, 2)))
    with pytest.raises(ValueError, match="diag: input must be 1d or 2d"):
        mnp.diag(np.ones((1, 2, 3)))
    with pytest.raises(ValueError, match="eye: k must be a scalar integer"):
        mnp.eye(2, k=1.5)
    with pytest.raises(TypeError, match="zeros_like requires ndarray"):
        mnp.zeros_like([1, 2])


def test_like_functions_take_eval_shapes_output() -> None:
    """optax's MultiSteps: zeros like the ``eval_shape`` of the updates, a tree of ShapeDtypeStructs."""
    params = {"w": np.ones((3, 2), np.float32), "b": np.arange(2, dtype=np.int32)}

    def shapes(api: Any, np_mod: Any) -> Any:
        return api.tree_util.tree_map(np_mod.zeros_like, api.eval_shape(lambda p: p, params))

    mine, theirs = shapes(mlax, mnp), shapes(jax, jnp)
    for key in params:
        assert mine[key].shape == theirs[key].shape and mine[key].dtype == theirs[key].dtype
        np.testing.assert_array_equal(np.asarray(mine[key]), np.asarray(theirs[key]))


def test_like_functions_refuse_what_jax_refuses() -> None:
    class ShapeOnly:
        shape = (2,)

    for value in (object(), ShapeOnly()):
        for name in ("zeros_like", "ones_like", "empty_like"):  # (jax's empty_like says ones_like)
            with pytest.raises(TypeError, match="_like requires ndarray or scalar arguments"):
                getattr(jnp, name)(value)
            with pytest.raises(TypeError, match=f"{name} requires ndarray or scalar arguments"):
                getattr(mnp, name)(value)
