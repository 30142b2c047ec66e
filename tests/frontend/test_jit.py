"""jit: tracing once per signature, the cache key, static arguments, pytrees, lowering."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same, random_array


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray


def test_traces_once_per_signature(rng: np.random.Generator) -> None:
    traces = []

    @mlax.jit
    def f(x, y):
        traces.append(1)
        return mnp.tanh(x) * y

    x = random_array(rng, (3, 4), np.float32)
    y = random_array(rng, (3, 4), np.float32)
    f(x, y)
    f(x + 1, y * 2)
    assert len(traces) == 1
    assert f._cache_size() == 1
    f(x.astype(np.int32).astype(np.float32)[:2], y[:2])  # new shape
    assert len(traces) == 2
    f(x, 2.0)  # weak scalar: new signature
    f(x, 3.0)  # same signature
    assert len(traces) == 3
    f(x, np.float32(3.0))  # strong scalar differs from weak
    assert len(traces) == 4


def test_cache_distinguishes_dtypes(rng: np.random.Generator) -> None:
    traces = []

    @mlax.jit
    def f(x):
        traces.append(x.dtype)
        return x + x

    f(np.ones(3, np.float32))
    f(np.ones(3, np.int32))
    f(np.ones(3, np.int32))
    assert traces == [np.float32, np.int32]


def test_static_argnums_and_argnames(rng: np.random.Generator) -> None:
    traces = []

    def f(x, n, *, scale):
        traces.append((n, scale))
        out = x
        for _ in range(n):
            out = out * scale
        return out

    g = mlax.jit(f, static_argnums=1, static_argnames="scale")
    x = random_array(rng, (5,), np.float32)
    np.testing.assert_allclose(g(x, 3, scale=2.0), x * 8, rtol=1e-6)
    g(x, 3, scale=2.0)
    g(x, 2, scale=2.0)
    assert traces == [(3, 2.0), (2, 2.0)]
    # given both, jax infers neither from the other: n passed by keyword is traced (as in jax)
    with pytest.raises(jax.errors.TracerIntegerConversionError):
        g(x, n=1, scale=3.0)
    # given static_argnums alone, the names of those positions are static too
    h = mlax.jit(lambda x, n: x * n if isinstance(n, int) else None, static_argnums=1)
    np.testing.assert_allclose(h(x, n=3), x * 3, rtol=1e-6)


def test_decorator_with_options() -> None:
    @mlax.jit(static_argnames=("axis",))
    def f(x, axis):
        return mnp.exp(x) if axis == 0 else -x

    np.testing.assert_allclose(f(np.zeros(2, np.float32) + 1, axis=0), np.exp(np.ones(2)), rtol=1e-6)
    np.testing.assert_allclose(f(np.ones(2, np.float32), axis=1), -np.ones(2))


def test_unhashable_static_argument() -> None:
    f = mlax.jit(lambda x, cfg: x, static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static argument"):
        f(np.ones(2), {"a": 1})


def test_pytree_arguments_and_results(rng: np.random.Generator) -> None:
    params = Params(random_array(rng, (4, 3), np.float32), random_array(rng, (3,), np.float32))
    batch = {"x": random_array(rng, (2, 4), np.float32), "scale": 0.5}

    def f(p, data):
        h = mnp.tanh(data["x"] * data["scale"]).sum(axis=0)
        return {"out": h, "pair": (p.b + 1.0, p.w)}

    def f_jax(p, data):
        h = jnp.tanh(data["x"] * data["scale"]).sum(axis=0)
        return {"out": h, "pair": (p.b + 1.0, p.w)}

    out = mlax.jit(f)(params, batch)
    assert_same(out, jax.jit(f_jax)(params, batch), rtol=1e-5)
    assert isinstance(out["pair"], tuple)


def test_non_array_argument_is_named() -> None:
    f = mlax.jit(lambda x, opts: x)
    with pytest.raises(TypeError, match=r"Argument opts\['mode'\] of lambda has type str"):
        f(np.ones(2), {"mode": "fast"})


def test_non_array_output_is_an_error() -> None:
    with pytest.raises(TypeError, match="returned a value of type str"):
        mlax.jit(lambda x: (x, "done"))(np.ones(2))


def test_returns_input_and_constant(rng: np.random.Generator) -> None:
    x = random_array(rng, (2, 3), np.float32)
    a, b, c = mlax.jit(lambda x: (x, 2.0, np.arange(3)))(x)
    np.testing.assert_array_equal(a, x)
    assert b.dtype == np.float32 and b.weak_type and float(b) == 2.0
    np.testing.assert_array_equal(c, np.arange(3))


def test_lower_as_text_has_locations(rng: np.random.Generator) -> None:
    def model(x):
        return mnp.tanh(x) * x

    text = mlax.jit(model).lower(random_array(rng, (3,), np.float32)).as_text("mlax")
    assert "func.func @model(%arg0: tensor<3xf32>" in text
    assert '"mlax.tanh"' in text and '"mlax.mul"' in text
    assert "test_jit.py" in text and '"x"' in text  # the user's file and the argument name
    plain = mlax.jit(model).lower(np.ones(3, np.float32)).as_text("mlax", debug_info=False)
    assert "loc(" not in plain


def test_lower_unknown_stage() -> None:
    with pytest.raises(ValueError, match="unknown stage 'bogus'"):
        mlax.jit(lambda x: x).lower(np.ones(1)).as_text("bogus")


def test_lower_compile_and_call(rng: np.random.Generator) -> None:
    x = random_array(rng, (4,), np.float32)
    compiled = mlax.jit(lambda x: mnp.exp(x) + 1).lower(x).compile()
    np.testing.assert_allclose(compiled(x), np.exp(x) + 1, rtol=1e-6)
    with pytest.raises(TypeError, match="Argument types differ"):  # jax's words
        compiled(np.ones(5, np.float32))


def test_make_mlir() -> None:
    text = mlax.make_mlir(lambda a, b: mnp.exp(a) + b)(np.ones(2, np.float32), 1.0)
    assert '"mlax.exp"' in text and '"mlax.add"' in text and "loc(" not in text


def test_jit_inside_jit_inlines(rng: np.random.Generator) -> None:
    inner = mlax.jit(lambda x: x * 2.0)
    outer = mlax.jit(lambda x: inner(x) + inner(x + 1.0))
    x = random_array(rng, (3,), np.float32)
    np.testing.assert_allclose(outer(x), 4 * x + 2, rtol=1e-6)
    assert "func.call" not in outer.lower(x).as_text("mlax")


def test_inputs_are_not_modified(rng: np.random.Generator) -> None:
    x = random_array(rng, (3,), np.float32)
    saved = x.copy()
    out = mlax.jit(lambda x: x)(x)
    np.testing.assert_array_equal(x, saved)
    assert x.flags.writeable
    assert not np.shares_memory(np.asarray(out), x) or not np.asarray(out).flags.writeable


def test_leaked_tracer_is_an_error() -> None:
    leaked = []

    @mlax.jit
    def f(x):
        leaked.append(x)
        return x

    f(np.ones(2, np.float32))
    with pytest.raises(mlax.UnexpectedTracerError, match="outside of it"):
        mnp.exp(leaked[0])


def test_mlir_module_is_a_copy_for_passes(rng: np.random.Generator) -> None:
    from mlax.passes.pipeline import run_pipeline

    def f(x):
        return mnp.exp(x) + mnp.exp(x)

    lowered = mlax.jit(f).lower(random_array(rng, (3,), np.float32))
    module = lowered.mlir_module()
    run_pipeline(module, "builtin.module(mlax-cleanup)")
    assert str(module).count('"mlax.exp"') == 1
    assert lowered.as_text("mlax").count('"mlax.exp"') == 2  # the cached program is untouched


def test_jit_of_a_jitted_function_keeps_its_own_options(rng: np.random.Generator) -> None:
    inner = mlax.jit(lambda x: x * 2.0)
    outer = mlax.jit(inner, backend="interpreter")
    assert outer.backend == "interpreter" and inner.backend == mlax.config.backend
    x = rng.normal(size=3).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(outer(x)), x * 2.0)


def test_lowered_compile_takes_jaxs_keywords() -> None:
    x = np.arange(3, dtype=np.float32)
    expected = jax.jit(lambda v: v * 2).lower(x).compile(compiler_options=None, device_assignment=None)(x)
    lowered = mlax.jit(lambda v: v * 2).lower(x)
    for compiled in (lowered.compile(None), lowered.compile(compiler_options={}),
                     lowered.compile(compiler_options=None, device_assignment=None)):
        assert_same(compiled(x), expected)
    # XLA's debug options (equinox's tests pass them): checked by XLA as in jax, unread by mlax
    assert_same(lowered.compile(compiler_options={"xla_gpu_autotune_level": "0"})(x), expected)
    bad = {"an option that does not make sense": "bad value"}
    with pytest.raises(jax.errors.JaxRuntimeError) as jax_error:
        jax.jit(lambda v: v * 2).lower(x).compile(compiler_options=bad)
    with pytest.raises(jax.errors.JaxRuntimeError) as error:
        lowered.compile(compiler_options=bad)
    assert str(error.value) == str(jax_error.value)
    with pytest.raises(TypeError, match="compiler_options must be a dict"):
        lowered.compile(compiler_options=["xla_gpu_autotune_level"])


def test_jitted_function_has_the_wrapped_signature() -> None:
    """``inspect.signature`` of a jitted function, not following ``__wrapped__`` (chex's
    fake_pmap), is the function's, as jax's: not a builtin's without one."""
    import inspect

    def f(x, y=2, *, mode="a"):
        return x

    for follow in (True, False):
        assert inspect.signature(mlax.jit(f), follow_wrapped=follow) == \
            inspect.signature(jax.jit(f), follow_wrapped=follow)
    assert inspect.signature(mlax.jit(f, static_argnames="mode")).bind(1, mode="b").args == (1,)
