"""mlax.shard_map (the module is mlax.shard_mapping, so the name stays the function), as jax.shard_map.

Inside a traced program, ``shard_map(f, mesh=m, in_specs=..., out_specs=...)(*args)`` traces
``f`` on the LOCAL values (each dimension of an argument divided by the sizes of the mesh axes
its spec splits it over) with every mesh axis bound as a named axis (mlax.named_axes: the
collectives of mlax.lax communicate over them), into a private function of the module; it
declares an `mlax.shard_map` of that body (the declaration has the GLOBAL types) and calls
the declaration on the arguments. Values of the enclosing program the body uses are captured
and passed replicated. The module's mesh (its ``mlax.mesh`` attribute) becomes ``m``: one mesh
per program. Outside a trace the same code runs as a jitted program; what the body prints of its
values shows each device's block, as jax's eager shard_map does (`_eager`).

``check_vma`` is recorded on the declaration: with it (the default, as in jax) the body's values
are typed by the mesh axes they vary over (``jax.typeof(x)`` shows ``float32[3]{V:i}``;
mlax.sharding_types has the rule per op), and reverse mode taken inside the body follows them
(passes/autodiff/varying.py), so the gradient of a replicated parameter is summed over the
devices; an out spec that leaves out an axis a result varies over is jax's error (its static
replication check). On a mesh whose axes are all Explicit, an in_spec must be its argument's
type sharding (jax's error). Not supported: partially manual meshes (``axis_names`` a strict
subset of the mesh's axes).
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import re
import sys
from collections.abc import Callable, Sequence, Set
from dataclasses import replace
from typing import Any

import numpy as np
from jax import tree_util
from jax.api_util import flatten_axes
from jax.core import ShapedArray
from jax.sharding import AbstractMesh, AxisType, Mesh, PartitionSpec
from mlir import ir

import mlax.lax as lax
from mlax import named_axes
from mlax.array import Array
from mlax.autodiff import _call, _positional_names
from mlax.core import Aval, Trace, Tracer, abstractify, current_trace, is_array_like
from mlax.dialect import get_context
from mlax.dialect.attrs import Spec
from mlax.dialect.transforms import declare_transform
from mlax.errors import user_error
from mlax.jit_sharding import committed_sharding
from mlax.passes.symbols import unique_name
from mlax.sharding import (
    concrete_mesh,
    context_mesh,
    pspec_to_spec,
    trace_module,
    use_abstract_mesh,
    use_program_mesh,
)
from mlax.sharding_types import entries, explicit, named, vma_checked
from mlax.sharding_types import spec_of as typed_spec
from mlax.source_info import current_location
from mlax.staging import Staged, restore_static, static_leaves
from mlax.tracing import checkify_body, flatten_arguments, function_name, trace_subfunction


class _InferFromArgs:
    """jax's ``Infer`` default of in_specs: read the specs from the arguments' shardings (only
    where every mesh axis is Explicit)."""

    def __repr__(self) -> str:
        return "jax.sharding.Infer"


Infer = _InferFromArgs()


def _is_infer(value: Any) -> bool:
    return value is Infer or type(value).__name__ == "InferFromArgs"  # ours or jax's own sentinel


def _is_spec_leaf(x: Any) -> bool:
    return x is None


def _str_short(aval: Aval) -> str:
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def _resolve_mesh(mesh: Mesh | AbstractMesh | None) -> Mesh:
    """The mesh to map over, checked as jax does (the context mesh when none is given)."""
    context = context_mesh()
    if mesh is None:
        if context is None:
            raise user_error(ValueError, "The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to "
                             "enter into a mesh context", "mesh of mlax.shard_map")
        return context
    if not isinstance(mesh, (Mesh, AbstractMesh)):
        raise user_error(TypeError, "shard_map requires a `jax.sharding.Mesh` or a "
                         f"`jax.sharding.AbstractMesh` instance for its second argument, but got {mesh} of "
                         f"type {type(mesh)}.",
                         "mesh of mlax.shard_map")
    if context is not None and mesh.abstract_mesh != context.abstract_mesh:
        raise user_error(ValueError, f"The context mesh {context.abstract_mesh} should match the mesh passed "
                         f"to shard_map {mesh}", "mesh of mlax.shard_map")
    if mesh.empty:
        raise user_error(ValueError, f"shard_map requires a non-empty mesh. Got {mesh}",
                         "mesh of mlax.shard_map")
    return concrete_mesh(mesh, "mesh of mlax.shard_map")


def _manual_axes(mesh: Mesh, axis_names: Set[Any]) -> frozenset[str]:
    if not isinstance(axis_names, (frozenset, set)):
        raise user_error(TypeError, "`axis_names` argument of shard_map should be of type `frozenset` or "
                         f"`set`. Got type: {type(axis_names)}", "axis_names of mlax.shard_map")
    names = frozenset(axis_names) or frozenset(mesh.axis_names)
    if not names <= frozenset(mesh.axis_names):
        raise user_error(ValueError, f"jax.shard_map requires axis_names={set(names)} to be a subset of "
                         f"mesh.axis_names={frozenset(mesh.axis_names)}", "axis_names of mlax.shard_map")
    if names != frozenset(mesh.axis_names):
        raise user_error(NotImplementedError, f"shard_map over some of the mesh's axes "
                         f"(axis_names={set(names)} of {tuple(mesh.axis_names)}) is not supported by mlax: "
                         f"every mesh axis is manual",
                         "axis_names of mlax.shard_map")
    return names


def _check_specs(kind: str, specs: Any, manual: frozenset[str]) -> None:
    """jax's check that specs are PartitionSpecs naming manual mesh axes."""
    if kind == "in" and specs is None:
        raise user_error(TypeError, "shard_map in_specs argument must be a pytree of "
                         "`jax.sharding.PartitionSpec` instances, but it was None.\nInstead of "
                         "`in_specs=None`, did you mean "
                         "`in_specs=P()`, "
                         "where `P = jax.sharding.PartitionSpec`?", "in_specs of mlax.shard_map")
    paths = tree_util.tree_flatten_with_path(specs)[0]
    not_specs = [f"  {kind}_specs{tree_util.keystr(k)} is {x} of type {type(x).__name__}, "
                 for k, x in paths if not isinstance(x, PartitionSpec)]
    if not_specs:
        raise user_error(TypeError, f"shard_map {kind}_specs argument must be a pytree of "
                         "`jax.sharding.PartitionSpec` instances, but:\n\n" + "\n\n".join(not_specs)
                         + f"\n\nCheck the {kind}_specs values passed to shard_map.",
                         f"{kind}_specs of mlax.shard_map")
    unknown = [f"  {kind}_specs{tree_util.keystr(k)} refers to {name!r}" for k, p in paths for entry in p
               for name in (entry if isinstance(entry, tuple) else (entry,))
               if name is not None and name not in manual]
    if unknown:
        raise user_error(ValueError, f"shard_map {kind}_specs argument must refer to an axis marked as "
                         f"manual ({manual}), but:\n\n" + "\n\n".join(unknown)
                         + f"\n\nCheck the {kind}_specs values passed to shard_map.",
                         f"{kind}_specs of mlax.shard_map")


def _spec_of_leaves(specs: Any, tree: Any) -> list[tuple[str, Any]]:
    """Per leaf of ``tree``, the spec of the ``specs`` prefix covering it and that spec's key path."""
    dummy = tree_util.tree_unflatten(tree, [0] * tree.num_leaves)
    entries = tree_util.tree_flatten_with_path(specs, is_leaf=_is_spec_leaf)[0]
    out = []
    for path, _ in tree_util.tree_flatten_with_path(dummy)[0]:
        match = next((k, s) for k, s in entries if tuple(path[:len(k)]) == tuple(k))
        out.append((tree_util.keystr(match[0]), match[1]))
    return out


def _parameter_text(fun: Callable[..., Any], names: Sequence[str], path: str) -> str:
    """jax's ", where args[0] is bound to f's parameter 'x'," for a leaf path like ``x[1]``."""
    head = path.split("[")[0].split(".")[0]
    if head in names and not head.startswith("args"):
        index = names.index(head)
        return f", where args[{index}] is bound to {function_name(fun)}'s parameter '{head}',"
    return ""


def _too_long(name: str, side: str, value: str, problems: list[str]) -> str:
    """jax's message for in_specs / out_specs entries longer than their values' ranks."""
    return (f"shard_map applied to the function '{name}' was given an {side}_specs entry which is too long "
            f"to be compatible with the corresponding {value} value from the function:\n\n"
            + "\n\n".join(problems)
            + f"\n\nEntries in {side}_specs must be of length no greater than the number of axes in the "
            f"corresponding {value} value.\n\nEither revise the spec to be shorter, or modify '{name}' so "
            f"that its {value}s have sufficient rank.")


def _in_specs_errors(fun: Callable[..., Any], mesh: Mesh, names: Sequence[str], paths: Sequence[str],
                     avals: Sequence[Aval], specs: Sequence[tuple[str, PartitionSpec]]) -> None:
    """jax's errors for in_specs longer than an argument's rank, then for dimensions the mesh
    axes' sizes do not divide; each names the argument."""
    name = function_name(fun)
    long = [f"in_specs{key} is {spec} which has length {len(spec)}, but the passed args {path}"
            f"{_parameter_text(fun, names, path)} has shape {_str_short(aval)}, which has rank {aval.ndim} "
            f"(and {aval.ndim} < {len(spec)})"
            for path, aval, (key, spec) in zip(paths, avals, specs, strict=True) if len(spec) > aval.ndim]
    if long:
        message = _too_long(name, "in", "input", long)
        if any(not a.ndim for a in avals):
            message += ("\n\nFor scalar values (rank 0), consider using an in_specs entry of `P()`, where "
                        "`P = jax.sharding.PartitionSpec`.")
        raise user_error(ValueError, message, "in_specs of mlax.shard_map")
    sizes = dict(zip(mesh.axis_names, mesh.devices.shape, strict=True))
    bad = []
    for path, aval, (key, spec) in zip(paths, avals, specs, strict=True):
        for dim, axes in enumerate(pspec_to_spec(spec, aval.ndim)):
            parts = math.prod(sizes[a] for a in axes)
            if axes and aval.shape[dim] % parts:
                axis = f"axes {axes}" if len(axes) > 1 else f"axis '{axes[0]}'"
                total = "total " if len(axes) > 1 else ""
                bad.append(f"the passed args {path} of shape "
                           f"{_str_short(aval)}{_parameter_text(fun, names, path)} "
                           f"corresponds to in_specs{key} of value {spec}, which maps array axis {dim} (of "
                           f"size "
                           f"{aval.shape[dim]}) to mesh {axis} (of {total}size {parts}), but {parts} does "
                           f"not "
                           f"evenly divide {aval.shape[dim]}")
    if bad:
        raise user_error(ValueError, f"shard_map applied to the function '{name}' was given argument arrays "
                         f"with axis sizes that are not evenly divisible by the corresponding mesh axis "
                         f"sizes:\n\nThe "
                         "mesh "
                         f"given has shape {tuple(mesh.devices.shape)} with corresponding axis names "
                         f"{mesh.axis_names}.\n\n" + "\n\n".join(bad) + "\n\nArray arguments' axis sizes "
                         "must be evenly divisible by the mesh axis or axes indicated by the corresponding "
                         "elements "
                         "of the "
                         "argument's in_specs entry. Consider checking that in_specs are correct, and if so "
                         "consider changing the mesh axis sizes or else padding the input and adapting "
                         f"'{name}' appropriately.", "in_specs of mlax.shard_map")


def _out_specs(fun: Callable[..., Any], out_specs: Any, out_tree: Any,
               out_avals: Sequence[Aval]) -> list[Spec]:
    """The out_specs per output leaf as Specs, with jax's errors (not a prefix; too long)."""
    name = function_name(fun)
    try:
        flatten_axes("shard_map out_specs", out_tree, out_specs)
    except ValueError as error:
        raise user_error(ValueError, f"shard_map out_specs must be a tree prefix of the outputs of {name}: "
                                     f"{error}",
                         "out_specs of mlax.shard_map") from None
    specs = _spec_of_leaves(out_specs, out_tree)
    dummy = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(dummy)[0]]
    long = [f"out_specs{key} is {spec} which has length {len(spec)}, but {name}(*args){path} has shape "
            f"{_str_short(aval)}, which has rank {aval.ndim} (and {aval.ndim} < {len(spec)})"
            for path, aval, (key, spec) in zip(paths, out_avals, specs, strict=True)
            if spec is None or len(spec) > aval.ndim]
    if long:
        message = _too_long(name, "out", "output", long)
        if any(not a.ndim for a in out_avals):
            message += (" In particular, for rank 0 outputs which are not constant over the mesh, add at "
                        "least one "
                        "(singleton) axis to them so that they can be concatenated using out_specs.")
        raise user_error(ValueError, message, "out_specs of mlax.shard_map")
    return [pspec_to_spec(spec, aval.ndim) for (_, spec), aval in zip(specs, out_avals, strict=True)]


def _specs_match_types(mesh: Mesh, manual: frozenset[str], keyed: Sequence[tuple[str, PartitionSpec]],
                       avals: Sequence[Aval]) -> None:
    """jax's error for an in_spec other than its argument's type sharding, where every mesh axis
    is Explicit and made manual (the spec would reshard the argument: jax asks for ``reshard``)."""
    if manual != frozenset(mesh.axis_names) or any(t != AxisType.Explicit for t in mesh.axis_types):
        return
    for (_, spec), aval in zip(keyed, avals, strict=True):
        if aval.sharding is None:  # a value mlax has no type sharding for (a host array): not checked
            continue
        wanted = spec._normalized_spec_for_aval(aval.ndim)
        have = aval.sharding.spec
        if have != wanted:
            arg = ShapedArray(aval.shape, aval.dtype, weak_type=aval.weak_type, sharding=aval.sharding)
            # jax's words alone (pages print this error)
            raise ValueError(f"in_specs passed to shard_map: {wanted} does not match the specs of the input: "
                             f"{have} for arg: {arg}. `in_specs` is an optional argument so you can omit "
                             "specifying it and shard_map will infer the in_specs from the arguments. If you "
                             "want to reshard your inputs, you can use `jax.reshard` on the arguments and "
                             "then pass those args to shard_map.")


def _check_replication(fun: Callable[..., Any], mesh: Mesh, manual: frozenset[str], out_specs: Any,
                       out_tree: Any, out_avals: Sequence[Aval]) -> None:
    """jax's static check of a checked body's outputs: an out spec that leaves a manual axis out
    says the value is the same on every device along it, so its type must not vary over it."""
    messages = []
    for (key, spec), aval in zip(_spec_of_leaves(out_specs, out_tree), out_avals, strict=True):
        mentioned = {axis for entry in spec for axis in ((entry,) if isinstance(entry, str) else entry or ())}
        unmentioned = [a for a in mesh.axis_names if a not in mentioned and a in manual]
        if not set(unmentioned) & aval.vma:
            continue
        head = f"* out_specs{key} is {spec} which implies that the corresponding output value is"
        if len(unmentioned) > 1:
            need = ",".join(a for a in mesh.axis_names if a in mentioned)
            got = ",".join(a for a in mesh.axis_names if a in aval.vma)
            diff = ",".join(a for a in unmentioned if a in aval.vma)
            messages.append(f"{head} only varying across mesh axes {{{need}}} and not {{{diff}}}, but it was "
                            f"inferred to be possibly varying over {{{got}}}")
        else:
            messages.append(f"{head} replicated across mesh axis '{unmentioned[0]}', but could not infer "
                            "replication over any axes")
    if not messages:
        return
    if len(messages) == 1:
        messages = [messages[0][2:]]
    raise ValueError(  # jax's words alone (pages print this error)
        f"shard_map applied to the function '{getattr(fun, '__name__', str(fun))}' was given out_specs which "
        "require replication which can't be statically inferred given the mesh:\n\n"
        f"The mesh given has shape {tuple(mesh.shape.values())} with corresponding axis names "
        f"{mesh.axis_names}.\n\n" + "\n\n".join(messages) + "\n\nCheck if these output values are meant "
        "to be replicated over those mesh axes. If not, consider revising the corresponding out_specs "
        "entries. If so, consider disabling the check by passing the check_vma=False argument to "
        "`jax.shard_map`.")


def _scaled(aval: Aval, spec: Spec, sizes: dict[str, int], local: bool) -> Aval:
    factors = [math.prod(sizes[a] for a in axes) for axes in spec]
    shape = tuple(d // f if local else d * f for d, f in zip(aval.shape, factors, strict=True))
    return Aval(shape, aval.dtype, aval.weak_type)


def _typed(aval: Aval, spec: Spec, mesh: Mesh) -> Aval:
    """A result's type on a mesh with Explicit axes: the axes of its out spec that are Explicit
    (jax's explicit sharding types a shard_map's results so)."""
    abstract = mesh.abstract_mesh
    if not explicit(abstract):
        return aval
    kinds = dict(zip(mesh.axis_names, mesh.axis_types, strict=True))
    kept = tuple(tuple(a for a in axes if kinds[a] == AxisType.Explicit) for axes in spec)
    return replace(aval, sharding=named(abstract, kept))


def _inferred_specs(args: tuple[Any, ...], mesh: Mesh, manual: frozenset[str]) -> tuple[Any, ...]:
    """in_specs=Infer: every mesh axis must be Explicit; the specs are the arguments' own."""
    types = dict(zip(mesh.axis_names, mesh.axis_types, strict=True))
    if not all(types[a] == AxisType.Explicit for a in manual):
        kinds = ", ".join(str(types[a]) for a in sorted(manual))
        raise user_error(TypeError, "shard_map in_specs argument must be a pytree of `jax.sharding."
                         "PartitionSpec` instances, but it was `None` when "
                         f"axis_names={set(manual)} are of type {kinds}",
                         "in_specs of mlax.shard_map")

    def spec_of(leaf: Any) -> PartitionSpec:
        typed = abstractify(leaf).sharding if is_array_like(leaf) else None  # its type's (explicit axes)
        if typed is not None:
            return PartitionSpec(*entries(typed_spec(typed, abstractify(leaf).ndim)))
        sharding = committed_sharding(leaf) if not isinstance(leaf, Tracer) else None
        return PartitionSpec() if sharding is None else sharding.spec

    return tuple(tree_util.tree_map(spec_of, arg) for arg in args)


def _shard_map(fun: Callable[..., Any], mesh: Mesh | AbstractMesh | None, in_specs: Any, out_specs: Any,
               axis_names: Set[Any], check_vma: bool) -> Callable[..., Any]:
    if not callable(fun):
        raise user_error(TypeError, "shard_map requires a callable for its first argument, but got "
                         f"{fun} of type {type(fun)}.", "f of mlax.shard_map")

    def run(trace: Trace, *args: Any) -> Any:
        the_mesh = _resolve_mesh(mesh)
        manual = _manual_axes(the_mesh, axis_names)
        specs = _inferred_specs(args, the_mesh, manual) if _is_infer(in_specs) else in_specs
        _check_specs("in", specs, manual)
        user_out_specs = out_specs.specs if isinstance(out_specs, _Shown) else out_specs
        _check_specs("out", user_out_specs, manual)
        name = function_name(fun)
        names = _positional_names(fun, len(args))
        try:
            flat = flatten_axes("shard_map in_specs", tree_util.tree_structure(args), specs)
        except ValueError as error:
            raise user_error(ValueError, "shard_map in_specs must be a tree prefix of the arguments of "
                             f"{name}: {error}", "in_specs of mlax.shard_map") from None
        mapped = [spec is not None for spec in flat]  # None: passed as it is (static), as in jax
        leaves, in_tree, paths = flatten_arguments(static_leaves((args, {}), mapped), name, names)
        originals = tree_util.tree_leaves(args)
        keyed = [(key, PartitionSpec() if spec is None else spec)
                 for (key, spec), leaf in zip(_spec_of_leaves(specs, tree_util.tree_structure(args)),
                                              originals, strict=True)
                 if spec is not None or is_array_like(leaf)]
        avals = [abstractify(leaf) for leaf in leaves]
        _in_specs_errors(fun, the_mesh, names, paths, avals, keyed)
        _specs_match_types(the_mesh, manual, keyed, avals)
        sizes = dict(zip(the_mesh.axis_names, the_mesh.devices.shape, strict=True))
        in_dims = [pspec_to_spec(spec, aval.ndim) for (_, spec), aval in zip(keyed, avals, strict=True)]
        local = [_scaled(a, s, sizes, local=True) for a, s in zip(avals, in_dims, strict=True)]

        def build_args(tracers: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
            return restore_static(tree_util.tree_unflatten(in_tree, tracers))

        module = trace_module(trace)
        with get_context():
            use_program_mesh(module, the_mesh, f"the mesh of shard_map of {name}")
        body_mesh = the_mesh.abstract_mesh.update_axis_types({a: AxisType.Manual for a in manual})
        if check_vma:  # an argument varies over the axes its spec splits it over (jax's vma)
            local = [replace(a, sharding=named(body_mesh, ((),) * a.ndim),
                             vma=frozenset(axis for dim in s for axis in dim) & manual)
                     for a, s in zip(local, in_dims, strict=True)]
        checked = checkify_body(fun, trace, per_device=True)  # in a checkified function: errors mapped out
        with named_axes.bind(sizes, "shard_map"), use_abstract_mesh(body_mesh), vma_checked(bool(check_vma)):
            sub = trace_subfunction(checked.body if checked else fun, build_args, local, paths, trace)
        resolved = user_out_specs
        body_tree = sub.out_tree.children()[0] if checked else sub.out_tree
        if isinstance(out_specs, _Shown):  # then a value per device for each value the body showed
            shown = body_tree.children()[1].num_leaves
            resolved = (user_out_specs, [PartitionSpec(tuple(the_mesh.axis_names))] * shown)
        if checked:  # each error leaf: one value per device of the manual axes
            per_device = PartitionSpec(tuple(a for a in the_mesh.axis_names if a in manual))
            resolved = (resolved, [per_device] * sub.out_tree.children()[1].num_leaves)
        out_dims = _out_specs(fun, resolved, sub.out_tree, sub.out_avals)
        if check_vma:
            _check_replication(fun, the_mesh, manual, resolved, sub.out_tree, sub.out_avals)
        captured = [((),) * c.aval.ndim for c in sub.captured]
        with get_context(), current_location():
            decl = unique_name(module, f"{sub.name}_shard_map")
            declared = declare_transform(module, "shard_map", decl, callee=sub.name,
                                         axis_names=tuple(the_mesh.axis_names),
                                         axis_sizes=tuple(the_mesh.devices.shape),
                                         in_specs=(*in_dims, *captured), out_specs=tuple(out_dims),
                                         check_vma=bool(check_vma))
        out_avals = [_typed(_scaled(a, s, sizes, local=False), s, the_mesh)
                     for a, s in zip(sub.out_avals, out_dims, strict=True)]
        results = _call(trace, decl, ir.FunctionType(declared.type), [*leaves, *sub.captured], out_avals,
                        f"shard_map of {name}")
        out = tree_util.tree_unflatten(sub.out_tree, results)
        if checked:
            out, error_leaves = out
            checked.finish(error_leaves)
        return out

    staged = Staged(run, fun)
    inferred: dict[Any, Callable[..., Any]] = {}  # in_specs=Infer outside a trace: per argument specs
    quiet: dict[Any, Callable[..., Any]] = {}  # per signature: the eager program of a quiet body

    @functools.wraps(fun)
    def mapped(*args: Any) -> Any:
        if current_trace() is None and not isinstance(out_specs, _Shown):
            key = _signature(args)
            if key in quiet:  # (its Python shows nothing: its compiled program runs, as any jit's)
                return quiet[key](*args)[0]
            return _eager(fun, mesh, in_specs, out_specs, axis_names, check_vma, args, quiet, key)
        if _is_infer(in_specs) and current_trace() is None:
            # the arguments' shardings are known only here, before the staged program traces them
            specs = _inferred_specs(args, _resolve_mesh(mesh), _manual_axes(_resolve_mesh(mesh), axis_names))
            key = tree_util.tree_flatten(specs)
            key = (key[1], tuple(key[0]))
            if key not in inferred:
                inferred[key] = _shard_map(fun, mesh, specs, out_specs, axis_names, check_vma)
            return inferred[key](*args)
        return staged(*args)

    return mapped


class _Shown:
    """The out_specs of an eager shard_map's body that also returns the values it showed (the
    user's out_specs, then one spec splitting a new first axis over every mesh axis per value)."""

    def __init__(self, specs: Any) -> None:
        self.specs = specs


_TOKEN = re.compile("\ue000(\\d+)\ue001")  # a shown value's place in the text the body printed


def _signature(args: tuple[Any, ...]) -> Any:
    """What an eager call's program depends on: the pytree, each array's type and sharding, the
    other leaves themselves (None where one cannot be a key: such calls trace each time)."""
    leaves, tree = tree_util.tree_flatten(args)
    key = tree, tuple((type(x), getattr(x, "shape", None), str(getattr(x, "dtype", "")),
                       str(getattr(x, "sharding", None)) if is_array_like(x) else x)
                      for x in leaves)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _eager(fun: Callable[..., Any], mesh: Mesh | AbstractMesh | None, in_specs: Any, out_specs: Any,
           axis_names: Set[Any], check_vma: bool, args: tuple[Any, ...], quiet: dict[Any, Callable[..., Any]],
           key: Any) -> Any:
    """A shard_map called outside any trace. jax runs its body eagerly, so a value the body
    prints shows each device's block (``On cpu:0 at mesh coordinates (i,) = (0,): ...``). mlax
    traces the body: a body value's text is a placeholder while it traces (what it prints is held
    back), the program also returns those values from every device, and the held-back text is
    printed with them in place. A body that shows nothing runs this program from then on."""
    shown: list[Tracer] = []

    def show(tracer: Tracer) -> str:
        index = next((i for i, t in enumerate(shown) if t is tracer), None)
        if index is None:
            index = len(shown)
            shown.append(tracer)
        return f"\ue000{index}\ue001"

    @functools.wraps(fun)
    def body(*a: Any, **k: Any) -> Any:
        trace = current_trace()
        shown.clear()  # (a body traced again in concrete mode shows its values anew)
        trace.show = show  # type: ignore[union-attr] (mlax.tracer_text asks for it)
        try:
            out = fun(*a, **k)
        finally:
            trace.show = None  # type: ignore[union-attr]
        return out, [lax.expand_dims(t, (0,)) for t in shown]

    held = io.StringIO()
    values: list[Any] = []
    program = _shard_map(body, mesh, in_specs, _Shown(out_specs), axis_names, check_vma)
    try:
        with contextlib.redirect_stdout(held):
            out, values = program(*args)
    finally:
        text = _TOKEN.sub(lambda m: _per_device(values, int(m.group(1)), mesh), held.getvalue())
        sys.stdout.write(text)
    if not shown and not held.getvalue() and key is not None:
        quiet[key] = program
    return out


def _per_device(values: Sequence[Any], index: int, given: Mesh | AbstractMesh | None) -> str:
    """jax's text of a shard_map value outside jit: each device's block under its mesh coordinates."""
    if index >= len(values):  # the body failed before its values were computed
        return "<a value of the shard_map body>"
    mesh = _resolve_mesh(given)
    blocks = np.asarray(values[index])
    names = f"({', '.join(map(str, mesh.axis_names))},)"
    return "\n".join(f"On {device} at mesh coordinates {names} = {idx}:\n{Array._wrap(blocks[k])}\n"
                     for k, (idx, device) in enumerate(np.ndenumerate(mesh.devices)))


def shard_map(f: Callable[..., Any] | None = None, /, *, out_specs: Any, in_specs: Any = Infer,
              mesh: Mesh | AbstractMesh | None = None, axis_names: Set[Any] = frozenset(),
              check_vma: bool = True) -> Any:
    """Map ``f`` over the shards of its arguments on ``mesh`` (the context mesh by default), as
    jax.shard_map: ``in_specs`` / ``out_specs`` are PartitionSpecs (pytree prefixes of the
    arguments / outputs) saying which mesh axes split which dimensions; ``f`` sees the local
    blocks and communicates with mlax.lax's collectives over the mesh axes."""
    options = dict(mesh=mesh, in_specs=in_specs, out_specs=out_specs, axis_names=axis_names,
                   check_vma=check_vma)
    if f is None:
        return lambda g: _shard_map(g, **options)
    return _shard_map(f, **options)

