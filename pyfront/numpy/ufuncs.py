"""jnp.ufunc: a function of arrays with NumPy's ufunc methods (reduce, accumulate, at, reduceat,
outer), and jnp.frompyfunc to make one of a scalar Python function.

As in jax, the binary arithmetic and logical functions of mlax.numpy (add, multiply, maximum,
logaddexp, ...) are ufuncs whose methods are their fast equivalents (``add.reduce`` is ``sum``,
``add.at`` an ``.at[].add``); any other ufunc gets the generic methods, which call the function
in a loop (a fori_loop or scan over the reduced axis, as jax's do) and so work on any binary
function, at the cost of one call per element along the axis.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

import mlax.numpy as mnp
from mlax import lax
from mlax.batching import vmap
from mlax.lax.windowed import add_monoid
from mlax.numpy import reductions
from mlax.numpy.util import asarray, check_arraylike, normalize_axis, promote_args_inexact
from mlax.numpy.vectorize import vectorize
from mlax.source_info import where as source_where

__all__ = ["frompyfunc", "ufunc"]


class ufunc:  # noqa: N801  (jax's name)
    """jax.numpy.ufunc: ``func`` of ``nin`` arrays to ``nout``, vectorized when called; the
    optional ``call``/``reduce``/``accumulate``/``at``/``reduceat`` replace the generic methods."""

    def __init__(self, func: Callable[..., Any], /, nin: int, nout: int, *, name: str | None = None,
                 nargs: int | None = None, identity: Any = None, call: Callable[..., Any] | None = None,
                 reduce: Callable[..., Any] | None = None, accumulate: Callable[..., Any] | None = None,
                 at: Callable[..., Any] | None = None, reduceat: Callable[..., Any] | None = None) -> None:
        self.__doc__ = func.__doc__
        self.__name__ = name or func.__name__
        self._func = func
        self.nin, self.nout = operator.index(nin), operator.index(nout)
        self.nargs = operator.index(nargs or nin)
        self.identity = identity
        self._methods = {"call": call, "reduce": reduce, "accumulate": accumulate, "at": at,
                         "reduceat": reduceat}

    def _key(self) -> tuple[Any, ...]:
        return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args: Any, out: None = None, where: None = None) -> Any:
        check_arraylike(self.__name__, *args)
        _unsupported(f"out argument of {self}", out)
        _unsupported(f"where argument of {self}", where)
        return (self._methods["call"] or vectorize(self._func))(*args)

    def _binary_only(self, method: str) -> None:
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    def _result_dtype(self, *operands: Any) -> np.dtype:
        """The dtype ``func`` gives for scalars of the operands' dtypes (jax's rule)."""
        from mlax.shape_eval import eval_shape

        ones = [lax.full((), 1, asarray(x).dtype) for x in operands]
        return np.dtype(eval_shape(self._func, *ones).dtype)

    def reduce(self, a: Any, axis: Any = 0, dtype: Any = None, out: None = None, keepdims: bool = False,
               initial: Any = None, where: Any = None) -> Any:
        """Fold the function along ``axis``: ``initial`` (or the identity) then every element."""
        check_arraylike(f"{self.__name__}.reduce", a)
        self._binary_only("reduce")
        _unsupported(f"out argument of {self.__name__}.reduce()", out)
        if where is not None:
            check_arraylike(f"{self.__name__}.reduce", where)
            if self.identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an identity, so to "
                                 "use a where mask one has to specify 'initial'.")
            if asarray(where).dtype != np.bool_:
                raise ValueError(f"where argument must have dtype=bool; got dtype={asarray(where).dtype}")
        method = self._methods["reduce"] or self._reduce_in_a_loop
        return method(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)

    def _reduce_in_a_loop(self, a: Any, axis: Any = 0, dtype: Any = None, keepdims: bool = False,
                          initial: Any = None, where: Any = None) -> Any:
        arr = asarray(a)
        initial = self.identity if initial is None else initial
        dtype = self._result_dtype(arr, arr) if dtype is None else np.dtype(dtype)
        mask = None if where is None else mnp.broadcast_to(asarray(where), arr.shape)
        if isinstance(axis, tuple):
            raise NotImplementedError("tuple of axes")
        if axis is None:
            final_shape = (1,) * arr.ndim if keepdims else ()
            arr, mask = arr.ravel(), None if mask is None else mask.ravel()
            axis = 0
        else:
            axis = normalize_axis(f"{self.__name__}.reduce", axis, arr.ndim)
            final_shape = (*arr.shape[:axis], *((1,) if keepdims else ()), *arr.shape[axis + 1:])
        arr = mnp.moveaxis(arr, axis, 0)
        mask = None if mask is None else mnp.moveaxis(mask, axis, 0)
        if arr.shape[0] == 0:
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} which has no "
                                 "identity")
            return lax.full(final_shape, initial, dtype)

        def step(i: Any, value: Any) -> Any:
            combined = self(value, lax.convert_element_type(arr[i], dtype))
            return combined if mask is None else mnp.where(mask[i], combined, value)

        start, first = (1, arr[0]) if initial is None else (0, initial)
        first = mnp.broadcast_to(lax.convert_element_type(asarray(first), dtype), arr.shape[1:])
        return lax.fori_loop(start, arr.shape[0], step, first).reshape(final_shape)

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """The running fold along ``axis``: element i is the reduction of elements 0..i."""
        self._binary_only("accumulate")
        _unsupported(f"out argument of {self.__name__}.accumulate()", out)
        return (self._methods["accumulate"] or self._accumulate_in_a_loop)(a, axis=axis, dtype=dtype)

    def _accumulate_in_a_loop(self, a: Any, axis: int = 0, dtype: Any = None) -> Any:
        check_arraylike(f"{self.__name__}.accumulate", a)
        arr = asarray(a)
        dtype = self._result_dtype(arr, arr) if dtype is None else np.dtype(dtype)
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        axis = normalize_axis(f"{self.__name__}.accumulate", axis, arr.ndim)
        if arr.size == 0:
            return lax.full(arr.shape, 0, dtype)
        arr = lax.convert_element_type(mnp.moveaxis(arr, axis, 0), dtype)

        def step(carry: Any, element: Any) -> tuple[Any, Any]:
            value = self(carry, element)
            return value, value

        _, rest = lax.scan(step, arr[0], arr[1:])
        return mnp.moveaxis(lax.concatenate([arr[:1], rest], 0), 0, axis)

    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = True) -> Any:
        """``a`` with the function applied at ``indices`` (with ``b``), repeated indices in turn."""
        if inplace:
            raise NotImplementedError("jax.numpy.ufunc.at cannot modify an array in place: pass "
                                      "inplace=False to return the updated array instead.")
        method = self._methods["at"] or self._at_in_a_loop
        return method(a, indices) if b is None else method(a, indices, b)

    def _at_in_a_loop(self, a: Any, indices: Any, *args: Any) -> Any:
        check_arraylike(f"{self.__name__}.at", a, *args)
        dtype = self._result_dtype(a, *args)
        a = lax.convert_element_type(asarray(a), dtype)
        args = tuple(lax.convert_element_type(asarray(arg), dtype) for arg in args)
        indices = indices if isinstance(indices, tuple) else (indices,)
        if not indices:
            return a
        shapes = [np.shape(i) for i in indices if not isinstance(i, slice)]
        shape = np.broadcast_shapes(*shapes) if shapes else ()
        if not shape:
            return a.at[indices].set(self(a.at[indices].get(), *args))
        count = math.prod(shape)
        if args:
            tail = args[0].shape[len(shape):]
            args = (mnp.broadcast_to(args[0], (*shape, *tail)).reshape(count, *tail),)
        flat = [i if isinstance(i, slice) else mnp.broadcast_to(asarray(i), shape).ravel() for i in indices]

        def step(i: Any, current: Any) -> Any:
            where_ = tuple(i_ if isinstance(i_, slice) else i_[i] for i_ in flat)
            return current.at[where_].set(self(current.at[where_].get(), *(arg[i] for arg in args)))

        return lax.fori_loop(0, count, step, a)

    def reduceat(self, a: Any, indices: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """Reductions over the slices ``indices[i]:indices[i + 1]`` along ``axis`` (NumPy's rule:
        where ``indices[i] >= indices[i + 1]`` the result is ``a[indices[i]]``)."""
        self._binary_only("reduceat")
        _unsupported(f"out argument of {self.__name__}.reduceat()", out)
        return (self._methods["reduceat"] or self._reduceat_in_a_loop)(a, indices, axis=axis, dtype=dtype)

    def _reduceat_in_a_loop(self, a: Any, indices: Any, axis: int = 0, dtype: Any = None) -> Any:
        check_arraylike(f"{self.__name__}.reduceat", a, indices)
        a, indices = asarray(a), asarray(indices)
        if a.ndim == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape={a.shape}")
        if indices.ndim != 1:
            raise ValueError(f"reduceat: indices must be one-dimensional, got indices.shape={indices.shape}")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        axis = normalize_axis(f"{self.__name__}.reduceat", axis, a.ndim)
        out = mnp.take(a, indices, axis=axis)
        if dtype is not None:
            out = lax.convert_element_type(out, dtype)
        bounds = lax.concatenate([indices, asarray([a.shape[axis]], indices.dtype)], 0)
        other_axes = [d for d in range(out.ndim) if d != axis]
        starts = lax.expand_dims(bounds[:-1], other_axes)
        ends = lax.expand_dims(bounds[1:], other_axes)

        def step(i: Any, current: Any) -> Any:
            inside = mnp.logical_and(mnp.greater(i, starts), mnp.less(i, ends))
            return mnp.where(inside, self(current, mnp.take(a, lax.expand_dims(i, (0,)), axis=axis)), current)

        return lax.fori_loop(0, a.shape[axis], step, out)

    def outer(self, A: Any, B: Any, /) -> Any:  # noqa: N803  (jax's names)
        """The function on every pair (a, b) of elements: shape A.shape + B.shape."""
        self._binary_only("outer")
        check_arraylike(f"{self.__name__}.outer", A, B)
        A, B = asarray(A), asarray(B)
        result = vmap(vmap(self, (None, 0)), (0, None))(A.ravel(), B.ravel())
        return result.reshape(*A.shape, *B.shape)


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A ufunc of a scalar function: vectorized when called, with the generic ufunc methods."""
    return ufunc(func, nin, nout, identity=identity)


def _unsupported(what: str, value: Any) -> None:
    if value is not None:
        raise NotImplementedError(f"{what} is not supported{source_where()}")


# -- jnp's own ufuncs: the fast method of each, keyed by name -----------------------------------

def _bool_through_int32(update: str) -> Callable[..., Any]:
    """add.at / multiply.at: booleans combine as int32 and come back as booleans (jax's rule)."""
    def at(a: Any, indices: Any, b: Any) -> Any:
        a = asarray(a)
        if a.dtype == np.bool_:
            wide, values = lax.convert_element_type(a, np.int32), asarray(b).astype(np.bool_).astype(np.int32)
            return getattr(wide.at[indices], update)(values).astype(np.bool_)
        return getattr(a.at[indices], update)(b)

    return at


def _in_dtype(reduction: Callable[..., Any]) -> Callable[..., Any]:
    """max/min as ufunc reductions: ``dtype`` converts the operand first (they take none)."""
    def reduce(a: Any, axis: Any = None, dtype: Any = None, **kwargs: Any) -> Any:
        return reduction(asarray(a) if dtype is None else asarray(a).astype(dtype), axis=axis, **kwargs)

    return reduce


def _subtract_at(a: Any, indices: Any, b: Any) -> Any:
    return asarray(a).at[indices].subtract(b)


def _monoid_reduction(name: str, monoid: str, to_bool: bool) -> Callable[..., Any]:
    """The bitwise and logical reductions: integers (or booleans) folded by one lax monoid."""
    def reduce(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, initial: Any = None,
               where: Any = None) -> Any:
        a = asarray(a)
        if to_bool:
            a = a.astype(np.bool_)
        elif not (a.dtype == np.bool_ or np.issubdtype(a.dtype, np.integer)):
            raise ValueError(f"integer argument required; got dtype={a.dtype}")
        return reductions.reduce_monoid(name, a, axis, dtype, keepdims, initial, where, monoid=monoid)

    return reduce


def _logsumexp(base2: bool) -> Callable[..., Any]:
    """logaddexp.reduce (log-sum-exp with the maximum held out) and logaddexp2.reduce."""
    def reduce(a: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False, initial: Any = None,
               where: Any = None) -> Any:
        (a,) = promote_args_inexact("logaddexp.reduce", a)
        scale = float(np.log(2)) if base2 else 1.0
        a = a * scale if base2 else a
        dims = reductions.reduction_axes("logaddexp.reduce", axis, a.ndim)
        top = reductions.max(a, axis=dims, keepdims=True, where=where, initial=-np.inf)
        top = lax.stop_gradient(mnp.where(mnp.isfinite(top), top, 0).astype(top.dtype))
        total = reductions.sum(mnp.exp(a - top), axis=dims, keepdims=keepdims, where=where)
        result = mnp.log(total) + (top if keepdims else top.reshape(total.shape))
        if initial is not None:
            result = mnp.logaddexp(asarray(initial) * scale if base2 else initial, result)
        return result / scale if base2 else result

    return reduce


_FAST_METHODS: dict[str, dict[str, Any]] = {
    "add": dict(identity=0, reduce=reductions.sum, accumulate=reductions.cumsum,
                at=_bool_through_int32("add")),
    "multiply": dict(identity=1, reduce=reductions.prod, accumulate=reductions.cumprod,
                     at=_bool_through_int32("multiply")),
    "subtract": dict(identity=None, at=_subtract_at),
    "maximum": dict(identity=None, reduce=_in_dtype(reductions.max)),
    "minimum": dict(identity=None, reduce=_in_dtype(reductions.min)),
    "bitwise_and": dict(identity=-1, reduce=_monoid_reduction("bitwise_and", "bitwise_and", False)),
    "bitwise_or": dict(identity=0, reduce=_monoid_reduction("bitwise_or", "bitwise_or", False)),
    "bitwise_xor": dict(identity=0, reduce=_monoid_reduction("bitwise_xor", "bitwise_xor", False)),
    "logical_and": dict(identity=True, reduce=_monoid_reduction("logical_and", "all", True)),
    "logical_or": dict(identity=False, reduce=_monoid_reduction("logical_or", "any", True)),
    "logical_xor": dict(identity=False, reduce=_monoid_reduction("logical_xor", "bitwise_xor", True)),
    "logaddexp": dict(identity=-np.inf, reduce=_logsumexp(False)),
    "logaddexp2": dict(identity=-np.inf, reduce=_logsumexp(True)),
    "negative": dict(),
}


def as_ufuncs(namespace: dict[str, Any]) -> None:
    """Make jnp's ufunc-valued names of ``namespace`` (mlax.numpy's globals) ufuncs around the
    functions already there."""
    for name, methods in _FAST_METHODS.items():
        func = namespace[name]
        nin = 1 if name == "negative" else 2
        namespace[name] = ufunc(func, nin, 1, name=name, call=func, **methods)
    for kind, name in (("sum", "add"), ("max", "maximum"), ("min", "minimum")):
        add_monoid(kind, namespace[name])  # lax.reduce_window runs them as its ops
