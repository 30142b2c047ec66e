"""Constants that are broadcasts stay broadcasts from the tracer to StableHLO (issue 34).

A scalar broadcast against a big operand (``0.5 * x``), an array broadcast against one
(``jnp.where(mask, x, ...)``) and an eager ``jnp.full`` are traced as a splat constant or a small
constant and a ``broadcast_in_dim``, and every pass keeps them so. The programs here work on
tensors of 2**48 elements (a PiB of f32): building any of them in full fails at once
(MemoryError), so these tests fail loudly rather than slowly if a full-size array comes back.
"""

from __future__ import annotations

import re
from pathlib import Path

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import mlax
import mlax.numpy as jnp

HUGE = 1 << 24  # a HUGE x HUGE tensor has 2**48 elements
SMALL = 4096  # the most elements a constant that is not a splat may hold in these programs

_CONSTANT = re.compile(r'\.constant"\(\) \{value = dense<(.*?)> : tensor<([^>]*)>')


def _big_constants(text: str) -> list[str]:
    """The constants of ``text`` that hold more than SMALL elements one by one (not a splat)."""
    big = []
    for value, type_text in _CONSTANT.findall(text):
        dims = [int(d) for d in type_text.split("x")[:-1]]
        splat = not (value.startswith(("[", '"0x')))
        if not splat and int(np.prod(dims, dtype=object)) > SMALL:
            big.append(f"dense<{value[:40]}...> : tensor<{type_text}>")
    return big


def _check_every_stage(fun, *args: jax.ShapeDtypeStruct, tmp_path: Path) -> dict[str, str]:
    """Lower ``jit(fun)`` for XLA with the IR dumped after every pass; each dump, the traced IR
    and the StableHLO text must be free of big constants. Returns the texts by file name."""
    mlax.config.update("dump_dir", str(tmp_path))
    try:
        lowered = mlax.jit(fun, backend="xla").lower(*args)
        texts = {"traced": lowered.as_text("mlax", debug_info=False), "jax": lowered.as_text()}
    finally:
        mlax.config.update("dump_dir", None)
    texts.update({p.name: p.read_text() for p in sorted(tmp_path.glob("*.mlir"))})
    assert any("mlax-expand-transforms" in name for name in texts)
    assert any("mlax-lower-to-stablehlo" in name for name in texts)
    for name, text in texts.items():
        assert not _big_constants(text), (name, _big_constants(text))
    return texts


def test_scalar_constants_stay_splats_through_grad_and_vmap(tmp_path: Path) -> None:
    def row_loss(row):
        return jnp.sum(0.5 * row * row + 1.0)

    def loss(x):
        return jnp.sum(mlax.vmap(row_loss)(x))

    x = jax.ShapeDtypeStruct((4, HUGE, HUGE), np.float32)
    texts = _check_every_stage(mlax.grad(loss), x, tmp_path=tmp_path)
    splat = f"dense<5.000000e-01> : tensor<{HUGE}x{HUGE}xf32>"
    assert splat in texts["traced"]
    stablehlo = next(text for name, text in texts.items() if "mlax-lower-to-stablehlo" in name)
    assert '"stablehlo.constant"() {value = dense<5.000000e-01>' in stablehlo


def test_broadcast_mask_is_a_small_constant_and_a_broadcast(tmp_path: Path) -> None:
    mask = np.tril(np.ones((64, 64), bool))

    def loss(x):
        return jnp.sum(jnp.where(mask, x, -1e9))

    x = jax.ShapeDtypeStruct((1 << 36, 64, 64), np.float32)
    texts = _check_every_stage(mlax.grad(loss), x, tmp_path=tmp_path)
    traced = texts["traced"]
    assert ": () -> tensor<64x64xi1>" in traced
    assert re.search(r'"mlax.broadcast_in_dim"\(%\w+\) \{broadcast_dimensions = array<i64: 1, 2>, '
                     r"shape = array<i64: 68719476736, 64, 64>\}", traced)


def test_eager_full_is_traced_as_a_splat(tmp_path: Path) -> None:
    threes = jnp.full((HUGE, HUGE), 3.0)  # eager: a read-only broadcast of one value
    assert float(threes[5, 7]) == 3.0
    x = jax.ShapeDtypeStruct((HUGE, HUGE), np.float32)
    texts = _check_every_stage(lambda x: x * threes, x, tmp_path=tmp_path)
    assert f"dense<3.000000e+00> : tensor<{HUGE}x{HUGE}xf32>" in texts["traced"]


def test_numbers_with_broadcast_constants_match_jax() -> None:
    """The same program at a size that runs: small constants, broadcasts and splats above the
    size where eager broadcasts stay views (attrs.SPLAT_VIEW_ELEMENTS) give jax's numbers."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 96, 256)).astype(np.float32)
    rows = np.arange(256, dtype=np.float32)

    def loss(lib, x):
        np_ = lib.numpy
        masked = np_.where(np.tril(np.ones((96, 256), bool)), x, -3.0)
        return np_.sum(np_.tanh(0.5 * masked + rows) * np_.full(x.shape, 2.0, np.float32))

    for backend in ("cpu", "xla"):
        got = mlax.jit(mlax.value_and_grad(lambda x: loss(mlax, x)), backend=backend)(x)
        want = jax.jit(jax.value_and_grad(lambda x: loss(jax, x)))(x)
        np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]), rtol=1e-5)
        np.testing.assert_allclose(np.asarray(got[1]), np.asarray(want[1]), rtol=1e-5, atol=1e-6)


def test_splat_of_a_sharded_program_stays_a_splat(mesh: Mesh, tmp_path: Path) -> None:
    """mlax-partition makes a splat at each device's shape, as a splat."""
    sharding = NamedSharding(mesh, P("x", "y"))
    x = jax.ShapeDtypeStruct((HUGE, HUGE), np.float32, sharding=sharding)
    mlax.config.update("dump_dir", str(tmp_path))
    try:
        mlax.jit(lambda x: x * 0.5, in_shardings=sharding, backend="xla").lower(x).as_text()
    finally:
        mlax.config.update("dump_dir", None)
    partitioned = next(p.read_text() for p in tmp_path.glob("*mlax-partition*.mlir"))
    assert f"dense<5.000000e-01> : tensor<{HUGE // 2}x{HUGE // 2}xf32>" in partitioned
    assert not _big_constants(partitioned)
