"""The weak types of the cotangents grad and vjp return, as jax's.

jax builds an input's cotangent with the transposed program, so its weak type is the one the
transposition rules give: the input's in general (the transpose of a weak-to-strong
``convert_element_type`` restores it), but strong where a rule brings in a strong value: the
transposes of ``real``/``imag`` (a complex input of a real function differentiated without
``holomorphic``) and the VJP of an exported function (an Exported's types are never weak).
mlax differentiates in MLIR, whose types have no weak flag, so the front end decides here:
`mark_strong` records an argument of a traced function whose cotangent jax types strong (by
its function's symbol and position, on the outermost trace, so the record ends with it), and
`cotangent_aval` gives the aval of a cotangent, passing the mark on to the enclosing
function's argument (``grad(grad(exported.call))`` is strong too).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from mlir import ir

from mlax.core import Aval, Trace, Tracer, abstractify
from mlax.dialect import dtypes as mlir_dtypes

_KEY = "_strong_cotangents"


def _root(trace: Trace) -> Trace:
    while trace.parent is not None:
        trace = trace.parent
    return trace


def _argument(x: Any) -> tuple[Trace, tuple[str, int]] | None:
    """The root trace and (function symbol, position) of ``x`` when it is a traced function's
    argument itself; None otherwise."""
    if not isinstance(x, Tracer) or not isinstance(x.value, ir.BlockArgument):
        return None
    owner = x.value.owner.owner
    if owner is None or "sym_name" not in owner.attributes:
        return None
    return _root(x.trace), (ir.StringAttr(owner.attributes["sym_name"]).value, x.value.arg_number)


def mark_strong(x: Any) -> None:
    """Record that ``x``, if a traced function's argument, has a strong cotangent in jax."""
    found = _argument(x)
    if found is not None:
        root, key = found
        root.__dict__.setdefault(_KEY, set()).add(key)


def cotangent_aval(trace: Trace, function: str, position: int, leaf: Any, holomorphic: bool = False,
                   real_output: bool = False) -> Aval:
    """The aval of the cotangent of argument ``position`` of the traced ``function`` (whose
    caller passed ``leaf``): ``leaf``'s, strong where jax's is (module docstring).
    ``real_output``: a complex input differentiated non-holomorphically to a real output."""
    aval = abstractify(leaf)
    if not aval.weak_type:
        return aval
    strong = (function, position) in _root(trace).__dict__.get(_KEY, ())
    if strong:
        mark_strong(leaf)
    complex_to_real = real_output and not holomorphic and mlir_dtypes.is_complex(np.dtype(aval.dtype))
    if strong or complex_to_real:
        return dataclasses.replace(aval, weak_type=False)
    return aval
