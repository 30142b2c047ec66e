"""Elementwise StableHLO (and CHLO) ops -> mlax.lax elementwise functions.

Most are one-to-one: every elementwise mlax op with a ``stablehlo`` trait (dialect/registry.py)
is the inverse image of the StableHLO op it names (`stablehlo_to_mlax`), converted by the
mlax.lax function of its name; `_ALIASES` and `_COMPOSITES` add the few StableHLO/CHLO names
of no mlax op (chlo.tan; the composites). compare reads its direction and comparison type:
FLOAT, SIGNED and UNSIGNED are the natural comparisons of the element type (what mlax.compare does);
TOTALORDER on floats (which jax's sort comparators use) compares the float bits mapped to
ordered integers, as XLA does. A few ops without a primitive are built from primitives:
count_leading_zeros (mlax.lax.clz), chlo.is_inf, reduce_precision to the f16/bf16 formats.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
from mlir import ir

import mlax.lax as lax
from mlax.dialect import OPS, dtypes
from mlax.dialect.registry import stablehlo_to_mlax
from mlax.import_stablehlo.core import (
    Entry,
    Importer,
    enum,
    integer,
    result_spec,
    unsupported,
    value_spec,
)

CONVERTERS: dict[str, Entry] = {}

# The mlax.lax function of an mlax op, where its name is not the op's.
_LAX_NAMES = {"not": "bitwise_not", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor"}
# Converted elsewhere: StableHLO's optimization_barrier takes any number of operands, mlax's one
# (control_flow.py puts one on each).
_ELSEWHERE = {"stablehlo.optimization_barrier"}
# StableHLO/CHLO names of no mlax op that one mlax.lax function computes: chlo.tan (stablehlo.tan's
# twin) and composites of several primitives (the table's text says so).
_ALIASES = {"chlo.tan": "tan"}
_COMPOSITES = {
    "stablehlo.count_leading_zeros": "clz", "chlo.asin": "asin", "chlo.acos": "acos", "chlo.atan": "atan",
    "chlo.sinh": "sinh", "chlo.cosh": "cosh", "chlo.asinh": "asinh", "chlo.acosh": "acosh",
    "chlo.atanh": "atanh", "chlo.square": "square",
}


def _lax_call(fn: str, target: str) -> Entry:
    return Entry(lambda imp, op, args: [getattr(lax, fn)(*args)], target)


CONVERTERS.update({hlo: _lax_call(_LAX_NAMES.get(name, name), f"mlax.{name}")
                   for hlo, name in stablehlo_to_mlax().items()
                   if OPS[name].elementwise and hlo not in _ELSEWHERE})
CONVERTERS.update({hlo: _lax_call(name, f"mlax.{name}") for hlo, name in _ALIASES.items()})
CONVERTERS.update({hlo: _lax_call(fn, f"mlax.lax.{fn} (composite)") for hlo, fn in _COMPOSITES.items()})


def _round(method: Any) -> Entry:
    return Entry(lambda imp, op, args: [lax.round(args[0], method)], "mlax.round")


CONVERTERS["stablehlo.round_nearest_afz"] = _round(lax.RoundingMethod.AWAY_FROM_ZERO)
CONVERTERS["stablehlo.round_nearest_even"] = _round(lax.RoundingMethod.TO_NEAREST_EVEN)


# --- compare, select, clamp -------------------------------------------------------------------------

_NATURAL = {"FLOAT": "fc", "SIGNED": "i", "UNSIGNED": "ub"}  # FLOAT: complex EQ and NE too


def compare(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    direction = enum(op, "comparison_direction")
    kind = enum(op, "compare_type", "NOTYPE")
    x, y = args
    dtype = value_spec(op, op.operands[0]).dtype
    if kind == "TOTALORDER" and dtypes.is_float(dtype):
        x, y = _total_order_key(x, dtype), _total_order_key(y, dtype)
    elif kind not in ("NOTYPE", "TOTALORDER") and np.dtype(dtype).kind not in _NATURAL[kind]:
        raise unsupported(op, f"comparison type {kind} on {np.dtype(dtype).name} operands")
    fn = {"EQ": lax.eq, "NE": lax.ne, "LT": lax.lt, "LE": lax.le, "GT": lax.gt, "GE": lax.ge}.get(direction)
    if fn is None:
        raise unsupported(op, f"comparison direction {direction}")
    return [fn(x, y)]


def _total_order_key(x: Any, dtype: np.dtype) -> Any:
    """Signed integers ordered as the floats' total order (-NaN < -inf < ... < -0 < +0 < ... < NaN):
    the float's bits, with the magnitude bits flipped where the sign bit is set."""
    bits = 8 * np.dtype(dtype).itemsize
    signed = np.dtype(f"int{bits}")
    i = lax.bitcast_convert_type(x, signed)
    magnitude = np.array(np.iinfo(signed).max, signed)
    sign_fill = lax.shift_right_arithmetic(i, np.array(bits - 1, signed))
    return lax.bitwise_xor(i, lax.bitwise_and(sign_fill, magnitude))


CONVERTERS["stablehlo.compare"] = Entry(compare, "mlax.compare")  # select, clamp: from their traits


# --- conversions --------------------------------------------------------------------------------------

CONVERTERS["stablehlo.convert"] = Entry(
    lambda imp, op, args: [lax.convert_element_type(args[0], result_spec(op).dtype)], "mlax.convert")
CONVERTERS["stablehlo.bitcast_convert"] = Entry(
    lambda imp, op, args: [lax.bitcast_convert_type(args[0], result_spec(op).dtype)], "mlax.bitcast_convert")


def reduce_precision(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    """Rounding to a narrower float format: a round trip through f16 or bf16 when the bits
    name one of them (or the operand's own format: no op)."""
    x = args[0]
    bits = (integer(op, "exponent_bits"), integer(op, "mantissa_bits"))
    dtype = result_spec(op).dtype
    own = _format(dtype) if dtypes.is_float(dtype) else None
    if bits == own:
        return [x]
    narrow = {(5, 10): np.dtype(np.float16), (8, 7): dtypes.bfloat16}.get(bits)
    if narrow is None or own is None or np.dtype(narrow).itemsize >= np.dtype(dtype).itemsize:
        raise unsupported(op, f"exponent_bits={bits[0]}, mantissa_bits={bits[1]} on {np.dtype(dtype).name} "
                              "(only the f16 and bf16 formats have an mlax counterpart)")
    return [lax.convert_element_type(lax.convert_element_type(x, narrow), dtype)]


def _format(dtype: np.dtype) -> tuple[int, int]:
    info = ml_dtypes.finfo(dtype)
    return info.nexp, info.nmant


CONVERTERS["stablehlo.reduce_precision"] = Entry(reduce_precision, "mlax.convert (round trip)")


# --- composites ---------------------------------------------------------------------------------------


def _is_inf(sign: int) -> Entry:
    def convert(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
        x = args[0]
        dtype = value_spec(op, op.operands[0]).dtype
        inf = np.array(np.inf, dtype)
        if sign == 0:
            return [lax.eq(lax.abs(x), inf)]
        return [lax.eq(x, inf if sign > 0 else -inf)]

    return Entry(convert, "mlax.compare (composite)")


CONVERTERS["chlo.is_inf"] = _is_inf(0)
CONVERTERS["chlo.is_pos_inf"] = _is_inf(1)
CONVERTERS["chlo.is_neg_inf"] = _is_inf(-1)
CONVERTERS["chlo.conj"] = Entry(
    lambda imp, op, args: [lax.conj(args[0]) if dtypes.is_complex(value_spec(op, op.operands[0]).dtype)
                           else args[0]], "mlax.conj (identity on real operands)")
