"""``jit(f, in_shardings=, out_shardings=)``: the shardings of a program's inputs and outputs.

jax's rules: ``in_shardings`` is a pytree prefix of the positional arguments (a single Sharding
applies to all of them), ``out_shardings`` one of the outputs; a leaf is a Sharding, a
PartitionSpec (read against the context mesh, ``mlax.set_mesh``), or None (the compiler
chooses). Arguments that are *committed* sharded Arrays (placed by ``device_put`` on several
devices, or computed there) bring their sharding when ``in_shardings`` does not give one.

The traced module then carries the contract's IR (dialect/sharding.py): the program's one mesh
as the ``mlax.mesh`` module attribute, and each argument's and result's spec as its
``mlax.sharding`` attribute; `mlax-partition` turns that into the per-device program. A program
with a mesh runs on the XLA backend of the mesh's devices (which compiles it for them), or,
asked for, on the interpreter, which simulates the devices.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
from jax import tree_util
from jax.api_util import flatten_axes
from jax.sharding import NamedSharding
from mlir import ir

from mlax.array import committed_sharding as array_committed_sharding
from mlax.core import Aval
from mlax.dialect import get_context
from mlax.dialect import sharding as ir_sharding
from mlax.errors import user_error
from mlax.sharding import (
    Placement,
    as_named,
    check_same_mesh,
    concrete_for,
    forget_mesh_source,
    ir_mesh,
    placement,
)
from mlax.sharding import use_program_mesh as _use_program_mesh
from mlax.sharding_types import explicit, spec_of

UNSPECIFIED: Any = type("UnspecifiedValue", (), {"__repr__": lambda self: "UnspecifiedValue"})()


def given(value: Any) -> bool:
    """Whether a jit sharding option was passed (None is a value: "the compiler chooses")."""
    return value is not UNSPECIFIED


def committed_sharding(leaf: Any) -> NamedSharding | None:
    """The sharding of an argument committed to several devices (mlax.array's committed
    Arrays: placed by device_put, or results of a program for a mesh), else None: a one-device
    array runs wherever the program does."""
    sharding = array_committed_sharding(leaf)
    if isinstance(sharding, NamedSharding) and sharding.mesh.devices.size > 1:
        return sharding
    return None


def _prefix_error(error: ValueError, option: str) -> ValueError:
    return user_error(ValueError, str(error), f"{option} of mlax.jit")


def _positional_prefix(in_shardings: Any, count: int) -> Any:
    """in_shardings as a prefix of the positional arguments tuple, with jax's length check."""
    if isinstance(in_shardings, list):
        in_shardings = tuple(in_shardings)
    if isinstance(in_shardings, tuple) and len(in_shardings) != count:
        raise user_error(ValueError, "pjit in_shardings specification must be a tree prefix of the "
                         "positional arguments tuple. In particular, pjit in_shardings must either be a "
                         "Sharding, a "
                         "PartitionSpec, or a tuple of length equal to the number of positional arguments. "
                         "But "
                         f"pjit in_shardings is the wrong length: got a tuple or list of length "
                         f"{len(in_shardings)} "
                         f"for an args tuple of length {count}.", "in_shardings of mlax.jit")
    return in_shardings


def _type_text(aval: Aval) -> str:
    return f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"


def input_placements(in_shardings: Any, dyn_args: tuple[Any, ...], dyn_kwargs: dict[str, Any],
                     leaves: Sequence[Any], avals: Sequence[Aval],
                     paths: Sequence[str]) -> tuple[Placement | None, ...]:
    """Per argument leaf, its Placement (from in_shardings, else from a committed Array) or None."""
    if given(in_shardings):
        if dyn_kwargs and in_shardings is not None:  # None specifies nothing, as in jax
            raise user_error(ValueError, "pjit does not support kwargs when in_shardings is specified.",
                             "in_shardings of mlax.jit")
        prefix = _positional_prefix(in_shardings, len(dyn_args))
        try:
            flat = flatten_axes("pjit in_shardings", tree_util.tree_structure(dyn_args), prefix)
        except ValueError as error:
            raise _prefix_error(error, "in_shardings") from None
        flat += [None] * (len(leaves) - len(flat))
    else:
        flat = [None] * len(leaves)
    placements = []
    for leaf, aval, path, sharding in zip(leaves, avals, paths, flat, strict=True):
        argument = f"in_shardings of mlax.jit (for argument {path})"
        named = as_named(sharding, "jit", argument)
        committed = committed_sharding(leaf)
        if named is not None and committed is not None and committed != named:
            raise user_error(ValueError, f"Sharding passed to jit does not match the sharding on the "
                             f"respective arg. Got jit sharding: {named},\narg sharding: {committed} for arg "
                             f"type: "
                             f"{_type_text(aval)}", argument)
        chosen = named or committed
        placements.append(None if chosen is None else placement(
            chosen, aval.shape, f"One of pjit arguments with pytree key path {path}", argument))
    return tuple(placements)


def _output_paths(out_tree: Any) -> list[str]:
    dummy = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    return ["result" + tree_util.keystr(path) for path, _ in tree_util.tree_flatten_with_path(dummy)[0]]


def _typed_placement(aval: Aval, inputs: Sequence[Placement | None]) -> Placement | None:
    """An output's Placement from its type, where the type names a mesh with an Explicit axis
    (jax's explicit sharding: the result is where its type says), on the concrete mesh of an
    input of that mesh (else one seen with it); None otherwise."""
    typed = aval.sharding
    if typed is None or not explicit(typed.mesh):
        return None
    mesh = next((p.mesh for p in inputs if p is not None and p.mesh.abstract_mesh == typed.mesh), None)
    mesh = mesh or concrete_for(typed.mesh)
    if mesh is None or mesh.devices.size <= 1:
        return None
    return Placement(mesh, spec_of(typed, aval.ndim))


def output_placements(out_shardings: Any, out_tree: Any, out_avals: Sequence[Aval],
                      inputs: Sequence[Placement | None] = ()) -> tuple[Placement | None, ...]:
    """Per output leaf, its Placement from out_shardings, else from its type (``inputs``: the
    arguments' placements, whose meshes typed outputs land on), or None."""
    if not given(out_shardings):
        return tuple(_typed_placement(aval, inputs) for aval in out_avals)
    try:
        flat = flatten_axes("pjit out_shardings", out_tree, out_shardings)
    except ValueError as error:
        raise _prefix_error(error, "out_shardings") from None
    placements = []
    for path, aval, sharding in zip(_output_paths(out_tree), out_avals, flat, strict=True):
        argument = f"out_shardings of mlax.jit (for {path})"
        named = as_named(sharding, "jit", argument)
        placements.append(_typed_placement(aval, inputs) if named is None else placement(
            named, aval.shape, f"One of pjit outputs with pytree key path {path}", argument))
    return tuple(placements)


def _entry_function(module: ir.Module, entry: str) -> ir.Operation:
    return ir.SymbolTable(module.operation)[entry].operation


def annotate(module: ir.Module, entry: str, ins: Sequence[Placement | None], outs: Sequence[Placement | None],
             paths: Sequence[str]) -> ir_sharding.Mesh | None:
    """Give the traced module its mesh and the entry its arguments' and results' specs; the
    program's mesh (None for a one-device program). Every sharding must be on one mesh."""
    named = [(p, f"in_shardings of argument {path}")
             for p, path in zip(ins, paths, strict=True) if p is not None]
    named += [(p, "explicit output sharding") for p in outs if p is not None]
    with get_context():
        if named:
            first, first_what = named[0]
            first_mesh = ir_mesh(first.mesh)
            for other, what in named[1:]:
                check_same_mesh(first_mesh, first_what, ir_mesh(other.mesh), what)
            _use_program_mesh(module, first.mesh, first_what)
            ir_sharding.set_module_mesh(module.operation, first_mesh)  # the entry's axis types win
        forget_mesh_source(module)
        function = _entry_function(module, entry)
        for i, where in enumerate(ins):
            if where is not None:
                ir_sharding.set_arg_spec(function, i, where.spec)
        for i, where in enumerate(outs):
            if where is not None:
                ir_sharding.set_result_spec(function, i, where.spec)
        return ir_sharding.module_mesh(module.operation)


def mesh_backend(mesh: ir_sharding.Mesh, explicit: str | None, default: str) -> str:
    """The backend that runs a program on ``mesh``: the interpreter where asked for (it simulates
    the devices), else the XLA backend of the mesh devices' platform. mlax's own cpu backend,
    and an XLA backend bound to one device, run one device: asking for them is an error."""
    requested = explicit or default
    if requested == "interpreter":
        return "interpreter"
    if explicit is not None and (explicit == "cpu" or ":" in explicit):
        raise user_error(ValueError, f"this program is partitioned over a mesh of {mesh.size} device(s) "
                         f"{mesh.describe()}, but backend {explicit!r} runs a program on one device; use "
                         "backend='xla' (XLA runs it on the mesh's devices) or backend='interpreter' (which "
                         "simulates them)", "backend of mlax.jit")
    if requested not in ("cpu", "xla") and ":" not in requested:
        return requested  # an XLA platform asked for by name (gpu, tpu)
    devices = {d.id: d for d in jax.devices()}
    platform = devices[mesh.device_ids[0]].platform if mesh.device_ids[0] in devices else "cpu"
    return "xla" if platform == "cpu" else platform
