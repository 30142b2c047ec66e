"""`mlax-expand-bf16`: conversions to and from bf16 as integer bit manipulation.

The JIT has no compiler runtime, so LLVM's ``fptrunc float to bfloat`` (a call to
``__truncsfbf2``) cannot be linked; after `arith-emulate-unsupported-floats` only such
conversions remain for bf16. Upstream `arith-expand{include-bf16}` expands them too, but it also
rewrites every ``arith.maximumf``/``minimumf`` into compare-and-select, which loses IEEE
maximum's ordering of -0 < +0 and stops LLVM from vectorizing max/min reductions. So this pass
expands only the two conversions:

- ``extf bf16 -> f32/f64``: the 16 bits become the high half of an f32 (exact);
- ``truncf f32/f64 -> bf16``: round to nearest even on the f32 bits (an f64 goes through f32 first,
  as ml_dtypes and XLA's CPU do), NaN -> the quiet NaN with the operand's sign.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith

from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.walk import nested_ops


def _is_bf16(t: ir.Type) -> bool:
    return isinstance(t, ir.BF16Type)


def _int(width: int, value: int) -> ir.Value:
    return arith.constant(ir.IntegerType.get_signless(width), value)


def _extend(op: ir.Operation) -> ir.Value:
    i16, i32 = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32)
    bits = arith.extui(i32, arith.bitcast(i16, op.operands[0]))
    wide = arith.bitcast(ir.F32Type.get(), arith.shli(bits, _int(32, 16)))
    target = op.results[0].type
    return wide if isinstance(target, ir.F32Type) else arith.extf(target, wide)


def _truncate(op: ir.Operation) -> ir.Value:
    i16, i32 = ir.IntegerType.get_signless(16), ir.IntegerType.get_signless(32)
    value = op.operands[0]
    if not isinstance(value.type, ir.F32Type):
        value = arith.truncf(ir.F32Type.get(), value)
    bits = arith.bitcast(i32, value)
    lsb = arith.andi(arith.shrui(bits, _int(32, 16)), _int(32, 1))
    rounded = arith.shrui(arith.addi(bits, arith.addi(lsb, _int(32, 0x7FFF))), _int(32, 16))
    quiet_nan = arith.ori(arith.andi(arith.shrui(bits, _int(32, 16)), _int(32, 0x8000)), _int(32, 0x7FC0))
    is_nan = arith.cmpf(arith.CmpFPredicate.UNO, value, value)
    result = arith.select(is_nan, quiet_nan, rounded)
    return arith.bitcast(ir.BF16Type.get(), arith.trunci(i16, result))


def _rule(op: ir.Operation):
    if op.name == "arith.extf" and _is_bf16(op.operands[0].type):
        return _extend
    if op.name == "arith.truncf" and _is_bf16(op.results[0].type):
        return _truncate
    return None


@register_pass
@dataclass
class ExpandBf16(ModulePass):
    """Expand scalar extf/truncf from/to bf16 into integer operations on the bits."""

    argument = "mlax-expand-bf16"
    summary = "expand scalar bf16 extf/truncf into bit manipulation (no compiler runtime needed)"

    def run(self, module: ir.Operation) -> None:
        for op in nested_ops(module):
            rule = _rule(op)
            if rule is None:
                continue
            with op.location, ir.InsertionPoint(op):
                replacement = rule(op)
            op.results[0].replace_all_uses_with(replacement)
            op.erase()
