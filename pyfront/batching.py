"""mlax.vmap: vectorizing map as IR, resolved by the `mlax-batch` pass.

Inside a traced program, ``vmap(f)(*args)`` traces ``f`` on per-example abstract values into
a private function of the module, declares an `mlax.vmap` of it (in_axes/out_axes per leaf,
-1 for None, and the axis size) and calls the declaration on the batched arguments; values of
the enclosing program that ``f`` uses are captured unbatched. Outside a trace the same code
runs under a jit. in_axes/out_axes follow JAX: an int, None, negative ints, or pytrees that
are prefixes of the arguments / outputs; keyword arguments are batched along axis 0.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from jax import tree_util
from jax._src.api_util import flatten_axes
from mlir import ir

from mlax.autodiff import _call, _positional_names
from mlax.core import Aval, Trace, abstractify, current_trace
from mlax.dialect import get_context
from mlax.dialect.transforms import declare_transform
from mlax.passes.symbols import unique_name
from mlax.source_info import current_location
from mlax.tracing import flatten_arguments, function_name, trace_subfunction


def _normalize(axis: int | None, rank: int, what: str) -> int:
    """An axis in [-rank, rank) as a non-negative int; None as -1 (not batched)."""
    if axis is None:
        return -1
    if not -rank <= axis < rank:
        raise ValueError(f"vmap: {what} = {axis} is out of bounds for an array of rank {rank - 1}"
                         if rank else f"vmap: {what} = {axis} needs an array of rank >= 1")
    return axis % rank


def vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0, axis_size: int | None = None,
         axis_name: str | None = None) -> Callable[..., Any]:
    """Vectorize ``fun`` over the ``in_axes`` of its arguments, as jax.vmap."""
    from mlax.api import jit

    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    def run(trace: Trace, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        name = function_name(fun)
        names = _positional_names(fun, len(args))
        leaves, in_tree, paths = flatten_arguments((args, kwargs), name, names)
        axes_tree = (in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args), 0)
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(f"vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                             f"positional arguments passed to the function, but got len(in_axes)="
                             f"{len(in_axes)}, len(args)={len(args)}")
        try:
            axes = flatten_axes("vmap in_axes", in_tree, axes_tree)
        except ValueError as error:
            raise ValueError(f"vmap of {name}: {error}") from None
        avals = [abstractify(leaf) for leaf in leaves]
        axes = [_normalize(a, len(v.shape), f"in_axes for {p}")
                for a, v, p in zip(axes, avals, paths, strict=True)]
        sizes = {p: v.shape[a] for a, v, p in zip(axes, avals, paths, strict=True) if a != -1}
        if len(set(sizes.values())) > 1:
            listed = ", ".join(f"{p} has size {s}" for p, s in sizes.items())
            raise ValueError(f"vmap got inconsistent sizes for the array axes to be mapped: {listed}")
        size = next(iter(sizes.values()), axis_size)
        if size is None:
            raise ValueError(f"vmap of {name} must have at least one non-None value in in_axes, or be given "
                             "axis_size")
        if axis_size is not None and size != axis_size:
            raise ValueError(f"vmap of {name}: axis_size={axis_size} but the mapped axes have size {size}")
        inner = [Aval(tuple(d for i, d in enumerate(v.shape) if i != a), v.dtype, v.weak_type)
                 for v, a in zip(avals, axes, strict=True)]

        def build_args(tracers: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
            return tree_util.tree_unflatten(in_tree, tracers)

        sub = trace_subfunction(fun, build_args, inner, paths, trace)
        try:
            outs_axes = flatten_axes("vmap out_axes", sub.out_tree, out_axes)
        except ValueError as error:
            raise ValueError(f"vmap of {name}: {error}") from None
        outs_axes = [_normalize(a, len(v.shape) + 1, "out_axes") for a, v in zip(outs_axes, sub.out_avals,
                                                                                   strict=True)]
        module = trace.block.owner.parent
        with get_context(), current_location():
            decl = unique_name(module, f"{sub.name}_vmap")
            declared = declare_transform(module, "vmap", decl, callee=sub.name,
                                         in_axes=(*axes, *([-1] * len(sub.captured))),
                                         out_axes=tuple(outs_axes), axis_size=size)
        out_avals = []
        for aval, axis in zip(sub.out_avals, outs_axes, strict=True):
            shape = list(aval.shape)
            if axis != -1:
                shape.insert(axis, size)
            out_avals.append(Aval(tuple(shape), aval.dtype, aval.weak_type))
        results = _call(trace, decl, ir.FunctionType(declared.type), [*leaves, *sub.captured], out_avals,
                        f"vmap of {name}")
        return tree_util.tree_unflatten(sub.out_tree, results)

    jitted = jit(lambda args, kwargs: run(current_trace(), args, kwargs))

    @functools.wraps(fun)
    def batched(*args: Any, **kwargs: Any) -> Any:
        trace = current_trace()
        return run(trace, args, kwargs) if trace is not None else jitted(args, kwargs)

    del axis_name  # accepted for JAX compatibility; collectives over it come with sharding
    return batched
