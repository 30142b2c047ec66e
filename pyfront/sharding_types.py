"""Sharding in types (jax's explicit sharding): the sharding each abstract value carries, and
the rule per mlax op that gives its results theirs.

An Aval's ``sharding`` is jax's own object, the one ``jax.typeof(x).sharding`` shows: a
NamedSharding over an AbstractMesh with one spec entry per dimension naming only the
*Explicit* mesh axes that split it (Auto axes are the compiler's to choose, so types never
name them); None stands for jax's empty mesh. core.bind asks `result_avals` for its results'
types whenever an operand is typed or a context mesh is set. Where jax's rule finds the result
ambiguous (a product contracting two sharded dimensions, a reshape moving a split, a
concatenation of differently sharded operands) it raises jax's ShardingTypeError, with jax's
words, and ``out_sharding=`` or ``jax.reshard`` resolves it.

Types never change a value (mlax traces global programs): they reach the partitioner where
jax's do, as a jit's result specs and the constraints ``reshard``/``out_sharding=`` emit. The
rules (pyfront/sharding_type_rules.py, registered into `RULES` on import, written against
mlax.sharding_specs) are jax's per-primitive ones keyed by mlax op name.

Inside a shard_map body traced with ``check_vma``, an Aval's ``vma`` is the set of manual mesh
axes its value varies over (jax's ``typeof(x).manual_axis_type.varying``): the axes its
argument's spec splits, the union of an op's operands', less the axes of an all-reduce
(psum/pmax/pmin), plus those of the collectives whose results vary (all_gather, psum_scatter,
all_to_all, ppermute, axis_index) and of ``pcast(..., to="varying")``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from jax.sharding import AbstractMesh

import mlax.sharding_type_rules  # noqa: F401 (registers the rules in RULES)
from mlax.jax_private import ShardingTypeError
from mlax.sharding import CONTEXT
from mlax.sharding_specs import (
    RULES,
    Call,
    Operand,
    Rule,
    Spec,
    aval_text,
    entries,
    explicit,
    manual,
    named,
    of_buffer,
    replicated,
    rule,
    spec_of,
)

# --- typing one op --------------------------------------------------------------------------------


class _Lenient(threading.local):
    def __init__(self) -> None:
        self.depth = 0


_LENIENT = _Lenient()


@contextmanager
def lenient() -> Iterator[None]:
    """While an op with ``out_sharding=`` is built: an ambiguous result is typed replicated
    instead of raising, since the given sharding decides it (jax hands it to the primitive)."""
    _LENIENT.depth += 1
    try:
        yield
    finally:
        _LENIENT.depth -= 1


_CREATES = frozenset({"broadcast_in_dim", "iota", "constant"})  # typed on the context mesh (jax's)


def _operand_mesh(avals: Sequence[Any]) -> AbstractMesh | None:
    mesh = None
    for a in avals:
        s = a.sharding
        if s is None:
            continue
        if mesh is not None and s.mesh != mesh:
            raise ShardingTypeError(f"Mesh for all inputs should be equal. Got one mesh: {mesh} and another "
                                    f"mesh: {s.mesh}")
        mesh = s.mesh
    return mesh


def _duplicates(call: Call, specs: list[Spec], out_avals: Sequence[Any]) -> None:
    for spec, aval in zip(specs, out_avals, strict=True):
        axes = [x for dim in spec for x in dim]
        if len(axes) != len(set(axes)):
            inputs = ", ".join(o.text(short_dtypes=True) for o in call.operands)
            dtype = aval_text((), aval.dtype, None, short_dtypes=True).removesuffix("[]")
            dims = ",".join(str(n) if not axes else f"{n}@{axes[0]}" if len(axes) == 1
                            else f"{n}@({','.join(axes)})" for n, axes in zip(aval.shape, spec, strict=True))
            out = f"{dtype}[{dims}]"  # not through NamedSharding: it refuses the repeated axis
            raise ShardingTypeError(f"{call.name} operation with inputs: {inputs} produces an illegally "
                                    f"sharded result: {out}")


# --- the axes a shard_map body's values vary over (jax's vma) ------------------------------------


class _Varying(threading.local):
    def __init__(self) -> None:
        self.checked: list[bool] = []  # per shard_map body being traced, innermost last: check_vma


_VARYING = _Varying()
# Collectives whose results are the same on every instance along their axes, and those whose
# results vary along them (jax makes their operand varying first); other ops: their operands'.
_INVARIANT_RESULTS = frozenset({"psum", "pmax", "pmin"})
_VARYING_RESULTS = frozenset({"all_gather", "psum_scatter", "all_to_all", "ppermute", "axis_index"})


@contextmanager
def vma_checked(checked: bool) -> Iterator[None]:
    """While a shard_map body traces: whether its values' types track the axes they vary over."""
    _VARYING.checked.append(checked)
    try:
        yield
    finally:
        _VARYING.checked.pop()


def tracking() -> bool:
    """Whether the values traced now track their varying axes (a body traced with check_vma)."""
    return bool(_VARYING.checked) and _VARYING.checked[-1]


def _vma(op_name: str, avals: Sequence[Any], attrs: dict[str, Any]) -> frozenset[str]:
    """jax's varying axes of an op's results in a checked shard_map body."""
    vma = frozenset().union(*(a.vma for a in avals))
    axes = frozenset(attrs.get("axes", ()))
    if op_name in _INVARIANT_RESULTS:
        return vma - axes
    if op_name in _VARYING_RESULTS:
        return vma | axes
    return vma


def made_varying(x: Any, axes: Sequence[str]) -> Any:
    """``x`` typed as varying over ``axes`` too (jax's pvary: the value is unchanged)."""
    from mlax.core import Tracer, abstractify, current_trace, is_array_like, known_of

    if not tracking():
        return x
    if not isinstance(x, Tracer):  # a constant (jax's pcast(0.0, ...)): a value of the body, varying
        trace = current_trace()
        if trace is None or not is_array_like(x):
            return x
        x = Tracer(trace, trace.value_of(x), abstractify(x), "result of mlax.lax.pcast", known_of(x))
    aval = x.aval
    if aval.sharding is None and CONTEXT.abstract is not None:
        aval = replace(aval, sharding=named(CONTEXT.abstract, ((),) * len(aval.shape)))
    return Tracer(x.trace, x.value, replace(aval, vma=aval.vma | frozenset(axes)), x.origin, x.known)


def varying_as(aval: Any, like: Any) -> Any:
    """``aval`` (a loop's or a vmap's result, a scanned slice) varying over the manual axes
    ``like`` (the body's result, the scanned array) varies over, inside a shard_map body traced
    with check_vma (jax types those results as their bodies'), with the body mesh's type
    sharding that carries them; ``aval`` itself elsewhere."""
    if not like.vma or like.sharding is None or not tracking():
        return aval
    return replace(aval, sharding=named(like.sharding.mesh, ((),) * len(aval.shape)), vma=like.vma)


def jax_type(aval: Any) -> Any:
    """An mlax abstract value as jax's ``ShapedArray``: its type sharding and varying axes too."""
    from jax.core import ShapedArray
    from jax.sharding import ManualAxisType

    if aval.sharding is None:
        return ShapedArray(aval.shape, aval.dtype, weak_type=aval.weak_type)
    if not aval.vma:
        return ShapedArray(aval.shape, aval.dtype, weak_type=aval.weak_type, sharding=aval.sharding)
    return ShapedArray(aval.shape, aval.dtype, weak_type=aval.weak_type, sharding=aval.sharding,
                       manual_axis_type=ManualAxisType(varying=frozenset(aval.vma)))


def result_avals(op_name: str, avals: Sequence[Any], out_avals: list[Any],
                 attrs: dict[str, Any]) -> list[Any]:
    """``out_avals`` with their type shardings (core.bind's hook; jax's call_sharding_rule):
    without an Explicit axis in sight the results are replicated on the operands' (else the
    context's) mesh; with one, the op's rule decides and may raise jax's ShardingTypeError."""
    context = CONTEXT.abstract
    if context is not None and manual(context):  # a shard_map body: local values, typed on its mesh
        vma = _vma(op_name, avals, attrs) if tracking() else frozenset()
        return [replace(a, sharding=named(context, ((),) * len(a.shape)), vma=vma) for a in out_avals]
    mesh = _operand_mesh(avals)
    if not explicit(mesh) and not explicit(context):
        where = mesh if mesh is not None else context
        if where is None:
            return out_avals
        return [replace(a, sharding=named(where, ((),) * len(a.shape))) for a in out_avals]
    rule_mesh = mesh if mesh is not None else context
    operands = tuple(Operand(a.shape, a.dtype, spec_of(a.sharding, len(a.shape)), a.sharding) for a in avals)
    call = Call(op_name, operands, tuple(a.shape for a in out_avals), attrs, rule_mesh)
    typed = RULES.get(op_name)
    try:
        if typed is not None:
            specs = typed(call)
        elif any(any(o.spec) for o in operands):
            raise ShardingTypeError(
                f"sharding rule for {op_name} is not implemented. Please file an issue at "
                "https://github.com/jax-ml/jax/issues. You can work around this error by dropping that "
                "operation into full auto sharding mode via: "
                "`jax.sharding.auto_axes(fun, out_shardings=...)`")
        else:
            specs = replicated(call)
    except ShardingTypeError:
        if not _LENIENT.depth:
            raise
        specs = replicated(call)
    _duplicates(call, specs, out_avals)
    result_mesh = mesh if mesh is not None else context if (op_name in _CREATES or not avals) else None
    if result_mesh is None:
        return out_avals
    return [replace(a, sharding=named(result_mesh, s)) for a, s in zip(out_avals, specs, strict=True)]

__all__ = ["RULES", "Call", "Operand", "Rule", "ShardingTypeError", "aval_text", "entries", "explicit",
           "jax_type", "lenient", "made_varying", "manual", "named", "of_buffer", "replicated",
           "result_avals", "rule", "spec_of", "tracking", "varying_as", "vma_checked"]
