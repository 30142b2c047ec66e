"""Batching calls of host callbacks: jax's rules for debug_callback and pure_callback.

Only a call with a batched operand gets here (one without is copied as it is, and is called
once, as in jax). Batched operands carry the batch at dimension 0.

- debug callbacks (and pure ones with ``vmap_method="sequential_unrolled"``): unrolled, one
  call per batch element on that element's slices (jax's ``debug_batching_rule``); a pure
  callback's results are stacked.
- ``"sequential"``: an `mlax.scan` over the batch whose body calls the callback on one
  element (jax's ``lax.map``).
- ``"expand_dims"`` / ``"broadcast_all"``: one call with the unbatched operands given a
  leading axis of 1 / of the batch size; ``"legacy_vectorized"``: one call, unbatched operands
  as they are. The callback must return the batched results: a new declaration of the same
  callback with the batched types.
- no vmap_method: jax's error.
- io callbacks: ``"sequential"`` (jax's ``lax.map``); an ordered one is jax's error.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir
from mlir.dialects import func

from mlax.dialect.callbacks import declare_callback, read_callback
from mlax.dialect.transforms import declare_transform
from mlax.passes.autodiff.emit import Emitter, spec
from mlax.passes.registry import PassFailure
from mlax.passes.symbols import define_function, unique_name

_METHODS_TEXT = "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or 'legacy_vectorized'"


def _call(
    name: str,
    results: Sequence[ir.Type],
    operands: Sequence[ir.Value],
    point: ir.InsertionPoint,
    location: ir.Location,
) -> list[ir.Value]:
    with location:
        return list(func.CallOp(list(results), name, list(operands), ip=point).results)


def _element(e: Emitter, value: ir.Value, i: int) -> ir.Value:
    """Row ``i`` of a batched value, without the batch dimension."""
    shape = spec(value).shape
    row = e(
        "slice",
        value,
        start_indices=(i, *[0] * (len(shape) - 1)),
        limit_indices=(i + 1, *shape[1:]),
        strides=(1,) * len(shape),
    )
    return e("reshape", row, shape=tuple(shape[1:]))


def _stack(e: Emitter, rows: list[ir.Value]) -> ir.Value:
    stacked = None
    for row in rows:
        row = e("reshape", row, shape=(1, *spec(row).shape))
        stacked = row if stacked is None else e("concatenate", stacked, row, dimension=0)
    return stacked


def _unrolled(
    e: Emitter, name: str, results: list[ir.Type], args: list[ir.Value], flags: list[bool], size: int
) -> list[ir.Value]:
    calls = [
        _call(
            name,
            results,
            [_element(e, a, i) if f else a for a, f in zip(args, flags, strict=True)],
            e.point,
            e.location,
        )
        for i in range(size)
    ]
    if size == 0:
        with e.location:  # building a type reports its errors at a location
            return [
                e.zeros(ir.RankedTensorType.get([0, *spec(t).shape], spec(t).to_mlir().element_type))
                for t in results
            ]
    return [_stack(e, [outs[k] for outs in calls]) for k in range(len(results))]


def _sequential(
    e: Emitter,
    module: ir.Operation,
    name: str,
    results: list[ir.Type],
    args: list[ir.Value],
    flags: list[bool],
    size: int,
) -> list[ir.Value]:
    """An mlax.scan over the batched operands (xs), the others passed as consts."""
    xs = [a for a, f in zip(args, flags, strict=True) if f]
    consts = [a for a, f in zip(args, flags, strict=True) if not f]
    row_types = [ir.RankedTensorType.get(list(spec(x).shape[1:]), spec(x).to_mlir().element_type) for x in xs]

    def body(point: ir.InsertionPoint, arguments: list[ir.Value]) -> list[ir.Value]:
        rows, rest = iter(arguments[: len(xs)]), iter(arguments[len(xs) :])
        return _call(name, results, [next(rows) if f else next(rest) for f in flags], point, e.location)

    step = define_function(
        module, f"{name}_sequential", [*row_types, *[c.type for c in consts]], e.location, body
    )
    with e.location:
        scan = declare_transform(
            module,
            "scan",
            unique_name(module, f"{name}_sequential_scan"),
            loc=e.location,
            body=step,
            length=size,
            reverse=False,
            num_carry=0,
            num_consts=len(consts),
        )
    stacked = list(ir.FunctionType(scan.type).results)
    return _call(
        ir.StringAttr(scan.attributes["sym_name"]).value, stacked, [*xs, *consts], e.point, e.location
    )


def _vectorized(
    e: Emitter,
    module: ir.Operation,
    declaration: ir.Operation,
    fields: dict,
    results: list[ir.Type],
    args: list[ir.Value],
    flags: list[bool],
    size: int,
) -> list[ir.Value]:
    method = fields["vmap_method"]
    operands = []
    for a, f in zip(args, flags, strict=True):
        if not f and method != "legacy_vectorized":
            shape = spec(a).shape
            count = size if method == "broadcast_all" else 1
            a = e(
                "broadcast_in_dim",
                a,
                shape=(count, *shape),
                broadcast_dimensions=tuple(range(1, len(shape) + 1)),
            )
        operands.append(a)
    batched = [
        ir.RankedTensorType.get([size, *spec(t).shape], spec(t).to_mlir().element_type) for t in results
    ]
    name = ir.StringAttr(declaration.attributes["sym_name"]).value
    with e.location:
        new = declare_callback(
            module,
            unique_name(module, f"{name}_{method}"),
            [o.type for o in operands],
            batched,
            id=fields["id"],
            kind=fields["kind"],
            ordered=fields["ordered"],
            callback_name=fields["name"],
            vmap_method=method,
            loc=e.location,
        )
    return _call(ir.StringAttr(new.attributes["sym_name"]).value, batched, operands, e.point, e.location)


def batch_callback(
    op: ir.Operation,
    declaration: ir.Operation,
    args: list[ir.Value],
    flags: list[bool],
    size: int,
    point: ir.InsertionPoint,
) -> tuple[list[ir.Value], list[bool]]:
    """The batched call of a callback declaration (see the module docstring)."""
    transform = read_callback(declaration)
    fields, name = transform.fields, transform.name
    results = [r.type for r in op.results]
    if not any(flags):
        return _call(name, results, args, point, op.location), [False] * len(results)
    e = Emitter(point, op.location)
    module = declaration.parent
    method = fields["vmap_method"]
    if fields["kind"] == "io":  # jax's io_callback_batching_rule: a lax.map, unless ordered
        if fields["ordered"]:
            raise PassFailure(
                f"mlax-batch: Cannot `vmap` ordered IO callback. (the callback {fields['name']}, @{name})",
                op.location,
            )
        method = "sequential"
    if method is None and fields["kind"] == "pure":
        raise PassFailure(
            f"mlax-batch: vmap is only supported for the pure_callback primitive when vmap_method "
            f"is one of {_METHODS_TEXT}. Got vmap_method=None. (the callback {fields['name']}, "
            f"@{name})",
            op.location,
        )
    with op.location:  # the types built below need one
        if fields["kind"] == "debug" or method == "sequential_unrolled":
            outs = _unrolled(e, name, results, args, flags, size)
        elif method == "sequential":
            outs = _sequential(e, module, name, results, args, flags, size)
        else:
            outs = _vectorized(e, module, declaration, fields, results, args, flags, size)
    return outs, [True] * len(results)
