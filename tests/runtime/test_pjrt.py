"""The guard on jaxlib's private APIs: runtime/pjrt.py is the only module using them, and
this test names what moved if a jax release moves one."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from mlax.runtime import pjrt

PRIVATE = [("jax._src.lib", "xla_client.batched_device_put"),
           ("jax._src.lib", "xla_client.HostBufferSemantics.ZERO_COPY"),
           ("jax._src.lib", "xla_client.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL"),
           ("jax._src.lib", "xla_client.CompileOptions"),
           ("jax._src.lib", "xla_client.DeviceList"),
           ("jax._src.core", "ShapedArray"),
           ("jax._src.interpreters.mlir", "make_ir_context"),
           ("jax._src.lib", "_jax.mlir.serialize_portable_artifact"),
           ("jaxlib.mlir.dialects.stablehlo", "get_current_version")]

PROGRAM = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.multiply"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
"""


@pytest.mark.parametrize(("module", "name"), PRIVATE)
def test_private_jax_api_is_where_mlax_expects_it(module: str, name: str) -> None:
    found = importlib.import_module(module)
    for part in name.split("."):
        assert hasattr(found, part), (
            f"jax moved {module}.{name}, which mlax.runtime.pjrt uses: update that module")
        found = getattr(found, part)


def test_compile_put_execute(rng: np.random.Generator) -> None:
    device = pjrt.devices("cpu")[0]
    executable = pjrt.compile(PROGRAM, device)
    a, b = rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=(2, 3)).astype(np.float32)
    (out,) = pjrt.execute(executable, [pjrt.put(a, device, immutable=False),
                                       pjrt.put(b, device, immutable=True)])
    np.testing.assert_array_equal(np.asarray(out), a * b)
    assert "multiply" in pjrt.optimized_hlo(executable)


def test_a_copied_input_is_independent_of_its_owner(rng: np.random.Generator) -> None:
    device = pjrt.devices("cpu")[0]
    a = rng.normal(size=(2, 3)).astype(np.float32)
    buffer = pjrt.put(a, device, immutable=False)
    expected = a.copy()
    a[...] = 0
    np.testing.assert_array_equal(np.asarray(buffer), expected)


def test_compile_errors_are_xla_errors_located_in_the_text() -> None:
    bad = PROGRAM.replace('"stablehlo.multiply"(%a, %b)', '"stablehlo.multiply"(%a)')
    with pytest.raises(pjrt.XlaError, match=r"\d+:\d+"):
        pjrt.compile(bad, pjrt.devices("cpu")[0])


def test_portable_artifact_is_bytecode_xla_reads(rng: np.random.Generator) -> None:
    chlo = PROGRAM.replace('%0 = "stablehlo.multiply"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>)',
                           '%e = "chlo.erf"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>\n'
                           '  %0 = "stablehlo.multiply"(%e, %b) : (tensor<2x3xf32>, tensor<2x3xf32>)')
    artifact = pjrt.portable_artifact(chlo)
    assert isinstance(artifact, bytes) and artifact.startswith(b"ML\xefR")
    device = pjrt.devices("cpu")[0]
    a, b = rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=(2, 3)).astype(np.float32)
    buffers = [pjrt.put(a, device, False), pjrt.put(b, device, False)]
    (out,) = pjrt.execute(pjrt.compile(artifact, device), buffers)
    (expected,) = pjrt.execute(pjrt.compile(chlo, device), buffers)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))


def test_cpu_is_a_platform() -> None:
    assert "cpu" in pjrt.platforms()
    with pytest.raises(pjrt.XlaError, match="no XLA devices"):
        pjrt.devices("tpu")
