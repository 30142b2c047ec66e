"""Rules for the decompositions: what jax emits on CPU, custom calls to jaxlib's LAPACK targets.

cholesky is `lapack_?potrf_ffi` (uplo L), triangular_solve `lapack_?trsm_ffi` (side, uplo,
trans_x, diag from the op's flags), lu `lapack_?getrf_ffi`, each with jax's attributes: typed
FFI (`mhlo.backend_config` a dictionary of ui8 characters), column-major layouts for the
matrices (`operand_layouts` / `result_layouts` minor-to-major: the two matrix dimensions,
then the batch), row-major for the rest. Around them, jax's post-processing: cholesky's
factor is NaN where `info != 0`, then its upper triangle zeroed; lu's is NaN where
`info < 0`, its pivots made 0-based, and its permutation built from them by a stablehlo.while
over the k swaps (one-hot selections and sums over the last dimension, so every matrix of
the batch swaps its own rows; jax writes the same loop with gathers and scatters). jaxlib
registers the targets with its CPU client and binds them to SciPy's LAPACK when
`mlax.runtime.pjrt.initialize_lapack` runs, which the XLA backend does for programs naming
them; these custom calls are CPU-only, as jax's lowering.
"""

from __future__ import annotations

import math

from mlir import ir

from mlax.passes.lower_to_stablehlo.common import (
    Rule,
    body,
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

TARGET_PREFIX = "lapack_"


def _layout(rank: int, matrices: bool) -> str:
    """A minor-to-major layout: column-major matrices (then the batch), or row-major."""
    order = [rank - 2, rank - 1, *range(rank - 3, -1, -1)] if matrices else list(range(rank - 1, -1, -1))
    if not rank:
        return "dense<> : tensor<0xindex>"
    return f"dense<[{', '.join(map(str, order))}]> : tensor<{rank}xindex>"


def _layouts(types: list[ir.Type], matrices: list[bool]) -> ir.Attribute:
    return ir.Attribute.parse("[" + ", ".join(_layout(tensor_type(t).rank, m)
                                              for t, m in zip(types, matrices, strict=True)) + "]")


def _lapack(name: str, operands: list[ir.Value], results: list[ir.Type], matrix_results: list[bool],
            matrix_operands: list[bool] | None = None, **chars: str) -> list[ir.Value]:
    """The custom call of jaxlib's ``lapack_<s|d|c|z><name>_ffi`` as jax emits it (every operand a
    batch of column-major matrices unless ``matrix_operands`` says which are)."""
    element = tensor_type(operands[0]).element_type
    complex_type = isinstance(element, ir.ComplexType)
    width = ir.FloatType(element.element_type if complex_type else element).width
    prefix = ("c" if width == 32 else "z") if complex_type else ("s" if width == 32 else "d")
    config = ", ".join(f"{key} = {ord(char)} : ui8" for key, char in sorted(chars.items()))
    call = hlo("custom_call", operands, results, {
        "call_target_name": ir.StringAttr.get(f"{TARGET_PREFIX}{prefix}{name}_ffi"),
        "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1),
        "backend_config": ir.StringAttr.get(""),
        "has_side_effect": ir.BoolAttr.get(False),
        "operand_layouts": _layouts([v.type for v in operands], matrix_operands or [True] * len(operands)),
        "result_layouts": _layouts(results, matrix_results),
        "mhlo.backend_config": ir.Attribute.parse("{" + config + "}"),
    })
    return list(call.results)


def _per_matrix(flags: ir.Value, like: ir.Value) -> ir.Value:
    """A per-matrix i1 ``flags`` (the batch shape) broadcast over every element of ``like``."""
    mask_type = with_element(like, ir.IntegerType.get_signless(1))
    return broadcast(flags, mask_type, range(tensor_type(flags).rank))


def _info_type(x: ir.Value) -> ir.Type:
    return ir.RankedTensorType.get(tensor_type(x).shape[:-2], ir.IntegerType.get_signless(32))


def _below_diagonal(like: ir.Value) -> ir.Value:
    """i1 of ``like``'s shape: row >= column."""
    index = with_element(like, ir.IntegerType.get_signless(32))
    rank = tensor_type(like).rank
    return compare(iota(index, rank - 2), iota(index, rank - 1), "GE")


def _cholesky(op: ir.Operation) -> ir.Value:
    (x,) = op.operands
    if 0 in tensor_type(x).shape:
        return x
    factor, info = _lapack("potrf", [x], [x.type, _info_type(x)], [True, False], uplo="L")
    ok = compare(info, splat(0, info.type), "EQ")
    factor = select(_per_matrix(ok, factor), factor, splat(_nan(factor), factor.type))
    return select(_below_diagonal(factor), factor, splat(0, factor.type))


def _nan(like: ir.Value) -> float | complex:
    """NaN for ``like``'s element type (in both parts of a complex one, as jax's failures)."""
    complex_type = isinstance(tensor_type(like).element_type, ir.ComplexType)
    return complex(math.nan, math.nan) if complex_type else math.nan


def _flag(op: ir.Operation, name: str) -> bool:
    return bool(ir.BoolAttr(op.attributes[name]).value)


def _triangular_solve(op: ir.Operation) -> ir.Value:
    a, b = op.operands
    if 0 in tensor_type(b).shape:
        return b
    transpose = _flag(op, "transpose_a")
    conjugate = _flag(op, "conjugate_a") and isinstance(tensor_type(a).element_type, ir.ComplexType)
    if conjugate and not transpose:  # as jax: conj(A), then no transpose
        a = conjugate_value(a)
    (out,) = _lapack("trsm", [a, b], [b.type], [True], side="L" if _flag(op, "left_side") else "R",
                     uplo="L" if _flag(op, "lower") else "U",
                     trans_x=("C" if conjugate else "T") if transpose else "N",
                     diag="U" if _flag(op, "unit_diagonal") else "N")
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
        factors, pivots, info = _lapack("getrf", [x], [factors_type, pivots_type, _info_type(x)],
                                        [True, False, False])
        pivots = value("subtract", [pivots, splat(1, pivots_type)], pivots_type)
        ok = compare(info, splat(0, info.type), "GE")
        factors = select(_per_matrix(ok, factors), factors, splat(_nan(factors), factors_type))
    op.results[1].replace_all_uses_with(pivots)
    op.results[2].replace_all_uses_with(_permutation(pivots, perm_type))
    return factors


RULES: dict[str, Rule] = {
    "cholesky": _cholesky,
    "triangular_solve": _triangular_solve,
    "lu": _lu,
}
