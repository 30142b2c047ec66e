"""mlax.sharding: jax's sharding vocabulary, the context mesh, and its translation to mlax IR.

The classes (Mesh, NamedSharding, PartitionSpec, ...) are jax's own: they are tracing-free data
over jax's real devices, which are mlax's too (``mlax.devices()``), so re-implementing them would
only make ``isinstance`` checks of user code fail. What mlax owns:

- the *context mesh* (``mlax.set_mesh``; ``use_mesh`` for older code), kept per thread by mlax
  and not in jax's config, so that jax's sharding-in-types machinery, which mlax does not use,
  never sees it;
- the translation of a sharding to the dialect (dialect/sharding.py): a jax Mesh to its `Mesh`
  (axis names, sizes, device ids in row-major order) and a NamedSharding or PartitionSpec to a
  `Spec` with one entry per dimension, checked against the value's shape with jax's errors;
- `use_program_mesh`: the one mesh of the program being traced, a module attribute, set by
  whichever construct (jit shardings, shard_map, with_sharding_constraint) names one first.

``with_sharding_constraint`` (a device_put, outside a trace) lives in mlax.transfer.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from jax.sharding import (
    AbstractMesh,
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
)
from mlir import ir

from mlax.dialect import sharding as ir_sharding
from mlax.dialect.attrs import Spec
from mlax.errors import user_error
from mlax.trace_stack import current_trace

P = PartitionSpec


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str], axis_types: Any = None, *,
              devices: Sequence[Any] | None = None) -> Mesh:
    """jax.make_mesh: a mesh over the devices (mlax's are jax's), laid out for their topology.
    mlax partitions Explicit and Auto axes alike (it has no sharding in types)."""
    import jax

    return jax.make_mesh(axis_shapes, axis_names, axis_types, devices=devices)


# --- the context mesh ------------------------------------------------------------------------


class _Context(threading.local):
    """This thread's context: the concrete mesh ``set_mesh`` made current, and the abstract
    mesh typing reads (``set_mesh``'s, or one ``use_abstract_mesh`` / ``auto_axes`` set); None
    where empty. core.bind reads ``abstract`` on every op, so it is a plain attribute."""

    def __init__(self) -> None:
        self.mesh: Mesh | None = None
        self.abstract: AbstractMesh | None = None


CONTEXT = _Context()
_CONTEXT = CONTEXT
_CONCRETE: dict[AbstractMesh, Mesh] = {}  # the latest concrete mesh seen per abstract mesh


def remember(mesh: Mesh) -> None:
    """Note ``mesh`` as the concrete mesh of its abstract one (for `concrete_for`)."""
    if not mesh.empty:
        _CONCRETE[mesh.abstract_mesh] = mesh


def concrete_for(mesh: AbstractMesh | Mesh | None) -> Mesh | None:
    """A concrete mesh for ``mesh``: itself, the context mesh, or the latest one seen with
    that abstract mesh (an array placed on it, a set_mesh); None if none is known."""
    if mesh is None or isinstance(mesh, Mesh):
        return mesh
    context = CONTEXT.mesh
    if context is not None and context.abstract_mesh == mesh:
        return context
    return _CONCRETE.get(mesh)


def context_mesh() -> Mesh | None:
    """The mesh ``set_mesh`` made current in this thread, or None."""
    return _CONTEXT.mesh


class set_mesh:  # noqa: N801 (jax's name: a setter that is also a context manager)
    """``jax.set_mesh``: make ``mesh`` this thread's context mesh, as a global setter
    (``mlax.set_mesh(mesh)``) or for a block (``with mlax.set_mesh(mesh):``). With a context
    mesh, bare PartitionSpecs are accepted wherever a sharding is, and its Explicit axes type
    what is computed (jax's explicit sharding)."""

    __slots__ = ("previous",)

    def __init__(self, mesh: Mesh | None) -> None:
        if mesh is not None and not isinstance(mesh, Mesh):
            raise user_error(ValueError, f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}",
                             "mesh of mlax.set_mesh")
        if current_trace() is not None:
            raise user_error(ValueError, "`set_mesh` can only be used outside of `jax.jit`.",
                             "mesh of mlax.set_mesh")
        if mesh is not None and any(t == AxisType.Manual for t in mesh.axis_types):
            raise user_error(ValueError, f"mesh {mesh} contains manual axes which is not allowed when using "
                             "`jax.set_mesh`. Please use `jax.shard_map` to enter into `Manual` mode "
                             "instead.", "mesh of mlax.set_mesh")
        self.previous = _CONTEXT.mesh, _CONTEXT.abstract
        if mesh is not None and mesh.empty:
            mesh = None
        if mesh is not None:
            remember(mesh)
        _CONTEXT.mesh = mesh
        _CONTEXT.abstract = None if mesh is None else mesh.abstract_mesh

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        _CONTEXT.mesh, _CONTEXT.abstract = self.previous


def use_mesh(mesh: Mesh) -> set_mesh:
    """``jax.sharding.use_mesh`` of jax 0.6-0.7 (a context manager; jax 0.10.2 has only
    ``set_mesh``), for older code."""
    return set_mesh(mesh)


class use_abstract_mesh:  # noqa: N801 (jax's name)
    """``jax.sharding.use_abstract_mesh``: type what is computed in the block by ``mesh`` (an
    AbstractMesh; inside jit too), e.g. one of the context mesh with other axis types. Its
    size must be the context's."""

    __slots__ = ("mesh", "previous")

    def __init__(self, mesh: AbstractMesh) -> None:
        if not isinstance(mesh, AbstractMesh):
            raise user_error(ValueError, "Expected mesh of type `jax.sharding.AbstractMesh`. Got type: "
                             f"{type(mesh)}", "mesh of mlax.sharding.use_abstract_mesh")
        self.mesh = mesh

    def __enter__(self) -> None:
        previous = _CONTEXT.abstract
        if previous is not None and not self.mesh.empty and previous.size != self.mesh.size:
            raise user_error(ValueError, "use_abstract_mesh cannot change the size of the mesh. Got new "
                             f"mesh: {self.mesh} with size={self.mesh.size} and prev mesh: {previous} with "
                             f"size={previous.size}", "mesh of mlax.sharding.use_abstract_mesh")
        self.previous = previous
        _CONTEXT.abstract = None if self.mesh.empty else self.mesh

    def __exit__(self, *exc: Any) -> None:
        _CONTEXT.abstract = self.previous


def get_abstract_mesh() -> AbstractMesh:
    """The abstract mesh typing reads (an empty one without a context mesh), inside jit too."""
    mesh = _CONTEXT.abstract
    return AbstractMesh((), ()) if mesh is None else mesh


def get_mesh() -> Mesh:
    """The context mesh (an empty Mesh without one); only outside jit, as jax's."""
    if current_trace() is not None:
        raise user_error(ValueError, "`get_mesh` can only be used outside of `jax.jit`. Maybe you want "
                         "`jax.sharding.get_abstract_mesh()`?")
    mesh = _CONTEXT.mesh
    return Mesh(np.empty((), dtype=object), ()) if mesh is None else mesh


# --- shardings as mlax IR ----------------------------------------------------------------------


def ir_mesh(mesh: Mesh, what: str = "the mesh") -> ir_sharding.Mesh:
    """The dialect's Mesh of a jax Mesh: axis names, sizes and the device ids row-major."""
    names = tuple(mesh.axis_names)
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise user_error(TypeError, f"mlax names mesh axes by strings; the mesh {mesh} has axis name "
                         f"{bad[0]!r}", what)
    return ir_sharding.Mesh(names, tuple(mesh.devices.shape), tuple(d.id for d in mesh.devices.flat),
                            tuple(t.name for t in mesh.axis_types))


def concrete_mesh(mesh: Mesh | AbstractMesh, what: str) -> Mesh:
    """``mesh`` as a Mesh with devices: an AbstractMesh (``get_abstract_mesh()``) stands for the
    context mesh it abstracts."""
    found = concrete_for(mesh) if isinstance(mesh, (Mesh, AbstractMesh)) else None
    if found is not None:
        return found
    raise user_error(NotImplementedError, f"mlax needs a jax.sharding.Mesh with devices here, got {mesh!r} "
                     "(an AbstractMesh is accepted when it is the context mesh's, or that of an array "
                     "placed on a mesh)", what)


def _entry_axes(entry: Any) -> tuple[str, ...]:
    if entry is None:
        return ()
    if entry is PartitionSpec.UNCONSTRAINED:
        raise user_error(NotImplementedError, "PartitionSpec.UNCONSTRAINED dimensions are not supported by "
                         "mlax yet (each dimension is split over named axes or whole)")
    return tuple(entry) if isinstance(entry, tuple) else (entry,)


def pspec_to_spec(pspec: PartitionSpec, rank: int) -> Spec:
    """A PartitionSpec (no longer than ``rank``) as the dialect's Spec: one entry per dimension,
    the dimensions it leaves out whole."""
    if pspec.unreduced or pspec.reduced:
        raise user_error(NotImplementedError, f"unreduced/reduced axes ({pspec}) are not supported by mlax")
    dims = tuple(_entry_axes(entry) for entry in pspec)
    return dims + ((),) * (rank - len(dims))


def spec_to_pspec(spec: Spec) -> PartitionSpec:
    """The PartitionSpec jax writes for a Spec (trailing whole dimensions dropped, as jax prints)."""
    entries: list[Any] = [None if not axes else axes[0] if len(axes) == 1 else tuple(axes) for axes in spec]
    while entries and entries[-1] is None:
        entries.pop()
    return PartitionSpec(*entries)


@dataclass(frozen=True)
class Placement:
    """How one value is laid out: over ``mesh`` by ``spec`` (dialect form, one entry per dim)."""

    mesh: Mesh
    spec: Spec

    @property
    def sharding(self) -> NamedSharding:
        return NamedSharding(self.mesh, spec_to_pspec(self.spec))


def _single_device(mesh: Mesh | AbstractMesh) -> bool:
    return math.prod(mesh.axis_sizes) <= 1 if isinstance(mesh, AbstractMesh) else mesh.devices.size <= 1


def as_named(sharding: Any, api: str, argument: str) -> NamedSharding | None:
    """``sharding`` (a Sharding, or a PartitionSpec read against the context mesh) as a
    NamedSharding, or None where it leaves the value on one device whole (None, a
    SingleDeviceSharding, a sharding of one device, a PartitionSpec of no axes without a
    context mesh): the one-device program, as before shardings."""
    if sharding is None:
        return None
    if isinstance(sharding, PartitionSpec):
        mesh = _CONTEXT.mesh
        if mesh is None:
            if all(entry is None for entry in sharding):
                return None
            raise user_error(RuntimeError, f"{api} requires a non-empty mesh in context if you are passing "
                             f"`PartitionSpec`s to {argument.split(' ')[0]}. You can define a context mesh "
                             f"via "
                             "`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to "
                             f"{argument.split(' ')[0]} and then the mesh context manager is not required.",
                             argument)
        try:
            sharding = NamedSharding(mesh, sharding)
        except ValueError as error:
            raise user_error(ValueError, str(error), argument) from None
    if isinstance(sharding, NamedSharding):
        if _single_device(sharding.mesh):
            return None
        if not isinstance(sharding.mesh, Mesh):
            return NamedSharding(concrete_mesh(sharding.mesh, argument), sharding.spec)
        return sharding
    if isinstance(sharding, SingleDeviceSharding) or (isinstance(sharding, Sharding)
                                                      and len(sharding.device_set) <= 1):
        return None
    if isinstance(sharding, Sharding):
        raise user_error(NotImplementedError, f"mlax takes NamedShardings and PartitionSpecs, got "
                                              f"{sharding!r}",
                         argument)
    raise user_error(TypeError, f"{argument.split(' ')[0]} leaves must be Sharding, PartitionSpec, or "
                     f"None, got {sharding!r} of type {type(sharding).__name__}", argument)


def placement(sharding: NamedSharding, shape: Sequence[int], incompatible: str, argument: str) -> Placement:
    """The Placement of a value of ``shape`` under ``sharding``, with jax's errors: a spec
    longer than the rank (``incompatible`` starts that message: "One of pjit arguments with
    pytree key path x"), a dimension the axes' sizes do not divide."""
    pspec = sharding.spec
    if len(pspec) > len(shape):
        raise user_error(ValueError, f"{incompatible} is incompatible with its sharding annotation "
                         f"{sharding}: Sharding {sharding} is only valid for values of rank at least "
                         f"{len(pspec)}, but "
                         f"was "
                         f"applied to a value of rank {len(shape)}.", argument)
    spec = pspec_to_spec(pspec, len(shape))
    sizes = dict(zip(sharding.mesh.axis_names, sharding.mesh.devices.shape, strict=True))
    factors = [math.prod(sizes[a] for a in axes) for axes in spec]
    for dim, (size, parts) in enumerate(zip(shape, factors, strict=True)):
        if size % parts:
            raise user_error(ValueError, f"Sharding {sharding} implies that array axis {dim} is partitioned "
                             f"{parts} times, but the dimension size is {size} (full shape: {tuple(shape)}, "
                             f"per-dimension tiling factors: {factors} should evenly divide the shape)",
                             argument)
    return Placement(sharding.mesh, spec)


# --- the program's mesh ------------------------------------------------------------------------


def _ids(mesh: ir_sharding.Mesh) -> str:
    return str(sorted(mesh.device_ids))


def check_same_mesh(first: ir_sharding.Mesh, first_what: str, other: ir_sharding.Mesh,
                    other_what: str) -> None:
    """jax's error for values of one program on different devices; mlax also needs one mesh
    (jax accepts two meshes of the same devices, mlax names the mesh in the module). Axis
    types may differ (auto_axes / explicit_axes change them within one program)."""
    if replace(first, axis_types=()) == replace(other, axis_types=()):
        return
    if sorted(first.device_ids) != sorted(other.device_ids):
        raise user_error(ValueError, f"Received incompatible devices for jitted computation. Got "
                         f"{first_what} with device ids {_ids(first)} and {other_what} with device ids "
                         f"{_ids(other)}")
    raise user_error(ValueError, f"mlax compiles a program for one mesh: {first_what} is on the mesh "
                     f"{first.describe()} (devices {list(first.device_ids)}) but {other_what} on the mesh "
                     f"{other.describe()} (devices {list(other.device_ids)}); use one Mesh object throughout")


_MESH_SOURCE = "mlax.mesh_source"  # a module attribute: what set the program's mesh, for messages


def use_program_mesh(module: ir.Module | ir.Operation, mesh: Mesh, what: str) -> ir_sharding.Mesh:
    """Make ``mesh`` the mesh of the program in ``module`` (set by the first construct naming
    one; any later one must name the same), and return it in the dialect's form."""
    wanted = ir_mesh(mesh, what)
    op = module.operation
    current = ir_sharding.module_mesh(op)
    if current is None:
        ir_sharding.set_module_mesh(op, wanted)
        with op.context:
            op.attributes[_MESH_SOURCE] = ir.StringAttr.get(what)
        return wanted
    source = (ir.StringAttr(op.attributes[_MESH_SOURCE]).value if _MESH_SOURCE in op.attributes
              else "the program")
    check_same_mesh(current, source, wanted, what)
    return current


def forget_mesh_source(module: ir.Module | ir.Operation) -> None:
    """Drop the bookkeeping attribute `use_program_mesh` keeps while tracing."""
    op = module.operation
    if _MESH_SOURCE in op.attributes:
        del op.attributes[_MESH_SOURCE]


def trace_module(trace: Any) -> ir.Operation:
    """The module a trace (or a trace nested in it) emits into."""
    return trace.block.owner.parent


_EXPLICIT = ("reshard", "auto_axes", "explicit_axes")  # mlax.explicit_sharding (it imports this module)


def __getattr__(name: str) -> Any:
    if name in _EXPLICIT:
        from mlax import explicit_sharding

        return getattr(explicit_sharding, name)
    raise AttributeError(f"module 'mlax.sharding' has no attribute {name!r}")


__all__ = ["AbstractMesh", "AxisType", "Mesh", "NamedSharding", "P", "PartitionSpec", "Sharding",
           "SingleDeviceSharding", "get_abstract_mesh", "get_mesh", "make_mesh", "set_mesh",
           "use_abstract_mesh", "use_mesh", *_EXPLICIT]
