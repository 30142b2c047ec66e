"""Rule for eig: jax's CPU lowering, the custom call of jaxlib's `lapack_?geev_ffi`.

The call (lapack_calls.py's `lapack_call`: typed FFI attributes, column-major matrices) takes
`compute_left` / `compute_right` ('V' or 'N') and returns the eigenvalues (for a real matrix
their real and imaginary parts), both eigenvector matrices (complex: jaxlib unpacks a real
geev's conjugate pairs) and `info`; as jax, a real matrix's eigenvalues are `stablehlo.complex`
of the parts and every result of a matrix
whose `info != 0` is NaN. The op's results are the eigenvalues and the eigenvector sets it asks
for.
"""

from __future__ import annotations

from mlir import ir

from mlax.passes.lower_to_stablehlo.common import (
    Rule,
    bool_attr,
    compare,
    splat,
    tensor_type,
    value,
    with_element,
)
from mlax.passes.lower_to_stablehlo.lapack_calls import info_type, lapack_call, nan_unless


def _eig(op: ir.Operation) -> ir.Value:
    (x,) = op.operands
    left, right = bool_attr(op, "compute_left_eigenvectors"), bool_attr(op, "compute_right_eigenvectors")
    values_type = op.results[0].type
    vectors_type = with_element(x, tensor_type(values_type).element_type)
    parts_type = with_element(values_type, tensor_type(x).element_type)
    if 0 in tensor_type(x).shape:
        results = [splat(0, values_type)] + [splat(0, vectors_type)] * (left + right)
    else:
        real_input = not isinstance(tensor_type(x).element_type, ir.ComplexType)
        values_types = [parts_type, parts_type] if real_input else [values_type]
        *w, vl, vr, info = lapack_call("geev", [x], [*values_types, vectors_type, vectors_type, info_type(x)],
                                   [False] * len(values_types) + [True, True, False],
                                   compute_left="V" if left else "N", compute_right="V" if right else "N")
        ok = compare(info, splat(0, info.type), "EQ")
        results = [value("complex", w, values_type) if real_input else w[0]]
        results += [v for v, wanted in ((vl, left), (vr, right)) if wanted]
        results = [nan_unless(ok, r) for r in results]
    for result, replacement in zip(op.results[1:], results[1:], strict=True):
        result.replace_all_uses_with(replacement)
    return results[0]


RULES: dict[str, Rule] = {"eig": _eig}
