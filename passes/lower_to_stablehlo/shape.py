"""Rules for the shape family: each mlax shape op is the StableHLO op of the same meaning.

mlax's shape ops carry StableHLO's attributes under StableHLO's names (start_indices,
edge_padding_low, ...), so a rule renames the op and copies those attributes (`_RENAMED`).
dynamic_slice and dynamic_update_slice clamp their start indices into bounds in both, and
pad takes negative edge padding (a crop) and interior padding in both. concatenate is binary
in mlax (IRDL cannot type a variadic port of differently sized operands): a chain of them
along one dimension is fused back into one N-ary `stablehlo.concatenate`.
"""

from __future__ import annotations

from mlir import ir

from mlax.passes.lower_to_stablehlo.common import Rule, i64_attr, value

# mlax op -> (StableHLO op, the attributes it takes over unchanged)
_RENAMED: dict[str, tuple[str, tuple[str, ...]]] = {
    "broadcast_in_dim": ("broadcast_in_dim", ("broadcast_dimensions",)),
    "reshape": ("reshape", ()),
    "transpose": ("transpose", ("permutation",)),
    "rev": ("reverse", ("dimensions",)),
    "slice": ("slice", ("start_indices", "limit_indices", "strides")),
    "dynamic_slice": ("dynamic_slice", ("slice_sizes",)),
    "dynamic_update_slice": ("dynamic_update_slice", ()),
    "pad": ("pad", ("edge_padding_low", "edge_padding_high", "interior_padding")),
}


def _renamed(hlo_name: str, attributes: tuple[str, ...]) -> Rule:
    def rule(op: ir.Operation) -> ir.Value:
        return value(hlo_name, list(op.operands), op.results[0].type,
                     {name: op.attributes[name] for name in attributes})

    return rule


def _fusable(operand: ir.Value, dimension: int) -> ir.Operation | None:
    """The stablehlo.concatenate along ``dimension`` that only ``operand``'s one use reads."""
    producer = operand.owner
    if not isinstance(producer, ir.OpView | ir.Operation):
        return None  # a block argument
    producer = producer.operation
    if producer.name != "stablehlo.concatenate" or len(list(operand.uses)) != 1:
        return None
    return producer if ir.IntegerAttr(producer.attributes["dimension"]).value == dimension else None


def _concatenate(op: ir.Operation) -> ir.Value:
    """One concatenation of the operands, with the operands of a fusable producer chain (the
    front end folds N operands left to right) in their place; the producers are erased."""
    dimension = i64_attr(op, "dimension")
    parts, fused = [], []
    for operand in op.operands:
        producer = _fusable(operand, dimension)
        parts += list(producer.operands) if producer else [operand]
        fused += [producer] if producer else []
    attr = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dimension)
    result = value("concatenate", parts, op.results[0].type, {"dimension": attr})
    for i, operand in enumerate(op.operands):  # let go of the producers, then erase them
        if _fusable(operand, dimension):
            op.operands[i] = result
    for producer in fused:
        producer.erase()
    return result


RULES: dict[str, Rule] = {
    **{name: _renamed(*spec) for name, spec in _RENAMED.items()},
    "concatenate": _concatenate,
}
