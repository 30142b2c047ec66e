"""mlax.numpy reductions: sum/prod/max/min/all/any, statistics, arg-extrema and cumulative ops.

One driver, ``_reduce``, implements jnp's reduction rules for every monoid: small integers
and booleans accumulate in the default integer type (``sum(int8) -> int32``), float16 and
bfloat16 accumulate in float32 and round back, ``where=`` masks with the identity,
``initial`` joins the result, and max/min of an empty axis (no identity) is an error.
Results are never weakly typed.
"""

from __future__ import annotations

import builtins
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax
from mlax.core import abstractify
from mlax.numpy import elementwise as ew
from mlax.numpy import math_extra as mx
from mlax.numpy.util import (
    asarray,
    broadcast_to_shape,
    check_arraylike,
    const_like,
    normalize_axes,
    normalize_axis,
    promote_dtypes,
    to_inexact_dtype,
    user_dtype,
)
from mlax.source_info import where as source_where

__all__ = [
    "all", "amax", "amin", "any", "argmax", "argmin", "average", "count_nonzero", "cumprod", "cumsum",
    "cumulative_prod", "cumulative_sum", "max", "mean", "min", "nanargmax", "nanargmin", "nancumprod",
    "nancumsum", "nanmax", "nanmean", "nanmin", "nanprod", "nanstd", "nansum", "nanvar", "prod", "ptp", "std",
    "sum", "var",
]


ALL_ONES = -1  # bitwise and's identity: every bit set (True for booleans)


@dataclass(frozen=True)
class _Monoid:
    """How one reduction combines: lax reduce suffix and binary op, on numbers and on booleans."""

    reduce: str
    combine: str
    bool_reduce: str
    bool_combine: str
    identity: float
    has_identity: bool = True


_MONOIDS = {
    "sum": _Monoid("sum", "add", "or", "bitwise_or", 0),
    "prod": _Monoid("prod", "mul", "and", "bitwise_and", 1),
    "max": _Monoid("max", "max", "or", "bitwise_or", -np.inf, has_identity=False),
    "min": _Monoid("min", "min", "and", "bitwise_and", np.inf, has_identity=False),
    "all": _Monoid("and", "bitwise_and", "and", "bitwise_and", True),
    "any": _Monoid("or", "bitwise_or", "or", "bitwise_or", False),
    # the ufunc reductions of the bitwise and logical functions (mlax.numpy.ufuncs)
    "bitwise_and": _Monoid("and", "bitwise_and", "and", "bitwise_and", ALL_ONES),
    "bitwise_or": _Monoid("or", "bitwise_or", "or", "bitwise_or", 0),
    "bitwise_xor": _Monoid("xor", "bitwise_xor", "xor", "bitwise_xor", 0),
}


def _is(dtype: np.dtype, kind: Any) -> builtins.bool:
    return front_dtypes.issubdtype(dtype, kind)


def reduction_axes(fname: str, axis: Any, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple of ints) as sorted nonnegative dimensions."""
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(normalize_axes(fname, axis, ndim)))


def _identity(value: float, dtype: np.dtype) -> np.ndarray:
    """The monoid identity in ``dtype``; infinities clamp to the integer range."""
    if dtype == np.bool_:
        return np.array(value > 0 or value == ALL_ONES)
    if _is(dtype, np.integer) and np.isinf(value):
        info = np.iinfo(dtype)
        return np.array(info.min if value < 0 else info.max, dtype)
    return np.array(value).astype(dtype)


def _promote_integer(dtype: np.dtype) -> np.dtype:
    """Booleans and integers narrower than the default integer accumulate in it (jnp's rule)."""
    if dtype == np.bool_:
        return front_dtypes.default_int()
    if _is(dtype, np.unsignedinteger):
        wide = front_dtypes.canonicalize(np.uint64)
        return wide if dtype.itemsize < wide.itemsize else dtype
    if _is(dtype, np.integer):
        wide = front_dtypes.default_int()
        return wide if dtype.itemsize < wide.itemsize else dtype
    return dtype


def _upcast_half(dtype: np.dtype) -> np.dtype:
    """float16 and bfloat16 accumulate in float32."""
    return np.dtype(np.float32) if dtype.itemsize == 2 and _is(dtype, np.floating) else dtype


def _mask(fname: str, where: Any, shape: tuple[int, ...]) -> Any:
    check_arraylike(fname, where)
    return broadcast_to_shape(ew.to_bool(asarray(where)), shape)


def reduce_monoid(name: str, a: Any, axis: Any = None, dtype: Any = None, keepdims: builtins.bool = False,
            initial: Any = None, where: Any = None, *, promote_integers: builtins.bool = False,
            upcast: builtins.bool = False, monoid: str | None = None) -> Any:
    """jnp's reduction rules (see the module docstring) for the monoid ``monoid or name``."""
    op = _MONOIDS[monoid or name]
    check_arraylike(name, a)
    a = asarray(a)
    if name in ("sum", "prod") and a.dtype == np.bool_:
        a = lax.convert_element_type(a, np.int32)
    elif name in ("all", "any"):
        a = ew.to_bool(a)
    dims = reduction_axes(name, axis, a.ndim)
    if initial is None and not op.has_identity:
        if where is not None:
            raise ValueError(f"mlax.numpy.{name}: reduction operation {name} has no identity, so a where "
                             f"mask needs 'initial'{source_where()}")
        if builtins.any(a.shape[d] == 0 for d in dims):
            raise ValueError(f"mlax.numpy.{name}: zero-size array to reduction operation {name} which has "
                             f"no identity{source_where()}")
    result_dtype = user_dtype(name, dtype)
    if result_dtype is None:
        result_dtype = _promote_integer(a.dtype) if promote_integers else a.dtype
    work = _upcast_half(result_dtype) if upcast and dtype is None else result_dtype
    a = lax.convert_element_type(a, work)
    is_bool = work == np.bool_
    reduce_fn = getattr(lax, "reduce_" + (op.bool_reduce if is_bool else op.reduce))
    combine = getattr(lax, op.bool_combine if is_bool else op.combine)
    if where is not None:
        identity = asarray(_identity(op.identity, work))
        a = lax.select(_mask(name, where, a.shape), a, lax.broadcast_in_dim(identity, a.shape, ()))
    result = reduce_fn(a, dims)
    if initial is not None:
        initial = lax.convert_element_type(initial, work)
        if initial.shape != ():
            raise ValueError(f"mlax.numpy.{name}: initial value must be a scalar, got shape "
                             f"{initial.shape}{source_where()}")
        result = combine(lax.broadcast_in_dim(initial, result.shape, ()), result)
    if keepdims:
        result = lax.expand_dims(result, dims)
    return lax.convert_element_type(result, result_dtype)


def sum(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: builtins.bool = False,  # noqa: A001
        initial: Any = None, where: Any = None, promote_integers: builtins.bool = True) -> Any:
    """Sum over ``axis``; booleans and small integers accumulate in the default integer type."""
    _no_out("sum", out)
    return reduce_monoid("sum", a, axis, dtype, keepdims, initial, where, promote_integers=promote_integers,
                   upcast=True)


def prod(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: builtins.bool = False,
         initial: Any = None, where: Any = None, promote_integers: builtins.bool = True) -> Any:
    """Product over ``axis``; booleans and small integers accumulate in the default integer type."""
    _no_out("prod", out)
    return reduce_monoid("prod", a, axis, dtype, keepdims, initial, where, promote_integers=promote_integers,
                   upcast=True)


def max(a: Any, axis: Any = None, out: None = None, keepdims: builtins.bool = False,  # noqa: A001
        initial: Any = None, where: Any = None) -> Any:
    """Maximum over ``axis`` (NaN propagates); an empty reduction needs ``initial``."""
    _no_out("max", out)
    return reduce_monoid("max", a, axis, None, keepdims, initial, where)


def min(a: Any, axis: Any = None, out: None = None, keepdims: builtins.bool = False,  # noqa: A001
        initial: Any = None, where: Any = None) -> Any:
    """Minimum over ``axis`` (NaN propagates); an empty reduction needs ``initial``."""
    _no_out("min", out)
    return reduce_monoid("min", a, axis, None, keepdims, initial, where)


amax = max
amin = min


def all(a: Any, axis: Any = None, out: None = None, keepdims: builtins.bool = False, *,  # noqa: A001
        where: Any = None) -> Any:
    """Whether every element is nonzero, over ``axis``."""
    _no_out("all", out)
    return reduce_monoid("all", a, axis, None, keepdims, None, where)


def any(a: Any, axis: Any = None, out: None = None, keepdims: builtins.bool = False, *,  # noqa: A001
        where: Any = None) -> Any:
    """Whether some element is nonzero, over ``axis``."""
    _no_out("any", out)
    return reduce_monoid("any", a, axis, None, keepdims, None, where)


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"mlax.numpy.{name}: the 'out' argument is not supported")


def _count(name: str, a: Any, axis: Any, keepdims: builtins.bool, where: Any, dtype: np.dtype) -> Any:
    """How many elements each reduction sees, in ``dtype`` and the reduced shape."""
    shape = abstractify(a).shape
    if where is not None:
        return sum(_mask(name, where, shape), axis, dtype=dtype, keepdims=keepdims)
    dims = reduction_axes(name, axis, len(shape))
    n = math.prod(shape[d] for d in dims)
    reduced = tuple(1 if d in dims else s for d, s in enumerate(shape)) if keepdims else \
        tuple(s for d, s in enumerate(shape) if d not in dims)
    return lax.broadcast_in_dim(asarray(np.array(n, dtype)), reduced, ())


def mean(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: builtins.bool = False, *,
         where: Any = None) -> Any:
    """Arithmetic mean; integers give the default float type; halves accumulate in float32."""
    _no_out("mean", out)
    check_arraylike("mean", a)
    a = asarray(a)
    result_dtype = user_dtype("mean", dtype) or to_inexact_dtype(a.dtype)
    work = _upcast_half(result_dtype) if dtype is None else result_dtype
    total = sum(a, axis, dtype=work, keepdims=keepdims, where=where)
    normalizer = _count("mean", a, axis, keepdims, where, work)
    return lax.convert_element_type(lax.div(total, normalizer), result_dtype)


_mean = mean  # var's ``mean`` argument shadows the function


def _center(name: str, mean_fn: Any, a: Any, axis: Any, dtype: Any, where: Any,
            mean: Any) -> tuple[Any, Any, np.dtype, np.dtype]:
    """The shared start of var/nanvar: ``a`` in the working dtype (half floats widen), the
    center (``mean_fn`` of ``a``, or the given ``mean``), the result and working dtypes."""
    check_arraylike(name, a)
    a = asarray(a)
    result_dtype = user_dtype(name, dtype) or to_inexact_dtype(a.dtype)
    work = _upcast_half(result_dtype)
    a = lax.convert_element_type(a, work)
    if mean is None:
        center = mean_fn(a, axis, dtype=work, keepdims=True, where=where)
    else:
        center = lax.convert_element_type(mean, work)
    return a, center, result_dtype, work


def var(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: builtins.bool = False, *, where: Any = None, mean: Any = None,
        correction: float | None = None) -> Any:
    """Variance ``sum((a - mean)**2) / (N - ddof)``; NaN where ``N - ddof <= 0``."""
    _no_out("var", out)
    if correction is None:
        correction = ddof
    elif ddof != 0:
        raise ValueError("mlax.numpy.var: ddof and correction can't be provided simultaneously")
    a, center, result_dtype, work = _center("var", _mean, a, axis, dtype, where, mean)
    centered = ew.subtract(a, center)
    if front_dtypes.issubdtype(work, np.complexfloating):  # as jax: |a - mean|**2, a real variance
        if dtype is not None and not front_dtypes.issubdtype(result_dtype, np.complexfloating):
            raise ValueError("mlax.numpy.var does not yet support real dtype parameters when computing the "
                             "variance of an array of complex values")
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
        work = np.zeros((), work).real.dtype
        if dtype is None:
            result_dtype = np.zeros((), result_dtype).real.dtype
    else:
        centered = lax.mul(centered, centered)
    normalizer = _count("var", a, axis, keepdims, where, work)
    normalizer = lax.sub(normalizer, const_like(normalizer, correction))
    total = sum(centered, axis, dtype=work, keepdims=keepdims, where=where)
    result = lax.convert_element_type(lax.div(total, normalizer), result_dtype)
    positive = lax.gt(normalizer, const_like(normalizer, 0))
    return lax.select(positive, result, const_like(result, np.nan))


def std(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
        keepdims: builtins.bool = False, *, where: Any = None, mean: Any = None,
        correction: float | None = None) -> Any:
    """Standard deviation: the square root of ``var``."""
    return lax.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction))


def _arg_extreme(name: str) -> Any:
    def fn(a: Any, axis: int | None = None, out: None = None, keepdims: builtins.bool | None = None) -> Any:
        _no_out(name, out)
        check_arraylike(name, a)
        a = asarray(a)
        if axis is None:
            dims = tuple(range(a.ndim))
            a = lax.reshape(a, (a.size,))
            axis_ = 0
        else:
            axis_ = normalize_axis(name, axis, a.ndim)
            dims = (axis_,)
        if a.shape[axis_] == 0:
            raise ValueError(f"mlax.numpy.{name}: attempt to get {name} of an empty sequence{source_where()}")
        result = getattr(lax, name)(a, axis_, front_dtypes.default_int())
        return lax.expand_dims(result, dims) if keepdims else result

    kind = "largest" if name == "argmax" else "smallest"
    return ew._named(name, f"Index of the first {kind} element along ``axis`` (of the flattened array "
                           "if None); a NaN counts as the extreme.", fn)


argmax = _arg_extreme("argmax")
argmin = _arg_extreme("argmin")


def _accumulate(name: str, prim: str, a: Any, axis: int, dtype: Any, promote_integers: builtins.bool) -> Any:
    """jnp's cumulative-reduction dtype rules around ``lax.cumsum``/``lax.cumprod``."""
    result_dtype = user_dtype(name, dtype)
    if result_dtype is None:
        result_dtype = _promote_integer(a.dtype) if promote_integers or a.dtype == np.bool_ else a.dtype
        work = result_dtype
    elif result_dtype == np.bool_:
        a = ew.to_bool(a)
        work = _promote_integer(result_dtype)
    else:
        work = result_dtype
    result = getattr(lax, prim)(lax.convert_element_type(a, work), axis)
    return lax.convert_element_type(result, result_dtype)


def _cumulative(name: str, prim: str, nan_fill: int | None) -> Any:
    def fn(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
        _no_out(name, out)
        check_arraylike(name, a)
        a = asarray(a)
        if axis is None or a.ndim == 0:
            a = lax.reshape(a, (a.size,))
        axis_ = normalize_axis(name, 0 if axis is None else axis, a.ndim)
        if nan_fill is not None:
            a = mx.where(mx.isnan(a), const_like(a, nan_fill), a)
        return _accumulate(name, prim, a, axis_, dtype, False)

    return ew._named(name, f"Inclusive running ``{prim}`` along ``axis`` (of the flattened array if "
                           "None); booleans accumulate in the default integer type.", fn)


cumsum = _cumulative("cumsum", "cumsum", None)
cumprod = _cumulative("cumprod", "cumprod", None)
nancumsum = _cumulative("nancumsum", "cumsum", 0)
nancumprod = _cumulative("nancumprod", "cumprod", 1)


def _array_api_cumulative(name: str, prim: str, identity: int, promote_integers: builtins.bool) -> Any:
    def fn(x: Any, /, *, axis: int | None = None, dtype: Any = None,
           include_initial: builtins.bool = False) -> Any:
        check_arraylike(name, x)
        x = asarray(x)
        if x.ndim == 0:
            raise ValueError(f"mlax.numpy.{name}: the input must not be a scalar{source_where()}")
        if axis is None and x.ndim > 1:
            raise ValueError(f"mlax.numpy.{name}: axis is only optional for one-dimensional inputs, got "
                             f"rank {x.ndim}{source_where()}")
        axis_ = normalize_axis(name, 0 if axis is None else axis, x.ndim)
        out = _accumulate(name, prim, x, axis_, dtype, promote_integers)
        if not include_initial:
            return out
        edge = tuple(1 if d == axis_ else s for d, s in enumerate(out.shape))
        start = lax.broadcast_in_dim(asarray(np.array(identity, out.dtype)), edge, ())
        return lax.concatenate([start, out], axis_)

    return ew._named(name, f"The array API's running ``{prim}`` along ``axis`` (required above rank 1); "
                           f"``include_initial`` prepends {identity}.", fn)


cumulative_sum = _array_api_cumulative("cumulative_sum", "cumsum", 0, True)
cumulative_prod = _array_api_cumulative("cumulative_prod", "cumprod", 1, False)


def _nan_reduction(name: str, reduction: Any, fill: float, nan_if_all_nan: builtins.bool) -> Any:
    def fn(a: Any, axis: Any = None, out: None = None, keepdims: builtins.bool = False, **kwargs: Any) -> Any:
        _no_out(name, out)
        check_arraylike(name, a)
        a = asarray(a)
        if not _is(a.dtype, np.inexact):
            return reduction(a, axis=axis, keepdims=keepdims, **kwargs)
        nan = mx.isnan(a)
        filled = lax.select(nan, lax.broadcast_in_dim(asarray(_identity(fill, a.dtype)), a.shape, ()), a)
        result = reduction(filled, axis=axis, keepdims=keepdims, **kwargs)
        if not nan_if_all_nan:
            return result
        return lax.select(all(nan, axis=axis, keepdims=keepdims), const_like(result, np.nan), result)

    return ew._named(name, f"``{reduction.__name__}`` ignoring NaNs"
                     + (" (NaN where every element is NaN)." if nan_if_all_nan else "."), fn)


nansum = _nan_reduction("nansum", sum, 0, False)
nanprod = _nan_reduction("nanprod", prod, 1, False)
nanmax = _nan_reduction("nanmax", max, -np.inf, True)
nanmin = _nan_reduction("nanmin", min, np.inf, True)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: None = None, keepdims: builtins.bool = False,
            where: Any = None) -> Any:
    """Mean of the non-NaN elements (NaN where there are none)."""
    _no_out("nanmean", out)
    check_arraylike("nanmean", a)
    a = asarray(a)
    if not _is(a.dtype, np.inexact):
        return mean(a, axis, dtype, keepdims=keepdims, where=where)
    dtype = user_dtype("nanmean", dtype) or a.dtype
    count = sum(ew.logical_not(mx.isnan(a)), axis, dtype=dtype, keepdims=keepdims, where=where)
    return lax.div(nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where), count)


def _nan_arg_extreme(name: str, base: Any, fill: float) -> Any:
    def fn(a: Any, axis: int | None = None, out: None = None, keepdims: builtins.bool | None = None) -> Any:
        _no_out(name, out)
        check_arraylike(name, a)
        a = asarray(a)
        if not _is(a.dtype, np.inexact):
            return base(a, axis, keepdims=keepdims)
        nan = mx.isnan(a)
        index = base(mx.where(nan, fill, a), axis, keepdims=keepdims)
        return mx.where(all(nan, axis=axis, keepdims=builtins.bool(keepdims)), -1, index)

    return ew._named(name, f"``{base.__name__}`` ignoring NaNs; -1 where every element is NaN.", fn)


nanargmax = _nan_arg_extreme("nanargmax", argmax, -np.inf)
nanargmin = _nan_arg_extreme("nanargmin", argmin, np.inf)


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: builtins.bool = False, where: Any = None, mean: Any = None) -> Any:
    """Variance of the non-NaN elements; NaN where fewer than ``ddof + 1`` remain."""
    _no_out("nanvar", out)
    a, center, result_dtype, _ = _center("nanvar", nanmean, a, axis, dtype, where, mean)
    nan = mx.isnan(a)
    centered = mx.where(nan, 0, ew.subtract(a, center))
    normalizer = ew.subtract(sum(ew.logical_not(nan), axis, keepdims=keepdims, where=where), ddof)
    empty = lax.le(normalizer, const_like(normalizer, 0))
    squares = lax.mul(centered, centered)
    if front_dtypes.issubdtype(abstractify(centered).dtype, np.complexfloating):  # |a - mean|**2, as jax
        squares = lax.real(lax.mul(centered, lax.conj(centered)))
        if dtype is None:
            result_dtype = np.zeros((), result_dtype).real.dtype
    total = mx.where(empty, np.nan, sum(squares, axis, keepdims=keepdims, where=where))
    divisor = lax.convert_element_type(mx.where(empty, 1, normalizer), total.dtype)
    return lax.convert_element_type(lax.div(total, divisor), result_dtype)


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: None = None, ddof: int = 0,
           keepdims: builtins.bool = False, where: Any = None, mean: Any = None) -> Any:
    """Standard deviation of the non-NaN elements: the square root of ``nanvar``."""
    return lax.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where, mean))


def ptp(a: Any, axis: Any = None, out: None = None, keepdims: builtins.bool = False) -> Any:
    """Peak to peak: ``max - min`` over ``axis``."""
    _no_out("ptp", out)
    return lax.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def count_nonzero(a: Any, axis: Any = None, keepdims: builtins.bool = False) -> Any:
    """The number of nonzero elements over ``axis``, in the default integer type."""
    check_arraylike("count_nonzero", a)
    return sum(ew.to_bool(asarray(a)), axis, dtype=front_dtypes.default_int(), keepdims=keepdims)


def average(a: Any, axis: Any = None, weights: Any = None, returned: builtins.bool = False,
            keepdims: builtins.bool = False) -> Any:
    """Weighted mean over ``axis``; ``weights`` match ``a`` or the reduced axes."""
    check_arraylike("average", a)
    a = asarray(a)
    dims = reduction_axes("average", axis, a.ndim)
    if weights is None:
        (a,) = promote_dtypes(a)
        a = lax.convert_element_type(a, to_inexact_dtype(a.dtype))
        avg = mean(a, axis, keepdims=keepdims)
        total = math.prod(a.shape[d] for d in dims)
        weights_sum = asarray(np.array(total, avg.dtype))
    else:
        check_arraylike("average", weights)
        a, weights = promote_dtypes(a, weights)
        work = to_inexact_dtype(a.dtype)
        a, weights = lax.convert_element_type(a, work), lax.convert_element_type(weights, work)
        if a.shape != weights.shape:
            if axis is None:
                raise ValueError("mlax.numpy.average: axis must be specified when shapes of a and weights "
                                 f"differ{source_where()}")
            if weights.shape != tuple(a.shape[d] for d in dims):
                raise ValueError("mlax.numpy.average: shape of weights must be consistent with shape of a "
                                 f"along the specified axis{source_where()}")
            weights = lax.broadcast_in_dim(weights, a.shape, dims)
        weights_sum = sum(weights, axis, keepdims=keepdims)
        avg = ew.true_divide(sum(ew.multiply(a, weights), axis, keepdims=keepdims), weights_sum)
    if not returned:
        return avg
    return avg, broadcast_to_shape(weights_sum, avg.shape)
