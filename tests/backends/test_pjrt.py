"""The guard on jaxlib's private APIs: backends/xla/pjrt.py is the only module using them, and
this test names what moved if a jax release moves one."""

from __future__ import annotations

import importlib

import jax
import numpy as np
import pytest

from mlax.backends.xla import pjrt

PRIVATE = [("jax._src.lib", "xla_client.CompileOptions"),
           ("jax._src.lib", "xla_client.DeviceList"),
           ("jax._src.core", "ShapedArray"),
           ("jax._src.interpreters.mlir", "make_ir_context"),
           ("jax._src.lib", "_jax.mlir.serialize_portable_artifact"),
           ("jaxlib.mlir.dialects.stablehlo", "get_current_version"),
           ("jax.sharding", "NamedSharding._to_xla_hlo_sharding")]

PROGRAM = """
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "stablehlo.multiply"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
"""


EXPORTED_FIELDS = {"fun_name", "in_tree", "in_avals", "out_tree", "out_avals", "_has_named_shardings",
                   "_in_named_shardings", "_out_named_shardings", "in_shardings_hlo", "out_shardings_hlo",
                   "nr_devices", "platforms", "ordered_effects", "unordered_effects",
                   "disabled_safety_checks", "mlir_module_serialized", "calling_convention_version",
                   "module_kept_var_idx", "uses_global_constants", "_get_vjp"}


def test_exported_has_the_fields_mlax_fills() -> None:
    """pjrt.jitted_program builds a jax.export.Exported field by field."""
    import dataclasses

    assert {f.name for f in dataclasses.fields(jax.export.Exported)} == EXPORTED_FIELDS, (
        "jax changed jax.export.Exported, which mlax.backends.xla.pjrt.jitted_program fills: update it")


@pytest.mark.parametrize(("module", "name"), PRIVATE)
def test_private_jax_api_is_where_mlax_expects_it(module: str, name: str) -> None:
    found = importlib.import_module(module)
    for part in name.split("."):
        assert hasattr(found, part), (
            f"jax moved {module}.{name}, which mlax.backends.xla.pjrt uses: update that module")
        found = getattr(found, part)


def _run(executable, *arrays: np.ndarray) -> np.ndarray:
    device = executable.local_devices()[0]
    (out,) = executable.execute([jax.device_put(a, device) for a in arrays])
    return np.asarray(out)


def test_xla_compiles_our_text(rng: np.random.Generator) -> None:
    a, b = rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=(2, 3)).astype(np.float32)
    np.testing.assert_array_equal(_run(pjrt.compile(PROGRAM, pjrt.devices("cpu")[0]), a, b), a * b)


def test_jitted_program_is_called_through_jax(rng: np.random.Generator) -> None:
    device = pjrt.devices("cpu")[0]
    avals = [((2, 3), np.dtype(np.float32))] * 2
    jitted = pjrt.jitted_program(PROGRAM, avals, avals[:1], device, donated=(0,))
    compiled = pjrt.compile_jitted(jitted, avals)
    a, b = rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=(2, 3)).astype(np.float32)
    x = jax.device_put(a, device)
    (out,) = compiled(x, jax.device_put(b, device))
    np.testing.assert_array_equal(np.asarray(out), a * b)
    assert x.is_deleted()  # donated
    assert "multiply" in compiled.as_text()


def test_compile_errors_of_jitted_programs_are_xla_errors() -> None:
    bad = PROGRAM.replace('"stablehlo.multiply"(%a, %b)', '"stablehlo.multiply"(%a)')
    avals = [((2, 3), np.dtype(np.float32))] * 2
    with pytest.raises(pjrt.XlaError):
        pjrt.compile_jitted(pjrt.jitted_program(bad, avals, avals[:1], pjrt.devices("cpu")[0]), avals)


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
    np.testing.assert_array_equal(_run(pjrt.compile(artifact, device), a, b),
                                  _run(pjrt.compile(chlo, device), a, b))


def test_cpu_is_a_platform() -> None:
    assert "cpu" in pjrt.platforms()
    with pytest.raises(pjrt.XlaError, match="no XLA devices"):
        pjrt.devices("tpu")


def test_hlo_sharding_text_is_gspmds_spelling() -> None:
    """The mhlo.sharding strings of a GSPMD program for a mesh (backends/xla/sharded.py)."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("x", "y"))
    assert pjrt.hlo_sharding_text(NamedSharding(mesh, PartitionSpec("x")), 2) == (
        "{devices=[2,1,2]<=[4] last_tile_dim_replicate}")
    transposed = NamedSharding(mesh, PartitionSpec(("y", "x")))
    assert pjrt.hlo_sharding_text(transposed, 1) == "{devices=[4]<=[2,2]T(1,0)}"


def test_devices_by_id_follow_the_ids_given() -> None:
    ids = [d.id for d in jax.devices()][::-1]
    assert [d.id for d in pjrt.devices_by_id(ids)] == ids
    with pytest.raises(pjrt.XlaError, match="no XLA device has id 12345"):
        pjrt.devices_by_id([12345])
