"""mlax.lax reductions: reduce_* over axes, argmax/argmin, cumulative ops (jax.lax names and signatures).

Axes are not normalised here: as in jax.lax they must be nonnegative and in range, and the
dialect's inference rule reports bad ones naming the op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mlax import dtypes as front_dtypes
from mlax.core import bind
from mlax.lax.common import operand as as_operand


def _named(name: str, doc: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def rename(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = doc
        return fn

    return rename


def _reducer(kind: str, doc: str) -> Callable[..., Any]:
    @_named(f"reduce_{kind}", doc)
    def fn(operand: Any, axes: Sequence[int]) -> Any:
        return bind(f"reduce_{kind}", as_operand(operand), dimensions=tuple(int(a) for a in axes))

    return fn


def _arg_extreme(kind: str, doc: str) -> Callable[..., Any]:
    @_named(f"arg{kind}", doc)
    def fn(operand: Any, axis: int, index_dtype: Any = np.int32) -> Any:
        index_dtype = front_dtypes.canonicalize(np.dtype(index_dtype))
        return bind(f"arg{kind}", as_operand(operand), axis=int(axis), index_dtype=index_dtype)

    return fn


def _cumulative(kind: str, doc: str) -> Callable[..., Any]:
    @_named(f"cum{kind}", doc)
    def fn(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        return bind(f"cum{kind}", as_operand(operand), axis=int(axis), reverse=int(bool(reverse)))

    return fn


reduce_sum = _reducer("sum", "Sum over ``axes`` (integers wrap); the result drops those axes.")
reduce_prod = _reducer("prod", "Product over ``axes`` (integers wrap); the result drops those axes.")
reduce_max = _reducer("max", "Maximum over ``axes``; NaN propagates; empty gives -inf (or the lowest int).")
reduce_min = _reducer("min", "Minimum over ``axes``; NaN propagates; empty gives +inf (or the highest int).")
reduce_and = _reducer("and", "Bitwise (boolean: logical) and over ``axes``; empty gives all ones.")
reduce_or = _reducer("or", "Bitwise (boolean: logical) or over ``axes``; empty gives zero.")

argmax = _arg_extreme("max", "Index of the first maximum along ``axis`` (a NaN counts as the maximum).")
argmin = _arg_extreme("min", "Index of the first minimum along ``axis`` (a NaN counts as the minimum).")

cumsum = _cumulative("sum", "Inclusive cumulative sum along ``axis``, from the end if ``reverse``.")
cumprod = _cumulative("prod", "Inclusive cumulative product along ``axis``, from the end if ``reverse``.")
cummax = _cumulative("max", "Running maximum along ``axis`` (NaN propagates), from the end if ``reverse``.")
cummin = _cumulative("min", "Running minimum along ``axis`` (NaN propagates), from the end if ``reverse``.")

__all__ = ["argmax", "argmin", "cummax", "cummin", "cumprod", "cumsum", "reduce_and", "reduce_max",
           "reduce_min", "reduce_or", "reduce_prod", "reduce_sum"]
