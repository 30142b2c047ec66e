"""Rules for qr, eigh and svd: what jax emits on CPU, custom calls of jaxlib's LAPACK targets.

qr is jax's `_qr_lowering`: `lapack_?geqrf_ffi` (R above the diagonal, the reflectors below,
and the taus; with `pivoting` `lapack_?geqp3_ffi` from zero pivots, its 1-based pivots less one
the third result), then `lapack_?orgqr_ffi` (`?ungqr` for complex) on the reflectors (zero-padded
to m x m for full tall matrices, the leading m x m block of a wide one) and R's upper triangle
(its leading n x n block for reduced tall matrices). eigh is `lapack_?syevd_ffi` (`?heevd`;
mode V, uplo L or U), svd `lapack_?gesdd_ffi` (mode A, S or N), each followed by jax's NaN
selects where `info != 0`. Empty matrices make no call: qr gives the identity's columns, a
zero R (and zero pivots), svd jax's `_empty_svd`. The call attributes and layouts are
lapack_calls.py's `lapack_call`.
"""

from __future__ import annotations

from mlir import ir

from mlax.passes.lower_to_stablehlo.common import (
    Rule,
    bool_attr,
    broadcast,
    compare,
    iota,
    is_complex,
    select,
    splat,
    tensor_type,
    value,
)
from mlax.passes.lower_to_stablehlo.lapack_calls import finite_matrices, info_type, lapack_call, nan_unless


def _full(number: float, t: ir.Type) -> ir.Value:
    """A tensor of type ``t`` filled with ``number``: a rank-0 constant broadcast, so no array of
    ``t``'s size is ever built while lowering."""
    return broadcast(splat(number, ir.RankedTensorType.get([], tensor_type(t).element_type)), t, [])


def _identity(t: ir.Type) -> ir.Value:
    """Ones on the diagonal of every matrix of type ``t``, zeros elsewhere."""
    index = ir.RankedTensorType.get(tensor_type(t).shape, ir.IntegerType.get_signless(32))
    rank = tensor_type(t).rank
    return select(compare(iota(index, rank - 2), iota(index, rank - 1), "EQ"), _full(1, t), _full(0, t))


def _block(x: ir.Value, rows: int, cols: int) -> ir.Value:
    """The leading ``rows`` x ``cols`` block of every matrix of ``x``, zero-padded where larger."""
    t = tensor_type(x)
    *batch, m, n = t.shape
    zeros, rank = [0] * t.rank, t.rank
    if (rows, cols) == (m, n):
        return x
    if rows <= m and cols <= n:
        return value("slice", [x], ir.RankedTensorType.get([*batch, rows, cols], t.element_type), {
            "start_indices": ir.DenseI64ArrayAttr.get(zeros),
            "limit_indices": ir.DenseI64ArrayAttr.get([*batch, rows, cols]),
            "strides": ir.DenseI64ArrayAttr.get([1] * rank)})
    pad = splat(0, ir.RankedTensorType.get([], t.element_type))
    return value("pad", [x, pad], ir.RankedTensorType.get([*batch, rows, cols], t.element_type), {
        "edge_padding_low": ir.DenseI64ArrayAttr.get(zeros),
        "edge_padding_high": ir.DenseI64ArrayAttr.get([0] * (rank - 2) + [rows - m, cols - n]),
        "interior_padding": ir.DenseI64ArrayAttr.get(zeros)})


def _upper(x: ir.Value) -> ir.Value:
    """jnp.triu of every matrix (jax's select of zero where row - 1 >= column)."""
    t = tensor_type(x)
    index = ir.RankedTensorType.get(t.shape, ir.IntegerType.get_signless(32))
    below = compare(iota(index, t.rank - 2), iota(index, t.rank - 1), "GT")
    return select(below, _full(0, x.type), x)


def _factor(x: ir.Value, p_type: list[ir.Type]) -> tuple[ir.Value, ir.Value, list[ir.Value]]:
    """The packed factors, the taus and the 0-based pivots (none without ``p_type``): jax's
    geqrf, or geqp3 from zero (free) pivots with 1 subtracted from the pivots it returns."""
    *batch, m, n = tensor_type(x).shape
    taus_type = ir.RankedTensorType.get([*batch, min(m, n)], tensor_type(x).element_type)
    if not p_type:
        packed, taus = lapack_call("geqrf", [x], [x.type, taus_type], [True, False])
        return packed, taus, []
    (pivots_type,) = p_type
    packed, pivots, taus = lapack_call("geqp3", [x, _full(0, pivots_type)], [x.type, pivots_type, taus_type],
                                       [True, False, False], matrix_operands=[True, False])
    return packed, taus, [value("subtract", [pivots, _full(1, pivots_type)], pivots_type)]


def _qr(op: ir.Operation) -> ir.Value:
    (x,) = op.operands
    q_type, r_type, *p_type = (r.type for r in op.results)
    m, n = tensor_type(x).shape[-2:]
    if 0 in (m, n):
        outs = [_identity(q_type), _full(0, r_type), *(_full(0, t) for t in p_type)]
    else:
        packed, taus, pivots = _factor(x, p_type)
        reflectors = _block(packed, m, tensor_type(q_type).shape[-1])
        expander = "ungqr" if is_complex(tensor_type(x).element_type) else "orgqr"
        (q,) = lapack_call(expander, [reflectors, taus], [reflectors.type], [True],
                           matrix_operands=[True, False])
        outs = [q, _upper(_block(packed, tensor_type(r_type).shape[-2], n)), *pivots]
    for result, replacement in zip(op.results[1:], outs[1:], strict=True):
        result.replace_all_uses_with(replacement)
    return outs[0]


def _ok(info: ir.Value) -> ir.Value:
    return compare(info, _full(0, info.type), "EQ")


def _eigh(op: ir.Operation) -> ir.Value:
    (x,) = op.operands
    v_type, w_type = (r.type for r in op.results)
    if 0 in tensor_type(x).shape:
        op.results[1].replace_all_uses_with(_full(0, w_type))
        return x
    routine = "heevd" if is_complex(tensor_type(x).element_type) else "syevd"
    v, w, info = lapack_call(routine, [x], [v_type, w_type, info_type(x)], [True, False, False], mode="V",
                         uplo="L" if bool_attr(op, "lower") else "U")
    ok = _ok(info)
    op.results[1].replace_all_uses_with(nan_unless(ok, w))
    return nan_unless(ok, v)


def _svd(op: ir.Operation) -> ir.Value:
    (x,) = op.operands
    s_type, u_type, vh_type = (r.type for r in op.results)
    full, vectors = bool_attr(op, "full_matrices"), bool_attr(op, "compute_uv")
    t = tensor_type(x)
    *batch, m, n = t.shape
    if 0 in (m, n):
        u, vh = ((_identity(r) if full and vectors else _full(0, r)) for r in (u_type, vh_type))
        s = _full(0, s_type)
    else:
        k = min(m, n)
        u_shape, vh_shape = (m, m if full else k), (n if full else k, n)  # jax's, with or without vectors
        u_full, vh_full = (ir.RankedTensorType.get([*batch, *shape], t.element_type)
                           for shape in (u_shape, vh_shape))
        finite, x = finite_matrices(x)  # ?gesdd may never return on an infinity (jax's hangs)
        _, s, u, vh, info = lapack_call("gesdd", [x], [x.type, s_type, u_full, vh_full, info_type(x)],
                                    [True, False, True, True, False],
                                    mode="N" if not vectors else "A" if full else "S")
        ok = value("and", [_ok(info), finite], finite.type)
        s = nan_unless(ok, s)
        if vectors:
            u, vh = nan_unless(ok, u), nan_unless(ok, vh)
        else:
            u, vh = _full(0, u_type), _full(0, vh_type)
    op.results[1].replace_all_uses_with(u)
    op.results[2].replace_all_uses_with(vh)
    return s


RULES: dict[str, Rule] = {"qr": _qr, "eigh": _eigh, "svd": _svd}
