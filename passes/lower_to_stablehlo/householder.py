"""Rules for geqrf, geqp3, householder_product, ormqr, hessenberg and tridiagonal: jax's CPU lowerings,
custom calls of jaxlib's `lapack_?geqrf_ffi`, `lapack_?geqp3_ffi`, `lapack_?orgqr_ffi` /
`lapack_?ungqr_ffi`, `lapack_?ormqr_ffi` / `lapack_?unmqr_ffi` (bool attributes `left`,
`transpose`), `lapack_?gehrd_ffi` (attributes `low = 1`, `high = n`, i32) and
`lapack_?sytrd_ffi` / `lapack_?hetrd_ffi` (`uplo`).

As jax, hessenberg and tridiagonal make every result of a matrix whose `info != 0` NaN; geqrf, geqp3,
the Householder product and ormqr return the call's results as they are. The attributes and layouts
are lapack_calls.py's `lapack_call` (gehrd's are i32 integers). Empty matrices make no call
(geqrf's taus are then empty too, or zeros of an empty batch).
"""

from __future__ import annotations

from mlir import ir

from mlax.passes.lower_to_stablehlo.common import Rule, bool_attr, compare, splat, tensor_type
from mlax.passes.lower_to_stablehlo.lapack_calls import info_type, lapack_call, nan_unless


def _complex(x: ir.Value) -> bool:
    return isinstance(tensor_type(x).element_type, ir.ComplexType)


def _replace_rest(op: ir.Operation, values: list[ir.Value]) -> ir.Value:
    for result, replacement in zip(op.results[1:], values[1:], strict=True):
        result.replace_all_uses_with(replacement)
    return values[0]


def _checked(op: ir.Operation, values: list[ir.Value]) -> ir.Value:
    """jax's selects: the results (``values`` then ``info``) NaN for a matrix where info != 0."""
    *results, info = values
    ok = compare(info, splat(0, info.type), "EQ")
    return _replace_rest(op, [nan_unless(ok, v) for v in results])


def _geqrf(op: ir.Operation) -> ir.Value:
    (x,) = op.operands
    taus_type = op.results[1].type
    if 0 in tensor_type(x).shape:
        return _replace_rest(op, [x, splat(0, taus_type)])
    return _replace_rest(op, lapack_call("geqrf", [x], [x.type, taus_type], [True, False]))


def _geqp3(op: ir.Operation) -> ir.Value:
    a, pivots = op.operands
    taus_type = op.results[2].type
    if 0 in tensor_type(a).shape:
        return _replace_rest(op, [a, pivots, splat(0, taus_type)])
    results = lapack_call("geqp3", [a, pivots], [a.type, pivots.type, taus_type], [True, False, False],
                          matrix_operands=[True, False])
    return _replace_rest(op, results)


def _householder_product(op: ir.Operation) -> ir.Value:
    a, taus = op.operands
    if 0 in tensor_type(a).shape:
        return a
    (q,) = lapack_call("ungqr" if _complex(a) else "orgqr", [a, taus], [a.type], [True],
                       matrix_operands=[True, False])
    return q


def _ormqr(op: ir.Operation) -> ir.Value:
    """jax's `lapack_?ormqr_ffi` / `lapack_?unmqr_ffi` call, whose `left` and `transpose` are bool
    attributes (lapack_call writes the character ones)."""
    a, taus, c = op.operands
    if 0 in tensor_type(c).shape or 0 in tensor_type(taus).shape:
        return c
    (product,) = lapack_call("unmqr" if _complex(a) else "ormqr", [a, taus, c], [c.type], [True],
                             matrix_operands=[True, False, True])
    flags = {name: str(bool_attr(op, name)).lower() for name in ("left", "transpose")}
    product.owner.attributes["mhlo.backend_config"] = ir.Attribute.parse(
        "{" + ", ".join(f"{name} = {value}" for name, value in flags.items()) + "}")
    return product


def _hessenberg(op: ir.Operation) -> ir.Value:
    (x,) = op.operands
    n = tensor_type(x).shape[-1]
    values = lapack_call("gehrd", [x], [x.type, op.results[1].type, info_type(x)], [True, False, False],
                         integers={"low": 1, "high": n})
    return _checked(op, values)


def _tridiagonal(op: ir.Operation) -> ir.Value:
    (x,) = op.operands
    types = [r.type for r in op.results]
    values = lapack_call("hetrd" if _complex(x) else "sytrd", [x], [*types, info_type(x)],
                         [True, False, False, False, False], uplo="L" if bool_attr(op, "lower") else "U")
    return _checked(op, values)


RULES: dict[str, Rule] = {"geqrf": _geqrf, "geqp3": _geqp3, "householder_product": _householder_product,
                          "ormqr": _ormqr, "hessenberg": _hessenberg, "tridiagonal": _tridiagonal}
