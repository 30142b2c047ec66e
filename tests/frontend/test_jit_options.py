"""jax.jit's keywords and jit on methods, as jax (issue 14)."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest
from jax.sharding import PartitionSpec

import mlax
from tests.oracle import assert_same, random_array


class Scaler:
    def __init__(self, factor: float) -> None:
        self.factor = factor

    def __hash__(self) -> int:
        return hash(self.factor)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scaler) and other.factor == self.factor


def _scale(self, x):
    return x * self.factor


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Affine:
    w: np.ndarray
    b: np.ndarray


def _apply(self, x):
    return x @ self.w + self.b


def test_methods_bind_self(rng: np.random.Generator) -> None:
    x = random_array(rng, (3,), np.float32)
    for lib in (mlax, jax):
        Scaler.scale = lib.jit(_scale, static_argnums=0)  # self static: hashable
        Affine.apply = lib.jit(_apply)  # self a pytree of arrays
        scaled = Scaler(2.5).scale(x)
        affine = Affine(random_array(np.random.default_rng(1), (3, 2), np.float32),
                        random_array(np.random.default_rng(2), (2,), np.float32)).apply(x)
        if lib is mlax:
            ours = scaled, affine
            assert Scaler.scale is Scaler.__dict__["scale"]  # accessed on the class: the jit itself
    assert_same(ours[0], scaled)
    assert_same(ours[1], affine, rtol=1e-6)


def test_a_non_array_self_must_be_static(rng: np.random.Generator) -> None:
    Scaler.scale = mlax.jit(_scale)
    with pytest.raises(TypeError):
        Scaler(2.0).scale(random_array(rng, (2,), np.float32))


def test_donate_argnames(rng: np.random.Generator) -> None:
    f = mlax.jit(lambda x, y: x * 2.0 + y, backend="xla", donate_argnames="y")
    text = f.lower(np.ones(3, np.float32), np.ones(3, np.float32)).as_text("stablehlo")
    assert text.count("tf.aliasing_output") == 1
    with pytest.raises(ValueError, match="donate_argnames"):
        mlax.jit(lambda x: x, donate_argnames="z")
    x, y = random_array(rng, (3,), np.float32), random_array(rng, (3,), np.float32)
    assert_same(f(x, y), x * 2.0 + y)


def test_keywords_without_effect_are_accepted(rng: np.random.Generator) -> None:
    x = random_array(rng, (4,), np.float32)
    f = mlax.jit(lambda x: x + 1.0, keep_unused=True, inline=True, compiler_options={})
    assert_same(f(x), x + 1.0)


def test_shardings_that_keep_arrays_whole_are_accepted(rng: np.random.Generator) -> None:
    x = random_array(rng, (4,), np.float32)
    for ins, outs in ((None, None), ((None,), None), ([PartitionSpec()], PartitionSpec()),
                      ((PartitionSpec(None),), PartitionSpec(None))):
        f = mlax.jit(lambda x: x * 2.0, in_shardings=ins, out_shardings=outs)
        assert_same(f(x), x * 2.0)


def test_partition_specs_need_a_context_mesh() -> None:
    """As jax's: a PartitionSpec that splits needs ``mlax.set_mesh`` (more in test_jit_shardings.py)."""
    with pytest.raises(RuntimeError, match="non-empty mesh in context"):
        mlax.jit(lambda x: x, in_shardings=PartitionSpec("x"))(np.ones(4, np.float32))


def test_unsupported_keywords_say_so() -> None:
    with pytest.raises(NotImplementedError, match="compiler_options"):
        mlax.jit(lambda x: x, compiler_options={"xla_cpu_enable_fast_math": True})


def test_donated_arrays_are_deleted_as_in_jax(rng: np.random.Generator) -> None:
    """A donated argument that an output can reuse (same shape and dtype) is deleted after the
    call, as jax deletes it; one no output matches stays, with jax's warning, once; a deleted
    Array refuses use with jax's RuntimeError."""
    import warnings

    x, y = random_array(rng, (3,), np.float32), random_array(rng, (5,), np.float32)
    seen = {}
    for lib in (jax, mlax):
        f = lib.jit(lambda a, b: a * 2.0 + b.sum(), donate_argnums=(0, 1))
        a, b = lib.numpy.asarray(x), lib.numpy.asarray(y)
        pointer = a.unsafe_buffer_pointer()
        assert isinstance(pointer, int) and not a.is_deleted()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = f(a, b)
        texts = [str(w.message) for w in caught if "donated" in str(w.message)]
        seen[lib] = (np.asarray(out), a.is_deleted(), b.is_deleted(), texts)
        with warnings.catch_warnings(record=True) as again:
            warnings.simplefilter("always")
            f(lib.numpy.asarray(x), lib.numpy.asarray(y))
        assert not [w for w in again if "donated" in str(w.message)]
        with pytest.raises((RuntimeError, ValueError), match="deleted"):
            np.asarray(f(a, b))
    assert_same(seen[mlax][0], seen[jax][0], rtol=1e-6)
    assert seen[mlax][1:] == seen[jax][1:]
    c = mlax.numpy.asarray(x)
    c.delete()
    assert c.is_deleted() and c.shape == (3,)
    with pytest.raises(RuntimeError, match="Array has been deleted with shape=float32"):
        c + 1.0


def test_copies_survive_donation_of_the_original(rng: np.random.Generator) -> None:
    """jnp.copy and jnp.array make new Arrays, as jax's: donating the original leaves them."""
    x = random_array(rng, (2, 3), np.float32)
    for lib in (jax, mlax):
        a = lib.numpy.asarray(x)
        copies = [lib.numpy.copy(a), lib.numpy.array(a), a.copy()]
        assert all(c is not a for c in copies)
        lib.jit(lambda v: v + 1.0, donate_argnums=0)(a)
        assert a.is_deleted() and not any(c.is_deleted() for c in copies)
        for c in copies:
            assert_same(c, x)
