"""Rules for the sorting ops: sort_permutation is a stable `stablehlo.sort` of (keys, iota)
keeping the iota; apply_permutation is a gather along the dimension (take_along_axis, as jax
lowers it); top_k is `chlo.top_k`, XLA's own TopK, which XLA's parser reads and expands.

The sort comparator is jax's: floats compare in TOTALORDER after -0.0 is made +0.0 and every
NaN the canonical positive NaN, which gives the interpreter's order (`-inf < ... < -0.0 ==
+0.0 < ... < +inf < NaN`, all NaNs equal); integers compare signed or unsigned, booleans as
unsigned (false < true). `is_stable` keeps equal keys in their original order. apply_permutation
of a sort's own keys by its permutation is the sort's first result, of an iota along the
dimension (argsort) the permutation itself; otherwise it
reads each position at its index along `dimension` and its own coordinates elsewhere: the
other dimensions are batching dimensions of both operands, and StableHLO's gather clamps the
index into range, as the reference does. chlo.top_k orders as the interpreter's TopK (IEEE
total order, NaNs by their bits, ties lowest index first); since the driver replaces only an
op's first result, the rule replaces the indices result itself.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from mlax.dialect import read_attributes
from mlax.passes.lower_to_stablehlo.common import (
    Rule,
    body,
    compare,
    complex_parts,
    convert,
    element_type,
    enum,
    hlo,
    i64_attr,
    iota,
    is_complex,
    is_float,
    scalar_type,
    select,
    splat,
    tensor_type,
    value,
    with_element,
)
from mlax.passes.lower_to_stablehlo.indexing import gather


def _canonical(x: ir.Value) -> ir.Value:
    """A float key with -0.0 made +0.0 and every NaN the canonical NaN (jax's sort keys)."""
    zero = splat(0, x.type)
    x = select(compare(x, zero, "EQ"), zero, x)
    return select(compare(x, x, "NE"), splat(np.nan, x.type), x)


def _total(a: ir.Value, b: ir.Value, direction: str) -> ir.Value:
    """``a <direction> b`` on canonical float keys in TOTALORDER."""
    a, b = _canonical(a), _canonical(b)
    return value("compare", [a, b], with_element(a, ir.IntegerType.get_signless(1)),
                 {"comparison_direction": enum("comparison_direction", direction),
                  "compare_type": enum("comparison_type", "TOTALORDER")})


def _less(a: ir.Value, b: ir.Value) -> ir.Value:
    """The comparator's ``a < b`` in the interpreter's sort order; complex keys compare
    lexicographically, (real, imag), each part as a float key (jax's _sort_lt_comparator)."""
    if is_complex(a.type):
        (ra, ia, _), (rb, ib, _) = complex_parts(a), complex_parts(b)
        tie = _total(ra, rb, "EQ")
        return value("or", [_less(ra, rb), value("and", [tie, _less(ia, ib)], tie.type)], tie.type)
    if not is_float(a.type):
        return compare(a, b, "LT")
    return _total(a, b, "LT")


def _sort_permutation(op: ir.Operation) -> ir.Value:
    (keys,) = op.operands
    result = tensor_type(op.results[0])
    if 0 in result.shape:
        return splat(0, result)
    dimension = i64_attr(op, "dimension")
    sort = hlo("sort", [keys, iota(result, dimension)], [keys.type, result],
               {"dimension": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dimension),
                "is_stable": ir.BoolAttr.get(True)}, regions=1)
    scalars = [scalar_type(element_type(keys))] * 2 + [scalar_type(result.element_type)] * 2
    body(sort, 0, scalars, lambda a, b, i, j: [_less(a, b)])
    return sort.results[1]


def _sorted_keys(operand: ir.Value, indices: ir.Value, dimension: int) -> ir.Value | None:
    """``operand`` permuted by ``indices`` when that is the permutation a `stablehlo.sort` of
    ``operand`` itself computed: its first result (jnp.sort's program, as jax writes it; XLA
    then drops the unused iota from the sort)."""
    owner = indices.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)) or owner.operation.name != "stablehlo.sort":
        return None
    sort = owner.operation
    if sort.results[1] != indices or sort.operands[0] != operand:
        return None
    return sort.results[0] if i64_attr(sort, "dimension") == dimension else None


def _is_iota(x: ir.Value, dimension: int) -> bool:
    """Whether ``x`` counts along ``dimension`` (a `stablehlo.iota` there): permuting it gives
    the permutation itself (argsort)."""
    owner = x.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)) or owner.operation.name != "stablehlo.iota":
        return False
    return i64_attr(owner.operation, "iota_dimension") == dimension


def _apply_permutation(op: ir.Operation) -> ir.Value:
    operand, indices = op.operands
    t = tensor_type(operand)
    if 0 in t.shape:
        return operand
    dimension = read_attributes(op)["dimension"]
    sorted_keys = _sorted_keys(operand, indices, dimension)
    if sorted_keys is not None:
        return sorted_keys
    if _is_iota(operand, dimension) and t.shape == tensor_type(indices).shape:
        return convert(indices, t.element_type)
    others = tuple(d for d in range(t.rank) if d != dimension)
    numbers = {"offset_dims": (), "collapsed_slice_dims": (dimension,), "operand_batching_dims": others,
               "start_indices_batching_dims": others, "start_index_map": (dimension,),
               "index_vector_dim": t.rank, "slice_sizes": (1,) * t.rank}
    return gather(operand, indices, t, numbers)


def _top_k(op: ir.Operation) -> ir.Value:
    (operand,) = op.operands
    values, indices = (tensor_type(r) for r in op.results)
    if 0 in values.shape:
        top = [splat(0, values), splat(0, indices)]
    else:
        top = ir.Operation.create("chlo.top_k", results=[values, indices], operands=[operand],
                                  attributes={"k": op.attributes["k"]}).results
    op.results[1].replace_all_uses_with(top[1])
    return top[0]


RULES: dict[str, Rule] = {
    "sort_permutation": _sort_permutation,
    "apply_permutation": _apply_permutation,
    "top_k": _top_k,
}
