"""The type rule of every mlax op (`RULES` of mlax.sharding_specs, which mlax.sharding_types
reads): jax's per-primitive sharding rules for explicit sharding, keyed by mlax op name, with
jax's ShardingTypeError and words where jax's rule finds the result ambiguous.

Families, registered next to each other: elementwise (jax's broadcasting rule, for every op
whose factor rule in `mlax-partition`'s table is the elementwise one), shape ops
(broadcast_in_dim, transpose, reshape, rev), reductions and products (dot_general,
convolutions), slicing/padding/windows (a split dimension must stay divisible), concatenation
and dynamic_update_slice (operands split alike), ops along one dimension (whole there),
creation, gather and scatter, linear algebra (batch dimensions may be split). `UNTYPED` names
the ops with no rule and why; tests/frontend/test_explicit_sharding.py checks that every op of
the dialect is in exactly one of RULES and UNTYPED.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from jax.sharding import PartitionSpec

from mlax.jax_private import ShardingTypeError
from mlax.passes.partition.rules import RULES as FACTOR_RULES
from mlax.passes.partition.rules import elementwise
from mlax.sharding_specs import Call, Rule, Shape, Spec, entries, replicated, rule


def _entry_text(axes: tuple[str, ...]) -> str:
    return "None" if not axes else axes[0] if len(axes) == 1 else str(axes)


# --- elementwise: jax's broadcasting rule -----------------------------------------------------


def _jax_name(call: Call) -> str:
    if call.name == "compare":
        return str(call.attrs.get("comparison_direction", "compare")).lower()
    return {"select": "select_n", "convert": "convert_element_type"}.get(call.name, call.name)


def broadcasting(call: Call) -> list[Spec]:
    """Per dimension the operands' axes must agree, where they name any (a size-1 dimension
    without axes never counts); rank-0 operands (a select's predicate) have no say."""
    ranked = [o for o in call.operands if o.shape]
    shape = call.shapes[0]
    if not ranked:
        return [((),) * len(s) for s in call.shapes]
    out: list[tuple[str, ...]] = []
    for d in range(len(shape)):
        specs = [o.spec[d] for o in ranked]
        if all(s == specs[0] for s in specs):
            out.append(specs[0])
            continue
        chosen: tuple[str, ...] = ()
        for o, s in zip(ranked, specs, strict=True):
            if not s and o.shape[d] == 1:
                continue
            if not chosen and s:
                chosen = s
            elif chosen and s and s != chosen:
                raise ShardingTypeError(
                    f"{_jax_name(call)} got incompatible shardings for broadcasting: "
                    + ", ".join(str(entries(o.spec)) for o in ranked) + ".")
        out.append(chosen)
    return [tuple(out)] * len(call.shapes)


def _elementwise_ops() -> list[str]:
    return [name for name, fn in FACTOR_RULES.items() if fn is elementwise]


rule(*_elementwise_ops(), "bitcast_convert", "sharding_constraint")(broadcasting)


# --- shape ops ----------------------------------------------------------------------------------


@rule("broadcast_in_dim")
def _broadcast_in_dim(call: Call) -> list[Spec]:
    (operand,), (shape,) = call.operands, call.shapes
    spec = [()] * len(shape)
    for axes, d in zip(operand.spec, call.attrs["broadcast_dimensions"], strict=True):
        spec[d] = axes
    return [tuple(spec)]


@rule("transpose")
def _transpose(call: Call) -> list[Spec]:
    (operand,) = call.operands
    return [tuple(operand.spec[d] for d in call.attrs["permutation"])]


def _reshape_error(call: Call) -> ShardingTypeError:
    (operand,), (shape,) = call.operands, call.shapes
    return ShardingTypeError("This reshape is not supported. Please specify the sharding of the output via "
                             "the `out_sharding` argument of jax.lax.reshape. Got operand type: "
                             f"{operand.text()}, new sizes: {tuple(shape)}")


def _one_group(small: Shape, big: Shape) -> tuple[int, int] | None:
    """(i, k) where ``big`` is ``small`` with dimension i split into k consecutive dimensions
    (their product), the others equal; None if it is not."""
    k = len(big) - len(small) + 1
    if k < 2:
        return None
    for i in range(len(small)):
        if small[:i] == big[:i] and small[i + 1:] == big[i + k:] and math.prod(big[i:i + k]) == small[i]:
            return i, k
    return None


def _split_axes(call: Call, axes: Sequence[str], sizes: Sequence[int]) -> list[tuple[str, ...]]:
    """Axes of one dimension handed, major first, to the dimensions of ``sizes`` it becomes:
    each takes axes while they divide what is left of it (jax's split_partitions)."""
    rest = list(axes)
    out = []
    for size in sizes:
        taken: list[str] = []
        while size > 1 and rest:
            size, remainder = divmod(size, call.axis_size([rest[0]]))
            if remainder:
                raise _reshape_error(call)
            taken.append(rest.pop(0))
        out.append(tuple(taken))
    if rest:
        raise _reshape_error(call)
    return out


@rule("reshape")
def _reshape(call: Call) -> list[Spec]:
    """jax's: unit dimensions come and go freely; otherwise one dimension may split (its axes
    go to the parts major first) or consecutive ones merge (their axes, unsharded ones only
    after sharded ones); anything else needs ``out_sharding``."""
    (operand,), (shape,) = call.operands, call.shapes
    if not any(operand.spec):
        return [((),) * len(shape)]
    if [n for n in operand.shape if n != 1] == [n for n in shape if n != 1]:
        kept = iter(s for n, s in zip(operand.shape, operand.spec, strict=True) if n != 1)
        return [tuple(() if n == 1 else next(kept) for n in shape)]
    split = _one_group(tuple(operand.shape), tuple(shape))
    if split is not None:
        i, k = split
        parts = _split_axes(call, operand.spec[i], shape[i:i + k])
        return [operand.spec[:i] + tuple(parts) + operand.spec[i + 1:]]
    merge = _one_group(tuple(shape), tuple(operand.shape))
    if merge is not None:
        i, k = merge
        group = list(operand.spec[i:i + k])
        while group and not group[-1]:
            group.pop()
        if any(not axes for axes in group):
            raise _reshape_error(call)
        axes = [a for dim in group for a in dim]
        merged = tuple(_split_axes(call, axes, [shape[i]])[0]) if axes else ()
        return [operand.spec[:i] + (merged,) + operand.spec[i + k:]]
    raise _reshape_error(call)


@rule("rev")
def _same(call: Call) -> list[Spec]:
    return [call.operands[0].spec]


# --- reductions and products -----------------------------------------------------------------------


@rule("reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or", "argmax", "argmin")
def _reduction(call: Call) -> list[Spec]:
    """The reduced dimensions go, sharded or not (a sharded one is completed by the compiler)."""
    (operand,) = call.operands
    reduced = set(call.attrs["dimensions"]) if "dimensions" in call.attrs else {call.attrs["axis"]}
    return [tuple(s for d, s in enumerate(operand.spec) if d not in reduced)]


def _check_match(lhs: Sequence[tuple[str, ...]], rhs: Sequence[tuple[str, ...]], message: str) -> None:
    if any(a and b and a != b for a, b in zip(lhs, rhs, strict=True)):
        raise ShardingTypeError(message)


def _spec_tuple(specs: Sequence[tuple[str, ...]]) -> str:
    return str(entries(tuple(specs)))


@rule("dot_general")
def _dot_general(call: Call) -> list[Spec]:
    """jax's: batch dimensions and contracting dimensions must agree where both are split; two
    split contracting dimensions leave the result's sharding to ``out_sharding``. The result is
    batch, lhs free, rhs free dimensions, each with its operand's axes."""
    lhs, rhs = call.operands
    a = call.attrs
    lc, rc = a["lhs_contracting_dimensions"], a["rhs_contracting_dimensions"]
    lb, rb = a["lhs_batch_dimensions"], a["rhs_batch_dimensions"]
    lcs, rcs = [lhs.spec[i] for i in lc], [rhs.spec[i] for i in rc]
    lbs, rbs = [lhs.spec[i] for i in lb], [rhs.spec[i] for i in rb]
    _check_match(lbs, rbs, "dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
                 f"consistent sharding, got {_spec_tuple(lbs)} and {_spec_tuple(rbs)}.")
    _check_match(lcs, rcs, "dot_general requires contracting dimensions to have consistent sharding, got "
                 f"{_spec_tuple(lcs)} and {_spec_tuple(rcs)}.")
    if any(x and y for x, y in zip(lcs, rcs, strict=True)):
        raise ShardingTypeError("Contracting dimensions are sharded and it is ambiguous how the output "
                                "should be sharded. Please specify the output sharding via the "
                                f"`out_sharding` parameter. Got lhs_contracting_spec={_spec_tuple(lcs)} and "
                                f"rhs_contracting_spec={_spec_tuple(rcs)}")
    lhs_free = [s for d, s in enumerate(lhs.spec) if d not in set(lc) | set(lb)]
    rhs_free = [s for d, s in enumerate(rhs.spec) if d not in set(rc) | set(rb)]
    return [tuple(lbs + lhs_free + rhs_free)]


@rule("conv_general_dilated")
def _conv(call: Call) -> list[Spec]:
    """jax's: only with a replicated kernel and an unsplit input feature dimension, and then
    the input's sharding (spatial dimensions as a slice's)."""
    lhs, rhs = call.operands
    if any(rhs.spec) or lhs.spec[call.attrs["lhs_spec"][1]]:
        raise ShardingTypeError("Please specify the output sharding via `out_sharding` parameter of "
                                "`conv_general_dilated`")
    _check_varying(call, "conv_general_dilated")
    return [lhs.spec]


# --- slicing, padding, windows, concatenation ----------------------------------------------------


def _check_varying(call: Call, name: str) -> None:
    """jax's check for ops whose result dimension differs from the operand's: a split one must
    stay divisible by its axes."""
    operand, shape = call.operands[0], call.shapes[0]
    for n, out, axes in zip(operand.shape, shape, operand.spec, strict=True):
        if n != out and axes and out % call.axis_size(axes):
            raise ShardingTypeError(
                f"{name} on sharded dims where out dim ({out}) is not divisible by mesh axes "
                f"({call.axis_size(axes)}) with spec ({_entry_text(axes)}) is not implemented. Got input "
                f"type={operand.text(short_dtypes=True)} and output shape={tuple(shape)}")


def _varying(name: str) -> Rule:
    def typed(call: Call) -> list[Spec]:
        _check_varying(call, name)
        return [call.operands[0].spec]
    return typed


rule("slice")(_varying("slicing"))
rule("dynamic_slice")(_varying("dynamic_slice"))
rule("pad")(_varying("padding"))
rule("reduce_window_sum", "reduce_window_max", "reduce_window_min")(_varying("reduce_window"))


@rule("dynamic_update_slice")
def _dynamic_update_slice(call: Call) -> list[Spec]:
    operand, update = call.operands[:2]
    if operand.spec != update.spec:
        raise ShardingTypeError(
            "dynamic_update_slice operand sharding must be equal to update sharding, got operand sharding "
            f"{operand.text(mesh_axis_types=True)} and update sharding {update.text(mesh_axis_types=True)}.")
    return [operand.spec]


@rule("concatenate")
def _concatenate(call: Call) -> list[Spec]:
    typed = [o for o in call.operands if o.sharding is not None]
    if any(o.spec != typed[0].spec for o in typed):
        shardings = ", ".join(str(o.sharding) for o in call.operands)
        raise ShardingTypeError(f"All operands should have the same sharding. Got shardings {shardings}")
    return [typed[0].spec if typed else ((),) * len(call.shapes[0])]


# --- ops along one dimension ----------------------------------------------------------------------


@rule("cumsum", "cumprod", "cummax", "cummin")
def _cumulative(call: Call) -> list[Spec]:
    (operand,), axis = call.operands, call.attrs["axis"]
    if operand.spec[axis]:
        raise ShardingTypeError(f"Input should be unsharded over the axis being reduced. Got input "
                                f"type={operand.text()} and axis={axis}")
    return [operand.spec]


@rule("sort_permutation", "apply_permutation")
def _sort(call: Call) -> list[Spec]:
    dimension = call.attrs["dimension"]
    operand = call.operands[0]
    for o in call.operands:
        if o.spec[dimension]:
            raise ShardingTypeError("Arguments to sort must be unsharded over the sorting dimension. Got arg "
                                    f"sharding={o.sharding} and sorting dimension={dimension}")
    return [operand.spec]


@rule("top_k")
def _top_k(call: Call) -> list[Spec]:
    (operand,) = call.operands
    axis = len(operand.shape) - 1
    if operand.spec[axis]:
        raise ShardingTypeError("The input should be unsharded over the axis along which to compute the "
                                f"top_k values. Got input type={operand.text()} and axis={axis}")
    return [operand.spec, operand.spec]


@rule("iota", "constant")
def _made(call: Call) -> list[Spec]:
    return replicated(call)


# --- gather and scatter ------------------------------------------------------------------------------


@rule("gather")
def _gather(call: Call) -> list[Spec]:
    """jax's: indexed operand dimensions must be whole (or taken whole), batching dimensions
    agree, and the indices are split only along their batching dimensions; the result takes
    the operand's axes on offset dimensions and the indices' on the others."""
    operand, indices = call.operands
    a = call.attrs
    out_rank = len(call.shapes[0])
    if not any(operand.spec) and not any(indices.spec):
        return replicated(call)
    index_spec = list(indices.spec)
    batching = list(zip(a["operand_batching_dims"], a["start_indices_batching_dims"], strict=True))
    ok = (all(a["slice_sizes"][i] == operand.shape[i] or not operand.spec[i] for i in a["start_index_map"])
          and all(not operand.spec[o] or not index_spec[i] or operand.spec[o] == index_spec[i]
                  for o, i in batching)
          and all(not s for i, s in enumerate(index_spec) if i not in a["start_indices_batching_dims"]))
    if not ok:
        raise ShardingTypeError(
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather indexing as "
            "out sharding could not be resolved unambiguously (or would require collectives on inputs). Got "
            f"operand={operand.text()}, indices={indices.text()}")
    for o, i in batching:
        index_spec[i] = index_spec[i] or operand.spec[o]
    window = iter(d for d in range(len(operand.shape))
                  if d not in a["collapsed_slice_dims"] and d not in a["operand_batching_dims"])
    batch = iter(s for d, s in enumerate(index_spec) if d != a["index_vector_dim"])
    offset = set(a["offset_dims"])
    return [tuple(operand.spec[next(window)] if d in offset else next(batch) for d in range(out_rank))]


@rule("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max")
def _scatter(call: Call) -> list[Spec]:
    """A simplification of jax's: replicated indices, an operand split only along window
    dimensions it is updated whole in, and updates split alike."""
    operand, indices, updates = call.operands
    a = call.attrs
    if not any(o for x in call.operands for o in x.spec):
        return replicated(call)
    scattered = set(a["scatter_dims_to_operand_dims"]) | set(a["inserted_window_dims"])
    window = [d for d in range(len(operand.shape))
              if d not in a["inserted_window_dims"] and d not in a["input_batching_dims"]]
    updated = dict(zip(window, a["update_window_dims"], strict=True))
    inverse = {u: d for d, u in updated.items()}
    ok = not any(indices.spec) and all(
        not operand.spec[d] or (d not in scattered and d in updated
                                and updates.shape[updated[d]] == operand.shape[d])
        for d in range(len(operand.shape)))
    ok = ok and all(not s or (u in inverse and operand.spec[inverse[u]] == s)
                    for u, s in enumerate(updates.spec))
    if not ok:
        raise ShardingTypeError(
            "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for the scatter "
            "update as out sharding could not be resolved unambiguously (or would require collectives on "
            "inputs). Got "
            f"operand={operand.text()}, indices={indices.text()}, updates={updates.text()}")
    return [operand.spec]


# --- linear algebra: batch dimensions may be split, the matrices must be whole -------------------


@rule("cholesky", "eig", "eigh", "geqp3", "geqrf", "hessenberg", "householder_product", "lu", "ormqr", "qr",
      "schur", "svd", "tridiagonal")
def _linalg(call: Call) -> list[Spec]:
    """jax's linalg rule: every operand has the first operand's batch dimensions (all but its
    last two), split alike; the rest must be whole; results keep the batch split."""
    batch = len(call.operands[0].shape) - 2
    specs = []
    for i, o in enumerate(call.operands):
        if any(o.spec[batch:]):
            raise ShardingTypeError(f"Input {i} to {call.name} must be unsharded on non-batch dimensions, "
                                    f"but got {PartitionSpec(*entries(o.spec))}.")
        specs.append(o.spec[:batch])
    if any(s != specs[0] for s in specs[1:]):
        raise ShardingTypeError(f"All inputs to {call.name} must have the same batch sharding, but got "
                                f"{[entries(s) for s in specs]}.")
    return [specs[0] + ((),) * (len(shape) - batch) for shape in call.shapes]


@rule("triangular_solve")
def _triangular_solve(call: Call) -> list[Spec]:
    """jax's: batch dimensions split alike, the contracting dimension of each operand whole;
    the result takes ``a``'s free dimension and ``b``'s."""
    a, b = call.operands
    left, transpose = bool(call.attrs["left_side"]), bool(call.attrs["transpose_a"])
    batch, a_spec, b_spec = a.spec[:-2], a.spec[-2:], b.spec[-2:]
    if batch != b.spec[:-2]:
        raise ShardingTypeError("All inputs to triangular_solve must have the same batch sharding, but got "
                                f"{entries(batch)} and {entries(b.spec[:-2])}.")
    for name, o, whole in (("a", a, a_spec[left ^ transpose]), ("b", b, b_spec[not left])):
        if whole:
            raise ShardingTypeError(f"triangular solve input `{name}` must be unsharded on the contracting "
                                    f"axis, but got {PartitionSpec(*entries(o.spec))} with left_side={left} "
                                    f"and transpose_a={transpose}.")
    out = (a_spec[transpose], b_spec[1]) if left else (b_spec[0], a_spec[not transpose])
    return [batch + out]


# Ops with no type rule, and why: with split operands they raise jax's "not implemented" error.
UNTYPED = {
    **{name: "a collective runs in a shard_map body, whose values are local (its mesh's axes are Manual)"
       for name in ("all_gather", "all_to_all", "axis_index", "pmax", "pmin", "ppermute", "psum",
                    "psum_scatter")},
    "fft": "jax has no sharding rule for its fft either",
}
