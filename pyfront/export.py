"""mlax.export: ``jax.export`` for mlax programs, both ways.

``mlax.export.export(mlax.jit(f))(*specs)`` lowers f's trace to StableHLO (the xla backend's
road, printed as jax prints it) and returns an `Exported`: a subclass of jax's own
``jax.export.Exported``, with the fields jax's ``export`` fills in the way it fills them, so
jax's serializer writes it (``serialize()``) and the real jax's ``jax.export.deserialize`` reads
and runs those bytes in another process, with or without mlax. Its ``call`` runs the module
with mlax: the StableHLO imported as mlax ops (``mlax.from_stablehlo``), so it runs eagerly
and under every mlax transformation (a program for several devices runs eagerly only, by XLA
through jaxlib, placed by its arguments' shardings as jax places it).
``mlax.export.deserialize(blob)`` reads what jax (or mlax) serialized with jax's deserializer
and returns the same `Exported`, so programs jax exported run on mlax.

jax's serializer needs the ``flatbuffers`` package (jax's own optional dependency). Building an
``Exported`` from a module needs its private fields: `mlax.backends.xla.pjrt` (the one door to
jax internals) does that. A module for several platforms takes jax's platform index as its first
argument (mlax lowers every platform alike, so its body ignores it). What mlax does not export:
shape polymorphism (mlax's shapes are static), and programs that call back into Python (their
StableHLO names this process's callbacks).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax import ShapeDtypeStruct, tree_util
from jax.export import (
    DisabledSafetyCheck,
    default_export_platform,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
    register_namedtuple_serialization,
    register_pytree_node_serialization,
)
from jax.sharding import AbstractMesh, Mesh, NamedSharding

from mlax.aot import jax_style_text, result_names
from mlax.api import JittedFunction, jit, staged_jit
from mlax.array import Array
from mlax.autodiff import vjp
from mlax.backends.xla import pjrt
from mlax.core import abstractify, current_trace, is_array_like, with_weak_type
from mlax.cotangent_types import mark_strong
from mlax.errors import user_error
from mlax.jit_sharding import UNSPECIFIED
from mlax.sharding import concrete_for
from mlax.stablehlo_import import from_stablehlo

__all__ = ["DisabledSafetyCheck", "Exported", "default_export_platform", "deserialize", "export",
           "maximum_supported_calling_convention_version", "minimum_supported_calling_convention_version",
           "register_namedtuple_serialization", "register_pytree_node_serialization"]


class Exported(jax.export.Exported):
    """A program lowered to StableHLO, as ``jax.export.Exported`` (its fields, ``mlir_module()``,
    ``serialize()``, ``in_shardings_jax``...), whose ``call`` runs it on mlax."""

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Run the exported program on arguments of its signature (the same pytree, shapes and
        dtypes; jax's ValueErrors otherwise), eagerly or inside any mlax transformation."""
        leaves, tree = tree_util.tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise user_error(ValueError, "The invocation args and kwargs must have the same pytree structure "
                             f"as when the function '{self.fun_name}' was exported, but they have the "
                             f"following structural differences:\n   - the invocation has {tree}, the export "
                             f"{self.in_tree}",
                             f"the arguments of {self.fun_name}")
        for i, (leaf, aval) in enumerate(zip(leaves, self.in_avals, strict=True)):
            _check_argument(leaf, aval, _leaf_path(self.in_tree, i))
        if self.nr_devices > 1 and current_trace() is None:
            return self._call_on_devices(leaves)
        kept = [leaves[i] for i in self.module_kept_var_idx]
        for leaf in kept:  # jax's cotangents through an exported VJP are strong (cotangent_types)
            mark_strong(leaf)
        outs = [with_weak_type(out, aval.weak_type)  # jax's results have the exported types
                for out, aval in zip(self._call_flat(kept), self.out_avals, strict=True)]
        return tree_util.tree_unflatten(self.out_tree, outs)

    def _call_on_devices(self, leaves: Sequence[Any]) -> Any:
        """A program for several devices, called outside any trace: run by XLA as jax runs it
        (the arguments' shardings place it; jax's errors for a wrong device count), through
        jaxlib's PJRT as the xla backend runs mlax's own programs; the results are mlax Arrays
        on those devices."""
        flat = [(leaf._device if leaf._device is not None else leaf._value) if type(leaf) is Array else leaf
                for leaf in leaves]
        flat = [_placed_as_exported(leaf, sharding)
                for leaf, sharding in zip(flat, self._in_named_shardings, strict=True)]
        args, kwargs = tree_util.tree_unflatten(self.in_tree, flat)
        outs = jax.export.Exported.call(self, *args, **kwargs)
        return tree_util.tree_map(
            lambda out, aval: Array._wrap_device(out, aval.weak_type), outs,
            tree_util.tree_unflatten(self.out_tree, list(self.out_avals)))

    def _call_flat(self, kept: Sequence[Any]) -> list[Any]:
        """The module's ``main`` on its (kept) arguments: the list of its results."""
        index = self._platform_index()
        outs = self._imported(*kept) if index is None else self._imported(np.int32(index), *kept)
        return [outs] if len(self.out_avals) == 1 else list(outs)

    def _platform_index(self) -> int | None:
        """The platform index argument of a module for several platforms (None for one): this
        platform's, as jax's call passes it; jax's error for a platform not exported for."""
        here = default_export_platform()
        if here in self.platforms:
            index = self.platforms.index(here)
        elif DisabledSafetyCheck.platform() in self.disabled_safety_checks:
            index = 0
        else:
            raise user_error(ValueError, f"Function '{self.fun_name}' was exported for platforms "
                             f"'{self.platforms}' but it is used on '{(here,)}'.",
                             f"the exported {self.fun_name}")
        return index if len(self.platforms) > 1 else None

    @functools.cached_property
    def _imported(self) -> Callable[..., Any]:
        problem = _unsupported(self)
        if problem:
            raise user_error(NotImplementedError, f"mlax cannot call the exported {self.fun_name}: {problem}",
                             f"the exported {self.fun_name}")
        imported = from_stablehlo(self.mlir_module())
        if len(imported.in_specs) != len(self.module_kept_var_idx) + (len(self.platforms) > 1):
            raise user_error(NotImplementedError, f"mlax cannot call the exported {self.fun_name}: its "
                             f"module takes {len(imported.in_specs)} arguments for "
                             f"{len(self.module_kept_var_idx)} kept ones (jax's calling convention's extra "
                             "arguments are not supported)",
                             f"the exported {self.fun_name}")
        return imported

    def vjp(self) -> Exported:
        """The exported VJP (primal arguments, then output cotangents -> input cotangents)."""
        return _as_mlax(super().vjp())


def _leaf_path(tree: Any, index: int) -> str:
    """``args[0]``, ``kwargs['s']``: how jax names an argument leaf of an exported call."""
    dummy = tree_util.tree_unflatten(tree, list(range(tree.num_leaves)))
    (group, *rest), _ = tree_util.tree_flatten_with_path(dummy)[0][index]
    return ("args" if getattr(group, "idx", 0) == 0 else "kwargs") + tree_util.keystr(tuple(rest))


def _check_argument(leaf: Any, expected: Any, path: str) -> None:
    """jax's checks of an exported call's argument: rank, shape, then dtype (ValueError)."""
    if not is_array_like(leaf):
        raise user_error(TypeError, f"Argument {path} of type {type(leaf)} is not a valid JAX type", path)
    aval = abstractify(leaf)
    if len(aval.shape) != len(expected.shape):
        raise user_error(ValueError, f"Rank mismatch for {path}: expected {expected.shape} and called with "
                         f"{aval.shape}", path)
    for i, (got, want) in enumerate(zip(aval.shape, expected.shape, strict=True)):
        if got != want:
            raise user_error(ValueError, f"Shape mismatch for {path}.shape[{i}] (expected same constant): "
                             f"expected {expected.shape} and called with {aval.shape}", path)
    if aval.dtype != expected.dtype:
        raise user_error(ValueError, f"Dtype mismatch for {path}: expected {expected.dtype} and called with "
                         f"{aval.dtype}", path)


def _unsupported(exported: jax.export.Exported) -> str | None:
    """Why mlax cannot run an exported module, or None."""
    several = len(exported.platforms) > 1  # (the platform index is then a global constant)
    if (exported.uses_global_constants and not several) or any(
            not all(isinstance(d, int) for d in a.shape) for a in (*exported.in_avals, *exported.out_avals)):
        return "it has symbolic (polymorphic) shapes, and mlax's shapes are static"
    if exported.ordered_effects:
        return f"it has ordered effects {exported.ordered_effects} (token arguments)"
    if exported.nr_devices > 1:
        return f"it is lowered for {exported.nr_devices} devices"
    return None


def _as_mlax(exported: jax.export.Exported) -> Exported:
    """jax's Exported as mlax's (same fields, mlax's ``call``)."""
    if isinstance(exported, Exported):
        return exported
    return Exported(**pjrt.exported_fields(exported))


def _float_only(avals: Sequence[Any]) -> bool:
    return all(jax.numpy.issubdtype(a.dtype, jax.numpy.inexact) for a in avals)


def _vjp_of(primal: Exported) -> Exported:
    """The VJP of an mlax export, exported (jax's ``_get_vjp`` contract: it takes the flat
    primal arguments, then one cotangent per primal output, and returns the flat input
    cotangents), by mlax's reverse mode over the primal's module."""
    n = len(primal.in_avals)

    def fun_vjp(*args_and_cts: Any) -> Any:
        primals, cts = args_and_cts[:n], args_and_cts[n:]
        _, pullback = vjp(lambda *flat: tuple(primal._call_flat(flat)), *primals)
        return pullback(tuple(cts))

    fun_vjp.__name__ = f"vjp_{primal.fun_name}"
    specs = [ShapeDtypeStruct(a.shape, a.dtype) for a in (*primal.in_avals, *primal.out_avals)]
    return export(staged_jit(fun_vjp), platforms=primal.platforms,
                  disabled_checks=primal.disabled_safety_checks)(*specs)


def export(fun_jit: Any, *, platforms: Sequence[str] | None = None,
           disabled_checks: Sequence[DisabledSafetyCheck] = ()) -> Callable[..., Exported]:
    """``jax.export.export``: a function of argument specs (ShapeDtypeStructs, arrays, scalars,
    pytrees of them; static arguments as values) that returns the `Exported` program of
    ``fun_jit`` (an ``mlax.jit`` function, or a function of mlax's numpy/lax/nn, which are jitted
    in jax) for ``platforms`` (jax's default one when None)."""
    if not isinstance(fun_jit, JittedFunction):
        if not _library_function(fun_jit):
            raise user_error(ValueError, "Function to be exported must be the result of `jit` but is: "
                             f"{fun_jit}", "fun_jit of mlax.export.export")
        fun_jit = jit(fun_jit)
    chosen = tuple(platforms) if platforms is not None else (default_export_platform(),)
    if not chosen or len(set(chosen)) != len(chosen):
        raise user_error(ValueError, f"platforms must be distinct and not empty, got {chosen}",
                         "platforms of mlax.export.export")
    if not all(isinstance(check, DisabledSafetyCheck) for check in disabled_checks):
        raise user_error(TypeError, "disabled_checks must be jax.export.DisabledSafetyCheck values, got "
                         f"{list(disabled_checks)}", "disabled_checks of mlax.export.export")

    def do_export(*args_specs: Any, **kwargs_specs: Any) -> Exported:
        given = tree_util.tree_leaves((args_specs, kwargs_specs))
        args_specs, kwargs_specs = tree_util.tree_map(_on_devices, (args_specs, kwargs_specs))
        lowered = fun_jit.lower(*args_specs, **kwargs_specs)
        program = lowered._xla_program
        devices = program.placement.devices if program.placement is not None else 1
        text = jax_style_text(program.text, lowered.fun_name, result_names(lowered.out_tree), devices, True)
        if len(chosen) > 1:
            text = _with_platform_index(text)
        traced = lowered._traced
        signature = pjrt.ExportSignature(
            lowered.fun_name, lowered.in_tree,
            tuple((a.shape, a.dtype, a.weak_type) for a in traced.in_avals),
            lowered.out_tree, tuple((a.shape, a.dtype, a.weak_type) for a in traced.out_avals))
        float_only = _float_only((*traced.in_avals, *traced.out_avals)) and program.placement is None
        exported = pjrt.exported_module(text, signature, chosen, program.placement,
                                        get_vjp=_vjp_of if float_only else None, exported_type=Exported)
        exported = dataclasses.replace(exported, disabled_safety_checks=tuple(disabled_checks),
                                       uses_global_constants=len(chosen) > 1)
        if program.placement is not None and exported._has_named_shardings \
                and len(given) == len(traced.in_avals):
            exported = _named_as_given(exported, given, fun_jit._out_shardings is UNSPECIFIED)
        return exported

    return do_export


def _named_as_given(exported: Exported, given: Sequence[Any], outputs_unspecified: bool) -> Exported:
    """The shardings recorded as jax records them: each argument's as its spec gave it, on that
    mesh's abstract mesh (none where it gave none), and the results' only where the jit chose
    them (else the compiler's choice: None)."""
    def recorded(spec: Any) -> Any:
        sharding = getattr(spec, "sharding", None)
        if not isinstance(sharding, NamedSharding):
            return None
        mesh = sharding.mesh if isinstance(sharding.mesh, AbstractMesh) else sharding.mesh.abstract_mesh
        return NamedSharding(mesh, sharding.spec, memory_kind=sharding.memory_kind)

    outputs = (None,) * len(exported.out_avals) if outputs_unspecified else exported._out_named_shardings
    return dataclasses.replace(exported, _in_named_shardings=tuple(recorded(spec) for spec in given),
                               _out_named_shardings=outputs)


def _placed_as_exported(leaf: Any, exported: Any) -> Any:
    """An argument on its own devices (as many as the program's), resharded as the program takes
    it, which is where jax runs the program; XLA compiling mlax's module for another layout of
    those devices is left out (it has crashed there)."""
    sharding = getattr(leaf, "sharding", None)
    if not isinstance(exported, NamedSharding) or not isinstance(sharding, NamedSharding):
        return leaf
    mesh = exported.mesh
    devices = list(sharding.mesh.devices.flat)
    if len(devices) != mesh.size or (sharding.mesh.axis_names == mesh.axis_names
                                      and sharding.spec == exported.spec):
        return leaf
    target = Mesh(np.array(devices).reshape(mesh.axis_sizes), mesh.axis_names, axis_types=mesh.axis_types)
    return jax.device_put(leaf, NamedSharding(target, exported.spec))


def _on_devices(spec: Any) -> Any:
    """A ShapeDtypeStruct sharded over an AbstractMesh, on a Mesh of this process's first devices
    of that shape (mlax lowers a program for a mesh of devices; the exported module names none,
    so which devices stand in does not show), where there are enough of them."""
    sharding = getattr(spec, "sharding", None)
    if not isinstance(spec, ShapeDtypeStruct) or not isinstance(sharding, NamedSharding) \
            or not isinstance(sharding.mesh, AbstractMesh):
        return spec
    mesh = sharding.mesh
    devices = jax.devices()
    if concrete_for(mesh) is not None or len(devices) < mesh.size:
        return spec  # the context's mesh, or too few devices: lower's own reading, or its error
    stand_in = Mesh(np.array(devices[:mesh.size]).reshape(mesh.axis_sizes), mesh.axis_names,
                    axis_types=mesh.axis_types)
    return ShapeDtypeStruct(spec.shape, spec.dtype, sharding=NamedSharding(stand_in, sharding.spec),
                            weak_type=spec.weak_type)


def _library_function(fun: Any) -> bool:
    """Whether ``fun`` is one of mlax's numpy / lax / nn / scipy functions (jax's are jitted)."""
    module = getattr(fun, "__module__", None) or ""
    return callable(fun) and module.split(".")[:2] in (["mlax", "numpy"], ["mlax", "lax"], ["mlax", "nn"],
                                                        ["mlax", "scipy"])


def _with_platform_index(text: str) -> str:
    """``main`` of a module for several platforms, taking jax's platform index first (unused:
    mlax lowers every platform alike)."""
    index = '%_platform_index: tensor<i32> {jax.global_constant = "_platform_index"} loc(unknown)'
    text, count = re.subn(r"(func\.func public @main\()(\)?)",
                          lambda m: m.group(1) + index + (")" if m.group(2) else ", "), text, count=1)
    if count != 1:
        raise RuntimeError("internal error: no public main in an exported module")
    return text


def deserialize(blob: bytes | bytearray) -> Exported:
    """``jax.export.deserialize``: an `Exported` from bytes that ``Exported.serialize()`` (jax's
    or mlax's) wrote, callable on mlax."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise user_error(TypeError, f"mlax.export.deserialize expects bytes, got {type(blob).__name__}",
                         "blob of mlax.export.deserialize")
    return _as_mlax(jax.export.deserialize(bytearray(blob)))
