"""Rules for the sorting ops: a bottom-up merge sort in scf loops, and a gathering linalg.generic.

sort_permutation starts from the identity permutation (an iota along `dimension`) and runs
ceil(log2 n) merge passes, unrolled at compile time (n is static): pass p merges runs of
width w = 2^p into runs of 2w. A pass is a nest of scf.for loops over the other
dimensions and over the n output positions k of a row, carrying the next permutation and
the keys in that order (fresh tensors written with tensor.insert, which bufferization
stores in place; carrying the keys makes every read sequential instead of an indirection
through the permutation) and the read positions i (left run) and j (right run), reset at
the start of each run pair. It is branch-free: both candidates are read at clamped
positions and the left one is taken when the right run is exhausted or the right key is
not less than the left key, which keeps equal keys in order (a stable sort). The sort is
O(n log n) per row, compiled code with no host callback (1e5 f32 sort in ~20 ms, 1e6 in
~0.2 s on one core). The comparison is XLA's sort order: floats by `olt`, and a NaN
greater than every number (so -0.0 == +0.0 and NaNs tie), halves widened to f32; integers
signed or unsigned; booleans (read as i8 0 / 1) false < true.

apply_permutation is a linalg.generic over the result that extracts the operand element
at the (clamped) index along `dimension` and its own coordinates elsewhere.

top_k merge-sorts an integer key whose ascending order is XLA's TopK order (the float bits
with the non-sign bits of negatives flipped, negated bitwise; integers negated bitwise),
keeps the first k positions of each row as the indices and reads the values there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mlir import ir
from mlir.dialects import arith, scf, tensor
from mlir.dialects import complex as complex_dialect

from mlax.dialect.opviews import linalg
from mlax.passes.lower_to_linalg.common import Rule, generic, is_bool, is_float, is_unsigned, scalar, width

_HALF = ("f16", "bf16")


def _widen_bool(value: ir.Value) -> ir.Value:
    """Booleans as i8 0 / 1: extracting from an i1 buffer does not lower to LLVM."""
    t = ir.RankedTensorType(value.type)
    if not is_bool(t.element_type):
        return value
    i8 = ir.IntegerType.get_signless(8)
    return generic([value], ir.RankedTensorType.get(t.shape, i8), lambda b: arith.extui(i8, b))


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def _less(a: ir.Value, b: ir.Value) -> ir.Value:
    """XLA's sort comparator on scalars: a < b with NaN last and -0.0 == +0.0; complex numbers
    lexicographically, (real, imag), each part in that order (NaNs tie)."""
    t = a.type
    if isinstance(t, ir.ComplexType):
        ra, rb = complex_dialect.re(a), complex_dialect.re(b)
        unordered = arith.CmpFPredicate.UNO
        nans = arith.andi(arith.cmpf(unordered, ra, ra), arith.cmpf(unordered, rb, rb))
        tie = arith.ori(arith.cmpf(arith.CmpFPredicate.OEQ, ra, rb), nans)
        later = _less(complex_dialect.im(a), complex_dialect.im(b))
        return arith.ori(_less(ra, rb), arith.andi(tie, later))
    if is_float(t):
        if str(t) in _HALF:
            a, b = arith.extf(ir.F32Type.get(), a), arith.extf(ir.F32Type.get(), b)
        a_number = arith.cmpf(arith.CmpFPredicate.ORD, a, a)
        b_nan = arith.cmpf(arith.CmpFPredicate.UNO, b, b)
        return arith.ori(arith.cmpf(arith.CmpFPredicate.OLT, a, b), arith.andi(a_number, b_nan))
    predicate = arith.CmpIPredicate.ult if is_unsigned(t) else arith.CmpIPredicate.slt
    return arith.cmpi(predicate, a, b)


def _rows(shape: Sequence[int], dimension: int, inits: list[ir.Value],
          body: Callable[[list[ir.Value | None], list[ir.Value]], list[ir.Value]]) -> list[ir.Value]:
    """scf.for loops over every dimension but ``dimension`` carrying tensors; ``body`` gets the
    coordinates (None at ``dimension``) and the tensors and returns their next values."""
    coords: list[ir.Value | None] = [None] * len(shape)
    others = [d for d in range(len(shape)) if d != dimension]

    def build(level: int, carried: list[ir.Value]) -> list[ir.Value]:
        if level == len(others):
            return body(list(coords), carried)
        d = others[level]
        loop = scf.ForOp(_index(0), _index(shape[d]), _index(1), carried)
        with ir.InsertionPoint(loop.body):
            coords[d] = loop.induction_variable
            scf.yield_(build(level + 1, list(loop.inner_iter_args)))
        return list(loop.results)

    return build(0, inits)


def _at(coords: list[ir.Value | None], dimension: int, position: ir.Value) -> list[ir.Value]:
    return [position if d == dimension else c for d, c in enumerate(coords)]


def _merge_pass(perm: ir.Value, keys: ir.Value, dimension: int, run: int) -> tuple[ir.Value, ir.Value]:
    """One merge pass: runs of ``run`` sorted positions (``perm``) with their keys in that
    order (``keys``) become runs of 2 * run; both are read sequentially."""
    shape, n = list(ir.RankedTensorType(perm.type).shape), ir.RankedTensorType(perm.type).shape[dimension]

    def row(coords: list[ir.Value | None], outs: list[ir.Value]) -> list[ir.Value]:
        size, width, one = _index(n), _index(run), _index(1)
        loop = scf.ForOp(_index(0), size, one, [_index(0), _index(0), *outs])
        with ir.InsertionPoint(loop.body):
            k = loop.induction_variable
            i, j, perm_out, keys_out = loop.inner_iter_args
            low = arith.andi(k, _index(~(2 * run - 1)))
            mid = arith.minui(arith.addi(low, width), size)
            high = arith.minui(arith.addi(low, _index(2 * run)), size)
            starts = arith.cmpi(arith.CmpIPredicate.eq, k, low)
            i, j = arith.select(starts, low, i), arith.select(starts, mid, j)
            at_left = _at(coords, dimension, arith.minui(i, arith.subi(mid, one)))
            at_right = _at(coords, dimension, arith.minui(j, arith.subi(high, one)))
            left, right = tensor.extract(perm, at_left), tensor.extract(perm, at_right)
            key_left, key_right = tensor.extract(keys, at_left), tensor.extract(keys, at_right)
            right_done = arith.cmpi(arith.CmpIPredicate.uge, j, high)
            left_open = arith.cmpi(arith.CmpIPredicate.ult, i, mid)
            true = arith.constant(ir.IntegerType.get_signless(1), 1)
            keep_order = arith.xori(_less(key_right, key_left), true)
            take_left = arith.andi(left_open, arith.ori(right_done, keep_order))
            here = _at(coords, dimension, k)
            perm_out = tensor.insert(arith.select(take_left, left, right), perm_out, here)
            keys_out = tensor.insert(arith.select(take_left, key_left, key_right), keys_out, here)
            scf.yield_([arith.select(take_left, arith.addi(i, one), i),
                        arith.select(take_left, j, arith.addi(j, one)), perm_out, keys_out])
        return list(loop.results[2:])

    keys_type = ir.RankedTensorType(keys.type)
    inits = [tensor.empty(shape, ir.RankedTensorType(perm.type).element_type),
             tensor.empty(shape, keys_type.element_type)]
    perm, keys = _rows(shape, dimension, inits, row)
    return perm, keys


def _sorted_order(keys: ir.Value, dimension: int) -> ir.Value:
    """The i32 permutation that stably sorts ``keys`` (no i1) along ``dimension``."""
    shape = list(ir.RankedTensorType(keys.type).shape)
    i32 = ir.IntegerType.get_signless(32)
    perm = generic([], ir.RankedTensorType.get(shape, i32),
                   lambda: arith.index_cast(i32, linalg.IndexOp(dimension).result))
    if 0 in shape:
        return perm
    run = 1
    while run < shape[dimension]:
        perm, keys = _merge_pass(perm, keys, dimension, run)
        run *= 2
    return perm


def _sort_permutation(op: ir.Operation) -> ir.Value:
    dimension = ir.IntegerAttr(op.attributes["dimension"]).value
    return _sorted_order(_widen_bool(op.operands[0]), dimension)


def _read_at(source: ir.Value, dimension: int, result_type: ir.Type, indices: ir.Value) -> ir.Value:
    """A linalg.generic over ``indices`` (of the result's shape): the ``source`` element at the
    clamped index along ``dimension`` and the result element's coordinates elsewhere (a
    widened boolean source is truncated back to i1)."""
    t = ir.RankedTensorType(source.type)
    element = ir.RankedTensorType(result_type).element_type
    index = ir.IndexType.get()
    last = _index(t.shape[dimension] - 1)

    def body(i: ir.Value) -> ir.Value:
        position = arith.minsi(arith.maxsi(arith.index_cast(index, i), _index(0)), last)
        coords = [linalg.IndexOp(d).result for d in range(t.rank)]
        value = tensor.extract(source, _at(coords, dimension, position))
        return arith.trunci(element, value) if value.type != element else value

    return generic([indices], result_type, body)


def _apply_permutation(op: ir.Operation) -> ir.Value:
    operand, indices = op.operands
    if 0 in ir.RankedTensorType(operand.type).shape:
        return operand
    dimension = ir.IntegerAttr(op.attributes["dimension"]).value
    return _read_at(_widen_bool(operand), dimension, op.results[0].type, indices)


def _descending_key(x: ir.Value) -> ir.Value:
    """XLA's TopK order as an ascending integer key (dialect/ops/sorting.py's _descending_key):
    float bits with the non-sign bits of negatives flipped, then negated bitwise (booleans
    arrive as i8 0 / 1, so true gets the smaller key)."""
    t = x.type
    if is_float(t):
        bits = width(t)
        x = arith.bitcast(ir.IntegerType.get_signless(bits), x)
        sign = arith.shrsi(x, scalar(x.type, bits - 1))
        x = arith.xori(x, arith.andi(sign, scalar(x.type, (1 << (bits - 1)) - 1)))
    return arith.xori(x, scalar(x.type, -1))


def _top_k(op: ir.Operation) -> ir.Value:
    """The merge sort of the descending keys; the first k positions and the values there.
    (The rule replaces the indices result itself: the driver replaces the first result.)"""
    (operand,) = op.operands
    t = ir.RankedTensorType(operand.type)
    values_type, indices_type = (ir.RankedTensorType(r.type) for r in op.results)
    last = t.rank - 1
    wide = _widen_bool(operand)
    e = ir.RankedTensorType(wide.type).element_type
    key_type = ir.IntegerType.get_signless(width(e)) if is_float(e) else e
    keys = generic([wide], ir.RankedTensorType.get(t.shape, key_type), _descending_key)
    order = _sorted_order(keys, last)
    indices = generic([], indices_type,
                      lambda: tensor.extract(order, [linalg.IndexOp(d).result for d in range(t.rank)]))
    op.results[1].replace_all_uses_with(indices)
    return _read_at(wide, last, values_type, indices)


RULES: dict[str, Rule] = {
    "sort_permutation": _sort_permutation,
    "apply_permutation": _apply_permutation,
    "top_k": _top_k,
}
