"""mlax.numpy.vectorize: NumPy's vectorize (with generalized-ufunc signatures) as jax's, built
on mlax.vmap: the loop dimensions of the broadcast arguments become nested vmaps, one per
dimension, with size-1 dimensions squeezed and passed unbatched (``in_axes=None``) rather
than broadcast, so the function sees exactly what it would see in a Python loop and no
argument is copied to the broadcast shape."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np

from mlax.batching import vmap
from mlax.configuration import numpy_rank_promotion
from mlax.errors import user_error
from mlax.numpy.manipulation import expand_dims, squeeze
from mlax.numpy.util import asarray, check_vectorize_rank_promotion

__all__ = ["vectorize"]

_DIMENSION = r"\w+"
_CORE_DIMENSIONS = rf"(?:{_DIMENSION}(?:,{_DIMENSION})*)?"
_ARGUMENT = rf"\({_CORE_DIMENSIONS}\)"
_ARGUMENTS = rf"{_ARGUMENT}(?:,{_ARGUMENT})*"
_SIGNATURE = rf"^{_ARGUMENTS}->{_ARGUMENTS}$"

CoreDims = tuple[str, ...]


def _parse_signature(signature: str) -> tuple[list[CoreDims], list[CoreDims]]:
    """``"(m,n),(n)->(m)"`` as the core dimension names of each input and each output."""
    if not re.match(_SIGNATURE, signature):
        raise user_error(ValueError, f"not a valid gufunc signature: {signature}",
                         "signature of mlax.numpy.vectorize")
    inputs, outputs = ([tuple(re.findall(_DIMENSION, arg)) for arg in re.findall(_ARGUMENT, part)]
                       for part in signature.split("->"))
    return inputs, outputs


def _update_dim_sizes(sizes: dict[str, int], shape: tuple[int, ...], core_dims: CoreDims, context: str,
                      is_input: bool) -> None:
    """Record the sizes of ``core_dims`` (the trailing dims of ``shape``), checking that a
    name keeps one size."""
    n = len(core_dims)
    if is_input and len(shape) < n:
        raise ValueError(f"input with shape {shape!r} does not have enough dimensions for all core "
                         f"dimensions {core_dims!r} {context}")
    if not is_input and len(shape) != n:
        raise ValueError(f"output shape {shape!r} does not match core dimensions {core_dims!r} {context}")
    for dim, size in zip(core_dims, shape[len(shape) - n:], strict=True):
        if sizes.setdefault(dim, size) != size:
            raise ValueError(f"inconsistent size for core dimension {dim!r}: {size!r} vs {sizes[dim]!r} "
                             f"{context}")


def _checked_outputs(func: Callable[..., Any], sizes: dict[str, int], output_dims: list[CoreDims],
                     context: str) -> Callable[..., Any]:
    """``func`` with its outputs checked against the signature's output core dimensions."""

    def wrapped(*args: Any) -> Any:
        out = func(*args)
        outs = out if isinstance(out, tuple) else [out]
        if len(output_dims) > 1 and not isinstance(out, tuple):
            raise TypeError(f"output must be a tuple when multiple outputs are expected, got: {out!r}\n"
                            f"{context}")
        if len(outs) != len(output_dims):
            raise TypeError(f"wrong number of output arguments: expected {len(output_dims)!r}, got "
                            f"{len(outs)!r} {context}")
        known = dict(sizes)
        for o, dims in zip(outs, output_dims, strict=True):
            _update_dim_sizes(known, tuple(asarray(o).shape), dims, context, is_input=False)
        return out

    return wrapped


def _apply_excluded(func: Callable[..., Any], excluded: Collection[int | str], args: Sequence[Any],
                    kwargs: dict[str, Any]) -> tuple[Callable[..., Any], list[Any], dict[str, Any]]:
    """``func`` with the excluded positional and keyword arguments bound, and what remains."""
    if not excluded:
        return func, list(args), kwargs
    dynamic_args = [a for i, a in enumerate(args) if i not in excluded]
    dynamic_kwargs = {k: v for k, v in kwargs.items() if k not in excluded}
    static_args = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int)) if i < len(args)]
    static_kwargs = {k: v for k, v in kwargs.items() if k in excluded}

    def bound(*args: Any, **kwargs: Any) -> Any:
        full = list(args)
        for i, value in static_args:
            full.insert(i, value)
        return func(*full, **kwargs, **static_kwargs)

    return bound, dynamic_args, dynamic_kwargs


def vectorize(pyfunc: Callable[..., Any], *, excluded: Collection[int | str] = frozenset(),
              signature: str | None = None) -> Callable[..., Any]:
    """``pyfunc`` mapped over the leading (loop) dimensions of its broadcast array arguments;
    ``signature`` (e.g. ``"(n),(n)->()"``) names the trailing core dimensions each argument and
    output keeps; ``excluded`` positions or keyword names are passed through unmapped.
    As in jax 0.10.2, keyword arguments that are not excluded are dropped (not passed)."""
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise user_error(TypeError, "mlax.numpy.vectorize can only exclude integer or string arguments, but "
                         f"excluded={excluded!r}", "excluded of mlax.numpy.vectorize")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise user_error(ValueError, f"excluded={excluded!r} contains negative numbers",
                         "excluded of mlax.numpy.vectorize")

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        func, args, _ = _apply_excluded(pyfunc, excluded, args, kwargs)
        if signature is not None:
            input_dims, output_dims = _parse_signature(signature)
        else:
            input_dims, output_dims = [()] * len(args), None
        none_args = {i for i, a in enumerate(args) if a is None}
        if none_args:
            if any(input_dims[i] != () for i in none_args if i < len(input_dims)):
                raise ValueError(f"Cannot pass None at locations {none_args} with signature={signature!r}")
            func, args, _ = _apply_excluded(func, none_args, args, {})
            input_dims = [d for i, d in enumerate(input_dims) if i not in none_args]
        args = [asarray(a) for a in args]
        if len(args) != len(input_dims):
            raise TypeError(f"wrong number of positional arguments: expected {len(input_dims)!r}, got "
                            f"{len(args)!r} {context}")
        sizes: dict[str, int] = {}
        loop_shapes = []
        for a, dims in zip(args, input_dims, strict=True):
            _update_dim_sizes(sizes, tuple(a.shape), dims, context, is_input=True)
            loop_shapes.append(tuple(a.shape[:a.ndim - len(dims)]))
        if numpy_rank_promotion.value != "allow":
            loop_ranks = [a.ndim - len(d) for a, d in zip(args, input_dims, strict=True) if a.ndim]
            check_vectorize_rank_promotion([tuple(a.shape) for a in args], loop_ranks, signature)
        try:
            broadcast_shape = tuple(np.broadcast_shapes(*loop_shapes))
        except ValueError:
            raise user_error(ValueError, f"Incompatible shapes for broadcasting: shapes={loop_shapes}",
                             "the arguments of a function of mlax.numpy.vectorize") from None
        if output_dims is not None:
            func = _checked_outputs(func, sizes, output_dims, context)
        squeezed, reversed_shapes = [], []
        for a, loop_shape in zip(args, loop_shapes, strict=True):
            filled = (1,) * (len(broadcast_shape) - len(loop_shape)) + loop_shape
            reversed_shapes.append(filled[::-1])
            ones = tuple(i for i, size in enumerate(loop_shape) if size == 1)
            squeezed.append(squeeze(a, axis=ones) if ones else a)
        mapped, expand = func, []
        for negdim, axis_sizes in enumerate(zip(*reversed_shapes, strict=True)):
            in_axes = tuple(None if size == 1 else 0 for size in axis_sizes)
            if all(axis is None for axis in in_axes):
                expand.append(len(broadcast_shape) - 1 - negdim)
            else:
                mapped = vmap(mapped, in_axes)
        result = mapped(*squeezed)
        if not expand:
            return result
        if isinstance(result, tuple):
            return tuple(expand_dims(r, tuple(expand)) for r in result)
        return expand_dims(result, tuple(expand))

    return wrapped

