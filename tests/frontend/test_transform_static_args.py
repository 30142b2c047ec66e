"""Arbitrary Python objects in the arguments grad and co. do not differentiate (and vmap does
not map) reach the user's function unchanged, as jax's; caching by them (pyfront/staging.py)."""

from __future__ import annotations

import dataclasses
import gc
import math
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same, random_array


@dataclasses.dataclass(frozen=True)
class Frozen:
    scale: float = 1.5


@dataclasses.dataclass
class Mutable:  # eq=True without frozen: unhashable
    scale: float = 0.5


def _square(y):
    return y * y


OBJECTS = {"function": _square, "string": "tanh", "none": None, "module": math, "frozen": Frozen(),
           "mutable": Mutable(), "dict_of_functions": {"act": _square, "name": "sq"}}


def _scale(obj) -> float:
    """What the function below makes of each object (it must see the object itself)."""
    if callable(obj):
        return float(obj(2.0))
    if isinstance(obj, str):
        return float(len(obj))
    if isinstance(obj, (Frozen, Mutable)):
        return obj.scale
    if isinstance(obj, dict):
        return float(obj["act"](3.0))
    return 1.0 if obj is None else math.pi  # the math module


def _loss(np_, seen):
    def loss(x, obj):
        seen.append(obj)
        return np_.sum(np_.sin(x) * x) * _scale(obj)
    return loss


TRANSFORMS = {
    "grad": lambda t, f: t.grad(f),
    "value_and_grad": lambda t, f: t.value_and_grad(f),
    "jacfwd": lambda t, f: t.jacfwd(f),
    "jacrev": lambda t, f: t.jacrev(f),
    "hessian": lambda t, f: t.hessian(f),
}


@pytest.mark.parametrize("kind", sorted(OBJECTS))
@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
def test_objects_outside_argnums_pass_unchanged(rng: np.random.Generator, kind: str, transform: str) -> None:
    obj = OBJECTS[kind]
    x = random_array(rng, (3,), np.float32)
    seen: list[object] = []
    got = TRANSFORMS[transform](mlax, _loss(mnp, seen))(x, obj)
    assert seen and all(s is obj for s in seen)  # identity preserved, containers too (as jax)
    assert_same(got, TRANSFORMS[transform](jax, _loss(jnp, []))(x, obj), rtol=1e-5, atol=1e-6)
    inside = mlax.jit(lambda x: TRANSFORMS[transform](mlax, _loss(mnp, []))(x, obj))(x)
    assert_same(inside, got, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", sorted(OBJECTS))
def test_vmap_unmapped_objects(rng: np.random.Generator, kind: str, backend) -> None:
    obj = OBJECTS[kind]
    v = random_array(rng, (4, 3), np.float32)
    seen: list[object] = []
    got = mlax.vmap(_loss(mnp, seen), in_axes=(0, None))(v, obj)
    assert_same(got, jax.vmap(_loss(jnp, []), in_axes=(0, None))(v, obj), rtol=1e-5)
    if not isinstance(obj, dict):  # jax rebuilds containers under vmap, leaves are the objects
        assert seen and all(s is obj for s in seen)
    if obj is not None:  # None is an empty pytree: mapping it maps nothing
        with pytest.raises(TypeError):
            jax.vmap(_loss(jnp, []), in_axes=(0, 0))(v, obj)
        with pytest.raises(TypeError, match="not a valid mlax type"):
            mlax.vmap(_loss(mnp, []), in_axes=(0, 0))(v, obj)


@pytest.mark.parametrize("scalar", [2, 3.0, True])
def test_vmap_unmapped_python_scalars_stay_python(rng: np.random.Generator, scalar) -> None:
    """As in jax, a Python scalar whose in_axes is None reaches the function as itself (so it
    can bound a slice), eagerly, nested and inside a jit."""

    def f(np_, x, n, op):
        assert type(n) is type(scalar)
        return op(x[:int(n) + 1])

    v = random_array(rng, (2, 3, 5), np.float32)
    assert_same(mlax.vmap(lambda n: n, in_axes=None, axis_size=2)(scalar),  # an output is broadcast
                jax.vmap(lambda n: n, in_axes=None, axis_size=2)(scalar))
    want = jax.vmap(jax.vmap(lambda x, n, op: f(jnp, x, n, op), (0, None, None)), (1, None, None), 1)(
        v, scalar, jnp.mean)
    got = mlax.vmap(mlax.vmap(lambda x, n, op: f(mnp, x, n, op), (0, None, None)), (1, None, None), 1)(
        v, scalar, mnp.mean)
    assert_same(got, want, rtol=1e-6)
    inside = mlax.jit(lambda v: mlax.vmap(lambda x, n: f(mnp, x, n, mnp.sum), (0, None))(v[0], scalar))(v)
    assert_same(inside, jax.vmap(lambda x, n: f(jnp, x, n, jnp.sum), (0, None))(v[0], scalar), rtol=1e-6)


def test_objects_in_argnums_are_errors() -> None:
    x = np.float32(1.0)
    for obj in ("tanh", _square, Frozen()):
        with pytest.raises(TypeError):
            jax.grad(lambda x, o: x * 2.0, argnums=1)(x, obj)
        with pytest.raises(TypeError, match=r"Argument o of lambda has type \w+, which is not a valid mlax"):
            mlax.grad(lambda x, o: x * 2.0, argnums=1)(x, obj)


def test_mixed_pytrees_trace_their_arrays(rng: np.random.Generator) -> None:
    """A non-differentiated argument holding arrays and objects: the arrays are inputs of the
    program (new values reuse the trace), the objects are part of its key."""
    traces: list[object] = []

    def f(x, config):
        traces.append(config["act"])
        return mnp.sum(config["act"](x) * config["w"])

    grad = mlax.grad(f)
    x = random_array(rng, (3,), np.float32)
    for _ in range(3):
        w = random_array(rng, (3,), np.float32)
        assert_same(grad(x, {"act": mnp.tanh, "w": w}),
                    jax.grad(lambda x, w: jnp.sum(jnp.tanh(x) * w))(x, w), rtol=1e-5, atol=1e-6)
    assert traces == [mnp.tanh]
    grad(x, {"act": mnp.sin, "w": w})
    assert traces == [mnp.tanh, mnp.sin]


def test_static_objects_choose_python_branches(rng: np.random.Generator) -> None:
    def f(np_, x, mode):
        return np_.sum(np_.maximum(x, 0.0) if mode == "relu" else np_.tanh(x))

    x = random_array(rng, (5,), np.float32)
    for mode in ("relu", "tanh", "relu"):
        want = jax.grad(lambda x, m: f(jnp, x, m))(x, mode)
        assert_same(mlax.grad(lambda x, m: f(mnp, x, m))(x, mode), want, rtol=1e-5, atol=1e-6)


def test_caching_by_static_objects(rng: np.random.Generator) -> None:
    """Equal hashable objects share a trace; unhashable ones trace on every call (and leave
    nothing in the cache); the bounded cache lets go of objects it no longer holds."""
    traces: list[object] = []

    def f(x, obj):
        traces.append(obj)
        return mnp.sum(x * x) * _scale(obj)

    grad = mlax.grad(f)
    x = random_array(rng, (2,), np.float32)
    for obj in ("ab", "ab", Frozen(), Frozen(), "ab"):
        grad(x, obj)
    assert traces == ["ab", Frozen()]
    traces.clear()
    for _ in range(3):
        assert_same(grad(x, Mutable()), jax.grad(lambda x: jnp.sum(x * x) * 0.5)(x), rtol=1e-6)
    assert len(traces) == 3
    traces.clear()
    grad = mlax.grad(lambda x, obj: mnp.sum(x * x) * _scale(obj))  # keeps no objects of its own
    previous = mlax.config.jit_cache_size
    mlax.config.update("jit_cache_size", 4)
    try:
        refs = []
        for k in range(12):
            fn = (lambda k: lambda y: y * k)(k)
            refs.append(weakref.ref(fn))
            grad(x, fn)
            del fn
        gc.collect()
        assert sum(ref() is not None for ref in refs) <= 4
    finally:
        mlax.config.update("jit_cache_size", previous)


@pytest.mark.parametrize("name", ["jit", "grad", "value_and_grad", "vmap", "jacfwd", "jacrev", "checkpoint"])
def test_transformed_functions_wrap_the_function(name: str, rng: np.random.Generator) -> None:
    """As jax's: ``__wrapped__`` is the function, whose name the result carries (equinox
    follows __wrapped__ to warn about transformed callables stored in a Module)."""
    def loss(x):
        """The doc."""
        return (x * x).sum()

    x = random_array(rng, (3,), np.float32)
    got, want = getattr(mlax, name)(loss), getattr(jax, name)(loss)
    assert got.__wrapped__ is loss and want.__wrapped__ is loss
    assert got.__name__ == want.__name__ == "loss"
    arg = x[:, None] if name == "vmap" else x
    assert_same(got(arg), want(arg), rtol=1e-6)


@pytest.mark.parametrize("kind", sorted(OBJECTS))
def test_non_array_aux_outputs(rng: np.random.Generator, kind: str) -> None:
    """An aux output may hold any objects, as jax's: grad, value_and_grad and vjp with
    has_aux give them back as they are (with the arrays beside them), eagerly and under jit."""
    obj = OBJECTS[kind]
    x = random_array(rng, (3,), np.float32)

    def same(got):  # jax rebuilds containers, their leaves are the objects
        return got is obj or isinstance(obj, dict) and got == obj

    def f(np_):
        return lambda x: (np_.sum(np_.sin(x)), {"obj": obj, "twice": x * 2})

    got = mlax.grad(f(mnp), has_aux=True)(x)
    want = jax.grad(f(jnp), has_aux=True)(x)
    assert same(got[1]["obj"]) and same(want[1]["obj"])
    assert_same(got[0], want[0], rtol=1e-6)
    assert_same(got[1]["twice"], want[1]["twice"])
    (value, aux), g = mlax.value_and_grad(f(mnp), has_aux=True)(x)
    assert same(aux["obj"])
    assert_same(g, want[0], rtol=1e-6)
    out, pull, aux = mlax.vjp(f(mnp), x, has_aux=True)
    _, jpull, _ = jax.vjp(f(jnp), x, has_aux=True)
    assert same(aux["obj"])
    assert_same(pull(np.float32(1.5))[0], jpull(np.float32(1.5))[0], rtol=1e-6)
    inside = mlax.jit(lambda x: mlax.grad(f(mnp), has_aux=True)(x)[0])(x)
    assert_same(inside, want[0], rtol=1e-6)


def test_grad_keyword_arguments(rng: np.random.Generator) -> None:
    """Keyword arguments reach the function and are not differentiated, as jax's (optax's
    tests call ``jax.grad(loss)(scores, labels=..., where=..., reduce_fn=...)``)."""
    x, labels = random_array(rng, (4,), np.float32), random_array(rng, (4,), np.float32)
    mask = random_array(rng, (4,), np.bool_)

    def loss(np_):
        return lambda x, labels=None, where=None, reduce_fn=np_.sum: reduce_fn(
            np_.where(where, np_.sin(x) * labels, 0.0))

    for reduce in ("sum", "mean"):
        want = jax.grad(loss(jnp))(x, labels=labels, where=mask, reduce_fn=getattr(jnp, reduce))
        got = mlax.grad(loss(mnp))(x, labels=labels, where=mask, reduce_fn=getattr(mnp, reduce))
        assert_same(got, want, rtol=1e-6)
        both = mlax.value_and_grad(loss(mnp))(x, labels=labels, where=mask, reduce_fn=getattr(mnp, reduce))
        assert_same(both[1], want, rtol=1e-6)
    inside = mlax.jit(lambda x, l: mlax.grad(loss(mnp))(x, labels=l, where=mask))(x, labels)
    assert_same(inside, jax.grad(loss(jnp))(x, labels=labels, where=mask), rtol=1e-6)


def test_vmap_spmd_axis_name_is_accepted(rng: np.random.Generator) -> None:
    """jax's placement hint for the mapped axis: the values are jax's (flax.nnx passes it)."""
    x = random_array(rng, (4, 3), np.float32)
    got = mlax.vmap(mnp.sin, spmd_axis_name="data")(x)
    assert_same(got, jax.vmap(jnp.sin, spmd_axis_name="data")(x), rtol=1e-6)
