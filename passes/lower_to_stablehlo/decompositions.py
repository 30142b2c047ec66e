"""Rules for the decompositions: what jax emits on CPU, custom calls to jaxlib's LAPACK targets.

cholesky is `lapack_?potrf_ffi` (uplo L), triangular_solve `lapack_?trsm_ffi` (side, uplo,
trans_x, diag from the op's flags), lu `lapack_?getrf_ffi`, each with jax's attributes
(lapack_calls.py). Around them, jax's post-processing: cholesky's
factor is NaN where `info != 0`, then its upper triangle zeroed; lu's is NaN where
`info < 0`, its pivots made 0-based, and its permutation built from them by a stablehlo.while
over the k swaps (one-hot selections and sums over the last dimension, so every matrix of
the batch swaps its own rows; jax writes the same loop with gathers and scatters). jaxlib
registers the targets with its CPU client and binds them to SciPy's LAPACK when
`mlax.backends.xla.pjrt.initialize_lapack` runs, which the XLA backend does for programs naming
them; these custom calls are CPU-only, as jax's lowering.
"""

from __future__ import annotations

from mlir import ir

from mlax.passes.lower_to_stablehlo.common import (
    Rule,
    body,
    bool_attr,
    broadcast,
    compare,
    hlo,
    iota,
    scalar_reducer,
    scalar_type,
    select,
    splat,
    tensor_type,
    value,
    with_element,
    with_shape,
)
from mlax.passes.lower_to_stablehlo.complex_parts import conjugate as conjugate_value
from mlax.passes.lower_to_stablehlo.lapack_calls import info_type, lapack_call, nan_unless


def _below_diagonal(like: ir.Value) -> ir.Value:
    """i1 of ``like``'s shape: row >= column."""
    index = with_element(like, ir.IntegerType.get_signless(32))
    rank = tensor_type(like).rank
    return compare(iota(index, rank - 2), iota(index, rank - 1), "GE")


def _cholesky(op: ir.Operation) -> ir.Value:
    (x,) = op.operands
    if 0 in tensor_type(x).shape:
        return x
    factor, info = lapack_call("potrf", [x], [x.type, info_type(x)], [True, False], uplo="L")
    factor = nan_unless(compare(info, splat(0, info.type), "EQ"), factor)
    return select(_below_diagonal(factor), factor, splat(0, factor.type))


def _triangular_solve(op: ir.Operation) -> ir.Value:
    a, b = op.operands
    if 0 in tensor_type(b).shape:
        return b
    transpose = bool_attr(op, "transpose_a")
    conjugate = bool_attr(op, "conjugate_a") and isinstance(tensor_type(a).element_type, ir.ComplexType)
    if conjugate and not transpose:  # as jax: conj(A), then no transpose
        a = conjugate_value(a)
    (out,) = lapack_call("trsm", [a, b], [b.type], [True], side="L" if bool_attr(op, "left_side") else "R",
                     uplo="L" if bool_attr(op, "lower") else "U",
                     trans_x=("C" if conjugate else "T") if transpose else "N",
                     diag="U" if bool_attr(op, "unit_diagonal") else "N")
    return out


def _total(onehot: ir.Value, x: ir.Value) -> ir.Value:
    """sum(select(onehot, x, 0)) over the last dimension: the element each one-hot row picks."""
    t = tensor_type(x)
    zero = splat(0, scalar_type(t.element_type))
    reduce = hlo("reduce", [select(onehot, x, splat(0, x.type)), zero], with_shape(x, t.shape[:-1]),
                 {"dimensions": ir.DenseI64ArrayAttr.get([t.rank - 1])}, regions=1)
    scalar_reducer(reduce, 0, t.element_type, "add")
    return reduce.result


def _permutation(pivots: ir.Value, perm_type: ir.Type) -> ir.Value:
    """The swaps ``pivots`` (0-based, ..., k) applied in order to an iota of ``perm_type``."""
    rank, k = tensor_type(pivots).rank, tensor_type(pivots).shape[-1]
    start = iota(perm_type, rank - 1)
    if k == 0 or 0 in tensor_type(perm_type).shape:
        return start
    i32 = scalar_type(ir.IntegerType.get_signless(32))
    state = [splat(0, i32), start, pivots]
    loop = hlo("while", state, [v.type for v in state], regions=2)
    body(loop, 0, [v.type for v in state], lambda i, *_: [compare(i, splat(k, i32), "LT")])

    def step(i: ir.Value, perm: ir.Value, swaps: ir.Value) -> list[ir.Value]:
        def spread(v: ir.Value, like: ir.Value) -> ir.Value:
            return broadcast(v, like.type, range(tensor_type(v).rank))

        def at(position: ir.Value, like: ir.Value) -> ir.Value:
            return compare(iota(like.type, rank - 1), spread(position, like), "EQ")

        at_i, at_j = at(i, perm), at(_total(at(i, swaps), swaps), perm)
        value_i, value_j = spread(_total(at_i, perm), perm), spread(_total(at_j, perm), perm)
        swapped = select(at_i, value_j, select(at_j, value_i, perm))
        return [value("add", [i, splat(1, i32)], i32), swapped, swaps]

    body(loop, 1, [v.type for v in state], step)
    return loop.results[1]


def _lu(op: ir.Operation) -> ir.Value:
    (x,) = op.operands
    factors_type, pivots_type, perm_type = (r.type for r in op.results)
    if 0 in tensor_type(x).shape:
        factors, pivots = x, splat(0, pivots_type)
    else:
        factors, pivots, info = lapack_call("getrf", [x], [factors_type, pivots_type, info_type(x)],
                                        [True, False, False])
        pivots = value("subtract", [pivots, splat(1, pivots_type)], pivots_type)
        factors = nan_unless(compare(info, splat(0, info.type), "GE"), factors)
    op.results[1].replace_all_uses_with(pivots)
    op.results[2].replace_all_uses_with(_permutation(pivots, perm_type))
    return factors


RULES: dict[str, Rule] = {
    "cholesky": _cholesky,
    "triangular_solve": _triangular_solve,
    "lu": _lu,
}
