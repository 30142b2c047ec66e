"""mlax.numpy set operations on flattened arrays: isin, setdiff1d, union1d, intersect1d, setxor1d
and the array API's unique_all/counts/inverse/values, as jax.numpy.

Results have data-dependent sizes: without ``size=`` they need concrete inputs; with it they
are padded (with ``fill_value``, or as jnp pads: the smallest result for the sorted set
operations). The padded forms follow jnp's algorithms step by step (the unique values of each
input packed into one buffer, a stable sort that sends the padding last, neighbours compared),
so that even their padding agrees with JAX.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import lax
from mlax.numpy import math_extra as mx
from mlax.numpy.creation import arange, full_like, zeros
from mlax.numpy.manipulation import concatenate, ravel, reshape
from mlax.numpy.reductions import all as all_
from mlax.numpy.reductions import any as any_
from mlax.numpy.reductions import max as max_
from mlax.numpy.reductions import min as min_
from mlax.numpy.reductions import sum as sum_
from mlax.numpy.sorting import concrete_without_size, nonzero, sort, unique
from mlax.numpy.util import asarray, check_arraylike, concrete, promote_dtypes

__all__ = [
    "intersect1d", "isin", "setdiff1d", "setxor1d", "union1d", "unique_all", "unique_counts",
    "unique_inverse", "unique_values",
]

_ISIN_METHODS = ("auto", "compare_all", "binary_search", "sort")


def _in1d(name: str, ar1: Any, ar2: Any, invert: bool, method: str = "auto") -> Any:
    """Whether each element of the flattened ``ar1`` occurs in ``ar2`` (or not, if ``invert``).
    Every jnp method gives the same answer, so all compare every pair."""
    if method not in _ISIN_METHODS:
        raise ValueError(f"mlax.numpy.{name}: method={method!r} is not implemented; options are "
                         "'compare_all', 'binary_search', 'sort', and 'auto'")
    arr1, arr2 = (ravel(a) for a in promote_dtypes(ar1, ar2))
    if arr1.shape[0] == 0 or arr2.shape[0] == 0:
        return asarray(np.full(arr1.shape, invert))
    if invert:
        return all_(arr1[:, None] != arr2[None, :], -1)
    return any_(arr1[:, None] == arr2[None, :], -1)


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False, *,
         method: str = "auto") -> Any:
    """Whether each element of ``element`` occurs in ``test_elements`` (shape of ``element``)."""
    check_arraylike("isin", element, test_elements)
    found = _in1d("isin", element, test_elements, invert, method)
    return reshape(found, np.shape(element))


def _first(n: int, count: Any) -> Any:
    """The mask ``arange(n) < count``."""
    return arange(n) < count


def _padded(vals: Any, count: Any, fill_value: Any) -> Any:
    """``vals`` past its first ``count`` entries replaced by ``fill_value``, or by default by
    the smallest valid value (jnp replaces by the maximum, then by the minimum)."""
    valid = _first(vals.shape[0], count)
    if fill_value is not None:
        return mx.where(valid, vals, fill_value)
    vals = mx.where(valid, vals, max_(vals))
    return mx.where(valid, vals, min_(vals))


def _distinct_count(x: Any) -> Any:
    """How many distinct values the 1-d ``x`` holds (NaNs count once), as an int32 scalar."""
    if x.shape[0] == 0:
        return asarray(np.int32(0))
    aux = sort(x)
    later, earlier = aux[1:], aux[:-1]
    differ = later != earlier
    if front_dtypes.issubdtype(aux.dtype, np.inexact):
        differ = differ & ~(mx.isnan(later) & mx.isnan(earlier))
    return 1 + sum_(differ, dtype=np.int32)


def _packed_uniques(arr1: Any, arr2: Any, fill_value: Any = None,
                    return_index: bool = False) -> tuple[Any, ...]:
    """The unique values of ``arr1`` then those of ``arr2`` in one buffer of the combined size
    (jnp's layout: the second set starts where the first ends), their counts, and with
    ``return_index`` the first index of each unique value in its input."""
    parts = []
    for arr in (arr1, arr2):
        if arr.shape[0] == 0:
            parts.append((arr, asarray(np.zeros(0, front_dtypes.default_int())), asarray(np.int32(0))))
            continue
        found = unique(arr, return_index=return_index, size=arr.shape[0], fill_value=fill_value)
        values, index = found if return_index else (found, None)
        parts.append((values, index, _distinct_count(arr)))
    (u1, i1, n1), (u2, i2, n2) = parts
    buffer = zeros(arr1.shape[0] + arr2.shape[0], dtype=front_dtypes.result_type(u1, u2))
    buffer = lax.dynamic_update_slice(buffer, lax.convert_element_type(u1, buffer.dtype), (0,))
    buffer = lax.dynamic_update_slice(buffer, lax.convert_element_type(u2, buffer.dtype), (n1,))
    return buffer, n1, n2, i1, i2


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
              fill_value: Any = None) -> Any:
    """The sorted unique values of ``ar1`` that are not in ``ar2``."""
    check_arraylike("setdiff1d", ar1, ar2)
    arr1, arr2 = ravel(asarray(ar1)), ravel(asarray(ar2))
    if size is None:
        concrete_without_size("setdiff1d", arr1)
    else:
        size = int(size)
    fill = full_like(arr1, 0 if fill_value is None else fill_value, shape=())
    if arr1.shape[0] == 0:
        return full_like(arr1, fill, shape=size or 0)
    if not assume_unique:
        arr1 = unique(arr1, size=size and arr1.shape[0])
    mask = _in1d("setdiff1d", arr1, arr2, invert=True)
    if size is None:
        return arr1[concrete(mask)]
    if not assume_unique:  # unique padded with its first element: count that one once
        distinct = arr1.shape[0] + 1 - sum_(arr1 == arr1[0])
        mask = mx.where(_first(arr1.shape[0], distinct), mask, False)
    return mx.where(_first(size, sum_(mask)), arr1[nonzero(mask, size=size)[0]], fill)


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values in either input."""
    check_arraylike("union1d", ar1, ar2)
    if size is None:
        concrete_without_size("union1d", ar1)
        concrete_without_size("union1d", ar2)
    return unique(concatenate((ar1, ar2), axis=None), size=size, fill_value=fill_value)


def _xor_flags(aux: Any, first: Any, last: Any) -> Any:
    """Where the sorted ``aux`` differs from both neighbours (``first``/``last`` stand in for the
    missing neighbours at the ends)."""
    flag = concatenate((first, aux[1:] != aux[:-1], last), axis=None)
    return flag[1:] & flag[:-1]


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
             fill_value: Any = None) -> Any:
    """The sorted values that are in exactly one of the inputs."""
    check_arraylike("setxor1d", ar1, ar2)
    arr1, arr2 = promote_dtypes(ravel(asarray(ar1)), ravel(asarray(ar2)))
    if size is not None:
        return _setxor1d_size(arr1, arr2, fill_value, assume_unique, int(size))
    if not assume_unique:
        arr1, arr2 = unique(arr1), unique(arr2)
    aux = concatenate((arr1, arr2))
    if aux.shape[0] == 0:
        return aux
    aux = sort(aux)
    return aux[concrete(_xor_flags(aux, True, True))]


def _setxor1d_size(arr1: Any, arr2: Any, fill_value: Any, assume_unique: bool, size: int) -> Any:
    if assume_unique:
        aux = sort(concatenate([arr1, arr2]))
        keep = _xor_flags(aux, bool(aux.shape[0]), True)
    else:
        arr, n1, n2, _, _ = _packed_uniques(arr1, arr2)
        count = n1 + n2
        valid = _first(arr.shape[0] + 1, count + 1)
        _, aux = lax.sort([~valid[1:], arr], is_stable=True, num_keys=2)
        flag = concatenate((bool(aux.shape[0]), aux[1:] != aux[:-1], False), axis=None).at[count].set(True)
        flag = valid & flag
        keep = flag[1:] & flag[:-1]
    if aux.shape[0]:
        indices = nonzero(keep, size=size, fill_value=aux.shape[0])[0]
        vals = aux.at[indices].get(mode="fill", fill_value=0)
    else:
        vals = zeros(size, aux.dtype)
    return _padded(vals, sum_(keep), fill_value)


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False, *,
                size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values in both inputs; with ``return_indices``, also the index of the
    first occurrence of each in ``ar1`` and in ``ar2``."""
    check_arraylike("intersect1d", ar1, ar2)
    arr1, arr2 = (ravel(a) for a in promote_dtypes(ar1, ar2))
    if size is not None:
        return _intersect1d_size(arr1, arr2, fill_value, assume_unique, int(size), return_indices)
    ind1 = ind2 = None
    if not assume_unique:
        if return_indices:
            arr1, ind1 = unique(arr1, return_index=True)
            arr2, ind2 = unique(arr2, return_index=True)
        else:
            arr1, arr2 = unique(arr1), unique(arr2)
    arr = concatenate((arr1, arr2))
    if return_indices:
        aux, order = lax.sort_key_val(arr, lax.iota(np.int32, arr.shape[0]))
    else:
        aux = sort(arr)
    mask = concrete(aux[1:] == aux[:-1])
    common = aux[:-1][mask]
    if not return_indices:
        return common
    index1, index2 = order[:-1][mask], order[1:][mask] - arr1.shape[0]
    if not assume_unique:
        index1, index2 = ind1[index1], ind2[index2]
    return common, index1, index2


def _intersect1d_size(arr1: Any, arr2: Any, fill_value: Any, assume_unique: bool, size: int,
                      return_indices: bool) -> Any:
    n1, n2 = arr1.shape[0], arr2.shape[0]
    positions = arange(n1 + n2)
    if assume_unique:
        ind1, ind2, unique1 = arange(n1), arange(n2), n1
        aux, order = lax.sort([concatenate([arr1, arr2]), positions], is_stable=True, num_keys=1)
        valid = asarray(np.ones(n1 + n2, bool))
    else:
        arr, unique1, unique2, ind1, ind2 = _packed_uniques(arr1, arr2, fill_value=0, return_index=True)
        valid = _first(n1 + n2, unique1 + unique2)
        _, aux, order = lax.sort([~valid, arr, positions], is_stable=True, num_keys=2)
    keep = (aux[1:] == aux[:-1]) & valid[1:]
    count = sum_(keep)
    if aux.shape[0]:
        where_kept = nonzero(keep, size=size, fill_value=aux.shape[0])[0]
        vals = aux.at[where_kept].get(mode="fill", fill_value=0)
    else:
        where_kept = arange(0)
        vals = zeros(size, aux.dtype)
    vals = _padded(vals, count, fill_value)
    if not return_indices:
        return vals
    found = _first(where_kept.shape[0], count)
    index1 = mx.where(found, order.at[where_kept].get(mode="fill", fill_value=n1), n1)
    index2 = mx.where(found, order.at[where_kept + 1].get(mode="fill", fill_value=n2) - unique1, n2)
    if not assume_unique:
        if 0 in (n1, n2) and n1 + n2:  # jnp gathers from an empty index array
            raise TypeError("mlax.numpy.intersect1d: return_indices with size= needs both inputs non-empty")
        index1 = ind1.at[index1].get(mode="fill", fill_value=ind1.shape[0])
        index2 = ind2.at[index2].get(mode="fill", fill_value=ind2.shape[0])
    return vals, index1, index2


# --- the array API's unique functions -----------------------------------------------------

class UniqueAllResult(NamedTuple):
    """``unique_all``'s result: values, first indices, inverse indices (``x``'s shape), counts."""

    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    """``unique_counts``'s result: the unique values and how often each occurs."""

    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    """``unique_inverse``'s result: the unique values and, in ``x``'s shape, each element's index
    among them."""

    values: Any
    inverse_indices: Any


def _unique_api(name: str, x: Any, size: int | None, fill_value: Any, **returns: bool) -> Any:
    """jnp.unique of the flattened ``x`` with every NaN distinct (the array API's rule)."""
    check_arraylike(name, x)
    return unique(x, equal_nan=False, size=size, fill_value=fill_value, **returns)


def unique_all(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> UniqueAllResult:
    """The unique values of ``x`` with their first indices, the inverse and the counts."""
    return UniqueAllResult(*_unique_api("unique_all", x, size, fill_value, return_index=True,
                                        return_inverse=True, return_counts=True))


def unique_counts(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> UniqueCountsResult:
    """The unique values of ``x`` and how often each occurs."""
    return UniqueCountsResult(*_unique_api("unique_counts", x, size, fill_value, return_counts=True))


def unique_inverse(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> UniqueInverseResult:
    """The unique values of ``x`` and the index of each element among them."""
    return UniqueInverseResult(*_unique_api("unique_inverse", x, size, fill_value, return_inverse=True))


def unique_values(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values of ``x`` (every NaN distinct)."""
    return _unique_api("unique_values", x, size, fill_value)
