"""mlax.vmap against jax.vmap: in_axes/out_axes forms, nesting, composition with grad and jit,
per-example gradients of an MLP, and the errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.passes.pipeline import run_pipeline
from tests.oracle import assert_same, random_array


def _mlp_loss(np_):
    def loss(params, x, y):
        w1, b1, w2, b2 = params
        h = np_.tanh(x @ w1 + b1)
        return np_.sum((h @ w2 + b2 - y) ** 2)
    return loss


def test_per_example_gradients_of_an_mlp(rng: np.random.Generator) -> None:
    params = [random_array(rng, (5, 8), np.float32) * 0.5, random_array(rng, (8,), np.float32) * 0.1,
              random_array(rng, (8, 2), np.float32) * 0.5, random_array(rng, (2,), np.float32) * 0.1]
    x, y = random_array(rng, (6, 5), np.float32), random_array(rng, (6, 2), np.float32)
    ours = mlax.jit(mlax.vmap(mlax.grad(_mlp_loss(mnp)), in_axes=(None, 0, 0)))
    theirs = jax.jit(jax.vmap(jax.grad(_mlp_loss(jnp)), in_axes=(None, 0, 0)))
    assert_same(ours(params, x, y), theirs(params, x, y), rtol=1e-4, atol=2e-5)  # float32, summation order
    module = ours.lower(params, x, y).mlir_module()
    with module.context:
        run_pipeline(module, "mlax-expand-transforms, mlax-inline")
    text = module.operation.get_asm(enable_debug_info=False)
    assert "mlax.vmap" not in text and "mlax.vjp" not in text and "func.call" not in text
    dots = [line for line in text.splitlines() if "mlax.dot_general" in line]
    assert dots and all("tensor<6x" in line for line in dots)  # every product carries the 6 examples
    assert "scf." not in ours.lower(params, x, y).as_text("linalg", debug_info=False)  # no loop


@pytest.mark.parametrize("in_axes,out_axes", [(0, 0), (1, 0), (-1, 1), ((1, None), -1), ((0, 0), 1)])
def test_axes(rng: np.random.Generator, in_axes, out_axes) -> None:
    x = random_array(rng, (3, 4, 5), np.float32)
    unbatched_y = isinstance(in_axes, tuple) and in_axes[1] is None
    y = random_array(rng, (3, 5) if unbatched_y else (3, 4, 5), np.float32)
    f = lambda x, y: mnp.sin(x) * mnp.sum(y) + x  # noqa: E731
    jf = lambda x, y: jnp.sin(x) * jnp.sum(y) + x  # noqa: E731
    assert_same(mlax.vmap(f, in_axes, out_axes)(x, y), jax.vmap(jf, in_axes, out_axes)(x, y), rtol=1e-5,
                atol=2e-6)


def test_pytrees_kwargs_and_nesting(rng: np.random.Generator) -> None:
    p = {"a": random_array(rng, (4, 3), np.float32), "b": random_array(rng, (3,), np.float32)}
    z = random_array(rng, (4, 3), np.float32)
    f = lambda p, z: p["a"] @ p["b"] + mnp.sum(z)  # noqa: E731
    jf = lambda p, z: p["a"] @ p["b"] + jnp.sum(z)  # noqa: E731
    axes = ({"a": 0, "b": None},)
    assert_same(mlax.vmap(f, in_axes=axes)(p, z=z), jax.vmap(jf, in_axes=axes)(p, z=z), rtol=1e-5)
    m = random_array(rng, (2, 3, 4), np.float32)
    nested = mlax.vmap(mlax.vmap(lambda v: v @ v))
    assert_same(nested(m), jax.vmap(jax.vmap(lambda v: v @ v))(m), rtol=1e-5)


def test_grad_of_vmap_and_vmap_of_jit(rng: np.random.Generator) -> None:
    w, x = random_array(rng, (3,), np.float32), random_array(rng, (5, 3), np.float32)
    g = mlax.grad(lambda w: mnp.sum(mlax.vmap(lambda x: mnp.tanh(x @ w))(x)))(w)
    jg = jax.grad(lambda w: jnp.sum(jax.vmap(lambda x: jnp.tanh(x @ w))(x)))(w)
    assert_same(g, jg, rtol=1e-5, atol=1e-6)
    ours, theirs = mlax.vmap(mlax.jit(lambda v: mnp.exp(v) * 2)), jax.vmap(jax.jit(lambda v: jnp.exp(v) * 2))
    assert_same(ours(x), theirs(x), rtol=1e-6)


def test_unbatched_output_is_broadcast(rng: np.random.Generator) -> None:
    x = random_array(rng, (4, 2), np.float32)
    assert_same(mlax.vmap(lambda x: mnp.ones(3))(x), jax.vmap(lambda x: jnp.ones(3))(x))


def test_a_batch_of_size_zero_gives_empty_results() -> None:
    """Every op under a vmap over zero examples gives an empty result without asking its rule
    (the fuzzer's reproducers: a gather's slice and a grouped convolution's type were invalid
    for a batch of nothing), as jax."""
    x, i = np.zeros((0, 2, 5, 1), np.float32), np.zeros((3, 0), np.int32)

    def f(module: object) -> object:
        numpy = module.numpy  # type: ignore[attr-defined]
        return module.vmap(lambda a, b: numpy.var(numpy.tanh(numpy.take(a, b, axis=2, mode="fill")), axis=1),
                           in_axes=(0, 1))  # type: ignore[attr-defined]

    want = jax.jit(f(jax))(x, i)
    for backend in ("interpreter", "cpu", "xla"):
        assert_same(mlax.jit(f(mlax), backend=backend)(x, i), want)


def test_inconsistent_sizes_name_the_arguments() -> None:
    with pytest.raises(ValueError, match=r"(?s)inconsistent sizes.*argument x of.*argument y of"):
        mlax.vmap(lambda x, y: x + y)(np.ones(3, np.float32), np.ones(4, np.float32))


def test_in_axes_that_do_not_match_the_arguments() -> None:
    with pytest.raises(ValueError, match=r"len\(in_axes\)=1, len\(args\)=2"):
        mlax.vmap(lambda x, y: x + y, in_axes=(0,))(np.ones(3, np.float32), np.ones(3, np.float32))
    with pytest.raises(ValueError, match="axis 2, which implies that its rank should be at least 3"):
        mlax.vmap(lambda x: x, in_axes=2)(np.ones((3, 2), np.float32))



def test_batched_output_with_out_axes_none_is_jax_error() -> None:
    """A ValueError whose message has jax's ``vmap out_axes, got axis spec None`` (haiku matches
    ``.*vmap.*out_axes.*None.*`` on one line), eagerly and under jit."""
    x = np.arange(4, dtype=np.float32)
    pattern = r"vmap out_axes, got axis spec None"
    for L in (jax, mlax):
        with pytest.raises(ValueError, match=pattern):
            L.vmap(lambda v: v * 2, out_axes=None)(x)
    with pytest.raises(ValueError, match=pattern):
        mlax.jit(mlax.vmap(lambda v: v * 2, out_axes=None))(x)


class _NamelessCallable:
    """A callable whose ``__name__`` is no string (an equinox Module rebuilt from its leaves has
    equinox's ``Missing`` there): functools.wraps refuses it, jax's wraps does not."""

    __name__ = object()

    def __call__(self, x):  # noqa: ANN001, ANN204
        return x * 2


def test_vmap_of_a_callable_whose_name_is_not_a_string() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert_same(mlax.vmap(_NamelessCallable())(x), jax.vmap(_NamelessCallable())(x))
    assert_same(mlax.jit(mlax.vmap(_NamelessCallable()))(x), jax.jit(jax.vmap(_NamelessCallable()))(x))
