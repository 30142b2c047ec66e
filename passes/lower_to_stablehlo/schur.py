"""Rule for schur: jax's CPU lowering, the custom call of jaxlib's `lapack_?gees_ffi`.

The call (lapack_calls.py's `lapack_call`: typed FFI attributes, column-major matrices) takes
`mode` ('V' with the Schur vectors, 'N' without) and `sort` ('N': jax's lowering refuses
sorting) and returns T, Z, the eigenvalues (a real matrix's real and imaginary parts, or the
complex ones), `sdim` and `info`; as jax, T and Z of a matrix whose `info != 0` are NaN, and Z
is a result of the op only if it asks for it. (jax also aliases T to the operand's buffer, a
memory optimisation XLA's results do not depend on.)
"""

from __future__ import annotations

from mlir import ir

from mlax.passes.lower_to_stablehlo.common import Rule, bool_attr, compare, splat, tensor_type
from mlax.passes.lower_to_stablehlo.lapack_calls import info_type, lapack_call, nan_unless


def _schur(op: ir.Operation) -> ir.Value:
    (x,) = op.operands
    vectors = bool_attr(op, "compute_schur_vectors")
    if 0 in tensor_type(x).shape:
        results = [splat(0, x.type)] * len(op.results)
    else:
        values_type = ir.RankedTensorType.get(tensor_type(x).shape[:-1], tensor_type(x).element_type)
        real = not isinstance(tensor_type(x).element_type, ir.ComplexType)
        values = [values_type] * (2 if real else 1)
        t, z, *_, info = lapack_call("gees", [x], [x.type, x.type, *values, info_type(x), info_type(x)],
                                     [True, True] + [False] * (len(values) + 2),
                                     mode="V" if vectors else "N", sort="N")
        ok = compare(info, splat(0, info.type), "EQ")
        results = [nan_unless(ok, t), *([nan_unless(ok, z)] if vectors else [])]
    for result, replacement in zip(op.results[1:], results[1:], strict=True):
        result.replace_all_uses_with(replacement)
    return results[0]


RULES: dict[str, Rule] = {"schur": _schur}
