"""Rules for conv_general_dilated and reduce_window_{sum,max,min}: generics whose input maps
read the window (`out * stride + offset * window_dilation`), no transposes.

The operand is first base-dilated and padded (0 for convolutions, the identity for
reduce_window) by mlax.pad's own lowering (a generic reading the operand where an element
lands; a strided tensor.insert_slice would need the memrefCopy runtime function).
reduce_window is then one generic over (result..., window...) with reduction iterators on
the window, which reads a `tensor.empty` of the window's shape so that linalg knows those
loops' bounds. A float convolution is im2col: a named linalg.batch_matmul over the groups of
the patches [G, N*S, K] by the rhs as [G, K, O/G] (gemm through mlax-linalg-to-blas) between
copying generics whose floordiv/mod maps keep fusion away (`_conv_im2col`; the patches are
stored [G, K, N*S] and read transposed where the lhs's minor dimension is its batch role, as in
a kernel gradient, so the copy runs along both buffers' minor dimensions); integers (and
patches over IM2COL_LIMIT elements) are one direct generic, groups split out of one
dimension in place with tensor.expand_shape (the lhs feature or batch dimension, the rhs
output feature and the result feature dimension into (groups, size / groups)), so every loop
is a bare dimension of some operand. Accumulation is as the reference: f32 for f16/bf16, i8
for booleans, else the element type (integers wrap). Empty results or contractions are a
generic yielding 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mlir import ir
from mlir.dialects import arith, tensor
from mlir.dialects import complex as complex_dialect

from mlax.dialect import build
from mlax.dialect.opviews import linalg
from mlax.passes.lower_to_linalg.common import (
    Body,
    Rule,
    element_type,
    generic,
    i64_array,
    is_complex,
    is_float,
    reassociation,
    scalar,
)
from mlax.passes.lower_to_linalg.reductions import MONOIDS, work_type
from mlax.passes.lower_to_linalg.shape import RULES as SHAPE_RULES

_Expr = ir.AffineExpr


def _dilate_and_pad(value: ir.Value, fill: int | float, padding: Sequence[int],
                    dilation: Sequence[int]) -> ir.Value:
    """``value`` with ``dilation - 1`` holes between elements and lo/hi ``padding`` (negative
    crops) per dimension, holes and padding holding ``fill``: an mlax.pad, lowered
    on the spot by its own rule."""
    if all(d == 1 for d in dilation) and not any(padding):
        return value
    t = element_type(value)
    fill_tensor = tensor.from_elements(ir.RankedTensorType.get([], t), [scalar(t, fill)])
    (padded,) = build("pad", [value, fill_tensor], {"edge_padding_low": tuple(padding[0::2]),
                                                    "edge_padding_high": tuple(padding[1::2]),
                                                    "interior_padding": tuple(d - 1 for d in dilation)})
    lowered = SHAPE_RULES["pad"](padded.owner)
    padded.owner.erase()
    return lowered


def _window_exprs(out: Sequence[_Expr], window: Sequence[_Expr], strides: Sequence[int],
                  dilation: Sequence[int]) -> list[_Expr]:
    return [o * s + w * d for o, w, s, d in zip(out, window, strides, dilation, strict=True)]


def _iterators(parallel: int, reduction: int) -> ir.ArrayAttr:
    kinds = ["parallel"] * parallel + ["reduction"] * reduction
    return ir.ArrayAttr.get([ir.Attribute.parse(f"#linalg.iterator_type<{k}>") for k in kinds])


def _reduction(inputs: Sequence[ir.Value], maps: Sequence[Sequence[_Expr]], init: ir.Value, n_loops: int,
               n_parallel: int, body: Body) -> ir.Value:
    """A linalg.generic over ``n_loops`` loops (the first ``n_parallel`` parallel) accumulating
    into ``init`` with ``body(*inputs, acc)``; ``maps`` gives the inputs' and init's indices."""
    affine = [ir.AffineMapAttr.get(ir.AffineMap.get(n_loops, 0, list(m))) for m in maps]
    op = linalg.GenericOp([init.type], list(inputs), [init], ir.ArrayAttr.get(affine),
                          _iterators(n_parallel, n_loops - n_parallel))
    block = op.regions[0].blocks.append(*[element_type(v) for v in inputs], element_type(init))
    with ir.InsertionPoint(block):
        linalg.yield_([body(*block.arguments)])
    return op.result


def _widen(value: ir.Value, work: ir.Type) -> ir.Value:
    t = element_type(value)
    if t == work:
        return value
    shape = ir.RankedTensorType(value.type).shape
    widen = arith.extf if is_float(t) else arith.extui
    return generic([value], ir.RankedTensorType.get(shape, work), lambda x: widen(work, x))


def _narrow(value: ir.Value, t: ir.Type) -> ir.Value:
    if element_type(value) == t:
        return value
    shape = ir.RankedTensorType(value.type).shape
    narrow = arith.truncf if is_float(t) else arith.trunci
    return generic([value], ir.RankedTensorType.get(shape, t), lambda x: narrow(t, x))


# --- reduce_window ------------------------------------------------------------------------------------


def _reduce_window(kind: str) -> Rule:
    combine, identity = MONOIDS[kind]

    def rule(op: ir.Operation) -> ir.Value:
        (operand,) = op.operands
        result = ir.RankedTensorType(op.results[0].type)
        t = element_type(operand)
        rank = result.rank
        if rank == 0:
            return operand
        if 0 in result.shape:
            return generic([], result, lambda: scalar(t, 0))
        work = work_type(t)
        padded = _dilate_and_pad(_widen(operand, work), identity(work), i64_array(op, "padding"),
                                 i64_array(op, "base_dilation"))
        window = tensor.empty(i64_array(op, "window_dimensions"), work)
        out = [ir.AffineDimExpr.get(d) for d in range(rank)]
        offsets = [ir.AffineDimExpr.get(rank + d) for d in range(rank)]
        reads = _window_exprs(out, offsets, i64_array(op, "window_strides"), i64_array(op, "window_dilation"))
        init = linalg.fill(scalar(work, identity(work)), outs=[tensor.empty(result.shape, work)])
        reduced = _reduction([padded, window], [reads, offsets, out], init, 2 * rank, rank,
                             lambda x, _, acc: combine(acc, x))  # as XLA's reduce_window body
        return _narrow(reduced, t)

    return rule


# --- conv_general_dilated ------------------------------------------------------------------------------


def _split(value: ir.Value, dim: int, groups: int) -> ir.Value:
    """``value`` with dimension ``dim`` split into (groups, size / groups)."""
    t = ir.RankedTensorType(value.type)
    shape = list(t.shape)
    shape[dim:dim + 1] = [groups, shape[dim] // groups]
    assoc = [[d] if d < dim else [d + 1] for d in range(t.rank)]
    assoc[dim] = [dim, dim + 1]
    return tensor.expand_shape(ir.RankedTensorType.get(shape, t.element_type), value, reassociation(assoc),
                               [], shape)


def _placed(spec: Sequence[int], exprs: Sequence[Sequence[_Expr]]) -> list[_Expr]:
    """Indices in an operand's own layout: dimension ``spec[j]`` gets ``exprs[j]`` (two
    expressions where that dimension was split into groups)."""
    by_dim = dict(zip(spec, exprs, strict=True))
    return [e for d in range(len(spec)) for e in by_dim[d]]


def _multiply_add(lhs: ir.Value, rhs: ir.Value, acc: ir.Value) -> ir.Value:
    if is_complex(lhs.type):
        return complex_dialect.add(acc, complex_dialect.mul(lhs, rhs))
    if is_float(lhs.type):
        return arith.addf(acc, arith.mulf(lhs, rhs))
    return arith.addi(acc, arith.muli(lhs, rhs))


def _transpose(value: ir.Value, permutation: Sequence[int]) -> ir.Value:
    """linalg.transpose: result dimension r is ``value``'s dimension ``permutation[r]``."""
    if list(permutation) == sorted(permutation):
        return value
    t = ir.RankedTensorType(value.type)
    init = tensor.empty([t.shape[d] for d in permutation], t.element_type)
    return linalg.transpose(value, outs=[init], permutation=list(permutation)).results[0]


def _digits(index: ir.AffineExpr, sizes: Sequence[int]) -> list[ir.AffineExpr]:
    """The row-major multi-index of the flat ``index`` over ``sizes`` (floordiv / mod)."""
    exprs, stride = [], math.prod(sizes)
    for size in sizes:
        stride //= size
        if size == 1:
            exprs.append(ir.AffineConstantExpr.get(0))
            continue
        divisor = ir.AffineConstantExpr.get(stride)
        exprs.append((index if stride == 1 else ir.AffineFloorDivExpr.get(index, divisor)) % size)
    return exprs


def _flat(exprs: Sequence[ir.AffineExpr], sizes: Sequence[int]) -> ir.AffineExpr:
    """The row-major flat index of the multi-index ``exprs`` over ``sizes``."""
    flat = ir.AffineConstantExpr.get(0)
    for expr, size in zip(exprs, sizes, strict=True):
        flat = flat * size + expr
    return flat


def _conv_im2col(lhs: ir.Value, rhs: ir.Value, shape: Sequence[int], specs: Sequence[Sequence[int]],
                 strides: Sequence[int], rhs_dilation: Sequence[int], fg: int, bg: int) -> ir.Value:
    """im2col: per group g (G = feature or batch groups, 1 without), a named
    linalg.batch_matmul of the patches [G, N*S, K] (rows: batch and output position; columns:
    the input feature and window positions in the rhs's order) by the rhs as [G, K, O/G],
    which mlax-linalg-to-blas hands to gemm. The patches are a copy over the unflattened
    window space writing flattened rows and columns; the rhs and the result (in its own
    layout) are copying generics whose maps unflatten (floordiv / mod) or flatten indices on
    the small operands. None of them is a permutation copy, so no reshape propagation or
    elementwise fusion folds them into the product."""
    lhs_spec, rhs_spec, out_spec = specs
    work = element_type(lhs)
    rhs_sizes = ir.RankedTensorType(rhs.type).shape
    groups = fg * bg
    k_dims = [d for d in range(len(shape)) if d != rhs_spec[0]]  # the contracted rhs dimensions, in order
    k_sizes = [rhs_sizes[d] for d in k_dims]
    out_sizes = [shape[out_spec[0]], *(shape[d] for d in out_spec[2:])]
    m, kk, o = math.prod(out_sizes), math.prod(k_sizes), rhs_sizes[rhs_spec[0]] // groups
    # The patches loop over (g, n, output position..., contracted dims...): every read index is
    # a plain sum, the write flattens (row, column). An empty tensor of that space gives linalg
    # the loop bounds; the non-permutation write map also keeps elementwise fusion from
    # folding the copy into the product (which would lose the gemm). Where the lhs's minor
    # dimension is its batch role (a kernel gradient: x's features are the rows), the patches
    # are stored transposed, [G, K, N*S] with the batch index innermost, so the copy reads and
    # writes contiguous runs, and the gemm reads them as op(A) = A^T.
    transposed = lhs_spec[0] == len(shape) - 1
    n_spatial = len(out_sizes) - 1
    logical = [groups, *out_sizes, *k_sizes]  # (g, n, spatial..., window...)
    order = [0, *range(2 + n_spatial, len(logical)), *range(2, 2 + n_spatial), 1] if transposed \
        else list(range(len(logical)))
    unfolded = [logical[j] for j in order]
    loops = len(unfolded)
    g, n, *rest = (ir.AffineDimExpr.get(order.index(j)) for j in range(loops))
    spatial, window = rest[:n_spatial], rest[n_spatial:]
    contracted = dict(zip(k_dims, window, strict=True))
    reads = _window_exprs(spatial, [contracted[d] for d in rhs_spec[2:]], strides, rhs_dilation)
    i = contracted[rhs_spec[1]]
    batch = g * out_sizes[0] + n if bg > 1 else n
    feature = g * rhs_sizes[rhs_spec[1]] + i if fg > 1 else i
    lhs_map = _placed(lhs_spec, [[batch], [feature], *[[r] for r in reads]])
    every = [ir.AffineDimExpr.get(d) for d in range(loops)]
    row_sizes = [*out_sizes[1:], out_sizes[0]] if transposed else out_sizes  # the rows' order
    flat_rows = _flat([*spatial, n] if transposed else [n, *spatial], row_sizes)
    written = [g, _flat(window, k_sizes), flat_rows] if transposed else [g, flat_rows, _flat(window, k_sizes)]
    patches = _reduction([lhs, tensor.empty(unfolded, work)], [lhs_map, every, written],
                         tensor.empty([groups, kk, m] if transposed else [groups, m, kk], work), loops, loops,
                         lambda x, _space, _out: x)
    row, col = (ir.AffineDimExpr.get(d) for d in (1, 2))
    rows = dict(zip(k_dims, _digits(row, k_sizes), strict=True))  # weights loops: (g, K, O/G)
    rhs_map = _placed(rhs_spec, [[g * o + col], *[[rows[d]] for d in rhs_spec[1:]]])
    weights = generic([rhs], ir.RankedTensorType.get([groups, kk, o], work), lambda x: x,
                      maps=[ir.AffineMap.get(3, 0, rhs_map)])
    init = linalg.fill(scalar(work, 0), outs=[tensor.empty([groups, m, o], work)])
    gg, r, c, k = (ir.AffineDimExpr.get(d) for d in range(4))  # batch_matmul's loops
    maps = [[gg, k, r] if transposed else [gg, r, k], [gg, k, c], [gg, r, c]]
    product = linalg.batch_matmul(patches, weights, outs=[init],
                                  indexing_maps=[ir.AffineMap.get(4, 0, m) for m in maps])
    dims = [ir.AffineDimExpr.get(d) for d in range(len(shape))]
    feature_out = dims[out_spec[1]]
    group = ir.AffineFloorDivExpr.get(feature_out, ir.AffineConstantExpr.get(o)) if groups > 1 \
        else ir.AffineConstantExpr.get(0)
    out_rows = [dims[out_spec[0]], *(dims[d] for d in out_spec[2:])]
    flat_row = _flat([*out_rows[1:], out_rows[0]], row_sizes) if transposed else _flat(out_rows, out_sizes)
    within = feature_out % o if groups > 1 else feature_out
    out_map = ir.AffineMap.get(len(shape), 0, [group, flat_row, within])
    return generic([product], ir.RankedTensorType.get(list(shape), work), lambda x: x, maps=[out_map])


def _conv_direct(lhs: ir.Value, rhs: ir.Value, shape: Sequence[int], specs: Sequence[Sequence[int]],
                 strides: Sequence[int], rhs_dilation: Sequence[int], fg: int, bg: int) -> ir.Value:
    """One generic over (batch, [group], output feature, output spatial..., input feature,
    window...), groups split out of the dimensions that carry them."""
    lhs_spec, rhs_spec, out_spec = specs
    k = len(shape) - 2
    work = element_type(lhs)
    groups = fg * bg
    dims = iter(range(4 + 2 * k))
    n = [ir.AffineDimExpr.get(next(dims))]
    g = [ir.AffineDimExpr.get(next(dims))] if groups > 1 else []
    o = [ir.AffineDimExpr.get(next(dims))]
    spatial = [ir.AffineDimExpr.get(next(dims)) for _ in range(k)]
    i = [ir.AffineDimExpr.get(next(dims))]
    window = [ir.AffineDimExpr.get(next(dims)) for _ in range(k)]
    n_loops = len(n + g + o + spatial + i + window)
    reads = [[e] for e in _window_exprs(spatial, window, strides, rhs_dilation)]
    if fg > 1:
        lhs = _split(lhs, lhs_spec[1], fg)
    if bg > 1:
        lhs = _split(lhs, lhs_spec[0], bg)
    lhs_map = _placed(lhs_spec, [g + n if bg > 1 else n, g + i if fg > 1 else i, *reads])
    if groups > 1:
        rhs = _split(rhs, rhs_spec[0], groups)
    rhs_map = _placed(rhs_spec, [g + o, i, *[[w] for w in window]])
    out_shape = list(shape)
    f = out_spec[1]
    if groups > 1:
        out_shape[f:f + 1] = [groups, out_shape[f] // groups]
    out_map = _placed(out_spec, [n, g + o, *[[s] for s in spatial]])
    init = linalg.fill(scalar(work, 0), outs=[tensor.empty(out_shape, work)])
    out = _reduction([lhs, rhs], [lhs_map, rhs_map, out_map], init, n_loops, n_loops - 1 - k, _multiply_add)
    if groups == 1:
        return out
    assoc = [[d] if d < f else [d + 1] for d in range(len(shape))]
    assoc[f] = [f, f + 1]
    return tensor.collapse_shape(ir.RankedTensorType.get(list(shape), work), out, reassociation(assoc))


# The most patch elements im2col materializes (256 MiB of f32); larger convolutions loop directly.
IM2COL_LIMIT = 1 << 26


def _conv(op: ir.Operation) -> ir.Value:
    """Floats go through im2col and a gemm (unless the patches would exceed IM2COL_LIMIT
    elements); integers and huge patches are one direct generic."""
    lhs, rhs = op.operands
    result = ir.RankedTensorType(op.results[0].type)
    t = element_type(lhs)
    specs = [i64_array(op, k) for k in ("lhs_spec", "rhs_spec", "out_spec")]
    fg = ir.IntegerAttr(op.attributes["feature_group_count"]).value
    bg = ir.IntegerAttr(op.attributes["batch_group_count"]).value
    if 0 in result.shape or ir.RankedTensorType(rhs.type).shape[specs[1][1]] == 0:
        return generic([], result, lambda: scalar(t, 0))
    work = ir.F32Type.get() if str(t) in ("f16", "bf16") else t
    padding, dilation = [0] * (2 * result.rank), [1] * result.rank
    for j, d in enumerate(specs[0][2:]):
        padding[2 * d:2 * d + 2] = i64_array(op, "padding")[2 * j:2 * j + 2]
        dilation[d] = i64_array(op, "lhs_dilation")[j]
    lhs = _dilate_and_pad(_widen(lhs, work), 0, padding, dilation)
    rhs = _widen(rhs, work)
    window = (i64_array(op, "window_strides"), i64_array(op, "rhs_dilation"))
    rhs_shape = ir.RankedTensorType(rhs.type).shape
    rows = math.prod(result.shape) // result.shape[specs[2][1]]  # batch x output positions
    patches = rows * fg * bg * (math.prod(rhs_shape) // rhs_shape[specs[1][0]])
    if is_float(work) and patches <= IM2COL_LIMIT:
        out = _conv_im2col(lhs, rhs, result.shape, specs, *window, fg, bg)
    else:
        out = _conv_direct(lhs, rhs, result.shape, specs, *window, fg, bg)
    return _narrow(out, t)


RULES: dict[str, Rule] = {"conv_general_dilated": _conv,
                          **{f"reduce_window_{kind}": _reduce_window(kind) for kind in ("sum", "max", "min")}}
