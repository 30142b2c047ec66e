"""Rules for convert and bitcast_convert.

`stablehlo.convert` already has the reference's semantics on XLA (float -> int truncates and
saturates, NaN -> 0; int -> int wraps; rounding to nearest even), with two spelled out the
way JAX spells them: a conversion to i1 is ``x != 0`` (so NaN is true), and a conversion to
f16/bf16 from anything but f32 goes through f32 first, as the reference defines it (XLA's
CPU rounds twice there too; written out, every backend does), and a complex -> real conversion
converts the real part (`stablehlo.real` first). bitcast_convert is StableHLO's
own (a narrower target adds a minor dimension, a wider one consumes it).
"""

from __future__ import annotations

from mlir import ir

from mlax.passes.lower_to_stablehlo.common import (
    Rule,
    compare,
    convert,
    element_type,
    is_bool,
    is_complex,
    splat,
    value,
    with_element,
)

_HALF = ("f16", "bf16")


def _convert(op: ir.Operation) -> ir.Value:
    (x,) = op.operands
    target = element_type(op.results[0].type)
    if is_bool(target) and not is_bool(x.type):
        return compare(x, splat(0, x.type), "NE")
    if is_complex(x.type) and not is_complex(target):  # JAX's: convert the real part
        x = value("real", [x], with_element(x, ir.ComplexType(element_type(x)).element_type))
    if str(target) in _HALF and str(element_type(x)) not in ("f32", str(target)):
        x = convert(x, ir.F32Type.get())
    return convert(x, target)


# bitcast_convert is a renaming (its ``stablehlo`` trait; renamings.py).
RULES: dict[str, Rule] = {
    "convert": _convert,
}
