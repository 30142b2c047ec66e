"""mlax.lax windowed ops: conv_general_dilated (and conv, conv_with_general_padding) and
reduce_window (and reduce_window_sum/max/min), with jax.lax's names and signatures.

The shape conventions are JAX's own: dimension numbers (None, a ConvDimensionNumbers or three
strings such as ``('NHWC', 'HWIO', 'NHWC')``) and padding strings ('SAME', 'SAME_LOWER',
'VALID') are resolved by jax.lax's pure-Python helpers, so they cannot drift. reduce_window
maps a computation it recognises (lax/jnp/mlax add, max, min) to the matching dialect op:
sum needs the init value 0; max/min combine any other init value with the result (the
same, since max/min are idempotent). `precision` is recorded on the convolution as on dot_general
(mlax.lax.precision).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax as jax_lax

from mlax import dtypes as front_dtypes
from mlax.core import bind, to_numpy
from mlax.dialect import dtypes as ir_dtypes
from mlax.lax import elementwise
from mlax.lax.common import operand as as_operand
from mlax.lax.elementwise import convert_element_type
from mlax.lax.precision import canonicalize_precision
from mlax.lax.shape import broadcast_in_dim, pad
from mlax.lax.shape import slice as lax_slice

Padding = str | Sequence[tuple[int, int]]


def _ints(values: Sequence[int] | None, n: int) -> tuple[int, ...]:
    return (1,) * n if values is None else tuple(int(v) for v in values)


def _flat(pads: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    return tuple(int(p) for pair in pads for p in pair)


def _dimension_numbers(lhs: Any, rhs: Any, dimension_numbers: Any) -> tuple[tuple[int, ...], ...]:
    dn = jax_lax.conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    return tuple(tuple(int(d) for d in spec) for spec in dn)


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Padding,
                         lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None) -> Any:
    """General N-d convolution (jax.lax.conv_general_dilated)."""
    precision = canonicalize_precision(precision, "mlax.lax.conv_general_dilated")
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    lhs_spec, rhs_spec, out_spec = _dimension_numbers(lhs, rhs, dimension_numbers)
    k = lhs.ndim - 2
    lhs_dilation, rhs_dilation = _ints(lhs_dilation, k), _ints(rhs_dilation, k)
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise ValueError("mlax.lax.conv_general_dilated: string padding is not implemented with "
                             "lhs_dilation (a transposed convolution); give the padding pairs explicitly")
        window = [(rhs.shape[d] - 1) * r + 1 for d, r in zip(rhs_spec[2:], rhs_dilation, strict=True)]
        sizes = [lhs.shape[d] for d in lhs_spec[2:]]
        padding = jax_lax.padtype_to_pads(sizes, window, window_strides, padding)
    if preferred_element_type is not None:
        preferred = front_dtypes.canonicalize(np.dtype(preferred_element_type))
        if ir_dtypes.is_float(preferred) or not ir_dtypes.is_float(lhs.dtype):
            lhs, rhs = (x if x.dtype == preferred else convert_element_type(x, preferred, x.weak_type)
                        for x in (lhs, rhs))
    out = bind("conv_general_dilated", lhs, rhs, window_strides=_ints(window_strides, k),
               padding=_flat(padding), lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
               lhs_spec=lhs_spec, rhs_spec=rhs_spec, out_spec=out_spec,
               feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count),
               precision=precision)
    if preferred_element_type is not None and out.dtype != preferred:
        out = convert_element_type(out, preferred, out.weak_type)
    return out


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: str, precision: Any = None,
         preferred_element_type: Any = None) -> Any:
    """NCHW x OIHW convolution without dilation (jax.lax.conv)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Padding,
                              lhs_dilation: Sequence[int] | None, rhs_dilation: Sequence[int] | None,
                              precision: Any = None, preferred_element_type: Any = None) -> Any:
    """NCHW x OIHW convolution with padding and dilations (jax.lax.conv_with_general_padding)."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision, preferred_element_type=preferred_element_type)


# --- reduce_window ----------------------------------------------------------------------------------


def _window_attrs(x: Any, window_dimensions: Sequence[int], window_strides: Sequence[int] | None,
                  padding: Padding, base_dilation: Sequence[int] | None,
                  window_dilation: Sequence[int] | None) -> dict[str, tuple[int, ...]]:
    n = x.ndim
    window = _ints(window_dimensions, n)
    strides, base, dilation = _ints(window_strides, n), _ints(base_dilation, n), _ints(window_dilation, n)
    if isinstance(padding, str):
        # As JAX: the undilated operand shape, the dilated window.
        spans = [(w - 1) * d + 1 for w, d in zip(window, dilation, strict=True)]
        padding = jax_lax.padtype_to_pads(x.shape, spans, strides, padding)
    return {"window_dimensions": window, "window_strides": strides, "padding": _flat(padding),
            "base_dilation": base, "window_dilation": dilation}


def _reduce_window_op(kind: str) -> Callable[..., Any]:
    def fn(operand: Any, window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
           padding: Padding = "VALID", base_dilation: Sequence[int] | None = None,
           window_dilation: Sequence[int] | None = None) -> Any:
        x = as_operand(operand)
        attrs = _window_attrs(x, window_dimensions, window_strides, padding, base_dilation, window_dilation)
        return bind(f"reduce_window_{kind}", x, **attrs)

    fn.__name__ = fn.__qualname__ = f"reduce_window_{kind}"
    fn.__doc__ = f"The {kind} over every window, padding with its identity (no init value)."
    return fn


reduce_window_sum = _reduce_window_op("sum")
reduce_window_max = _reduce_window_op("max")
reduce_window_min = _reduce_window_op("min")


# The computations reduce_window runs as its ops, known by identity: lax's, jax's and NumPy's add,
# max and min; mlax.numpy, built on mlax.lax, adds its own (add_monoid).
_MONOIDS: dict[str, list[Callable[..., Any]]] = {
    "sum": [elementwise.add, jax_lax.add, jnp.add, operator.add, np.add],
    "max": [elementwise.max, jax_lax.max, jnp.maximum, np.maximum],
    "min": [elementwise.min, jax_lax.min, jnp.minimum, np.minimum],
}


def add_monoid(kind: str, computation: Callable[..., Any]) -> None:
    """Know ``computation``, a function of a library above mlax.lax (mlax.numpy's add), as the
    ``kind`` ("sum", "max" or "min") reduce_window has one op for."""
    _MONOIDS[kind].append(computation)


def _monoid(computation: Callable[..., Any]) -> str | None:
    """"sum", "max" or "min" for a computation reduce_window has one op for."""
    return next((kind for kind, fns in _MONOIDS.items() if any(computation is f for f in fns)), None)


def _is_identity(kind: str, init: np.ndarray) -> bool:
    if kind == "sum":
        return bool(init == 0)
    low = kind == "max"
    if init.dtype == np.bool_:
        return bool(init) != low
    if ir_dtypes.is_inexact(init.dtype):  # complex: -inf + 0i / inf + 0i, JAX's identities
        return bool(init == (-np.inf if low else np.inf))
    info = np.iinfo(init.dtype)
    return int(init) == (info.min if low else info.max)


def reduce_window(operand: Any, init_value: Any, computation: Callable[..., Any],
                  window_dimensions: Sequence[int], window_strides: Sequence[int] | None = None,
                  padding: Padding = "VALID", base_dilation: Sequence[int] | None = None,
                  window_dilation: Sequence[int] | None = None) -> Any:
    """jax.lax.reduce_window for one operand: the add/max/min monoids as one op each, any other
    elementwise ``computation`` folded over the windows' strided slices."""
    if isinstance(operand, (tuple, list)):
        raise NotImplementedError("mlax.lax.reduce_window: several operands (a pytree) are not supported")
    kind = _monoid(computation)
    x = as_operand(operand)
    if kind is None:
        attrs = _window_attrs(x, window_dimensions, window_strides, padding, base_dilation, window_dilation)
        return _reduce_window_generic(x, init_value, computation, attrs)
    init = np.asarray(to_numpy(init_value)).astype(x.dtype)  # a traced init value raises, naming it
    if kind == "sum" and not _is_identity(kind, init):  # padding and one term per window: jax's sum
        attrs = _window_attrs(x, window_dimensions, window_strides, padding, base_dilation, window_dilation)
        return _reduce_window_generic(x, init, computation, attrs)
    reduce = _reduce_window_op(kind)
    out = reduce(x, window_dimensions, window_strides, padding, base_dilation, window_dilation)
    if _is_identity(kind, init):
        return out
    return getattr(elementwise, kind)(out, init.item())


def _reduce_window_generic(x: Any, init_value: Any, computation: Callable[..., Any],
                           attrs: dict[str, tuple[int, ...]]) -> Any:
    """reduce_window of another ``computation`` (``lambda a, b: a * b``...), or a sum whose init
    value is not 0: ``computation`` folded, from ``init_value``, over the strided slice of each
    window offset of the padded (and base-dilated) operand, where padding and dilation holes are
    skipped, as XLA's reduce-window does (init_value enters each window once). ``computation``
    must apply elementwise to arrays, as jax's jnp and lax operations do."""
    import itertools

    init = convert_element_type(init_value, x.dtype) if hasattr(init_value, "dtype") else \
        as_operand(np.asarray(init_value, x.dtype))
    window, strides = attrs["window_dimensions"], attrs["window_strides"]
    base, dilation, flat = attrs["base_dilation"], attrs["window_dilation"], attrs["padding"]
    pads = [(flat[2 * i], flat[2 * i + 1], base[i] - 1) for i in range(x.ndim)]
    padded = pad(x, init, pads) if any(p != (0, 0, 0) for p in pads) else x
    present = None  # where padded holds the operand's elements (None: everywhere)
    if any(p != (0, 0, 0) for p in pads):
        present = pad(broadcast_in_dim(as_operand(np.True_), x.shape, ()), as_operand(np.False_), pads)
    spans = [(w - 1) * d + 1 for w, d in zip(window, dilation, strict=True)]
    out_shape = tuple(max(0, (n - span) // s + 1)
                      for n, span, s in zip(padded.shape, spans, strides, strict=True))
    acc = broadcast_in_dim(init, out_shape, ())
    if 0 in out_shape:
        return acc
    for offset in itertools.product(*(range(w) for w in window)):
        start = [k * d for k, d in zip(offset, dilation, strict=True)]
        limit = [st + (o - 1) * s + 1 for st, o, s in zip(start, out_shape, strides, strict=True)]
        folded = computation(acc, lax_slice(padded, start, limit, strides))
        if present is not None:
            folded = elementwise.select(lax_slice(present, start, limit, strides), folded, acc)
        acc = folded
    return acc


__all__ = ["conv", "conv_general_dilated", "conv_with_general_padding", "reduce_window", "reduce_window_max",
           "reduce_window_min", "reduce_window_sum"]
