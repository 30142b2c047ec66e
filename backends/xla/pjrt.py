"""The small interface mlax's XLA backend uses of jax, jaxlib and their PJRT client.

Several of these names are private to jax (``jax._src.lib.xla_client``, ``jax._src.lib._jax``,
``jax._src.core``, ``jax._src.interpreters.mlir``, and the private fields of
``jax.export.Exported``); they are used here only, so that a jax release that moves them
breaks one module, and tests/backends/test_pjrt.py fails loudly naming what moved. Everything
else in mlax talks to XLA through the functions below.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import jax
import numpy as np
from jax._src import core as _jax_core
from jax._src.lib import _jax
from jax._src.lib import xla_client as _xla_client

Device = Any  # jaxlib's Device (jax.Device)
LoadedExecutable = Any  # jaxlib's LoadedExecutable
DeviceArray = jax.Array
Sharding = Any  # jax.sharding.Sharding

# GPU first, as jax.default_backend() orders platforms.
_PLATFORM_ORDER = ("cuda", "rocm", "gpu", "tpu", "cpu")


class XlaError(RuntimeError):
    """XLA refused or failed to compile or run a program (its own message, located in our text)."""


@functools.cache
def initialize_lapack() -> None:
    """Bind jaxlib's LAPACK custom-call targets (``lapack_spotrf_ffi``...) to SciPy's LAPACK, as jax
    does before lowering a decomposition; programs that call them need it once per process."""
    from jax._src.lib import lapack

    lapack.prepare_lapack_call("potrf_ffi", np.dtype(np.float32))


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


def copy_to(array: DeviceArray, where: Device | Sharding) -> DeviceArray:
    """A device buffer moved to another device, or resharded as ``where`` says."""
    return jax.device_put(array, where)


def is_on(array: DeviceArray, sharding: Sharding) -> bool:
    """Whether ``array`` is laid out as ``sharding`` says (same devices, same tiles)."""
    own = array.sharding
    return own == sharding or (own.device_set == sharding.device_set
                               and own.is_equivalent_to(sharding, array.ndim))


def single_device(device: Device) -> Sharding:
    return jax.sharding.SingleDeviceSharding(device)


def place(value: Any, sharding: Sharding) -> Any:
    """A host value as the program takes it: as it is where jax's dispatch places it (one
    process's devices), else the global array whose addressable shards this process holds
    (every process passes the same global value, as with ``jax.device_put``)."""
    if sharding.is_fully_addressable:
        return value
    value = np.asarray(value)
    return jax.make_array_from_callback(value.shape, sharding, lambda index: value[index])


def devices_by_id(ids: Sequence[int]) -> list[Device]:
    """The devices (of every process, of the platforms present) with these jax ids, in order:
    a mesh's ``device_ids``. Global ids are not 0..N-1 once several processes run."""
    known = {d.id: d for platform in platforms() for d in jax.devices(platform)}
    missing = [i for i in ids if i not in known]
    if missing:
        raise XlaError(f"no XLA device has id {missing[0]} (known ids: {sorted(known)})")
    return [known[i] for i in ids]


@dataclass(frozen=True)
class Placement:
    """Where a program for a mesh takes its arguments and puts its results: one jax Sharding
    each (NamedShardings over the mesh's devices)."""

    inputs: tuple[Sharding, ...]
    outputs: tuple[Sharding, ...]

    @property
    def devices(self) -> int:
        return max((len(s.device_set) for s in (*self.inputs, *self.outputs)), default=1)


def uses_shardy() -> bool:
    """Whether jax partitions with Shardy (its default) rather than GSPMD: the two read
    different boundary annotations (sdy.sharding vs mhlo.sharding) in a program for a mesh."""
    return bool(jax.config.jax_use_shardy_partitioner)


def _hlo_sharding(sharding: Sharding, ndim: int) -> Any:
    return sharding._to_xla_hlo_sharding(ndim)


def hlo_sharding_text(sharding: Sharding, ndim: int) -> str:
    """GSPMD's spelling of ``sharding`` for an array of rank ``ndim`` (the ``mhlo.sharding``
    attribute): ``{devices=[2,1,2]<=[4] last_tile_dim_replicate}``."""
    return str(_hlo_sharding(sharding, ndim))


@dataclass(frozen=True)
class ExportSignature:
    """What `exported_module` records besides the module: the function's name, its argument and
    result pytrees (of ``(args, kwargs)`` and of the outputs) and their leaves' types, as
    ``(shape, dtype, weak_type)``."""

    fun_name: str
    in_tree: Any
    in_avals: tuple[tuple[tuple[int, ...], np.dtype, bool], ...]
    out_tree: Any
    out_avals: tuple[tuple[tuple[int, ...], np.dtype, bool], ...]

    @staticmethod
    def flat(in_avals: Sequence[tuple[tuple[int, ...], np.dtype]],
             out_avals: Sequence[tuple[tuple[int, ...], np.dtype]]) -> ExportSignature:
        """A signature of flat positional arguments and a tuple of results."""
        return ExportSignature(
            "mlax", jax.tree_util.tree_structure((tuple(range(len(in_avals))), {})),
            tuple((shape, dtype, False) for shape, dtype in in_avals),
            jax.tree_util.tree_structure(tuple(range(len(out_avals)))),
            tuple((shape, dtype, False) for shape, dtype in out_avals))


def exported_module(text: str, signature: ExportSignature, platforms: Sequence[str],
                    shardings: Placement | None = None, get_vjp: Callable[[Any], Any] | None = None,
                    exported_type: type | None = None) -> Any:
    """Our StableHLO module ``text`` (its entry ``main``) as a `jax.export.Exported` (an instance
    of ``exported_type``, a subclass, where given): what ``jax.export`` itself would have made
    of it, so jax's serializer, its ``deserialize`` and its ``Exported.call`` accept it. Its
    fields other than the module follow jax's calling convention for one device (``shardings``
    None), or, for a program of a mesh (its ``main`` taking and returning global arrays), the
    NamedShardings (Shardy) or their HloShardings (GSPMD) of its arguments and results."""
    n, m = len(signature.in_avals), len(signature.out_avals)
    named: tuple[tuple[Any, ...], tuple[Any, ...]] = ((None,) * n, (None,) * m)
    hlo: tuple[tuple[Any, ...], tuple[Any, ...]] = ((None,) * n, (None,) * m)
    has_named = True
    if shardings is not None and uses_shardy():
        named = (shardings.inputs, shardings.outputs)
    elif shardings is not None:
        has_named = False
        hlo = (tuple(_hlo_sharding(s, len(a[0])) for s, a in zip(shardings.inputs, signature.in_avals,
                                                                  strict=True)),
               tuple(_hlo_sharding(s, len(a[0])) for s, a in zip(shardings.outputs, signature.out_avals,
                                                                  strict=True)))

    def shaped(avals: Sequence[tuple[tuple[int, ...], np.dtype, bool]]) -> tuple[Any, ...]:
        return tuple(_jax_core.ShapedArray(shape, dtype, weak_type=weak) for shape, dtype, weak in avals)

    return (exported_type or jax.export.Exported)(
        fun_name=signature.fun_name, in_tree=signature.in_tree, in_avals=shaped(signature.in_avals),
        out_tree=signature.out_tree, out_avals=shaped(signature.out_avals),
        _has_named_shardings=has_named, _in_named_shardings=named[0], _out_named_shardings=named[1],
        in_shardings_hlo=hlo[0], out_shardings_hlo=hlo[1],
        nr_devices=shardings.devices if shardings is not None else 1,
        platforms=tuple(platforms), ordered_effects=(), unordered_effects=(),
        disabled_safety_checks=(), mlir_module_serialized=portable_artifact(text),
        calling_convention_version=jax.export.maximum_supported_calling_convention_version,
        module_kept_var_idx=tuple(range(n)), uses_global_constants=False, _get_vjp=get_vjp)


def exported_fields(exported: Any) -> dict[str, Any]:
    """Every field of a `jax.export.Exported` (private ones included), by name: to rebuild it as
    a subclass."""
    return {f.name: getattr(exported, f.name) for f in fields(exported)}


def jitted_program(text: str, in_avals: Sequence[tuple[tuple[int, ...], np.dtype]],
                   out_avals: Sequence[tuple[tuple[int, ...], np.dtype]], device: Device,
                   donated: Sequence[int] = (), shardings: Placement | None = None) -> Callable[..., Any]:
    """Our StableHLO program as a jax.jit-compiled callable on ``device``: the module is
    wrapped as a `jax.export.Exported` (`exported_module`) and called through ``jax.jit``, so a
    call takes jax's C++ dispatch path (NumPy arrays and device buffers in, device buffers out)
    and compiles once, on the first call, in jax's cache. Given ``shardings`` (a program for a
    mesh), the arguments are placed and the results returned as its NamedShardings say."""
    exported = exported_module(text, ExportSignature.flat(in_avals, out_avals), (device.platform,), shardings)
    if shardings is None:
        single = jax.sharding.SingleDeviceSharding(device)
        shardings = Placement((single,) * len(in_avals), (single,) * len(out_avals))
    return jax.jit(exported.call, in_shardings=shardings.inputs, out_shardings=shardings.outputs,
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
