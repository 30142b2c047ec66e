"""jaxlib's LAPACK custom calls (jax's CPU lowering of `lax.linalg`) -> mlax's decompositions.

The inverse of mlax's own StableHLO lowering (passes/lower_to_stablehlo/lapack_calls.py and
the rules using it): a ``lapack_<s|d|c|z><routine>_ffi`` call becomes the mlax op computing
the same results, its options read from the typed-FFI ``mhlo.backend_config`` (ui8 characters:
uplo, mode, trans_x...). The matrices are jax's column-major layouts, the leading dimensions a
batch, as jax always emits them.

LAPACK's ``info`` result: jax only ever compares it to 0 (``info == 0``, getrf's ``info >= 0``)
and selects NaN for a failed matrix. mlax's ops already make a failed matrix NaN (cholesky,
eigh, svd, eig, schur, hessenberg, tridiagonal, tridiagonal_solve), so ``info`` is recomputed
from the op's results: 1 for a matrix whose results hold a NaN, else 0. That is LAPACK's
success/failure (a NaN input fails LAPACK too), though not its positive code (the order of the
failing minor, the unconverged count): jax's selects read only whether it is 0. getrf's
``info`` is LAPACK's exactly (the 1-based index of U's first zero diagonal element, else 0).
Results LAPACK overwrites with scratch (gesdd's and syevd's first result in mode N, gtsv's
diagonals) and vectors a mode does not compute are returned as the operand or zeros: jax
discards them. Other targets (GPU solvers, ``gesvd``, the perturbed tridiagonal solve) are
reported as unsupported, naming the target.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

import numpy as np
from mlir import ir

import mlax.lax as lax
import mlax.numpy as mnp
from mlax.import_stablehlo import control_flow
from mlax.import_stablehlo.core import Entry, Importer, attribute, malformed, unsupported, value_spec
from mlax.lax import decompositions, decompositions_spectral, eig, householder, schur, tridiagonal

CONVERTERS: dict[str, Entry] = {}

_TARGET = re.compile(r"lapack_([sdcz])(\w+)_ffi")
_PREFIXES = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}

Routine = Callable[["Call"], list[Any]]


class Call:
    """One LAPACK custom call: its operands (front-end values), options and declared results."""

    def __init__(self, op: ir.Operation, args: list[Any]) -> None:
        self.op, self.args = op, args
        found = attribute(op, "mhlo.backend_config")
        self.config = found if isinstance(found, ir.DictAttr) else None

    def option(self, name: str, allowed: str) -> str:
        """The ui8 character option ``name`` (uplo, mode...), one of ``allowed``."""
        char = chr(ir.IntegerAttr(self._field(name)).value)
        if char not in allowed:
            raise unsupported(self.op, f"{name} = '{char}' (mlax imports {', '.join(map(repr, allowed))})")
        return char

    def number(self, name: str) -> int:
        return int(ir.IntegerAttr(self._field(name)).value)

    def flag(self, name: str) -> bool:
        """A boolean option (ormqr's ``left``, ``transpose``)."""
        return bool(ir.BoolAttr(self._field(name)).value)

    def _field(self, name: str) -> ir.Attribute:
        if self.config is None or name not in self.config:
            raise malformed(self.op, f"the LAPACK call has no '{name}' in its mhlo.backend_config")
        return self.config[name]

    def zeros(self, index: int) -> Any:
        """Zeros of result ``index``'s declared type (vectors the call's mode does not compute)."""
        spec = value_spec(self.op, self.op.results[index])
        return lax.full(spec.shape, 0, spec.dtype)

    def info(self, *values: Any) -> Any:
        """The call's last result, LAPACK's ``info``: 1 for a matrix of the batch where one of
        ``values`` (each shaped batch + per-matrix dimensions) holds a NaN, else 0."""
        spec = value_spec(self.op, self.op.results[-1])
        batch = len(spec.shape)
        failed = [mnp.any(mnp.isnan(v), axis=tuple(range(batch, v.ndim))) for v in values]
        return functools.reduce(mnp.logical_or, failed).astype(spec.dtype)


def _potrf(c: Call) -> list[Any]:
    """The factor in the triangle ``uplo`` names, the operand's other triangle as LAPACK leaves it."""
    (x,) = c.args
    lower = c.option("uplo", "LU") == "L"
    factor = decompositions.cholesky(x if lower else _adjoint(x), symmetrize_input=False)
    if not lower:
        factor = _adjoint(factor)
    n = x.shape[-1]
    inside = mnp.tri(n, dtype=bool) if lower else mnp.tri(n, dtype=bool).T
    return [mnp.where(inside, factor, x), c.info(factor)]


def _adjoint(x: Any) -> Any:
    return mnp.conj(mnp.swapaxes(x, -1, -2))


def _getrf(c: Call) -> list[Any]:
    """1-based pivots; ``info`` the 1-based index of the first zero on U's diagonal, else 0."""
    (x,) = c.args
    factors, pivots, _ = decompositions.lu(x)
    zero = mnp.diagonal(factors, axis1=-2, axis2=-1) == 0
    first = mnp.argmax(zero, axis=-1).astype(np.int32) + 1
    return [factors, pivots + 1, mnp.where(mnp.any(zero, axis=-1), first, 0).astype(np.int32)]


def _trsm(c: Call) -> list[Any]:
    a, b = c.args
    trans = c.option("trans_x", "NTC")
    return [decompositions.triangular_solve(
        a, b, left_side=c.option("side", "LR") == "L", lower=c.option("uplo", "LU") == "L",
        transpose_a=trans != "N", conjugate_a=trans == "C", unit_diagonal=c.option("diag", "NU") == "U")]


def _geqrf(c: Call) -> list[Any]:
    return list(householder.geqrf(*c.args))


def _geqp3(c: Call) -> list[Any]:
    return list(householder.geqp3(*c.args))


def _orgqr(c: Call) -> list[Any]:
    return [householder.householder_product(*c.args)]


def _ormqr(c: Call) -> list[Any]:
    return [householder.ormqr(*c.args, left=c.flag("left"), transpose=c.flag("transpose"))]


def _syevd(c: Call) -> list[Any]:
    (x,) = c.args
    c.option("mode", "VN")
    v, w = decompositions_spectral.eigh(x, lower=c.option("uplo", "LU") == "L", symmetrize_input=False)
    return [v, w, c.info(w)]


def _gesdd(c: Call) -> list[Any]:
    """The operand (LAPACK's scratch), s, u, vt and info; u and vt zeros in mode N."""
    (x,) = c.args
    mode = c.option("mode", "ASN")
    if mode == "N":
        s = decompositions_spectral.svd(x, compute_uv=False)
        return [x, s, c.zeros(2), c.zeros(3), c.info(s)]
    u, s, vt = decompositions_spectral.svd(x, full_matrices=mode == "A")
    return [x, s, u, vt, c.info(s)]


def _geev(c: Call) -> list[Any]:
    """The eigenvalues (a real matrix's as real and imaginary parts), then vl, vr and info."""
    (x,) = c.args
    left, right = (c.option(f"compute_{side}", "VN") == "V" for side in ("left", "right"))
    w, *vectors = eig.eig(x, compute_left_eigenvectors=left, compute_right_eigenvectors=right)
    values = [w] if np.issubdtype(x.dtype, np.complexfloating) else [lax.real(w), lax.imag(w)]
    first = len(values)
    vl = vectors.pop(0) if left else c.zeros(first)
    vr = vectors.pop(0) if right else c.zeros(first + 1)
    return [*values, vl, vr, c.info(w)]


def _gees(c: Call) -> list[Any]:
    """T, Z (zeros in mode N), the eigenvalues read off T, sdim (0: no sorting) and info."""
    (x,) = c.args
    c.option("sort", "N")
    vectors = c.option("mode", "VN") == "V"
    t, *z = schur.schur(x, compute_schur_vectors=vectors)
    values = _schur_eigenvalues(t)
    z_out = z[0] if vectors else c.zeros(1)
    sdim = c.zeros(len(c.op.results) - 2)
    return [t, z_out, *values, sdim, c.info(t)]


def _schur_eigenvalues(t: Any) -> list[Any]:
    """gees's eigenvalues read off its Schur form: T's diagonal (complex T), or for a real T the
    real and imaginary parts, a 2x2 block ``[[a, b], [c, a]]`` (LAPACK's standard form, b c < 0)
    giving ``a + i sqrt(|b c|)`` then ``a - i sqrt(|b c|)``."""
    diagonal = mnp.diagonal(t, axis1=-2, axis2=-1)
    if mnp.iscomplexobj(t):
        return [diagonal]
    below, above = (mnp.diagonal(t, offset=k, axis1=-2, axis2=-1) for k in (-1, 1))
    imaginary = mnp.where(below != 0, mnp.sqrt(mnp.abs(below * above)), 0)
    batch = [(0, 0)] * (t.ndim - 2)
    return [diagonal, mnp.pad(imaginary, [*batch, (0, 1)]) - mnp.pad(imaginary, [*batch, (1, 0)])]


def _gehrd(c: Call) -> list[Any]:
    """jax's call balances nothing: ``low = 1``, ``high = n`` (the whole matrix)."""
    (x,) = c.args
    low, high = c.number("low"), c.number("high")
    if (low, high) != (1, x.shape[-1]):
        raise unsupported(c.op, f"low = {low}, high = {high} (mlax's hessenberg reduces the whole matrix: "
                                f"low = 1, high = {x.shape[-1]})")
    packed, taus = householder.hessenberg(x)
    return [packed, taus, c.info(packed)]


def _sytrd(c: Call) -> list[Any]:
    (x,) = c.args
    packed, d, e, taus = householder.tridiagonal(x, lower=c.option("uplo", "LU") == "L")
    return [packed, d, e, taus, c.info(packed)]


def _gtsv(c: Call) -> list[Any]:
    """The diagonals as given (LAPACK's scratch), the solution (NaN where singular) and info."""
    dl, d, du, b = c.args
    x = tridiagonal.tridiagonal_solve(dl, d, du, b)
    return [dl, d, du, x, c.info(x)]


ROUTINES: dict[str, Routine] = {
    "potrf": _potrf, "getrf": _getrf, "trsm": _trsm, "geqrf": _geqrf, "geqp3": _geqp3, "orgqr": _orgqr,
    "ungqr": _orgqr, "ormqr": _ormqr, "unmqr": _ormqr, "syevd": _syevd, "heevd": _syevd, "gesdd": _gesdd,
    "geev": _geev, "gees": _gees, "gehrd": _gehrd, "sytrd": _sytrd, "hetrd": _sytrd, "gtsv": _gtsv,
}


def routine(target: str) -> tuple[str, str] | None:
    """(type prefix, routine) of a LAPACK target mlax imports, else None."""
    match = _TARGET.fullmatch(target)
    return (match.group(1), match.group(2)) if match and match.group(2) in ROUTINES else None


def known_target(target: str) -> bool:
    """Whether the importer takes custom calls of ``target``."""
    return target in control_flow.IDENTITY_TARGETS or routine(target) is not None


def custom_call(imp: Importer, op: ir.Operation, args: list[Any]) -> list[Any]:
    """A LAPACK call becomes its mlax decomposition; other targets are control_flow's."""
    target_attr = attribute(op, "call_target_name")
    found = routine(ir.StringAttr(target_attr).value) if target_attr is not None else None
    if found is None:
        return control_flow.custom_call(imp, op, args)
    prefix, name = found
    dtype = value_spec(op, op.operands[-1] if name == "gtsv" else op.operands[0]).dtype
    if dtype != np.dtype(_PREFIXES[prefix]):
        raise malformed(op, f"the LAPACK routine {prefix}{name} takes {np.dtype(_PREFIXES[prefix]).name} "
                            f"matrices, got {dtype.name}")
    return ROUTINES[name](Call(op, args))


CONVERTERS.update({
    "stablehlo.custom_call": Entry(custom_call, (
        "mlax.{cholesky,lu,triangular_solve,geqrf,geqp3,householder_product,ormqr,eigh,svd,eig,schur,"
        "hessenberg,tridiagonal} and mlax.lax.tridiagonal_solve for jaxlib's LAPACK targets "
        "(lapack_?<routine>_ffi); identity for @Sharding (one device); else an error")),
})
