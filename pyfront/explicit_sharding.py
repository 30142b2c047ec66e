"""jax's explicit-sharding API on mlax: ``reshard``, ``auto_axes``, ``explicit_axes``, eager
results placed as jax places them, and ``out_sharding=``.

Types (pyfront/sharding_types.py) say how values are split; this module makes the arrays
agree. Outside a trace an op's result is computed on the host and put on the devices of its
operands' mesh (or the context mesh): with the spec its type names where the mesh has an
Explicit axis, else where `mlax-partition`'s factor rules carry the operands' layout (Auto
axes are the compiler's to choose: eager ops choose as mlax's jit does). Inside a trace,
``reshard`` and ``out_sharding=`` emit `mlax.sharding_constraint` and give the result its
type; the constraint is what `mlax-partition` sees.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import jax
from jax import tree_util
from jax.api_util import flatten_axes
from jax.sharding import AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec

from mlax.array import Array
from mlax.core import Tracer, abstractify, bind, current_trace, is_array_like
from mlax.errors import user_error
from mlax.passes.partition.factors import absorb, normalize, project
from mlax.passes.partition.rules import RULES
from mlax.sharding import (
    CONTEXT,
    concrete_for,
    get_abstract_mesh,
    placement,
    trace_module,
    use_abstract_mesh,
    use_program_mesh,
)
from mlax.sharding_types import Spec, entries, explicit, lenient, manual, named, spec_of

# --- placing eager results ----------------------------------------------------------------------


def _array_sharding(x: Any) -> NamedSharding | None:
    """The NamedSharding an mlax Array's buffer lies on (None: a host or one-device array)."""
    if type(x) is not Array or x._device is None:
        return None
    sharding = x._device.sharding
    return sharding if isinstance(sharding, NamedSharding) else None


def _propagated(op_name: str, operands: Sequence[Any], avals: Sequence[Any], out_avals: Sequence[Any],
                attrs: dict[str, Any], mesh: Mesh) -> list[Spec]:
    """The result layouts `mlax-partition`'s factor rule gives from the operands' (replicated
    where the op has no rule): how an op on Auto axes keeps its operands' split, as XLA's."""
    replicated = [((),) * len(a.shape) for a in out_avals]
    factor_rule = RULES.get(op_name)
    if factor_rule is None:
        return replicated
    try:
        rule = factor_rule(attrs, [a.shape for a in avals], [a.shape for a in out_avals])
    except Exception:  # noqa: BLE001 - a rule that cannot read this instance: replicated is correct
        return replicated
    if rule is None:
        return replicated
    sizes = dict(mesh.shape)

    def axis_size(axes: Sequence[str]) -> int:
        size = 1
        for a in axes:
            size *= sizes[a]
        return size

    shardings: list[tuple[str, ...] | None] = [None] * len(rule.sizes)
    for x, aval, dims in zip(operands, avals, rule.operands, strict=True):
        sharding = _array_sharding(x)
        if sharding is not None and sharding.mesh == mesh:
            absorb(rule, dims, spec_of(sharding, len(aval.shape)), shardings, axis_size)
    decided = normalize(rule, shardings, axis_size)
    return [project(dims, decided) for dims in rule.results]


def _stripped(spec: Spec) -> PartitionSpec:
    """A spec as XLA writes the shardings it chooses: trailing whole dimensions left out."""
    out = list(entries(spec))
    while out and out[-1] is None:
        out.pop()
    return PartitionSpec(*out)


def put(x: Any, sharding: NamedSharding) -> Any:
    """An mlax Array of ``x``'s value on ``sharding`` (committed), keeping a host copy that is
    already there, so reading it back costs nothing."""
    if type(x) is Array:
        value = x._xla_buffer if x._xla_buffer is not None else x._value
        weak, host = x.weak_type, x._host
    else:
        value, weak, host = x, False, None
    out = Array._wrap_device(jax.device_put(value, sharding), weak, committed=True)
    if host is not None:
        out._host = host
    return out


@functools.lru_cache(maxsize=64)
def _concrete_with_types(mesh: Mesh, types: tuple[AxisType, ...]) -> Mesh:
    return Mesh(mesh.devices, mesh.axis_names, axis_types=types)


def _context_concrete() -> Mesh | None:
    """The context's concrete mesh with the axis types of the context's abstract mesh (which
    auto_axes / explicit_axes change)."""
    mesh, abstract = CONTEXT.mesh, CONTEXT.abstract
    if mesh is None or abstract is None or mesh.abstract_mesh == abstract:
        return mesh
    if tuple(abstract.axis_names) != tuple(mesh.axis_names):
        return None
    return _concrete_with_types(mesh, tuple(abstract.axis_types))


def place_eager(op_name: str, operands: Sequence[Any], avals: Sequence[Any], outs: list[Any],
                out_avals: Sequence[Any], attrs: dict[str, Any]) -> list[Any]:
    """core.bind's hook for an eager op with typed operands or under a context mesh: the host
    results put on the mesh's devices, as jax's eager ops leave them."""
    if CONTEXT.abstract is not None and manual(CONTEXT.abstract):
        return outs  # a shard_map body's local values stay where they are
    mesh = next((s.mesh for s in map(_array_sharding, operands) if s is not None), None)
    if mesh is None:
        mesh = _context_concrete()
    if mesh is None:
        mesh = next((concrete_for(a.sharding.mesh) for a in out_avals if a.sharding is not None), None)
    if mesh is None:
        return outs
    propagated: list[Spec] | None = None
    placed = []
    for i, (out, aval) in enumerate(zip(outs, out_avals, strict=True)):
        typed = aval.sharding
        if typed is not None and explicit(typed.mesh):
            spec = PartitionSpec(*entries(spec_of(typed, len(aval.shape))))
            target = mesh if mesh.abstract_mesh == typed.mesh else concrete_for(typed.mesh) or mesh
        else:
            if propagated is None:
                propagated = _propagated(op_name, operands, avals, out_avals, attrs, mesh)
            spec, target = _stripped(propagated[i]), mesh
        placed.append(put(out, NamedSharding(target, spec)))
    return placed


def place_output(array: Any, aval: Any) -> Any:
    """A jit result where jax's jit leaves it: a typed one (a mesh with Explicit axes) on its
    type's spec, an unplaced one under a context mesh replicated on it; the partitioned
    programs' results are there already, one-device programs' are put there."""
    current = _array_sharding(array)
    typed = aval.sharding
    if typed is not None and explicit(typed.mesh):
        mesh = current.mesh if current is not None and current.mesh.abstract_mesh == typed.mesh \
            else concrete_for(typed.mesh) or _on_devices_of(current, typed.mesh)
        if mesh is None:
            return array
        want = NamedSharding(mesh, PartitionSpec(*entries(spec_of(typed, len(aval.shape)))))
    else:
        mesh = _context_concrete()
        if mesh is None and typed is not None:
            mesh = concrete_for(typed.mesh)
        if current is not None or mesh is None:
            return array
        want = NamedSharding(mesh, PartitionSpec(*(None,) * len(aval.shape)) if explicit(mesh.abstract_mesh)
                             else PartitionSpec())
    return array if current == want else put(array, want)


def _on_devices_of(current: NamedSharding | None, mesh: AbstractMesh) -> Mesh | None:
    """``mesh`` made concrete on the devices the program ran on, in their order: where jax puts
    a result typed on an abstract mesh no concrete mesh is known for (a ``reshard`` inside
    ``use_abstract_mesh``); None when those devices are not as many as the mesh's."""
    if current is None or not isinstance(current.mesh, Mesh) or current.mesh.devices.size != mesh.size:
        return None
    return Mesh(current.mesh.devices.reshape(mesh.axis_sizes), mesh.axis_names, axis_types=mesh.axis_types)


# --- reshard -------------------------------------------------------------------------------------------


def _typed_target(sharding: Any, api: str) -> tuple[NamedSharding, Mesh | None]:
    """jax's canonicalize_sharding: a PartitionSpec read against the context's abstract mesh,
    or a NamedSharding; naming only Explicit axes. The abstract target and a concrete mesh."""
    if sharding is None or (isinstance(sharding, NamedSharding) and sharding.mesh.empty):
        raise user_error(ValueError, "Reshard should only be used with out_shardings which are non-None and "
                         f"have a non-empty mesh. Got sharding {sharding}.", f"out_shardings of mlax.{api}")
    if not isinstance(sharding, (NamedSharding, PartitionSpec)):
        raise user_error(TypeError, f"`out_sharding` argument of {api} only supports instances of "
                         f"`NamedSharding` or `PartitionSpec`. Got {sharding} of type: {type(sharding)}",
                         f"out_shardings of mlax.{api}")
    if isinstance(sharding, PartitionSpec):
        mesh = get_abstract_mesh()
        if mesh.empty:
            raise user_error(ValueError, "Using PartitionSpec when you are not under a mesh context is not "
                             "allowed. Please pass a NamedSharding instance or enter into a mesh context via "
                             f"`jax.set_mesh`. Got {sharding}", f"out_shardings of mlax.{api}")
        abstract, concrete = NamedSharding(mesh, sharding), concrete_for(mesh)
    else:
        concrete = sharding.mesh if isinstance(sharding.mesh, Mesh) else concrete_for(sharding.mesh)
        abstract = NamedSharding(sharding.mesh.abstract_mesh, sharding.spec)
    types = dict(zip(abstract.mesh.axis_names, abstract.mesh.axis_types, strict=True))
    for entry in abstract.spec:
        for axis in entry if isinstance(entry, tuple) else (entry,):
            if axis is None:
                continue
            if axis not in types:
                raise user_error(ValueError, f"Resource axis: {axis} of {abstract.spec} is not found in "
                                 f"mesh: {tuple(abstract.mesh.axis_names)}.", f"out_shardings of mlax.{api}")
            if types[axis] in (AxisType.Auto, AxisType.Manual):
                raise user_error(ValueError, f"PartitionSpec passed to {api} cannot contain axis names "
                                 "that are of type Auto or Manual. Got PartitionSpec: "
                                 f"{abstract.spec} with axis name: {axis} of type: {types[axis]}.",
                                 f"out_shardings of mlax.{api}")
    return abstract, concrete


def retype(x: Any, sharding: NamedSharding | None) -> Any:
    """A tracer with the same value and ``sharding`` as its type (no op is emitted)."""
    if not isinstance(x, Tracer) or x.aval.sharding == sharding:
        return x
    return Tracer(x.trace, x.value, replace(x.aval, sharding=sharding), x.origin, x.known)


def _reshard_one(x: Any, target: NamedSharding, concrete: Mesh | None, api: str) -> Any:
    if not is_array_like(x):
        raise user_error(TypeError, f"{api} takes arrays, got {x!r} of type {type(x).__name__}",
                         f"x of mlax.{api}")
    aval = abstractify(x)
    length = len(target.spec)
    while length > aval.ndim and target.spec[length - 1] is None:  # jax drops trailing whole entries
        length -= 1
    spec = spec_of(NamedSharding(target.mesh, PartitionSpec(*target.spec[:length])), aval.ndim) \
        if length <= aval.ndim else None
    if spec is None:
        raise user_error(ValueError, f"Sharding {target} is only valid for values of rank at least "
                         f"{len(target.spec)}, but was applied to a value of rank {aval.ndim}",
                         f"out_shardings of mlax.{api}")
    typed = named(target.mesh, spec)
    trace = current_trace()
    if concrete is None or not explicit(target.mesh):
        # an abstract mesh only (use_abstract_mesh), or Auto axes (the compiler's to choose, as
        # jax leaves them unconstrained): the type alone changes
        return retype(x, typed) if trace is not None else x
    where = placement(NamedSharding(concrete, PartitionSpec(*entries(spec))), aval.shape,
                      f"One of {api} arguments", f"out_shardings of mlax.{api}")
    if trace is None or not isinstance(x, Tracer):  # a concrete value (a constant inside jit too)
        return put(x, NamedSharding(concrete, PartitionSpec(*entries(spec))))
    use_program_mesh(trace_module(trace), concrete, api)
    return retype(bind("sharding_constraint", x, sharding=where.spec), typed)


def reshard(xs: Any, out_shardings: Any) -> Any:
    """``jax.reshard`` (``jax.sharding.reshard``): each array of ``xs`` laid out and typed as
    ``out_shardings`` says (a PartitionSpec on the context mesh, a NamedSharding, or a pytree
    prefix of them); only Explicit axes may be named. Outside jit the data moves now."""
    leaves, tree = tree_util.tree_flatten(xs)
    try:
        flat = flatten_axes("reshard out_shardings", tree, out_shardings)
    except ValueError as error:
        raise user_error(ValueError, str(error), "out_shardings of mlax.reshard") from None
    out = []
    for leaf, sharding in zip(leaves, flat, strict=True):
        target, concrete = _typed_target(sharding, "reshard")
        out.append(_reshard_one(leaf, target, concrete, "reshard"))
    return tree_util.tree_unflatten(tree, out)


# --- auto_axes and explicit_axes ---------------------------------------------------------------------


@dataclass(frozen=True)
class _MeshChange:
    previous: AbstractMesh
    new: AbstractMesh
    axes: tuple[str, ...]


def _changed_mesh(axes: Any, kind: AxisType, api: str, shardings: Any = None) -> _MeshChange | None:
    """The context's abstract mesh (or the shardings' one) with ``axes`` (default all) made
    ``kind``; None without any mesh (jax's _get_new_mesh)."""
    context = get_abstract_mesh()
    given = AbstractMesh((), ())
    for s in tree_util.tree_leaves(shardings):
        if isinstance(s, NamedSharding):
            if not given.empty and given != s.mesh.abstract_mesh:
                raise user_error(ValueError, f"Shardings passed to {api} should have the same mesh. Got one "
                                 f"mesh {given} and another {s.mesh}", f"mlax.sharding.{api}")
            given = s.mesh.abstract_mesh
    if given.empty and context.empty:
        return None
    if not given.empty and not context.empty and given != context:
        raise user_error(ValueError, f"Context mesh {context} must match the mesh passed to shardings "
                         f"{given}. Recommended approach is to use `jax.set_mesh` context manager.",
                         f"mlax.sharding.{api}")
    mesh = context if not context.empty else given
    names = tuple(mesh.axis_names) if axes is None else axes if isinstance(axes, tuple) else (axes,)
    types = dict(zip(mesh.axis_names, mesh.axis_types, strict=True))
    if any(types[a] == AxisType.Manual for a in names):
        raise user_error(NotImplementedError, "Going from `Manual` AxisType to `Auto` or `Explicit` AxisType "
                         "is not allowed. Please file a bug at https://github.com/jax-ml/jax/issues with "
                         "your use case", f"mlax.sharding.{api}")
    return _MeshChange(mesh, mesh.update_axis_types({a: kind for a in names}), names)


def _into(x: Any, mesh: AbstractMesh) -> Any:
    """``x`` typed on ``mesh`` (the same axes, other types): the axes that are not Explicit
    there leave its type; its data stays where it is (jax's modify_spec_for_auto_manual)."""
    aval = abstractify(x)
    types = dict(zip(mesh.axis_names, mesh.axis_types, strict=True))
    spec = tuple(tuple(a for a in axes if types.get(a) == AxisType.Explicit)
                 for axes in spec_of(aval.sharding, aval.ndim))
    if isinstance(x, Tracer):
        return retype(x, named(mesh, spec))
    layout = _array_sharding(x)
    concrete = layout.mesh if layout is not None else concrete_for(aval.sharding.mesh) \
        if aval.sharding is not None else _context_concrete()
    if concrete is None:
        return x
    target = _concrete_with_types(concrete, tuple(mesh.axis_types))
    kept = spec_of(layout, aval.ndim) if layout is not None else ((),) * aval.ndim
    return put(x, NamedSharding(target, _stripped(kept) if not explicit(mesh) else PartitionSpec(
        *entries(tuple(k if k and all(types[a] == AxisType.Explicit for a in k) else () for k in kept)))))


def _given(value: Any, kwargs: dict[str, Any], name: str) -> Any:
    """A sharding given to the decorator, or else one the call must pass as keyword ``name``."""
    if value is not None:
        return value
    if name not in kwargs:
        raise TypeError(f"Missing required keyword argument: '{name}'")
    return kwargs.pop(name)


def auto_axes(f: Callable[..., Any] | None = None, /, *, axes: Any = None, out_sharding: Any = None) -> Any:
    """``jax.sharding.auto_axes``: run ``f`` with ``axes`` (default: all) of the context mesh
    made Auto (the compiler chooses how values are split along them, so ``f`` needs no
    ``out_sharding`` for what would be ambiguous), then reshard its outputs to
    ``out_sharding`` (given here or in the call)."""
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        shardings = _given(out_sharding, kwargs, "out_sharding")
        change = _changed_mesh(axes, AxisType.Auto, "auto_axes", shardings)
        if change is None or set(change.previous.auto_axes) == set(change.axes):
            return f(*args, **kwargs)
        with use_abstract_mesh(change.new):
            args = tree_util.tree_map(lambda a: _into(a, change.new), args)
            out = f(*args, **kwargs)
        return reshard(out, shardings)

    return wrapped


def explicit_axes(f: Callable[..., Any] | None = None, /, *, axes: Any = None,
                  in_sharding: Any = None) -> Any:
    """``jax.sharding.explicit_axes``: run ``f`` with ``axes`` (default: all) of the context
    mesh made Explicit, its arguments resharded to ``in_sharding`` (given here or in the call);
    its outputs come back typed on the context mesh."""
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        shardings = _given(in_sharding, kwargs, "in_sharding")
        change = _changed_mesh(axes, AxisType.Explicit, "explicit_axes")
        if change is None:
            raise user_error(ValueError, "Context mesh cannot be empty. Please use `jax.set_mesh` API to "
                             "enter into a mesh context when using `explicit_axes` API.",
                             "mlax.sharding.explicit_axes")
        with use_abstract_mesh(change.new):
            args = reshard(args, shardings)
            out = f(*args, **kwargs)
        return tree_util.tree_map(lambda o: _into(o, change.previous), out)

    return wrapped


# --- out_sharding= ------------------------------------------------------------------------------------


def with_out_sharding(fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                      out_sharding: Any, api: str) -> Any:
    """``fun(*args, **kwargs)`` whose result is laid out and typed as ``out_sharding`` (jax's
    keyword on creation, contraction and shape functions): what would be ambiguous while it is
    built is left to the given sharding, which the result is then resharded to."""
    with lenient():
        out = fun(*args, **kwargs)
    leaves = tree_util.tree_leaves(out)
    sharding = out_sharding
    if isinstance(sharding, NamedSharding) and sharding.mesh.empty:
        return out
    target, concrete = _typed_target(sharding, api)
    if concrete is None and isinstance(target.mesh, AbstractMesh) and CONTEXT.mesh is not None:
        concrete = CONTEXT.mesh if CONTEXT.mesh.abstract_mesh == target.mesh else None
    placed = [_reshard_one(leaf, target, concrete, api) for leaf in leaves]
    return tree_util.tree_unflatten(tree_util.tree_structure(out), placed)


def like_sharding(out: Any, source: Any) -> Any:
    """``zeros_like(a)``'s result where ``a`` is: on ``a``'s devices and of ``a``'s type
    sharding, as jax's ``full_like``."""
    layout = _array_sharding(source)
    if layout is not None and not isinstance(out, Tracer):
        return put(out, layout)
    # Only values have a type sharding (a ShapeDtypeStruct or a duck with .shape has none).
    typed = abstractify(source).sharding if isinstance(source, Array | Tracer) else None
    if typed is None or not explicit(typed.mesh):
        return out
    return _reshard_one(out, typed, concrete_for(typed.mesh), "full_like")


__all__ = ["auto_axes", "explicit_axes", "like_sharding", "place_eager", "place_output", "put", "reshard",
           "retype", "with_out_sharding"]
