"""The XLA backend: programs agree with the CPU backend and JAX; results stay on their device
between calls and convert to NumPy without a copy; donation; stages; dumps; errors."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.backends.xla import pjrt
from tests.oracle import assert_same, random_array


def mlp(params, x):
    (w1, b1), (w2, b2) = params
    return mnp.tanh(x @ w1 + b1) @ w2 + b2


def jax_mlp(params, x):
    (w1, b1), (w2, b2) = params
    return jnp.tanh(x @ w1 + b1) @ w2 + b2


def _params(rng: np.random.Generator):
    return [(random_array(rng, (5, 8), np.float32), random_array(rng, (8,), np.float32)),
            (random_array(rng, (8, 3), np.float32), random_array(rng, (3,), np.float32))]


def test_mlp_agrees_with_cpu_backend_and_jax(rng: np.random.Generator) -> None:
    params, x = _params(rng), random_array(rng, (4, 5), np.float32)
    got = mlax.jit(mlp, backend="xla")(params, x)
    assert_same(got, mlax.jit(mlp, backend="cpu")(params, x), rtol=1e-5)
    assert_same(got, jax.jit(jax_mlp)(params, x), rtol=1e-6)


def test_grad_through_the_xla_backend(rng: np.random.Generator) -> None:
    params, x = _params(rng), random_array(rng, (4, 5), np.float32)
    loss = lambda p, x: mnp.mean(mlp(p, x) ** 2)  # noqa: E731
    jax_loss = lambda p, x: jnp.mean(jax_mlp(p, x) ** 2)  # noqa: E731
    got = mlax.jit(mlax.grad(loss), backend="xla")(params, x)
    assert_same(got, jax.jit(jax.grad(jax_loss))(params, x), rtol=2e-5, atol=1e-6)


def test_results_keep_their_device_buffer(rng: np.random.Generator) -> None:
    f = mlax.jit(lambda x: x * 2.0 + 1.0, backend="xla")
    x = random_array(rng, (64,), np.float32)
    y = f(x)
    assert y._host is None and isinstance(y._device, pjrt.DeviceArray)
    z = f(y)  # the buffer goes in as it is: nothing is read back to the host
    assert y._host is None
    host = np.asarray(z)
    assert np.shares_memory(host, np.asarray(z._device))  # zero-copy on the CPU
    assert not host.flags.writeable
    np.testing.assert_array_equal(host, (x * 2 + 1) * 2 + 1)
    assert z.device.platform == "cpu"
    assert z.block_until_ready() is z


def test_eager_ops_read_device_results(rng: np.random.Generator) -> None:
    x = random_array(rng, (3, 4), np.float32)
    y = mlax.jit(lambda x: x + 1.0, backend="xla")(x)
    assert_same(mnp.sum(y, axis=0), np.sum(x + 1.0, axis=0), rtol=1e-6)
    assert_same(mlax.jit(lambda y: y * 3.0, backend="cpu")(y), (x + 1.0) * 3.0)


def test_user_inputs_are_never_modified(rng: np.random.Generator) -> None:
    x = random_array(rng, (16,), np.float32)
    before = x.copy()
    f = mlax.jit(lambda x: x * 2.0, backend="xla", donate_argnums=0)
    out = f(x)
    np.testing.assert_array_equal(x, before)
    x[...] = 0.0  # the result does not alias the user's buffer
    np.testing.assert_array_equal(np.asarray(out), before * 2.0)


def test_donation_reuses_an_array_buffer(rng: np.random.Generator) -> None:
    f = mlax.jit(lambda x: x * 2.0, backend="xla", donate_argnums=0)
    assert 'tf.aliasing_output = 0 : i32' in f.lower(np.ones(8, np.float32)).as_text("stablehlo")
    source = random_array(rng, (8,), np.float32)
    x = mlax.jit(lambda x: x * 1.5, backend="xla")(source)
    y = f(x)  # x was never read on the host: its buffer is free to become y's
    np.testing.assert_array_equal(np.asarray(y), source * 1.5 * 2.0)
    assert x._device.is_deleted()


def test_donation_of_pytree_leaves(rng: np.random.Generator) -> None:
    f = mlax.jit(lambda s, x: ({"a": s["a"] + x, "b": s["b"] * x}), backend="xla", donate_argnums=0)
    text = f.lower({"a": np.ones(3, np.float32), "b": np.ones(3, np.float32)},
                   np.ones(3, np.float32)).as_text("stablehlo")
    assert text.count("tf.aliasing_output") == 2


def test_stages_of_the_xla_backend(rng: np.random.Generator) -> None:
    lowered = mlax.jit(lambda x: mnp.tanh(x) * 2.0, backend="xla").lower(np.ones((2, 3), np.float32))
    assert lowered.STAGES == ("mlax", "partitioned", "stablehlo", "hlo")
    assert '"mlax.tanh"' in lowered.as_text("partitioned")  # mlax IR, no mesh: as traced
    text = lowered.as_text("stablehlo")
    assert '"stablehlo.tanh"' in text and "func.func @main" in text
    device = pjrt.devices("cpu")[0]
    pjrt.compile(lowered.as_text("stablehlo", debug_info=False), device)  # XLA accepts the text
    assert "tanh" in lowered.as_text("hlo") and "HloModule" in lowered.as_text("hlo")
    with pytest.raises(ValueError, match="available stages"):
        lowered.as_text("linalg")
    cpu = mlax.jit(lambda x: x, backend="cpu").lower(np.ones(2, np.float32))
    assert "stablehlo" not in cpu.STAGES and "llvm" in cpu.STAGES


def test_entry_named_main_and_a_private_main(rng: np.random.Generator) -> None:
    def main(x):
        return mlax.lax.cond(x[0] > 0, lambda v: v + 1.0, lambda v: v - 1.0, x)

    x = random_array(rng, (4,), np.float32)
    assert_same(mlax.jit(main, backend="xla")(x), np.where(x[0] > 0, x + 1, x - 1))


def test_dump_dir(tmp_path: Path) -> None:
    mlax.config.update("dump_dir", str(tmp_path))
    try:
        mlax.jit(lambda x: x * 3.0, backend="xla")(np.ones(2, np.float32))
    finally:
        mlax.config.update("dump_dir", None)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert any(n.endswith(".00.input.mlir") for n in names)
    assert any("mlax-lower-to-stablehlo" in n for n in names)
    assert any(n.endswith(".stablehlo.mlir") for n in names) and any(n.endswith(".hlo.txt") for n in names)


def test_unknown_backend_names_the_available_ones() -> None:
    with pytest.raises(RuntimeError, match="Available backends are .*xla"):
        mlax.jit(lambda x: x, backend="tpu")


def test_mlax_backend_environment_variable() -> None:
    code = ("import numpy as np, mlax; print(mlax.config.backend); "
            "y = mlax.jit(lambda x: x + 1.0)(np.ones(2, np.float32)); print(type(y._device).__name__)")
    env = dict(os.environ, MLAX_BACKEND="xla", JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0] == "xla" and out[1] != "NoneType"


def test_parallel_calls_from_threads(rng: np.random.Generator) -> None:
    f = mlax.jit(lambda x: mnp.sum(x * x), backend="xla")
    inputs = [random_array(rng, (100,), np.float32) for _ in range(8)]
    results: dict[int, np.ndarray] = {}

    def work(i: int) -> None:
        for _ in range(20):
            results[i] = np.asarray(f(inputs[i]))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i, x in enumerate(inputs):
        np.testing.assert_allclose(results[i], np.sum(x * x), rtol=1e-5)


def test_jit_on_a_device(rng: np.random.Generator) -> None:
    device = jax.devices("cpu")[0]
    x = random_array(rng, (4,), np.float32)
    y = mlax.jit(lambda x: x * 2.0, device=device)(x)
    assert y.device == device
    np.testing.assert_array_equal(np.asarray(y), x * 2.0)
    with pytest.raises(ValueError, match="both a device and a backend"):
        mlax.jit(lambda x: x, device=device, backend="xla")
    with pytest.raises(TypeError, match="XLA device"):
        mlax.jit(lambda x: x, device="cpu")


def test_changing_an_input_after_the_call_does_not_change_the_result(rng: np.random.Generator) -> None:
    """jax.jit aliases a NumPy argument while the (asynchronous) program runs; mlax copies it."""
    x = random_array(rng, (600, 600), np.float32)
    f = mlax.jit(lambda x: mnp.tanh(x @ x) + x, backend="xla")
    expected = np.asarray(f(x)).copy()
    for _ in range(3):
        y = f(x)
        saved = x.copy()
        x[...] = 0.0
        np.testing.assert_array_equal(np.asarray(y), expected)
        x[...] = saved


def test_jax_arrays_go_in_as_device_buffers(rng: np.random.Generator) -> None:
    x = jax.device_put(random_array(rng, (5,), np.float32))
    y = mlax.jit(lambda x: x * 3.0, backend="xla")(x)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x) * 3.0)
    assert_same(mlax.jit(lambda x: x * 3.0, backend="cpu")(x), np.asarray(x) * 3.0)
