"""mlax.lax elementwise primitives: thin, documented wrappers over `bind`."""

from __future__ import annotations

from typing import Any

import numpy as np
from mlax import dtypes as front_dtypes
from mlax.core import bind, with_weak_type
from mlax.lax.common import operand, operands_like


def _unary(name: str, doc: str) -> Any:
    def fn(x: Any) -> Any:
        return bind(name, operand(x))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _binary(name: str, doc: str) -> Any:
    def fn(x: Any, y: Any) -> Any:
        return bind(name, *operands_like(x, y))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


neg = _unary("neg", "Elementwise negation -x.")
exp = _unary("exp", "Elementwise e**x.")
tanh = _unary("tanh", "Elementwise hyperbolic tangent.")

add = _binary("add", "Elementwise x + y (operands of one shape and dtype).")
sub = _binary("sub", "Elementwise x - y.")
mul = _binary("mul", "Elementwise x * y.")


def convert_element_type(x: Any, new_dtype: Any, weak_type: bool = False) -> Any:
    """Cast ``x`` to ``new_dtype`` (StableHLO convert semantics); no op when it already is."""
    x = operand(x)
    new_dtype = front_dtypes.canonicalize(np.dtype(new_dtype))
    if x.dtype == new_dtype:
        return with_weak_type(x, weak_type)
    return with_weak_type(bind("convert", x, new_dtype=new_dtype), weak_type)


__all__ = ["add", "convert_element_type", "exp", "mul", "neg", "sub", "tanh"]
