"""mlax.lax.fft against jax.lax.fft: the four kinds over 1 to 3 axes, batched, odd and
non-power-of-2 lengths, f32/f64 and c64/c128, eagerly (numpy.fft), on the native CPU backend
(MKL's DFTI) and on XLA; the op's errors; the IR it traces to."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import pytest

import mlax
from mlax import lax
from tests.fft.helpers import BACKENDS, DTYPES, same
from tests.oracle import random_normal, run

SHAPES = [((8,), ()), ((7,), (3,)), ((1,), (2,)), ((12, 5), ()), ((6, 9), (2, 1)), ((3, 4, 5), (2,)),
          ((2, 7, 6), ())]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("lengths, batch", SHAPES)
@pytest.mark.parametrize("precision", ["32", "64"])
def test_every_kind_against_jax(rng: np.random.Generator, request: pytest.FixtureRequest, backend: str,
                                lengths: tuple[int, ...], batch: tuple[int, ...], precision: str) -> None:
    if precision == "64":
        request.getfixturevalue("x64")
    real, complex_ = DTYPES["f" + precision], DTYPES["c" + ("64" if precision == "32" else "128")]
    half = (*lengths[:-1], lengths[-1] // 2 + 1)
    shape = batch + lengths
    cases = {"FFT": random_normal(rng, shape, complex_), "IFFT": random_normal(rng, shape, complex_),
             "RFFT": random_normal(rng, shape, real), "IRFFT": random_normal(rng, batch + half, complex_)}
    for kind, x in cases.items():
        same(run(lambda v, kind=kind: lax.fft(v, kind, lengths), backend, x),
             jax.lax.fft(x, kind, lengths))


@pytest.mark.parametrize("backend", BACKENDS)
def test_operand_conversions_and_kind_names(rng: np.random.Generator, backend: str) -> None:
    """Integers become complex64 (RFFT: float32), kinds by name in either case or as FftType."""
    x = rng.integers(-5, 5, (3, 8)).astype(np.int32)
    for kind in ("fft", "IFFT", lax.FftType.RFFT, "rfft"):
        same(run(lambda v, kind=kind: lax.fft(v, kind, (8,)), backend, x), jax.lax.fft(x, kind, (8,)))
    same(run(lambda v: lax.fft(v, "fft", ()), backend, x.astype(np.float32)),
         jax.lax.fft(x.astype(np.float32), "fft", ()))
    assert lax.FftType is jax.lax.FftType


def _raises_like_jax(fn: Any, jax_fn: Any) -> BaseException:
    with pytest.raises(Exception) as expected:
        jax_fn()
    with pytest.raises(type(expected.value)) as got:
        fn()
    return got.value


def test_errors_are_jaxs_kind() -> None:
    c = np.ones((4, 8), np.complex64)
    r = np.ones((4, 8), np.float32)
    cases = [
        lambda m: m.lax.fft(r, "bad", (8,)),
        lambda m: m.lax.fft(r, 3.5, (8,)),
        lambda m: m.lax.fft(c, "rfft", (8,)),
        lambda m: m.lax.fft(c, "fft", (4, 4, 8)),
        lambda m: m.lax.fft(c, "fft", (7,)),
        lambda m: m.lax.fft(r.astype(np.float16), "rfft", (8,)),
    ]
    for case in cases:
        _raises_like_jax(lambda case=case: case(mlax), lambda case=case: case(jax))
    with pytest.raises(ValueError, match=r"mlax.fft: FFT operand shape \(4, 8\) must end in fft_lengths"):
        lax.fft(c, "fft", (7,))


def test_traces_to_one_fft_op() -> None:
    lowered = mlax.jit(lambda x: lax.fft(x, "rfft", (4, 6))).lower(np.ones((2, 4, 6), np.float32))
    text = lowered.as_text("mlax")
    assert '"mlax.fft"(%arg0) {fft_lengths = array<i64: 4, 6>, fft_type = "RFFT"}' in text
    assert "(tensor<2x4x6xf32>) -> tensor<2x4x4xcomplex<f32>>" in text


@pytest.mark.parametrize("backend", ["xla", "interpreter"])
@pytest.mark.parametrize("spec", [("x", None, None), ("x", "y", None), (None, None, "y")],
                         ids=["batch", "batch-and-transformed", "transformed"])
def test_sharded(rng: np.random.Generator, backend: str, spec: tuple[Any, ...]) -> None:
    """Over a 2x2 mesh: the batch dimension stays sharded, transformed ones are gathered first."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("x", "y"))
    sharding = NamedSharding(mesh, PartitionSpec(*spec))
    x = random_normal(rng, (4, 6, 8), np.float32)
    fn = mlax.jit(lambda v: lax.fft(v, "RFFT", (6, 8)), in_shardings=sharding, backend=backend)
    same(fn(x), jax.lax.fft(x, "RFFT", (6, 8)))
