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

``copysign`` and ``fabs`` of bf16 (llvm intrinsics by now) become the same masks on the i16 bits:
LLVM's x86 backend failed an assertion legalizing a vectorized bf16 ``copysign`` whose result is
bitcast and shifted (``cbrt(sign(x))``; the fuzzer's reproducer).

It also keeps bf16 values that only move, not compute, in registers as their i16 bits:
``arith.select`` of bf16 selects the bits, and a block argument of bf16 (a loop-carried value
after `convert-scf-to-cf`) becomes an i16 one. LLVM's x86 backend holds a ``bfloat`` select or
phi in an f32 register and converts it back with ``vcvtneps2bf16`` where the host has AVX512-BF16,
and that instruction flushes subnormals to zero: a running bf16 argmax compared every element
with a flushed best (a wrong index for subnormal inputs). Loads and stores stay bf16; LLVM's
instcombine makes a load whose only use is a bitcast to i16 (and a store of one) an i16 one.
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


def _sign_bits(op: ir.Operation) -> ir.Value:
    """``llvm.intr.copysign`` / ``llvm.intr.fabs`` of bf16 on the i16 bits: the magnitude's low
    15 bits with the sign bit of the second operand (or none)."""
    bits = [arith.bitcast(ir.IntegerType.get_signless(16), x) for x in op.operands]
    result = arith.andi(bits[0], _int(16, 0x7FFF))
    if len(bits) == 2:
        result = arith.ori(result, arith.andi(bits[1], _int(16, -0x8000)))
    return arith.bitcast(ir.BF16Type.get(), result)


def _rule(op: ir.Operation):
    if op.name == "arith.extf" and _is_bf16(op.operands[0].type):
        return _extend
    if op.name == "arith.truncf" and _is_bf16(op.results[0].type):
        return _truncate
    if op.name in ("llvm.intr.copysign", "llvm.intr.fabs") and _is_bf16(op.results[0].type):
        return _sign_bits
    return None


def _bits_type(t: ir.Type) -> ir.Type | None:
    """The integer type holding the bits of a bf16 scalar or vector type (None for other types)."""
    if _is_bf16(t):
        return ir.IntegerType.get_signless(16)
    if isinstance(t, ir.VectorType) and _is_bf16(ir.VectorType(t).element_type):
        vector = ir.VectorType(t)
        return ir.VectorType.get(vector.shape, ir.IntegerType.get_signless(16),
                                 scalable=vector.scalable_dims if vector.scalable else None)
    return None


def _as_bits(value: ir.Value) -> ir.Value:
    """``value`` (bf16) as its bits: the i16 a bitcast made it from, or a new bitcast after it."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        point = ir.InsertionPoint.at_block_begin(owner)
        location = value.location
    else:
        owner = owner.operation
        if owner.name == "arith.bitcast" and owner.operands[0].type == _bits_type(value.type):
            return owner.operands[0]
        point, location = ir.InsertionPoint.after(owner), owner.location
    with location, point:
        return arith.bitcast(_bits_type(value.type), value)


def _select_bits(op: ir.Operation) -> None:
    """A bf16 select as a select of the bits."""
    condition, on_true, on_false = op.operands
    with op.location, ir.InsertionPoint(op):
        picked = arith.select(condition, _as_bits(on_true), _as_bits(on_false))
        value = arith.bitcast(op.results[0].type, picked)
    op.results[0].replace_all_uses_with(value)
    op.erase()


def _successor_operands(terminator: ir.Operation, block: ir.Block) -> list[list[int]] | None:
    """For each edge from ``terminator`` to ``block``, the positions of its operands that feed
    ``block``'s arguments; None for a terminator other than cf.br / cf.cond_br."""
    if terminator.name == "cf.br":
        return [list(range(len(terminator.operands)))]
    if terminator.name != "cf.cond_br":
        return None
    true_block, false_block = terminator.successors
    n_true, n_false = len(true_block.arguments), len(false_block.arguments)
    edges = []
    if true_block == block:
        edges.append(list(range(1, 1 + n_true)))
    if false_block == block:
        edges.append(list(range(1 + n_true, 1 + n_true + n_false)))
    return edges


def _carry_bits(block: ir.Block) -> None:
    """``block``'s bf16 arguments become i16 ones (fed the bits by every branch to it); their
    users read them through a bitcast at the top of the block."""
    indices = [i for i, arg in enumerate(block.arguments) if _bits_type(arg.type) is not None]
    if not indices or block.owner is None:
        return
    predecessors: list[ir.Block] = []
    for predecessor in block.predecessors:  # a block branching twice here is listed twice
        if predecessor not in predecessors:
            predecessors.append(predecessor)
    terminators = [p.operations[len(p.operations) - 1] for p in predecessors]
    edges = [_successor_operands(t, block) for t in terminators]
    if not terminators or any(e is None for e in edges):
        return
    for i in indices:
        arg = block.arguments[i]
        value_type = arg.type
        arg.set_type(_bits_type(value_type))
        with arg.location, ir.InsertionPoint.at_block_begin(block):
            value = arith.bitcast(value_type, arg)
        arg.replace_all_uses_except(value, value.owner.operation)
    for terminator, positions in zip(terminators, edges, strict=True):
        for operands in positions:
            for i in indices:
                at = operands[i]
                terminator.operands[at] = _as_bits(terminator.operands[at])


def _bf16_bitcast(op: ir.Operation) -> bool:
    """Whether ``op`` bitcasts between bf16 and its bits (either way)."""
    return op.name == "arith.bitcast" and any(
        _bits_type(t) is not None for t in (op.operands[0].type, op.results[0].type))


def _fold_bitcast_pairs(root: ir.Operation) -> None:
    """A bitcast of a bf16 <-> i16 bitcast back to the first type is its source; such bitcasts
    left without users go."""
    for op in nested_ops(root):
        if not _bf16_bitcast(op):
            continue
        source = op.operands[0].owner
        if not isinstance(source, ir.Block) and _bf16_bitcast(source.operation) and \
                source.operation.operands[0].type == op.results[0].type:
            op.results[0].replace_all_uses_with(source.operation.operands[0])
            op.erase()
    for op in reversed(nested_ops(root)):
        if _bf16_bitcast(op) and not list(op.results[0].uses):
            op.erase()


@register_pass
@dataclass
class ExpandBf16(ModulePass):
    """Expand scalar extf/truncf from/to bf16, copysign and fabs into integer operations on the
    bits, and carry bf16 selects and block arguments as i16 bits."""

    argument = "mlax-expand-bf16"
    sees_mlax_ops = False
    summary = ("expand scalar bf16 extf/truncf, copysign and fabs into bit manipulation (no compiler "
               "runtime needed); bf16 selects and block arguments carry the i16 bits")

    def run(self, module: ir.Operation) -> None:
        for op in nested_ops(module):
            rule = _rule(op)
            if rule is None:
                continue
            with op.location, ir.InsertionPoint(op):
                replacement = rule(op)
            op.results[0].replace_all_uses_with(replacement)
            op.erase()
        blocks = [block for op in nested_ops(module) for region in op.regions for block in region.blocks]
        for block in blocks:
            if block != block.region.blocks[0]:  # an entry block's arguments are the function's
                _carry_bits(block)
        for op in nested_ops(module):
            if op.name == "arith.select" and _bits_type(op.results[0].type) is not None:
                _select_bits(op)
        _fold_bitcast_pairs(module)
