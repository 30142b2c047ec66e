"""JVP rules of complex, real, imag and conj: each is linear (over the reals), so its tangent is
the same op on the tangents, a missing tangent of `complex` being zeros (JAX's deflinear2)."""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from mlax.passes.autodiff.emit import Emitter, MaybeValue

JvpRule = Callable[[Emitter, ir.Operation, list[ir.Value], list[MaybeValue], list[ir.Value]],
                   list[MaybeValue]]


def _same_op(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
             outs: list[ir.Value]) -> list[MaybeValue]:
    if all(t is None for t in tangents):
        return [None]
    operands = [e.materialize(t, v) for t, v in zip(tangents, primals, strict=True)]
    return [e(op.name.removeprefix("mlax."), *operands)]


COMPLEX_JVP_RULES: dict[str, JvpRule] = {name: _same_op for name in ("complex", "real", "imag", "conj")}
