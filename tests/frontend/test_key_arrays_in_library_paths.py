"""Typed key arrays where flax meets them: ``jnp.result_type`` of keys (flax's scan builds
avals with it) and unknown key inputs of partial evaluation (flax's lazy_init and nn.scan),
as jax's."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest
from jax.interpreters import partial_eval as pe

import mlax
from mlax.partial_eval import trace_to_jaxpr_nounits


@pytest.mark.parametrize("where", ["eager", "jit"])
def test_result_type_of_keys_as_jax(where: str) -> None:
    def run(lib: Any) -> Any:
        def f(k: Any) -> Any:
            keys = lib.random.split(k, 3)
            return (lib.numpy.result_type(k), lib.numpy.result_type(keys, k),
                    lib.dtypes.result_type(keys, return_weak_type_flag=True))
        found = []
        k = lib.random.key(7)
        if where == "eager":
            return f(k)
        lib.jit(lambda k: found.append(f(k)) or k)(k)
        return found[0]

    assert run(mlax) == run(jax)


def test_result_type_of_a_key_and_a_number_is_jax_error() -> None:
    for lib in (mlax, jax):
        def f(k: Any, lib: Any = lib) -> Any:
            return lib.numpy.result_type(k, 1.0) and k

        with pytest.raises(ValueError, match="is not a valid dtype for JAX type promotion"):
            lib.jit(f)(lib.random.key(0))


@pytest.mark.parametrize("inside_jit", [False, True])
def test_unknown_key_inputs_of_partial_evaluation(inside_jit: bool) -> None:
    """An unknown key input: the outputs read from it are unknown, with key avals; those from
    the known input keep their values (as jax's partial evaluation)."""
    x = np.arange(3, dtype=np.float32)

    def f(k: Any, x: Any) -> Any:
        return mlax.random.split(k, 2), x * 2.0, mlax.random.normal(k, (2,))

    key_aval = jax.core.ShapedArray((), jax.random.key(0).dtype)
    pvals = [pe.PartialVal.unknown(key_aval), pe.PartialVal.known(x)]
    if inside_jit:
        found = []
        given = lambda x: [pvals[0], pe.PartialVal.known(x)]  # noqa: E731
        mlax.jit(lambda x: found.append(trace_to_jaxpr_nounits(f, given(x))) or x)(x)
        _, out, _ = found[0]
    else:
        _, out, _ = trace_to_jaxpr_nounits(f, pvals)
    assert [p.is_known() for p in out] == [False, True, False]
    assert out[0].get_aval().shape == (2,) and out[0].get_aval().dtype == key_aval.dtype
    assert out[2].get_aval().dtype == np.float32
    if not inside_jit:
        np.testing.assert_array_equal(np.asarray(out[1].get_known()), x * 2.0)


def test_vmap_retraced_with_values_takes_key_arguments() -> None:
    """A vmap whose Python reads an unmapped argument's value is traced again with values;
    key arguments are given theirs as their data (flax's nn.vmap over Rngs)."""
    def run(lib: Any) -> Any:
        keys = lib.random.split(lib.random.key(3), 4)
        f = lambda k, n: lib.random.normal(k, (2,)) * (2.0 if n > 0 else 1.0)  # noqa: E731
        return lib.vmap(f, in_axes=(0, None))(keys, lib.numpy.asarray(1))

    np.testing.assert_allclose(np.asarray(run(mlax)), np.asarray(run(jax)), rtol=1e-6)


def test_pmap_maps_key_arrays() -> None:
    def run(lib: Any) -> Any:
        keys = lib.random.split(lib.random.key(5), 1)
        out = lib.pmap(lambda k: (lib.random.normal(k, (3,)), lib.random.split(k, 2)))(keys)
        return out[0], lib.random.key_data(out[1])

    ours, theirs = run(mlax), run(jax)
    for a, b in zip(ours, theirs, strict=True):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_numeric_functions_refuse_keys_but_equality_compares_them() -> None:
    """jnp's numeric functions refuse key arrays with jax's TypeError; jnp.equal and
    not_equal compare keys as keys (flax.nnx's scan checks its broadcast keys so)."""
    for lib in (mlax, jax):
        keys = lib.random.split(lib.random.key(9), 3)
        with pytest.raises(TypeError, match="add does not accept dtypes key<fry>, int32"):
            lib.numpy.add(keys, 1)
        with pytest.raises(TypeError):  # (jax: "Cannot interpret .key<fry>. as a data type")
            lib.numpy.sin(keys)
        np.testing.assert_array_equal(np.asarray(lib.numpy.not_equal(keys, keys[::-1])), [True, False, True])
        np.testing.assert_array_equal(np.asarray(lib.numpy.equal(keys, keys)), [True, True, True])


@pytest.mark.parametrize("jitted", [False, True])
def test_key_array_at_get_and_set_as_jax(jitted: bool) -> None:
    """``keys.at[i].set(k)`` and ``.get()`` (flax's linen while_loop keeps keys in its carry)."""
    def run(lib: Any) -> Any:
        def f(keys: Any, k: Any) -> Any:
            return keys.at[1].set(k), keys.at[::2].get(), keys.at[:].set(k)
        out = (lib.jit(f) if jitted else f)(lib.random.split(lib.random.key(2), 3), lib.random.key(7))
        return [np.asarray(lib.random.key_data(o)) for o in out]

    for a, b in zip(run(mlax), run(jax), strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match="Cannot interpret 'key<fry>' as a data type"):
        mlax.random.split(mlax.random.key(0), 2).at[0].set(1)
