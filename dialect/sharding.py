"""The sharding vocabulary of the dialect: the module's device mesh and partition specs.

A sharded program names ONE mesh, a module attribute, and states how each tensor is laid out
over it with a partition spec (dialect/attrs.py ``Spec``: per dimension the mesh axes it is
split over, major first):

    module attributes {mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>,
                                    device_ids = array<i64: 0, 1, 2, 3>}} {
      func.func @f(%a: tensor<8x4xf32> {mlax.sharding = [["x"], []]}) -> ...

``device_ids`` are the jax device ids of ``mesh.devices.flat`` (row-major): the device at mesh
coordinates (i_x, i_y) has the linear index ``i_x * size_y + i_y``, its XLA partition id and
its position in ``device_ids``. A mesh whose axes are not all jax's default ``Auto`` also
lists ``axis_types = ["Explicit", "Auto"]`` (jax's AxisType names): they change no spec, only
how the results are handed back (on the same jax Mesh, as jax's explicit sharding writes their
specs). Entry arguments and results carry their spec in
``mlax.sharding`` (arg_attrs / res_attrs); once `mlax-partition` has made the entry
per-device (local shapes) it carries the unit attribute ``mlax.partitioned``.

Everything that reads or writes these attributes goes through this module, and every check
of a spec against a mesh and a shape (axes in the mesh, each at most once, divisibility) is
`check_spec`, so passes and the front end report the same errors.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mlir import ir

from mlax.dialect.attrs import Spec, read_spec, spec_attribute

MESH_ATTR = "mlax.mesh"
ARG_ATTR = "mlax.sharding"
PARTITIONED_ATTR = "mlax.partitioned"


# The most devices a mesh may have. Passes and the interpreter do work per device (device
# ids, replica groups, simulated devices), so a mesh in hand-written IR must not ask for
# 2**40 of them; the largest machines jax runs on have tens of thousands.
MAX_MESH_DEVICES = 1 << 20


class ShardingError(ValueError):
    """A malformed mesh or partition spec (jax raises ValueError for these too)."""


@dataclass(frozen=True)
class Mesh:
    """A device mesh: named axes, their sizes, the jax ids of its devices (row-major), and
    jax's axis types by name (empty: all ``Auto``, jax's default)."""

    axis_names: tuple[str, ...]
    axis_sizes: tuple[int, ...]
    device_ids: tuple[int, ...]
    axis_types: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "axis_names", tuple(str(a) for a in self.axis_names))
        object.__setattr__(self, "axis_sizes", tuple(int(s) for s in self.axis_sizes))
        object.__setattr__(self, "device_ids", tuple(int(d) for d in self.device_ids))
        types = tuple(str(t) for t in self.axis_types)
        object.__setattr__(self, "axis_types", () if all(t == "Auto" for t in types) else types)
        problem = _mesh_problem(self)
        if problem is not None:
            raise ShardingError(f"invalid mesh: {problem}")

    @staticmethod
    def of_axes(axis_names: Sequence[str], axis_sizes: Sequence[int]) -> Mesh:
        """A mesh over devices 0..N-1 (shard_map declarations name axes and sizes only)."""
        problem = _size_problem(tuple(int(s) for s in axis_sizes))
        if problem is not None:  # before the device ids are listed
            raise ShardingError(f"invalid mesh: {problem}")
        return Mesh(tuple(axis_names), tuple(axis_sizes), tuple(range(math.prod(axis_sizes))))

    @property
    def size(self) -> int:
        """The number of devices."""
        return math.prod(self.axis_sizes)

    @property
    def shape(self) -> dict[str, int]:
        """Axis name -> size, in mesh order (jax's ``Mesh.shape``)."""
        return dict(zip(self.axis_names, self.axis_sizes, strict=True))

    def axis_size(self, names: str | Iterable[str]) -> int:
        """The product of the sizes of ``names`` (1 for none); ShardingError for an unknown axis."""
        names = (names,) if isinstance(names, str) else tuple(names)
        sizes = self.shape
        for name in names:
            if name not in sizes:
                raise ShardingError(f"axis '{name}' is not an axis of the mesh {self.describe()}")
        return math.prod(sizes[n] for n in names)

    def coordinates(self, index: int) -> dict[str, int]:
        """Mesh coordinates of the device at linear ``index`` (row-major, first axis major)."""
        coords = {}
        for name, size in reversed(list(zip(self.axis_names, self.axis_sizes, strict=True))):
            coords[name] = index % size
            index //= size
        return {name: coords[name] for name in self.axis_names}

    def describe(self) -> str:
        """``{x: 2, y: 2}``, as messages name a mesh."""
        return "{" + ", ".join(f"{a}: {s}" for a, s in self.shape.items()) + "}"

    def attribute(self) -> ir.DictAttr:
        fields = {
            "axis_names": ir.ArrayAttr.get([ir.StringAttr.get(a) for a in self.axis_names]),
            "axis_sizes": ir.DenseI64ArrayAttr.get(list(self.axis_sizes)),
            "device_ids": ir.DenseI64ArrayAttr.get(list(self.device_ids)),
        }
        if self.axis_types:
            fields["axis_types"] = ir.ArrayAttr.get([ir.StringAttr.get(t) for t in self.axis_types])
        return ir.DictAttr.get(fields)

    @staticmethod
    def from_attribute(attr: ir.Attribute) -> Mesh:
        """The mesh a ``mlax.mesh`` dictionary holds; ShardingError naming what is malformed."""
        if not isinstance(attr, ir.DictAttr):
            raise ShardingError(f"{MESH_ATTR} must be a dictionary, got {attr}")
        fields = {attr[i].name for i in range(len(attr))}
        expected = {"axis_names", "axis_sizes", "device_ids"}
        if fields - {"axis_types"} != expected:
            raise ShardingError(f"{MESH_ATTR} must have exactly the fields axis_names, axis_sizes, "
                                f"device_ids (and optionally axis_types), got "
                                f"{', '.join(sorted(fields)) or 'none'}")
        names = attr["axis_names"]
        if not isinstance(names, ir.ArrayAttr) or not all(isinstance(n, ir.StringAttr) for n in names):
            raise ShardingError(f'{MESH_ATTR} axis_names must be an array of strings (["x", "y"]), '
                                f'got {names}')
        for field in ("axis_sizes", "device_ids"):
            if not isinstance(attr[field], ir.DenseI64ArrayAttr):
                raise ShardingError(f"{MESH_ATTR} {field} must be array<i64: ...>, got {attr[field]}")
        types = attr["axis_types"] if "axis_types" in fields else None
        if types is not None and (not isinstance(types, ir.ArrayAttr)
                                  or not all(isinstance(t, ir.StringAttr) for t in types)):
            raise ShardingError(f'{MESH_ATTR} axis_types must be an array of strings (["Explicit", "Auto"]), '
                                f'got {types}')
        return Mesh(tuple(ir.StringAttr(n).value for n in names),
                    tuple(ir.DenseI64ArrayAttr(attr["axis_sizes"])),
                    tuple(ir.DenseI64ArrayAttr(attr["device_ids"])),
                    () if types is None else tuple(ir.StringAttr(t).value for t in types))


def _size_problem(axis_sizes: tuple[int, ...]) -> str | None:
    if any(s < 1 for s in axis_sizes):
        return f"axis sizes {list(axis_sizes)} must be >= 1"
    count = math.prod(axis_sizes)
    if count > MAX_MESH_DEVICES:
        return (f"axis sizes {list(axis_sizes)} make {count} devices, more than mlax handles "
                f"({MAX_MESH_DEVICES})")
    return None


def _mesh_problem(mesh: Mesh) -> str | None:
    if len(mesh.axis_names) != len(mesh.axis_sizes):
        return f"{len(mesh.axis_names)} axis name(s) but {len(mesh.axis_sizes)} size(s)"
    if not mesh.axis_names:
        return "it has no axes"
    repeated = sorted({a for a in mesh.axis_names if mesh.axis_names.count(a) > 1})
    if repeated:
        return f"axis name(s) {', '.join(repeated)} appear more than once"
    problem = _size_problem(mesh.axis_sizes)
    if problem is not None:
        return problem
    count = math.prod(mesh.axis_sizes)
    if len(mesh.device_ids) != count:
        return (f"axis sizes {list(mesh.axis_sizes)} make {count} device(s) but device_ids "
                f"lists {len(mesh.device_ids)}")
    if len(set(mesh.device_ids)) != len(mesh.device_ids):
        return f"device_ids {list(mesh.device_ids)} repeat a device"
    if mesh.axis_types and (len(mesh.axis_types) != len(mesh.axis_names)
                            or not set(mesh.axis_types) <= {"Auto", "Explicit", "Manual"}):
        return (f"axis_types {list(mesh.axis_types)} must give one of Auto, Explicit, Manual per axis "
                f"({len(mesh.axis_names)} axes)")
    return None


# --- partition specs --------------------------------------------------------------------------


def describe_spec(spec: Spec) -> str:
    """jax's spelling: ``P('x', None)``, ``P(('x', 'y'),)``."""
    dims = []
    for axes in spec:
        dims.append("None" if not axes else repr(axes[0]) if len(axes) == 1 else
                    "(" + ", ".join(map(repr, axes)) + ")")
    return "P(" + ", ".join(dims) + ")"


def spec_axes(spec: Spec) -> tuple[str, ...]:
    """Every mesh axis ``spec`` splits over, in dimension order."""
    return tuple(a for axes in spec for a in axes)


def replicated(rank: int) -> Spec:
    return ((),) * rank


def _check_rank(spec: Spec, shape: Sequence[int], what: str) -> None:
    if len(spec) != len(shape):
        raise ShardingError(f"{what} has rank {len(shape)} but its sharding {describe_spec(spec)} "
                            f"has {len(spec)} entries (a spec has one entry per dimension)")


def check_spec(spec: Spec, mesh: Mesh, shape: Sequence[int] | None = None, what: str = "the value") -> None:
    """Raise ShardingError unless ``spec`` fits ``mesh`` (and the GLOBAL ``shape``, when given):
    one entry per dimension, every axis in the mesh and at most once, each split dimension
    divisible by the product of its axes' sizes. ``what`` names the value in the message."""
    if shape is not None:
        _check_rank(spec, shape, what)
    axes = spec_axes(spec)
    for axis in axes:
        if axis not in mesh.axis_names:
            raise ShardingError(f"the sharding {describe_spec(spec)} of {what} names axis '{axis}', which "
                                f"is not an axis of the mesh {mesh.describe()}")
    repeated = sorted({a for a in axes if axes.count(a) > 1})
    if repeated:
        raise ShardingError(f"the sharding {describe_spec(spec)} of {what} uses mesh axis "
                            f"'{repeated[0]}' more than once")
    if shape is None:
        return
    for dim, (size, dim_axes) in enumerate(zip(shape, spec, strict=True)):
        parts = mesh.axis_size(dim_axes)
        if size % parts:
            raise ShardingError(
                f"the sharding {describe_spec(spec)} of {what} implies that the global size of its "
                f"dimension {dim} should be divisible by {parts}, but it is equal to {size} "
                f"(full shape: {tuple(shape)})")


def local_shape(shape: Sequence[int], spec: Spec, mesh: Mesh, what: str = "the value") -> tuple[int, ...]:
    """The per-device shape of a value of GLOBAL ``shape``: each dimension divided by the
    product of its axes' sizes."""
    check_spec(spec, mesh, shape, what)
    return tuple(int(d) // mesh.axis_size(axes) for d, axes in zip(shape, spec, strict=True))


def global_shape(local: Sequence[int], spec: Spec, mesh: Mesh, what: str = "the value") -> tuple[int, ...]:
    """The global shape whose per-device blocks have shape ``local``."""
    _check_rank(spec, local, what)
    check_spec(spec, mesh, what=what)
    return tuple(int(d) * mesh.axis_size(axes) for d, axes in zip(local, spec, strict=True))


def local_type(t: ir.Type, spec: Spec, mesh: Mesh, what: str = "the value") -> ir.RankedTensorType:
    """``t`` (a global tensor type) with its per-device shape."""
    tensor = ir.RankedTensorType(t)
    shape = local_shape(tuple(tensor.shape), spec, mesh, what)
    return ir.RankedTensorType.get(list(shape), tensor.element_type)


def global_type(t: ir.Type, spec: Spec, mesh: Mesh, what: str = "the value") -> ir.RankedTensorType:
    """``t`` (a per-device tensor type) with its global shape."""
    tensor = ir.RankedTensorType(t)
    return ir.RankedTensorType.get(list(global_shape(tuple(tensor.shape), spec, mesh, what)),
                                   tensor.element_type)


# --- module and function attributes --------------------------------------------------------------


def _operation(op: ir.Module | ir.Operation | ir.OpView) -> ir.Operation:
    return op.operation


def set_module_mesh(module: ir.Module | ir.Operation, mesh: Mesh) -> None:
    """Give ``module`` the ``mlax.mesh`` attribute (one mesh per module)."""
    with _operation(module).context:
        _operation(module).attributes[MESH_ATTR] = mesh.attribute()


def module_mesh(module: ir.Module | ir.Operation) -> Mesh | None:
    """The module's mesh, or None; ShardingError if the attribute is malformed."""
    op = _operation(module)
    if MESH_ATTR not in op.attributes:
        return None
    return Mesh.from_attribute(op.attributes[MESH_ATTR])


def _attr_dicts(function: ir.Operation, key: str, count: int) -> list[ir.DictAttr]:
    if key in function.attributes:
        return [ir.DictAttr(d) for d in ir.ArrayAttr(function.attributes[key])]
    return [ir.DictAttr.get({}, context=function.context) for _ in range(count)]


def _signature(function: ir.Operation) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)


def _read(function: ir.Operation | ir.OpView, key: str, index: int) -> Spec | None:
    function = _operation(function)
    if key not in function.attributes:
        return None
    entry = ir.DictAttr(ir.ArrayAttr(function.attributes[key])[index])
    return read_spec(entry[ARG_ATTR]) if ARG_ATTR in entry else None


def _write(function: ir.Operation | ir.OpView, key: str, count: int, index: int, spec: Spec | None) -> None:
    function = _operation(function)
    with function.context:
        dicts = _attr_dicts(function, key, count)
        entries = {dicts[index][i].name: dicts[index][i].attr for i in range(len(dicts[index]))}
        entries.pop(ARG_ATTR, None)
        if spec is not None:
            entries[ARG_ATTR] = spec_attribute(spec)
        dicts[index] = ir.DictAttr.get(entries)
        function.attributes[key] = ir.ArrayAttr.get(dicts)


def arg_spec(function: ir.Operation | ir.OpView, index: int) -> Spec | None:
    """The ``mlax.sharding`` of argument ``index`` of a func.func, or None (unspecified)."""
    return _read(function, "arg_attrs", index)


def result_spec(function: ir.Operation | ir.OpView, index: int) -> Spec | None:
    """The ``mlax.sharding`` of result ``index`` of a func.func, or None (unspecified)."""
    return _read(function, "res_attrs", index)


def set_arg_spec(function: ir.Operation | ir.OpView, index: int, spec: Spec | None) -> None:
    """Set (or, with None, remove) the ``mlax.sharding`` of argument ``index``."""
    _write(function, "arg_attrs", len(_signature(_operation(function)).inputs), index, spec)


def set_result_spec(function: ir.Operation | ir.OpView, index: int, spec: Spec | None) -> None:
    """Set (or, with None, remove) the ``mlax.sharding`` of result ``index``."""
    _write(function, "res_attrs", len(_signature(_operation(function)).results), index, spec)


def is_partitioned(function: ir.Operation | ir.OpView) -> bool:
    """Whether ``function`` is a per-device entry written by `mlax-partition`."""
    return PARTITIONED_ATTR in _operation(function).attributes


def _name(function: ir.Operation) -> str:
    return ir.StringAttr(function.attributes["sym_name"]).value


def check_function(function: ir.Operation | ir.OpView, mesh: Mesh | None) -> None:
    """ShardingError unless the ``mlax.sharding`` attributes of ``function`` fit ``mesh``: specs
    need a mesh; each fits its argument's (or result's) GLOBAL type, or, on a partitioned entry,
    stands for a global type its LOCAL type times the spec's axis sizes."""
    function = _operation(function)
    signature = _signature(function)
    partitioned = is_partitioned(function)
    sides = (("argument", signature.inputs, arg_spec), ("result", signature.results, result_spec))
    for what, types, read in sides:
        for i, t in enumerate(types):
            spec = read(function, i)
            if spec is None:
                continue
            where = f"{what} {i} of @{_name(function)}"
            if mesh is None:
                raise ShardingError(f"{where} has a sharding {describe_spec(spec)} but the module has no "
                                    f"{MESH_ATTR}")
            shape = tuple(ir.RankedTensorType(t).shape)
            if partitioned:
                global_shape(shape, spec, mesh, where)
            else:
                check_spec(spec, mesh, shape, where)


def verify_sharding(module: ir.Module | ir.Operation) -> list[str]:
    """Check the module's mesh and every function's ``mlax.sharding`` attributes; each problem
    is emitted as an error at the module's or function's location and returned."""
    op = _operation(module)
    messages: list[str] = []

    def report(location: ir.Location, message: str) -> None:
        location.emit_error(message)
        messages.append(message)

    try:
        mesh = module_mesh(op)
    except ShardingError as error:
        report(op.location, str(error))
        return messages
    for child in op.regions[0].blocks[0].operations:
        if child.operation.name != "func.func":
            continue
        try:
            check_function(child.operation, mesh)
        except (ShardingError, ValueError) as error:
            report(child.operation.location, str(error))
    return messages
