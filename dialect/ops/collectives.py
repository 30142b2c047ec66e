"""Collective ops: psum, pmax, pmin, all_gather, psum_scatter, all_to_all, ppermute, axis_index.

Collectives communicate between the instances of a program that run side by side along
named axes: the lanes of a `vmap(axis_name=...)` or the devices of a `shard_map` (mesh
axes). `axes` names those axes in the order the user gave them; over several axes an
instance's index is the linearized one, the first axis major. Only the TILED forms are ops
(jax's untiled all_gather / psum_scatter / all_to_all are a reshape around them, made by the
front end), and the ops that change a shape store `axis_size` (the product of the sizes of
`axes`) so that each op's type is inferable from the op alone.

An op does not see what binds its axes, so it has no reference semantics of its own: the
interpreter only meets collectives after `mlax-batch` (vmap lanes) or
`mlax-simulate-devices` (shard_map devices) has resolved them into ordinary ops, and the
reference rule says so. `mlax-lower-to-stablehlo` lowers them to StableHLO collectives with
replica groups from the module's `mlax.mesh`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mlax.dialect.ops.common import is_numeric, op_value_error, require_dtype
from mlax.dialect.registry import define_op
from mlax.dialect.tensor_spec import TensorSpec

# Each all-reduce and the reduce_* monoid it applies across instances.
REDUCE_KIND = {"psum": "sum", "pmax": "max", "pmin": "min"}
REDUCTIONS = tuple(REDUCE_KIND)
COLLECTIVES = (*REDUCTIONS, "all_gather", "psum_scatter", "all_to_all", "ppermute", "axis_index")


def check_axes(op: str, axes: Sequence[str]) -> tuple[str, ...]:
    """``axes`` as a tuple: at least one name, each at most once."""
    axes = tuple(str(a) for a in axes)
    if not axes:
        raise op_value_error(op, "axes must name at least one axis")
    repeated = sorted({a for a in axes if axes.count(a) > 1})
    if repeated:
        raise op_value_error(op, f"axes {list(axes)} name axis '{repeated[0]}' more than once")
    return axes


def _check_size(op: str, axis_size: int) -> None:
    if axis_size < 1:
        raise op_value_error(op, f"axis_size must be at least 1, got {axis_size}")


def _check_dimension(op: str, what: str, dimension: int, x: TensorSpec) -> None:
    if not 0 <= dimension < x.ndim:
        raise op_value_error(op, f"{what} {dimension} out of range for operand rank {x.ndim} "
                                 "(dimensions are 0 .. rank-1)")


def _check_divides(op: str, what: str, dimension: int, x: TensorSpec, axis_size: int) -> None:
    if x.shape[dimension] % axis_size:
        raise op_value_error(op, f"{what} {dimension} of operand shape {x.shape} has size "
                                 f"{x.shape[dimension]}, which axis_size {axis_size} does not divide")


def _with_dim(shape: tuple[int, ...], dimension: int, size: int) -> tuple[int, ...]:
    return (*shape[:dimension], size, *shape[dimension + 1:])


def _unresolved(name: str) -> Any:
    def reference(*operands: np.ndarray, axes: Sequence[str], **attrs: Any) -> np.ndarray:
        raise NameError(
            f"mlax.{name}: unbound axis name: {axes[0]} (a collective needs its named axes bound: it runs "
            "under vmap(axis_name=...) or shard_map, whose mlax-batch / mlax-simulate-devices passes "
            "resolve it before the interpreter runs)")

    return reference


_NAMED = """
`axes` are named axes (vmap axis names, or mesh axes in a shard_map body), at least one,
each at most once; over several axes an instance's index is the linearized one, the first
axis major."""

# --- all-reduce ----------------------------------------------------------------------------------

_REDUCE_DOC = {
    "psum": ("sum", "numeric (the front end converts booleans to int32, as jax)"),
    "pmax": ("maximum", "any"),
    "pmin": ("minimum", "any"),
}


def _define_reduction(name: str) -> None:
    noun, accepts = _REDUCE_DOC[name]

    def infer(x: TensorSpec, *, axes: Sequence[str]) -> TensorSpec:
        check_axes(name, axes)
        if name == "psum":
            require_dtype(name, x, is_numeric, "numeric")
        return x

    define_op(
        name, "(operand: T) -> (result: T)",
        attributes={"axes": "strs"},
        infer=infer, reference=_unresolved(name), weak_type="first", complex=True,
        summary=f"All-reduce: the elementwise {noun} of `operand` over every instance along `axes`.",
        description=f"""
Every instance gets the same result, of the operand's type. Element type: {accepts}.{_NAMED}
""",
    )


for _name in REDUCTIONS:
    _define_reduction(_name)


# --- all_gather / psum_scatter -------------------------------------------------------------------


def _infer_all_gather(x: TensorSpec, *, axes: Sequence[str], dimension: int, axis_size: int) -> TensorSpec:
    check_axes("all_gather", axes)
    _check_size("all_gather", axis_size)
    _check_dimension("all_gather", "dimension", dimension, x)
    return TensorSpec(_with_dim(x.shape, dimension, x.shape[dimension] * axis_size), x.dtype)


define_op(
    "all_gather", "(operand: T) -> (result: U)",
    complex=True,
    attributes={"axes": "strs", "dimension": "i64", "axis_size": "i64"},
    infer=_infer_all_gather, reference=_unresolved("all_gather"), weak_type="first",
    summary="Tiled all-gather: the operands of every instance along `axes`, concatenated along `dimension`.",
    description=f"""
`dimension` (in `0 .. rank-1`) of the result is `axis_size` times the operand's: block `j`
is the operand of instance `j`. `axis_size` is the product of the sizes of `axes`.{_NAMED}
""",
)


def _infer_psum_scatter(x: TensorSpec, *, axes: Sequence[str], dimension: int, axis_size: int) -> TensorSpec:
    check_axes("psum_scatter", axes)
    _check_size("psum_scatter", axis_size)
    _check_dimension("psum_scatter", "dimension", dimension, x)
    require_dtype("psum_scatter", x, is_numeric, "numeric")
    _check_divides("psum_scatter", "dimension", dimension, x, axis_size)
    return TensorSpec(_with_dim(x.shape, dimension, x.shape[dimension] // axis_size), x.dtype)


define_op(
    "psum_scatter", "(operand: T) -> (result: U)",
    complex=True,
    attributes={"axes": "strs", "dimension": "i64", "axis_size": "i64"},
    infer=_infer_psum_scatter, reference=_unresolved("psum_scatter"), weak_type="first",
    summary="Tiled reduce-scatter: block `j` along `dimension` of the sum over `axes` goes to instance `j`.",
    description=f"""
`axis_size` (the product of the sizes of `axes`) must divide `dimension` of the operand;
the result's `dimension` is that size divided by `axis_size`. Element type: numeric.{_NAMED}
""",
)


# --- all_to_all ----------------------------------------------------------------------------------


def _infer_all_to_all(x: TensorSpec, *, axes: Sequence[str], split_dimension: int, concat_dimension: int,
                      axis_size: int) -> TensorSpec:
    check_axes("all_to_all", axes)
    _check_size("all_to_all", axis_size)
    _check_dimension("all_to_all", "split_dimension", split_dimension, x)
    _check_dimension("all_to_all", "concat_dimension", concat_dimension, x)
    _check_divides("all_to_all", "split_dimension", split_dimension, x, axis_size)
    shape = _with_dim(x.shape, split_dimension, x.shape[split_dimension] // axis_size)
    return TensorSpec(_with_dim(shape, concat_dimension, shape[concat_dimension] * axis_size), x.dtype)


define_op(
    "all_to_all", "(operand: T) -> (result: U)",
    complex=True,
    attributes={"axes": "strs", "split_dimension": "i64", "concat_dimension": "i64", "axis_size": "i64"},
    infer=_infer_all_to_all, reference=_unresolved("all_to_all"), weak_type="first",
    summary="Tiled all-to-all: block `j` of `split_dimension` goes to instance `j`; received blocks are "
            "concatenated along `concat_dimension` in source order.",
    description=f"""
`axis_size` (the product of the sizes of `axes`) must divide `split_dimension`, which the
result divides by it; `concat_dimension` is multiplied by it (the two may be equal). This is
jax's tiled `all_to_all`.{_NAMED}
""",
)


# --- ppermute ------------------------------------------------------------------------------------


def pairs_of(flat: Sequence[int]) -> list[tuple[int, int]]:
    """The (source, destination) pairs of a flattened ``pairs`` attribute."""
    flat = [int(v) for v in flat]
    return list(zip(flat[0::2], flat[1::2], strict=True))


def _infer_ppermute(x: TensorSpec, *, axes: Sequence[str], pairs: Sequence[int]) -> TensorSpec:
    check_axes("ppermute", axes)
    if len(pairs) % 2:
        raise op_value_error("ppermute", f"pairs must be flattened (source, destination) pairs, got "
                                         f"{len(pairs)} values")
    found = pairs_of(pairs)
    if any(s < 0 or d < 0 for s, d in found):
        raise op_value_error("ppermute", f"pairs {found} have a negative index")
    for what, ends in (("sources", [s for s, _ in found]), ("destinations", [d for _, d in found])):
        if len(set(ends)) != len(ends):
            raise op_value_error("ppermute", f"ppermute {what} must be unique, got pairs {found}")
    return x


define_op(
    "ppermute", "(operand: T) -> (result: T)",
    complex=True,
    attributes={"axes": "strs", "pairs": "i64s"},
    infer=_infer_ppermute, reference=_unresolved("ppermute"), weak_type="first",
    summary="Collective permute: instance `source` sends its operand to `destination`, for each pair.",
    description=f"""
`pairs` holds (source, destination) pairs, flattened; each source and each destination
appears at most once, and indices are instance indices along `axes` (below the product of
their sizes). An instance no pair sends to gets zeros. The result has the operand's
type.{_NAMED}
""",
)


# --- axis_index ----------------------------------------------------------------------------------


def _infer_axis_index(*, axes: Sequence[str], axis_size: int) -> TensorSpec:
    check_axes("axis_index", axes)
    _check_size("axis_index", axis_size)
    return TensorSpec((), np.dtype(np.int32))


define_op(
    "axis_index", "() -> (result: T)",
    attributes={"axes": "strs", "axis_size": "i64"},
    infer=_infer_axis_index, reference=_unresolved("axis_index"), weak_type="never",
    summary="This instance's index along `axes` (linearized, the first axis major), as an i32 scalar.",
    description=f"""
The result is `tensor<i32>`, in `0 .. axis_size-1`; `axis_size` is the product of the
sizes of `axes`.{_NAMED}
""",
)

