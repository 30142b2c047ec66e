"""mlax.lax.conv_general_dilated / conv / conv_with_general_padding / reduce_window against jax.lax:
values and dtypes (eager and jitted), string padding and dimension numbers, preferred element
types, mlax.grad vs jax.grad (a small CNN under jit), mlax.vmap vs jax.vmap, and the errors."""

from __future__ import annotations

import operator
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax as jlax

import mlax
import mlax.numpy as mnp
from mlax import lax
from tests.dialect.test_windowed import jax_conv, jax_reduce_window, random_conv, random_window
from tests.oracle import assert_same, check_against_jax, random_array

F32 = np.float32


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.int8],
                         ids=lambda d: np.dtype(d).name)
def test_conv_general_dilated_random(dtype: Any, rng: np.random.Generator) -> None:
    tol = {np.dtype(np.float32): 1e-4, np.dtype(np.float16): 1e-2, np.dtype(ml_dtypes.bfloat16): 5e-2}
    rtol = tol.get(np.dtype(dtype))
    for _ in range(3):
        lhs, rhs, attrs = random_conv(rng)
        args = (random_array(rng, lhs, dtype), random_array(rng, rhs, dtype))
        check_against_jax(lambda a, b, attrs=attrs: jax_conv(a, b, attrs, lax),
                          jax.jit(lambda a, b, attrs=attrs: jax_conv(a, b, attrs)), *args, rtol=rtol,
                          atol=rtol or 0.0)


@pytest.mark.parametrize("padding", ["SAME", "VALID", "SAME_LOWER", [(1, 2), (0, -1)]])
@pytest.mark.parametrize(("dimension_numbers", "lhs", "rhs"), [
    (None, (2, 3, 7, 6), (4, 3, 3, 2)),
    (("NHWC", "HWIO", "NHWC"), (2, 7, 6, 3), (3, 2, 3, 4)),
    (("NCHW", "OIHW", "NHWC"), (2, 3, 7, 6), (4, 3, 3, 2)),
    (jlax.ConvDimensionNumbers((0, 1, 2, 3), (1, 0, 3, 2), (0, 1, 3, 2)), (2, 3, 7, 6), (3, 4, 2, 3)),
])
def test_padding_and_dimension_numbers(padding: Any, dimension_numbers: Any, lhs: tuple, rhs: tuple,
                                       rng: np.random.Generator) -> None:
    args = (random_array(rng, lhs, F32), random_array(rng, rhs, F32))

    def make(module: Any) -> Any:
        return lambda a, b: module.conv_general_dilated(a, b, (2, 1), padding, rhs_dilation=(1, 2),
                                                        dimension_numbers=dimension_numbers)

    check_against_jax(make(lax), make(jlax), *args, rtol=1e-5, atol=1e-5)


def test_conv_and_conv_with_general_padding(rng: np.random.Generator) -> None:
    x, w = random_array(rng, (2, 3, 6, 5), F32), random_array(rng, (4, 3, 2, 2), F32)
    check_against_jax(lambda a, b: lax.conv(a, b, (1, 2), "SAME"),
                      lambda a, b: jlax.conv(a, b, (1, 2), "SAME"), x, w, rtol=1e-5, atol=1e-5)
    pads = [(1, 0), (2, 1)]
    check_against_jax(lambda a, b: lax.conv_with_general_padding(a, b, (1, 1), pads, (2, 1), (1, 2)),
                      lambda a, b: jlax.conv_with_general_padding(a, b, (1, 1), pads, (2, 1), (1, 2)),
                      x, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("dtype", "preferred"), [(np.float16, np.float32), (np.int8, np.int32),
                                                  (ml_dtypes.bfloat16, np.float32)],
                         ids=lambda d: np.dtype(d).name)
def test_preferred_element_type(dtype: Any, preferred: Any, rng: np.random.Generator) -> None:
    x, w = random_array(rng, (2, 3, 5), dtype), random_array(rng, (2, 3, 3), dtype)

    def make(module: Any) -> Any:
        return lambda a, b: module.conv_general_dilated(a, b, (1,), "VALID", preferred_element_type=preferred)

    check_against_jax(make(lax), make(jlax), x, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["sum", "max", "min"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_reduce_window_random(kind: str, dtype: Any, rng: np.random.Generator) -> None:
    if kind == "sum" and dtype == np.bool_:
        return
    tol = {np.dtype(np.float32): 1e-5, np.dtype(np.float16): 1e-2}.get(np.dtype(dtype))
    for _ in range(3):
        shape, attrs = random_window(rng)
        x = random_array(rng, shape, dtype)
        check_against_jax(lambda v, attrs=attrs: jax_reduce_window(kind, v, attrs, lax),
                          jax.jit(lambda v, attrs=attrs: jax_reduce_window(kind, v, attrs)), x, rtol=tol,
                          atol=tol or 0.0)


@pytest.mark.parametrize(("computation", "jax_computation", "init"), [
    (lax.add, jlax.add, 0.0), (mnp.maximum, jnp.maximum, -np.inf), (jnp.minimum, jlax.min, np.inf),
    (lax.max, jlax.max, 0.5), (lax.min, jlax.min, -0.25)])  # max/min with any init value
@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 0), (0, 2))])
def test_reduce_window_front_end(computation: Any, jax_computation: Any, init: float, padding: Any,
                                 rng: np.random.Generator) -> None:
    x = random_array(rng, (5, 6), F32)
    check_against_jax(lambda v: lax.reduce_window(v, init, computation, (2, 3), (1, 2), padding, (1, 2)),
                      lambda v: jlax.reduce_window(v, init, jax_computation, (2, 3), (1, 2), padding, (1, 2)),
                      x, rtol=1e-6)



@pytest.mark.parametrize(("computation", "kind", "init"), [
    (mnp.add, "sum", 0.0), (mnp.maximum, "max", -np.inf), (mnp.minimum, "min", np.inf), (jnp.add, "sum", 0.0),
    (np.maximum, "max", -np.inf), (operator.add, "sum", 0.0), (lax.min, "min", np.inf)])
def test_known_computations_are_one_op(computation: Any, kind: str, init: float) -> None:
    """lax's, jax's, NumPy's and mlax.numpy's add/max/min (mlax.numpy, built on lax, names its own)
    reduce in one reduce_window op, not folded over strided slices."""
    text = mlax.make_mlir(lambda v: lax.reduce_window(v, init, computation, (2, 3), (1, 2), "VALID"))(
        np.ones((5, 6), F32))
    assert f"mlax.reduce_window_{kind}" in text and "mlax.slice" not in text


NHWC = ("NHWC", "HWIO", "NHWC")


def _cnn(lax_module: Any, np_module: Any) -> Any:
    def loss(params: Any, x: Any, y: Any) -> Any:
        w1, w2 = params
        h = lax_module.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=NHWC)
        h = np_module.tanh(h)
        h = lax_module.reduce_window(h, -np.inf, lax_module.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = lax_module.reduce_window(h, 0.0, lax_module.add, (1, 2, 2, 1), (1, 1, 1, 1), "SAME") / 4.0
        h = lax_module.conv_general_dilated(h, w2, (1, 1), "VALID", dimension_numbers=NHWC,
                                            feature_group_count=2)
        return np_module.mean((h.reshape(h.shape[0], -1) - y) ** 2)

    return loss


def test_grad_of_a_cnn_under_jit(rng: np.random.Generator) -> None:
    params = [random_array(rng, (3, 3, 2, 4), F32) * 0.5, random_array(rng, (2, 2, 2, 6), F32) * 0.5]
    x, y = random_array(rng, (3, 8, 8, 2), F32), random_array(rng, (3, 54), F32)
    expected = jax.jit(jax.grad(_cnn(jlax, jnp)))(params, x, y)
    assert_same(mlax.jit(mlax.grad(_cnn(lax, mnp)))(params, x, y), expected, rtol=1e-4, atol=1e-5)
    assert_same(mlax.grad(_cnn(lax, mnp))(params, x, y), expected, rtol=1e-4, atol=1e-5)


def test_per_example_gradients_of_a_cnn(rng: np.random.Generator) -> None:
    """vmap of grad: both conv operands batched (the batch becomes feature groups) and the
    transposed convolutions of the backward pass batched too."""
    params = [random_array(rng, (3, 3, 2, 4), F32) * 0.5, random_array(rng, (2, 2, 2, 6), F32) * 0.5]
    x, y = random_array(rng, (3, 1, 8, 8, 2), F32), random_array(rng, (3, 1, 54), F32)
    expected = jax.jit(jax.vmap(jax.grad(_cnn(jlax, jnp)), in_axes=(None, 0, 0)))(params, x, y)
    actual = mlax.jit(mlax.vmap(mlax.grad(_cnn(lax, mnp)), in_axes=(None, 0, 0)))(params, x, y)
    assert_same(actual, expected, rtol=1e-4, atol=1e-5)


def test_grad_with_dilations_and_groups(rng: np.random.Generator) -> None:
    lhs, rhs = (4, 4, 7), (6, 2, 3)
    attrs = {"window_strides": (2,), "padding": (2, -1), "lhs_dilation": (2,), "rhs_dilation": (2,),
             "lhs_spec": (0, 1, 2), "rhs_spec": (0, 1, 2), "out_spec": (0, 1, 2), "feature_group_count": 2,
             "batch_group_count": 1}
    args = (random_array(rng, lhs, F32), random_array(rng, rhs, F32))

    def loss(module: Any) -> Any:
        return lambda a, b: (jax_conv(a, b, attrs, module) ** 2).sum()

    assert_same(mlax.grad(loss(lax), argnums=(0, 1))(*args), jax.grad(loss(jlax), argnums=(0, 1))(*args),
                rtol=1e-4, atol=1e-4)


def test_hessian_through_conv_and_max_pool(rng: np.random.Generator) -> None:
    """Second order: jacfwd of jacrev batches and differentiates the derivative programs."""
    x, w = random_array(rng, (2, 3, 6), F32), random_array(rng, (4, 3, 2), F32)

    def f(lax_module: Any, np_module: Any) -> Any:
        def g(w: Any) -> Any:
            h = lax_module.conv_general_dilated(x, w, (2,), [(1, 0)], rhs_dilation=(2,))
            h = lax_module.reduce_window(h, -np.inf, lax_module.max, (1, 1, 2), (1, 1, 1), "SAME")
            return np_module.sum(np_module.sin(h))
        return g

    assert_same(mlax.jit(mlax.hessian(f(lax, mnp)))(w), jax.hessian(f(jlax, jnp))(w), rtol=1e-4, atol=1e-4)


def test_vmap(rng: np.random.Generator) -> None:
    x, w = random_array(rng, (5, 2, 3, 7), F32), random_array(rng, (5, 4, 3, 2), F32)

    def conv(module: Any) -> Any:
        return lambda a, b: module.conv_general_dilated(a, b, (2,), "SAME")

    for in_axes in [(0, 0), (0, None), (None, 0)]:
        args = (x if in_axes[0] == 0 else x[0], w if in_axes[1] == 0 else w[0])
        assert_same(mlax.vmap(conv(lax), in_axes)(*args), jax.vmap(conv(jlax), in_axes)(*args), rtol=1e-5,
                    atol=1e-5)

    def pool(module: Any) -> Any:
        return lambda v: module.reduce_window(v, -np.inf, module.max, (2, 2), (1, 2), "SAME")

    assert_same(mlax.vmap(pool(lax), in_axes=1)(x[:, 0]), jax.vmap(pool(jlax), in_axes=1)(x[:, 0]))



def test_vmap_over_an_empty_batch() -> None:
    """A grouped convolution vmapped over a batch of size 0 (the fuzzer's reproducer: the rule's
    empty result type was built without a location, an internal error)."""
    x, w = np.zeros((1, 0, 2, 3), F32), np.ones((4, 1, 2), F32)

    def conv(module: Any) -> Any:
        return lambda a, b: module.conv_general_dilated(a, b, (1,), ((0, 1),), (1,), (1,),
                                                        feature_group_count=2)

    want = jax.jit(jax.vmap(conv(jlax), in_axes=(1, None)))(x, w)
    for backend in ("interpreter", "cpu", "xla"):
        assert_same(mlax.jit(mlax.vmap(conv(lax), in_axes=(1, None)), backend=backend)(x, w), want)

ERRORS = [
    (lambda: lax.reduce_window((np.ones(3, F32),), 0.0, lax.add, (2,)), NotImplementedError,
     "several operands"),
    (lambda: lax.conv_general_dilated(np.ones((1, 1, 3), F32), np.ones((1, 1, 2), F32), (1,), "SAME", (2,)),
     ValueError, "string padding is not implemented with lhs_dilation"),
    (lambda: lax.conv(np.ones((1, 2, 3), F32), np.ones((1, 3, 2), F32), (1,), "VALID"), ValueError,
     r"mlax\.conv_general_dilated: lhs feature size 2 must be rhs input feature size 3"),
    (lambda: lax.reduce_window_max(np.ones((2, 3), F32), (1, 2), (1, 0)), ValueError,
     r"mlax\.reduce_window_max: window_strides \(1, 0\) must be >= 1"),
]


@pytest.mark.parametrize(("fn", "error", "match"), ERRORS)
def test_errors(fn: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        fn()


@pytest.mark.parametrize("padding", ["VALID", "SAME", ((0, 1), (2, 0), (1, 1))])
@pytest.mark.parametrize("name", ["mul", "logaddexp", "add_from_one"])
def test_reduce_window_other_computations(padding: Any, name: str, rng: np.random.Generator) -> None:
    """A computation that is not add/max/min (flax's pool with a custom reduce): folded over
    the windows, with jax's padding by init_value, strides and dilations."""
    x = random_array(rng, (3, 5, 4), np.float32, 0.5, 1.5)
    fns = {"mul": (lambda a, b: a * b, 1.0), "logaddexp": (None, -np.inf), "add_from_one": (lax.add, 1.0)}
    fn, init = fns[name]
    window, strides = (1, 2, 3), (1, 2, 1)
    base, dilation = (1, 1, 2), (1, 2, 1)
    if name == "logaddexp":
        mine, theirs = mnp.logaddexp, jnp.logaddexp
    elif name == "add_from_one":  # a sum whose init value is not its identity
        mine, theirs = lax.add, jlax.add
    else:
        mine = theirs = fn
    want = jlax.reduce_window(x, init, theirs, window, strides, padding, base, dilation)
    got = lax.reduce_window(x, init, mine, window, strides, padding, base, dilation)
    assert_same(got, want, rtol=1e-5, atol=1e-6)
    jitted = mlax.jit(lambda v: lax.reduce_window(v, init, mine, window, strides, padding, base, dilation))
    assert_same(jitted(x), want, rtol=1e-5, atol=1e-6)
