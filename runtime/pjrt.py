"""The small interface mlax's XLA backend uses of jax, jaxlib and their PJRT client.

Several of these names are private to jax (``jax._src.lib.xla_client``, ``jax._src.lib._jax``,
``jax._src.core``, ``jax._src.interpreters.mlir``, and the private fields of
``jax.export.Exported``); they are used here only, so that a jax release that moves them
breaks one module, and tests/runtime/test_pjrt.py fails loudly naming what moved. Everything
else in mlax talks to XLA through the functions below.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax._src import core as _jax_core
from jax._src.lib import _jax
from jax._src.lib import xla_client as _xla_client

Device = Any  # jaxlib's Device (jax.Device)
LoadedExecutable = Any  # jaxlib's LoadedExecutable
DeviceArray = jax.Array

# GPU first, as jax.default_backend() orders platforms.
_PLATFORM_ORDER = ("cuda", "rocm", "gpu", "tpu", "cpu")


class XlaError(RuntimeError):
    """XLA refused or failed to compile or run a program (its own message, located in our text)."""


def platforms() -> list[str]:
    """The XLA platforms jaxlib can reach in this process, GPU/TPU before CPU."""
    found = {device.platform for device in jax.devices()} | {"cpu"}
    return sorted(found, key=lambda p: _PLATFORM_ORDER.index(p) if p in _PLATFORM_ORDER else 0)


def devices(platform: str | None = None) -> list[Device]:
    """The devices of ``platform`` (the first platform present when None)."""
    try:
        return list(jax.devices(platform or platforms()[0]))
    except RuntimeError as error:
        raise XlaError(f"no XLA devices for platform {platform!r}: {error}") from None


@functools.cache
def device_count() -> int:
    """How many XLA devices this process has, over every platform."""
    return sum(len(jax.devices(platform)) for platform in platforms())


def compile(text: str | bytes, device: Device) -> LoadedExecutable:
    """A StableHLO module (text, or a portable artifact), its entry named ``main``, compiled by
    XLA's own parser and compiler for ``device``: the check that what mlax prints is what XLA
    reads (the backend itself compiles through `jitted_program`)."""
    try:
        return device.client.compile_and_load(text, _xla_client.DeviceList((device,)),
                                              _xla_client.CompileOptions())
    except jax.errors.JaxRuntimeError as error:
        raise XlaError(str(error)) from None


def copy_to(array: DeviceArray, device: Device) -> DeviceArray:
    """A device buffer moved to another device."""
    return jax.device_put(array, device)


def device_of(array: DeviceArray) -> Device:
    (device,) = array.devices()
    return device


def jitted_program(text: str, in_avals: Sequence[tuple[tuple[int, ...], np.dtype]],
                   out_avals: Sequence[tuple[tuple[int, ...], np.dtype]], device: Device,
                   donated: Sequence[int] = ()) -> Callable[..., Any]:
    """Our StableHLO program as a jax.jit-compiled callable on ``device``: the module is
    wrapped as a `jax.export.Exported` (what ``jax.export`` itself would have made of it) and
    called through ``jax.jit``, so a call takes jax's C++ dispatch path (NumPy arrays and
    device buffers in, device buffers out) and compiles once, on the first call, in jax's
    cache. Its fields other than the module follow jax's calling convention for one device."""
    n, m = len(in_avals), len(out_avals)
    shaped = [_jax_core.ShapedArray(shape, dtype) for shape, dtype in in_avals]
    exported = jax.export.Exported(
        fun_name="mlax", in_tree=jax.tree_util.tree_structure((tuple(range(n)), {})),
        in_avals=tuple(shaped), out_tree=jax.tree_util.tree_structure(tuple(range(m))),
        out_avals=tuple(_jax_core.ShapedArray(shape, dtype) for shape, dtype in out_avals),
        _has_named_shardings=True, _in_named_shardings=(None,) * n, _out_named_shardings=(None,) * m,
        in_shardings_hlo=(None,) * n, out_shardings_hlo=(None,) * m, nr_devices=1,
        platforms=(device.platform,), ordered_effects=(), unordered_effects=(),
        disabled_safety_checks=(), mlir_module_serialized=portable_artifact(text),
        calling_convention_version=jax.export.maximum_supported_calling_convention_version,
        module_kept_var_idx=tuple(range(n)), uses_global_constants=False, _get_vjp=None)
    sharding = jax.sharding.SingleDeviceSharding(device)
    return jax.jit(exported.call, in_shardings=(sharding,) * n, out_shardings=(sharding,) * m,
                   donate_argnums=tuple(donated))


JaxRuntimeError = jax.errors.JaxRuntimeError


def compile_jitted(jitted: Any, in_avals: Sequence[tuple[tuple[int, ...], np.dtype]]) -> Any:
    """``jitted`` (from `jitted_program`) compiled now: XLA's errors come at compile time, as
    XlaError, and the result is callable on arrays of ``in_avals``."""
    shapes = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in in_avals]
    try:
        return jitted.lower(*shapes).compile()
    except (JaxRuntimeError, ValueError) as error:
        raise XlaError(str(error)) from None


def jax_ir_context() -> Any:
    """A jaxlib MLIR context with jax's dialects (func, stablehlo, chlo, sdy) registered, for
    reading StableHLO that mlax's own MLIR cannot parse (pretty text, bytecode). jax builds its
    contexts this way and has no public equivalent (``jax.extend.mlir`` has the dialect
    modules, but registering the upstream dialects needs jax's internal registry)."""
    from jax._src.interpreters import mlir as jax_mlir

    return jax_mlir.make_ir_context()


def portable_artifact(text: str) -> bytes:
    """A StableHLO portable artifact (versioned bytecode) of module ``text``, readable by
    later XLA releases: what the GPU check ships to another machine. jax's own export path,
    which also turns the chlo ops mlax emits (erf, top_k, ...) into StableHLO."""
    from jaxlib.mlir.dialects import stablehlo

    try:
        return _jax.mlir.serialize_portable_artifact(text, stablehlo.get_current_version(), False)
    except JaxRuntimeError as error:
        raise XlaError(str(error)) from None
