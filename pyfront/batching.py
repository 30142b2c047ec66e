"""mlax.vmap: vectorizing map as IR, resolved by the `mlax-batch` pass.

Inside a traced program, ``vmap(f)(*args)`` traces ``f`` on per-example abstract values into
a private function of the module, declares an `mlax.vmap` of it (in_axes/out_axes per leaf,
-1 for None, and the axis size) and calls the declaration on the batched arguments; values of
the enclosing program that ``f`` uses are captured unbatched. Outside a trace the same code
runs under a jit. in_axes/out_axes follow JAX: an int, None, negative ints, or pytrees that
are prefixes of the arguments / outputs; keyword arguments are batched along axis 0.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jax import tree_util
from jax.api_util import flatten_axes
from mlir import ir

from mlax import named_axes, prng
from mlax.autodiff import _call, _positional_names, _type_text
from mlax.core import Aval, Trace, abstractify, known_of
from mlax.dialect import get_context
from mlax.dialect.transforms import declare_transform
from mlax.errors import check_callable, user_error
from mlax.passes.symbols import unique_name
from mlax.sharding_types import varying_as
from mlax.source_info import current_location
from mlax.staging import Staged, as_static, restore_static, static_leaves, wraps
from mlax.tracing import checkify_body, flatten_arguments, function_name, trace_subfunction

_PYTHON_SCALARS = (int, float, bool, complex)


def _in_axis(axis: int | None, aval: Aval, path: str, key: bool = False) -> int:
    """An in_axes entry as a non-negative axis of its argument; None as -1 (not batched). For
    a PRNG key's data (``key``) the axis counts the key dimensions, not the data's last one."""
    if axis is None:
        return -1
    shape = aval.shape[:-1] if key else aval.shape
    rank = len(shape)
    if not -rank <= axis < rank:
        raise user_error(ValueError, f"vmap was requested to map its argument along axis {axis}, which "
                         f"implies that its rank should be at least {axis + 1 if axis >= 0 else -axis}, but "
                         f"is only {rank} (its shape is {shape})", f"in_axes for {path} of mlax.vmap")
    return axis % rank


def _out_axis(axis: int | None, rank: int) -> int:
    """An out_axes entry as a non-negative axis of a batched output of ``rank`` (for a PRNG
    key's data, the rank of the batched keys); None as -1."""
    if axis is None:
        return -1
    if not -rank <= axis < rank:
        raise user_error(ValueError, f"axis {axis} is out of bounds for array of dimension {rank}",
                         "out_axes of mlax.vmap")
    return axis % rank


def _check_axes_spec(axes: Any, name: str, shape: str) -> None:
    """JAX's check when vmap is built: ints and Nones in (nested) containers."""
    leaves = tree_util.tree_leaves(axes, is_leaf=lambda x: x is None)
    if not all(type(a) is int or a is None for a in leaves):
        raise user_error(TypeError, f"vmap {name} must be an int, None, or {shape}, but got {axes}.",
                         f"{name} of mlax.vmap")


def vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0, axis_size: int | None = None,
         axis_name: str | None = None, spmd_axis_name: Any = None) -> Callable[..., Any]:
    """Vectorize ``fun`` over the ``in_axes`` of its arguments, as jax.vmap. ``spmd_axis_name``
    (mesh axes jax shards the mapped dimension over, a placement hint) is accepted: mlax places
    the batched values as it places the rest of the program, with jax's values."""
    del spmd_axis_name
    check_callable(fun, "fun of mlax.vmap")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    positional = "a tuple of entries corresponding to the positional arguments passed to the function"
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise user_error(TypeError, f"vmap in_axes must be an int, None, or {positional}, but got {in_axes}.",
                         "in_axes of mlax.vmap")
    _check_axes_spec(in_axes, "in_axes", "(nested) container with those types as leaves")
    _check_axes_spec(out_axes, "out_axes", "(nested) container with those types as leaves")

    def run(trace: Trace, *args: Any, **kwargs: Any) -> Any:
        from mlax import refs

        if refs.holds_refs((args, kwargs)) and not refs.threaded(fun):  # refs of one example inside (refs.py)
            return refs.vmap_refs(vmap, fun, in_axes, out_axes, axis_size, axis_name, args, kwargs)
        name = function_name(fun)
        names = _positional_names(fun, len(args))
        axes_tree = (in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args), 0)
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise user_error(ValueError, f"vmap in_axes must be an int, None, or {positional}, but got "
                             f"len(in_axes)={len(in_axes)}, len(args)={len(args)}", "in_axes of mlax.vmap")
        try:
            leaf_axes = flatten_axes("vmap in_axes", tree_util.tree_structure((args, kwargs)), axes_tree)
        except ValueError as error:
            raise user_error(ValueError, f"vmap of {name}: {error}", "in_axes of mlax.vmap") from None
        # unmapped objects reach fun as they are (mapped ones are flatten_arguments' error)
        mapped = [a is not None for a in leaf_axes]
        leaves, in_tree, paths = flatten_arguments(static_leaves((args, kwargs), mapped), name, names)
        if not leaves and axis_size is None:
            raise user_error(ValueError, "vmap wrapped function must be passed at least one argument "
                             "containing an array or axis_size must be specified", f"the arguments of {name}")
        axes = flatten_axes("vmap in_axes", in_tree, axes_tree)
        avals = [abstractify(leaf) for leaf in leaves]
        keys = prng.key_mask(in_tree)
        axes = [_in_axis(a, v, p, k) for a, v, p, k in zip(axes, avals, paths, keys, strict=True)]
        sizes = {p: v.shape[a] for a, v, p in zip(axes, avals, paths, strict=True) if a != -1}
        given = {axis_size} if axis_size is not None and sizes else set()
        if len(set(sizes.values()) | given) > 1:
            listed = [f"the `axis_size` argument was {axis_size}" for _ in given]
            listed += [f"one axis had size {v.shape[a]}: axis {a} of argument {p} of type {_type_text(v)}"
                       for a, v, p in zip(axes, avals, paths, strict=True) if a != -1]
            raise user_error(ValueError, "vmap got inconsistent sizes for array axes to be mapped:\n  * "
                             + ";\n  * ".join(listed), "in_axes of mlax.vmap")
        size = next(iter(sizes.values()), axis_size)
        if size is None:
            raise user_error(ValueError, "vmap must have at least one non-None value in in_axes or axis_size "
                             "must be specified", "in_axes of mlax.vmap")
        inner = [varying_as(Aval(tuple(d for i, d in enumerate(v.shape) if i != a), v.dtype, v.weak_type), v)
                 for v, a in zip(avals, axes, strict=True)]

        knowns = [known_of(leaf) if axis == -1 else None for leaf, axis in zip(leaves, axes, strict=True)]

        def build_args(tracers: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
            for tracer, known in zip(tracers, knowns, strict=True):
                tracer.known = known  # concrete mode: the unmapped arguments keep their values
            return restore_static(tree_util.tree_unflatten(in_tree, tracers))

        checked = checkify_body(fun, trace)  # inside a checkified function: the body's errors mapped out
        body, body_out_axes = (checked.body, (out_axes, 0)) if checked else (fun, out_axes)
        with named_axes.bind({} if axis_name is None else {axis_name: size}, "vmap"):
            sub = trace_subfunction(body, build_args, inner, paths, trace, "vmap", (size, tuple(axes)))
        try:
            outs_axes = flatten_axes("vmap out_axes", sub.out_tree, body_out_axes)
        except ValueError as error:
            raise user_error(ValueError, f"vmap of {name}: {error}", "out_axes of mlax.vmap") from None
        outs_axes = [_out_axis(a, len(v.shape) + 1 - k)
                     for a, v, k in zip(outs_axes, sub.out_avals, prng.key_mask(sub.out_tree), strict=True)]
        module = trace.block.owner.parent
        with get_context(), current_location():
            decl = unique_name(module, f"{sub.name}_vmap")
            declared = declare_transform(module, "vmap", decl, callee=sub.name,
                                         in_axes=(*axes, *([-1] * len(sub.captured))),
                                         out_axes=tuple(outs_axes), axis_size=size, axis_name=axis_name)
        out_avals = []
        for aval, axis in zip(sub.out_avals, outs_axes, strict=True):
            shape = list(aval.shape)
            if axis != -1:
                shape.insert(axis, size)
            out_avals.append(varying_as(Aval(tuple(shape), aval.dtype, aval.weak_type), aval))  # jax's vma
        results = _call(trace, decl, ir.FunctionType(declared.type), [*leaves, *sub.captured], out_avals,
                        f"vmap of {name}")
        out = tree_util.tree_unflatten(sub.out_tree, results)
        if checked:
            out, error = out
            checked.finish(error)
        return out

    staged = Staged(run, fun)

    def unmapped_scalars_static(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The arguments with their unmapped Python scalars as static objects: as in jax, an
        argument whose in_axes is None reaches ``fun`` as it is (``x[:n]`` with such an int
        ``n`` slices statically); ``run`` reports a malformed in_axes."""
        if isinstance(in_axes, int) or (isinstance(in_axes, tuple) and len(in_axes) != len(args)):
            return args, kwargs
        axes_tree = (in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args), 0)
        try:
            leaf_axes = flatten_axes("vmap in_axes", tree_util.tree_structure((args, kwargs)), axes_tree)
        except ValueError:
            return args, kwargs
        leaves = tree_util.tree_leaves((args, kwargs))
        flags = [a is None and type(x) in _PYTHON_SCALARS for a, x in zip(leaf_axes, leaves, strict=True)]
        return as_static((args, kwargs), flags) if any(flags) else (args, kwargs)

    @wraps(fun)
    def batched(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = unmapped_scalars_static(args, kwargs)
        return staged(*args, **kwargs)

    return batched
