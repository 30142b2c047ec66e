"""mlax.export: ``jax.export`` for mlax programs, both ways.

``mlax.export.export(mlax.jit(f))(*specs)`` lowers f's trace to StableHLO (the xla backend's
road, printed as jax prints it) and returns an `Exported`: a subclass of jax's own
``jax.export.Exported``, with the fields jax's ``export`` fills in the way it fills them, so
jax's serializer writes it (``serialize()``) and the real jax's ``jax.export.deserialize`` reads
and runs those bytes in another process, with or without mlax. Its ``call`` runs the module
with mlax: the StableHLO imported as mlax ops (``mlax.from_stablehlo``), so it runs eagerly
and under every mlax transformation. ``mlax.export.deserialize(blob)`` reads what jax (or mlax)
serialized with jax's deserializer and returns the same `Exported`, so programs jax exported
run on mlax.

jax's serializer needs the ``flatbuffers`` package (jax's own optional dependency). Building an
``Exported`` from a module needs its private fields: `mlax.backends.xla.pjrt` (the one door to
jax internals) does that. What mlax does not export: several platforms at once (the module
then takes a platform index), shape polymorphism (mlax's shapes are static), and programs
that call back into Python (their StableHLO names this process's callbacks).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
from jax import ShapeDtypeStruct, tree_util
from jax.export import (
    DisabledSafetyCheck,
    default_export_platform,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
    register_namedtuple_serialization,
    register_pytree_node_serialization,
)

from mlax.aot import jax_style_text, result_names
from mlax.backends.xla import pjrt
from mlax.core import abstractify, is_array_like
from mlax.errors import user_error

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
        kept = [leaves[i] for i in self.module_kept_var_idx]
        return tree_util.tree_unflatten(self.out_tree, self._call_flat(kept))

    def _call_flat(self, kept: Sequence[Any]) -> list[Any]:
        """The module's ``main`` on its (kept) arguments: the list of its results."""
        outs = self._imported(*kept)
        return [outs] if len(self.out_avals) == 1 else list(outs)

    @functools.cached_property
    def _imported(self) -> Callable[..., Any]:
        from mlax.stablehlo_import import from_stablehlo

        problem = _unsupported(self)
        if problem:
            raise user_error(NotImplementedError, f"mlax cannot call the exported {self.fun_name}: {problem}",
                             f"the exported {self.fun_name}")
        imported = from_stablehlo(self.mlir_module())
        if len(imported.in_specs) != len(self.module_kept_var_idx):
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
    if exported.uses_global_constants or any(not all(isinstance(d, int) for d in a.shape)
                                             for a in (*exported.in_avals, *exported.out_avals)):
        return "it has symbolic (polymorphic) shapes, and mlax's shapes are static"
    if len(exported.platforms) > 1:
        return f"it is lowered for several platforms {exported.platforms} (a platform index argument)"
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
    from mlax.api import staged_jit
    from mlax.autodiff import vjp

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
    ``fun_jit`` (an ``mlax.jit`` function) for one platform (jax's default one when None)."""
    from mlax.api import JittedFunction

    if not isinstance(fun_jit, JittedFunction):
        raise user_error(ValueError, f"Function to be exported must be the result of `jit` but is: {fun_jit}",
                         "fun_jit of mlax.export.export")
    chosen = tuple(platforms) if platforms is not None else (default_export_platform(),)
    if len(chosen) != 1:
        raise user_error(NotImplementedError, f"mlax exports for one platform at a time, not {chosen}: a "
                         "module for several takes a platform index argument, which mlax does not emit",
                         "platforms of mlax.export.export")
    if not all(isinstance(check, DisabledSafetyCheck) for check in disabled_checks):
        raise user_error(TypeError, "disabled_checks must be jax.export.DisabledSafetyCheck values, got "
                         f"{list(disabled_checks)}", "disabled_checks of mlax.export.export")

    def do_export(*args_specs: Any, **kwargs_specs: Any) -> Exported:
        lowered = fun_jit.lower(*args_specs, **kwargs_specs)
        program = lowered._xla_program
        devices = program.placement.devices if program.placement is not None else 1
        text = jax_style_text(program.text, lowered.fun_name, result_names(lowered.out_tree), devices, True)
        traced = lowered._traced
        signature = pjrt.ExportSignature(
            lowered.fun_name, lowered.in_tree,
            tuple((a.shape, a.dtype, a.weak_type) for a in traced.in_avals),
            lowered.out_tree, tuple((a.shape, a.dtype, a.weak_type) for a in traced.out_avals))
        float_only = _float_only((*traced.in_avals, *traced.out_avals)) and program.placement is None
        exported = pjrt.exported_module(text, signature, chosen, program.placement,
                                        get_vjp=_vjp_of if float_only else None, exported_type=Exported)
        return dataclasses.replace(exported, disabled_safety_checks=tuple(disabled_checks))

    return do_export


def deserialize(blob: bytes | bytearray) -> Exported:
    """``jax.export.deserialize``: an `Exported` from bytes that ``Exported.serialize()`` (jax's
    or mlax's) wrote, callable on mlax."""
    if not isinstance(blob, (bytes, bytearray, memoryview)):
        raise user_error(TypeError, f"mlax.export.deserialize expects bytes, got {type(blob).__name__}",
                         "blob of mlax.export.deserialize")
    return _as_mlax(jax.export.deserialize(bytearray(blob)))
