"""jax's ahead-of-time API on mlax.jit against jax's own: trace / lower / eval_shape / compile on
random arguments (arrays, scalars, ShapeDtypeStructs, static arguments, kwargs, pytrees), the
stages' structures (args_info, in_tree, out_tree, out_info, jaxpr), StableHLO text, cost and
memory analyses, Compiled's errors, and jit's trace cache shared by jits of one function."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

import jax
import jax.extend.core as jex
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding, PartitionSpec

import mlax
import mlax.numpy as mnp
from mlax import api
from tests.oracle import assert_same, random_array


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(36)


def program(np_mod: Any, x: Any, y: Any, n: int, *, scale: Any = 2.0) -> Any:
    """Elementwise, reduction and matmul results in a nested tree; ``n`` is static."""
    z = x * scale + y
    return {"sum": np_mod.sum(z, axis=0) * n, "pair": (np_mod.tanh(z), z.reshape(-1)), "mm": z @ z.T}


def _pair(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    shape = (int(rng.integers(1, 5)), int(rng.integers(1, 5)))
    return random_array(rng, shape, np.float32), random_array(rng, shape, np.float32)


def _jits() -> tuple[Any, Any]:
    mlax_fn = mlax.jit(lambda x, y, n, scale=2.0: program(mnp, x, y, n, scale=scale), static_argnums=2)
    jax_fn = jax.jit(lambda x, y, n, scale=2.0: program(jnp, x, y, n, scale=scale), static_argnums=2)
    return mlax_fn, jax_fn


def _structs(tree: Any) -> Any:
    return jax.tree.map(lambda s: (s.shape, np.dtype(s.dtype), s.weak_type), tree)


def test_trace_matches_jax(rng: np.random.Generator) -> None:
    x, y = _pair(rng)
    mlax_fn, jax_fn = _jits()
    spec = jax.ShapeDtypeStruct(y.shape, y.dtype)
    traced, expected = mlax_fn.trace(x, spec, 3, scale=1.5), jax_fn.trace(x, spec, 3, scale=1.5)
    assert traced.in_tree == expected.in_tree and traced.out_tree == expected.out_tree
    assert traced.args_info == expected.args_info
    assert _structs(traced.out_info) == _structs(expected.out_info)
    assert traced.out_avals == expected.out_avals
    assert traced.fun_name == expected.fun_name == "<lambda>"
    assert isinstance(traced.jaxpr, jex.ClosedJaxpr)
    assert traced.jaxpr.in_avals == expected.jaxpr.in_avals
    assert traced.jaxpr.out_avals == expected.jaxpr.out_avals
    assert_same(traced.lower().compile()(x, y, scale=1.5), expected.lower().compile()(x, y, scale=1.5),
                rtol=1e-5)
    assert_same(traced(x, y, scale=1.5), jax_fn(x, y, 3, scale=1.5), rtol=1e-5)


def test_lower_takes_shape_dtype_structs(rng: np.random.Generator) -> None:
    """Structs, arrays and scalars lower alike, static arguments by value or by name; the
    struct's lowering is the one a call with arrays uses (one trace)."""
    x, y = _pair(rng)
    traces = []

    def fun(a: Any, b: Any, n: int, *, k: int) -> Any:
        traces.append(1)
        return (a * n + b) ** k

    jitted = mlax.jit(fun, static_argnums=2, static_argnames="k")
    structs = [jax.ShapeDtypeStruct(v.shape, v.dtype) for v in (x, y)]
    lowered = jitted.lower(*structs, 3, k=2)
    expected = jax.jit(fun, static_argnums=2, static_argnames="k").lower(*structs, 3, k=2)
    assert lowered.in_tree == expected.in_tree and lowered.args_info == expected.args_info
    assert lowered.in_avals == expected.in_avals
    assert_same(lowered.compile()(x, y), (x * 3 + y) ** 2, rtol=1e-6)
    count = len(traces)
    assert_same(jitted(x, y, 3, k=2), (x * 3 + y) ** 2, rtol=1e-6)
    assert len(traces) == count  # the call found the struct's trace
    scalar = mlax.jit(lambda v: v * 2).lower(1.5)
    assert scalar.in_avals == jax.jit(lambda v: v * 2).lower(1.5).in_avals  # weak, as jax's


def test_lower_struct_with_sharding(rng: np.random.Generator, mesh: Any) -> None:
    x = random_array(rng, (4, 6), np.float32)
    sharding = NamedSharding(mesh, PartitionSpec("x", None))
    struct = jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)
    lowered = mlax.jit(lambda v: mnp.sin(v) * 2).lower(struct)
    assert "mlax.mesh" in lowered.as_text("mlax")
    out = lowered.compile()(mlax.device_put(x, sharding))
    assert_same(out, jax.jit(lambda v: jnp.sin(v) * 2)(x), rtol=1e-6)
    other = NamedSharding(mesh, PartitionSpec(None, "y"))
    with pytest.raises(ValueError, match="Sharding passed to jit does not match"):
        mlax.jit(lambda v: v, in_shardings=other).lower(struct)


@pytest.mark.parametrize("junk", ["text", object(), [1.0, "text"]])
def test_lower_rejects_junk(junk: Any) -> None:
    def fun(x: Any) -> Any:
        return x

    with pytest.raises(TypeError) as expected:
        jax.jit(fun).lower(junk)
    with pytest.raises(TypeError) as error:
        mlax.jit(fun).lower(junk)
    first = str(expected.value).splitlines()[0]
    assert str(error.value).startswith(first.replace(repr(fun), "fun"))


def test_eval_shape_matches_jax(rng: np.random.Generator) -> None:
    x, y = _pair(rng)
    mlax_fn, jax_fn = _jits()
    assert _structs(mlax_fn.eval_shape(x, y, 2, scale=3)) == _structs(jax_fn.eval_shape(x, y, 2, scale=3))
    assert _structs(mlax_fn.eval_shape(x, 1.0, 2)) == _structs(jax_fn.eval_shape(x, 1.0, 2))

    def outer(v: Any) -> Any:  # inside a trace: the arguments are tracers
        return mnp.zeros(mlax_fn.eval_shape(v, v, 1)["mm"].shape) + v.sum()

    assert_same(mlax.jit(outer)(x), np.zeros((x.shape[0],) * 2, np.float32) + x.sum(), rtol=1e-5)


def test_lowered_stages_match_jax(rng: np.random.Generator) -> None:
    x, y = _pair(rng)

    def fun(a: Any, b: Any) -> Any:
        return {"out": a + b, "n": (b.sum(),)}

    lowered = mlax.jit(fun, donate_argnums=0).lower(x, b=y)
    expected = jax.jit(fun, donate_argnums=0).lower(x, b=y)
    for name in ("in_tree", "out_tree", "args_info", "in_avals", "donate_argnums"):
        assert getattr(lowered, name) == getattr(expected, name), name
    assert _structs(lowered.out_info) == _structs(expected.out_info)
    compiled, jax_compiled = lowered.compile(), expected.compile()
    for name in ("in_tree", "out_tree", "args_info"):
        assert getattr(compiled, name) == getattr(jax_compiled, name), name
    assert_same(compiled(x.copy(), b=y), jax_compiled(x.copy(), b=y), rtol=1e-6)


def _results(text: str) -> list[str]:
    import re

    return re.findall(r'jax\.result_info = "([^"]*)"', text)


def test_as_text_is_jax_stablehlo(rng: np.random.Generator) -> None:
    x, y = _pair(rng)
    mlax_fn, jax_fn = _jits()
    lowered = mlax_fn.lower(x, y, 2)
    text, expected = lowered.as_text(), jax_fn.lower(x, y, 2).as_text()
    assert text.split(" attributes")[0] == expected.split(" attributes")[0] == "module @jit__lambda"
    assert "func.func public @main" in text and "stablehlo." in text and "loc(" not in text
    assert _results(text) == _results(expected)
    assert "loc(" in lowered.as_text(debug_info=True)
    assert lowered.as_text("stablehlo") == text  # the cpu backend has no stage of that name
    assert '"mlax.' in lowered.as_text("mlax")
    imported = mlax.from_stablehlo(text)  # the text is a program: it runs
    assert_same(list(imported(x, y)), jax.tree.leaves(jax_fn(x, y, 2)), rtol=1e-5)
    assert lowered.compiler_ir() is not None and lowered.compiler_ir("bogus") is None
    with pytest.raises(ValueError, match="unknown stage 'hlo'"):
        lowered.as_text("hlo")
    xla = mlax.jit(lambda a: a * 2, backend="xla").lower(x)
    assert '"stablehlo.multiply"' in xla.as_text("stablehlo")  # the xla backend's stage: generic form
    assert "HloModule" in xla.compile().as_text()


def test_cost_and_memory_analysis(rng: np.random.Generator) -> None:
    m, k, n = (int(d) for d in rng.integers(2, 9, size=3))
    a, b = random_array(rng, (m, k), np.float32), random_array(rng, (k, n), np.float32)
    lowered = mlax.jit(lambda p, q: p @ q).lower(a, b)
    expected = jax.jit(lambda p, q: p @ q).lower(a, b)
    assert lowered.cost_analysis()["flops"] == expected.cost_analysis()["flops"] == 2 * m * n * k
    compiled, jax_compiled = lowered.compile(), expected.compile()
    assert compiled.cost_analysis()["flops"] == jax_compiled.cost_analysis()["flops"]
    memory, jax_memory = compiled.memory_analysis(), jax_compiled.memory_analysis()
    names = {n for n in dir(jax_memory) if not n.startswith("_")}
    assert names <= set(dir(memory))
    assert memory.argument_size_in_bytes == jax_memory.argument_size_in_bytes == 4 * (m * k + k * n)
    assert memory.output_size_in_bytes == jax_memory.output_size_in_bytes


def _jax_message(call: Any) -> str:
    with pytest.raises(TypeError) as error:
        call()
    return str(error.value)


def test_compiled_call_errors(rng: np.random.Generator) -> None:
    x, y = _pair(rng)

    def fun(a: Any, b: Any) -> Any:
        return a["w"] * b

    compiled = mlax.jit(fun).lower({"w": x}, b=y).compile()
    jax_compiled = jax.jit(fun).lower({"w": x}, b=y).compile()
    wider = np.zeros((x.shape[0] + 1, x.shape[1]), np.float32)
    for bad_args, bad_kwargs in [(({"w": wider},), {"b": y}), (({"w": x},), {"b": y.astype(np.int32)})]:
        expected = _jax_message(lambda: jax_compiled(*bad_args, **bad_kwargs))  # noqa: B023
        with pytest.raises(TypeError) as error:
            compiled(*bad_args, **bad_kwargs)
        assert str(error.value).startswith(expected)
    for bad in [lambda c: c({"w": x}, y), lambda c: c({"w": x, "v": x}, b=y)]:
        with pytest.raises(TypeError, match="Function compiled with input pytree does not match"):
            bad(compiled)
    with pytest.raises(TypeError, match="b"):
        compiled({"w": x}, b="text")
    with pytest.raises(TypeError, match="Cannot apply JAX transformations"):
        mlax.jit(lambda v: compiled({"w": v}, b=y))(x)
    assert_same(compiled({"w": x}, b=y), jax_compiled({"w": x}, b=y), rtol=1e-6)


@pytest.mark.usefixtures("backend")
def test_compiled_runs_on_every_backend(rng: np.random.Generator) -> None:
    x, y = _pair(rng)
    mlax_fn, jax_fn = _jits()
    compiled = mlax_fn.lower(x, y, 4, scale=0.5).compile()
    assert_same(compiled(x, y, scale=0.5), jax_fn(x, y, 4, scale=0.5), rtol=1e-5)
    assert isinstance(compiled.as_text(), str)


def _counting() -> tuple[Any, list[int]]:
    calls: list[int] = []

    def fun(v: Any) -> Any:
        calls.append(1)
        return v * 2

    return fun, calls


def test_jit_twice_traces_once(rng: np.random.Generator) -> None:
    x = random_array(rng, (3,), np.float32)
    fun, calls = _counting()
    mlax.jit(fun)(x)
    mlax.jit(fun)(x)
    mlax.jit(fun).lower(x)
    assert len(calls) == 1
    mlax.jit(fun, static_argnums=())(x)  # the same options, spelled otherwise
    assert len(calls) == 1
    mlax.jit(fun, backend="interpreter")(x)  # other options: another trace
    assert len(calls) == 2
    mlax.jit(fun).clear_cache()
    mlax.jit(fun)(x)
    assert len(calls) == 3


def test_jit_cache_is_bounded_and_weak(rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch) -> None:
    x = random_array(rng, (2,), np.float32)
    monkeypatch.setattr(api, "_FUNCTIONS_KEPT", 3)
    funs = [_counting()[0] for _ in range(6)]
    for fun in funs:
        mlax.jit(fun)(x)
    assert len(api._SHARED_TRACES) <= 3
    fun, calls = _counting()
    jitted = mlax.jit(fun)
    jitted(x)
    ref, cache = weakref.ref(fun), jitted._cache
    assert len(cache) == 1
    del fun, jitted
    gc.collect()
    assert ref() is None  # the shared cache does not keep the function alive
    assert len(cache) == 0  # and lets go of its traces when it dies


def test_jit_cache_threads(rng: np.random.Generator) -> None:
    x = random_array(rng, (4,), np.float32)
    fun, calls = _counting()
    start = threading.Barrier(4)
    results: list[Any] = []

    def work() -> None:
        start.wait()
        results.append(np.asarray(mlax.jit(fun)(x)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(results) == 4
    for result in results:
        np.testing.assert_array_equal(result, x * 2)


@pytest.mark.parametrize("precision", [None, "HIGH", "HIGHEST"])
def test_compiler_ir_hlo(precision: str | None, rng: np.random.Generator) -> None:
    """compiler_ir("hlo") is XLA's HLO of the program, as jax's (haiku reads a dot's precision)."""
    x = random_array(rng, (3, 3), np.float32)
    lowered = {lib: lib.jit(lambda v, lib=lib: lib.lax.dot(
        v, v, precision=None if precision is None else getattr(lib.lax.Precision, precision))).lower(x)
        for lib in (jax, mlax)}
    texts = {lib: low.compiler_ir(dialect="hlo").as_hlo_text() for lib, low in lowered.items()}
    lines = {lib: next(line for line in text.split("\n") if "dot(" in line) for lib, text in texts.items()}
    wanted = f"operand_precision={{{precision.lower()},{precision.lower()}}}" if precision else None
    for line in lines.values():
        assert (wanted in line) if wanted else ("operand_precision" not in line)
