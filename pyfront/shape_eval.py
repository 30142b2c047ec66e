"""mlax.eval_shape: the shapes, dtypes and weak types of a function's outputs, from a trace
alone (nothing is compiled or run), as ``jax.eval_shape``.

``mlax.ShapeDtypeStruct`` *is* ``jax.ShapeDtypeStruct``: it is a plain, tracing-free record
(shape, dtype, weak_type, sharding), so one class serves both; code that builds or checks
``jax.ShapeDtypeStruct`` (flax, optax, checkpointing libraries) then works with mlax's unchanged,
and ``mlax.eval_shape``'s results are what ``jax.eval_shape`` returns.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from jax import ShapeDtypeStruct, tree_util

from mlax import prng
from mlax.api import JittedFunction
from mlax.array import Array
from mlax.core import abstractify, current_trace, is_array_like
from mlax.errors import check_callable, user_error
from mlax.ref_type import refs_as_values
from mlax.sharding_types import jax_type
from mlax.tracing import _describe_path, abstract_argument, function_name, trace_function

__all__ = ["ShapeDtypeStruct", "eval_shape", "typeof"]


def _positional_names(fun: Callable[..., Any], count: int) -> list[str]:
    """Names for ``count`` positional arguments (``args[i]`` past the named ones), for paths."""
    try:
        params = inspect.signature(fun).parameters.values()
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names + [f"args[{i}]" for i in range(len(names), count)]


def _dynamic_part(fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``(fun, args, kwargs, names)`` with a jitted function's static arguments bound as the
    Python values they are (``jax.eval_shape`` keeps them static too); the rest is traced."""
    if not isinstance(fun, JittedFunction):
        return fun, args, kwargs, _positional_names(fun, len(args))
    _, (dyn_args, dyn_kwargs), dyn_names, rebuild = fun._partition(args, kwargs)

    @functools.wraps(fun.__wrapped__)
    def dynamic(*traced_args: Any, **traced_kwargs: Any) -> Any:
        full_args, full_kwargs = rebuild(traced_args, traced_kwargs)
        return fun(*full_args, **full_kwargs)  # inside the trace, jit inlines

    return dynamic, dyn_args, dyn_kwargs, dyn_names


def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fun(*args, **kwargs)``'s outputs as a pytree of ``ShapeDtypeStruct``, found by
    tracing ``fun`` on abstract arguments (arrays, ShapeDtypeStructs, anything with ``shape``
    and ``dtype``, Python scalars, pytrees of them) without running it.

    Inside a trace the arguments may be its tracers and ``fun`` may use its values: they are
    only read for their types.
    """
    check_callable(fun, "fun of mlax.eval_shape")
    fun, args, kwargs = refs_as_values(fun, args, kwargs)  # Ref arguments: fresh refs of their values
    fun, args, kwargs, arg_names = _dynamic_part(fun, args, kwargs)
    name = function_name(fun)
    paths_and_leaves, in_tree = prng.tree_flatten_with_path((args, kwargs))  # keys as their data
    paths = [_describe_path(key_path, arg_names) for key_path, _ in paths_and_leaves]
    in_avals = [abstract_argument(leaf, path, name)
                for (_, leaf), path in zip(paths_and_leaves, paths, strict=True)]

    def build_args(tracers: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return tree_util.tree_unflatten(in_tree, tracers)

    traced = trace_function(fun, build_args, in_avals, paths, current_trace(), "eval_shape")
    structs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in traced.out_avals]
    return tree_util.tree_unflatten(traced.out_tree, structs)


def typeof(x: Any) -> Any:
    """``jax.typeof``: the abstract value of an array, tracer, key array or scalar, as jax's own
    ``ShapedArray`` (shape, dtype, weak type; an array on devices shows its sharding as jax's
    typeof of its buffer does), so code comparing avals with jax's works."""
    import jax
    from jax.core import ShapedArray

    if type(x) is Array and x._xla_buffer is not None:
        return jax.typeof(x._xla_buffer).update(weak_type=x.weak_type)
    if prng.is_key(x):
        return ShapedArray(x.shape, x.dtype)
    if isinstance(x, jax.Ref):  # mlax.refs.Ref: its AbstractRef
        return x.aval
    if not is_array_like(x):
        raise user_error(TypeError, f"Argument {x!r} of type {type(x)} is not a valid JAX type",
                         "x of mlax.typeof")
    return jax_type(abstractify(x))  # with a traced value's type sharding and varying axes
