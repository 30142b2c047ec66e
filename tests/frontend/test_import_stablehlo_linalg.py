"""`mlax-import-stablehlo` of jax's linear algebra and FFT: jaxlib's LAPACK custom calls and
stablehlo.fft become mlax's decompositions and fft (pyfront/import_stablehlo/linalg.py, fft.py).

jax lowers each function on random (batched) inputs of each element type; the imported program
runs on mlax's interpreter, its cpu backend and, lowered back to StableHLO, on XLA, and must
give jax's values and dtypes (NaN where jax's are). The LAPACK calls are also made directly
(`jax.ffi.ffi_call`, as jax's lowering makes them), so every result of a call is checked,
including those jax's own functions discard (gees's eigenvalues, getrf's info). Then
differentiation and vmap of imported programs, and the errors for what is not imported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from jax._src.lax.linalg import geqrf  # not public in jax.lax.linalg

import mlax
from mlax.backends.xla.pjrt import initialize_lapack
from tests.oracle import random_normal

Args = Callable[[np.random.Generator, np.dtype], list[np.ndarray]]
BACKENDS = ("eager", "cpu", "xla")


@pytest.fixture
def lapack() -> Iterator[None]:
    """jaxlib's LAPACK targets bound, for jax programs that call them directly."""
    initialize_lapack()
    yield


def general(*shape: int) -> Args:
    return normals(shape)


def normals(*shapes: tuple[int, ...]) -> Args:
    return lambda r, dtype: [random_normal(r, shape, dtype) for shape in shapes]


def hermitian(*shape: int, definite: bool = False) -> Args:
    def make(r: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        a = random_normal(r, shape, dtype)
        adjoint = np.conj(np.swapaxes(a, -1, -2))
        return [(a @ adjoint + shape[-1] * np.eye(shape[-1]) if definite else a + adjoint).astype(dtype)]
    return make


def system(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> Args:
    """A well-conditioned matrix (diagonally weighted) and right-hand sides."""
    def make(r: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        a = random_normal(r, a_shape, dtype) + 3 * np.eye(a_shape[-1], dtype=dtype)
        return [a, random_normal(r, b_shape, dtype)]
    return make


def diagonals(m: int, k: int) -> Args:
    def make(r: np.random.Generator, dtype: np.dtype) -> list[np.ndarray]:
        dl, du = (random_normal(r, (2, m), dtype) for _ in range(2))
        d = random_normal(r, (2, m), dtype) + 4
        return [dl, d, du, random_normal(r, (2, m, k), dtype)]
    return make


@dataclass(frozen=True)
class Case:
    name: str
    fun: Callable[..., Any]
    args: Args
    dtypes: tuple[str, ...]


def _solve(left: bool, lower: bool, transpose: bool, conjugate: bool, unit: bool) -> Callable[..., Any]:
    return lambda a, b: lax.linalg.triangular_solve(a, b, left_side=left, lower=lower, transpose_a=transpose,
                                                    conjugate_a=conjugate, unit_diagonal=unit)


CASES = [
    Case("cholesky", jnp.linalg.cholesky, hermitian(2, 4, 4, definite=True), ("float32", "complex128")),
    Case("cholesky_failed", jnp.linalg.cholesky, hermitian(3, 4, 4), ("float64",)),
    Case("inv", jnp.linalg.inv, general(2, 4, 4), ("float64", "complex64")),
    Case("solve", jnp.linalg.solve, system((2, 4, 4), (2, 4, 3)), ("float32", "complex128")),
    Case("lu", lax.linalg.lu, general(2, 4, 5), ("float64", "complex64")),
    Case("triangular_solve_left", _solve(True, True, True, False, False), system((2, 4, 4), (2, 4, 3)),
         ("float32",)),
    Case("triangular_solve_right", _solve(False, False, True, True, True), system((3, 3), (2, 3)),
         ("complex128",)),
    Case("qr", jnp.linalg.qr, general(2, 5, 3), ("float32", "complex64")),
    Case("qr_pivoting", lambda x: lax.linalg.qr(x, pivoting=True), general(2, 4, 3),
         ("float32", "complex128")),
    Case("ormqr", lambda a, c: lax.linalg.ormqr(*geqrf(a), c, left=False, transpose=True),
         normals((2, 4, 3), (2, 2, 4)), ("float64", "complex64")),
    Case("qr_reduced", lambda x: jnp.linalg.qr(x, mode="reduced"), general(2, 3, 5), ("float64",)),
    Case("eigh", jnp.linalg.eigh, hermitian(2, 4, 4), ("float32", "complex128")),
    Case("eigvalsh", jnp.linalg.eigvalsh, hermitian(3, 3), ("complex64",)),
    Case("svd", jnp.linalg.svd, general(2, 5, 3), ("float64", "complex64")),
    Case("svd_reduced", lambda x: jnp.linalg.svd(x, full_matrices=False), general(4, 6), ("float32",)),
    Case("svdvals", lambda x: jnp.linalg.svd(x, compute_uv=False), general(2, 3, 4), ("complex128",)),
    Case("eig", jnp.linalg.eig, general(2, 4, 4), ("float32", "complex64")),
    Case("schur", lax.linalg.schur, general(2, 5, 5), ("float64", "complex64")),
    Case("hessenberg", lax.linalg.hessenberg, general(2, 4, 4), ("float32", "complex128")),
    Case("tridiagonal", lax.linalg.tridiagonal, hermitian(2, 4, 4), ("float64",)),
    Case("tridiagonal_upper", lambda x: lax.linalg.tridiagonal(x, lower=False), hermitian(4, 4),
         ("complex64",)),
    Case("slogdet", jnp.linalg.slogdet, general(2, 5, 5), ("float32", "complex128")),
    Case("pinv", jnp.linalg.pinv, general(5, 3), ("float64",)),
    Case("tridiagonal_solve", lax.linalg.tridiagonal_solve, diagonals(5, 2), ("float32", "float64")),
    Case("fft", jnp.fft.fft, general(2, 6), ("complex64",)),
    Case("ifft", jnp.fft.ifft, general(3, 5), ("complex128",)),
    Case("rfft", jnp.fft.rfft, general(2, 7), ("float32",)),
    Case("irfft", lambda x: jnp.fft.irfft(x, 8), general(2, 5), ("complex64",)),
    Case("fftn", jnp.fft.fftn, general(2, 3, 4), ("float64",)),
    Case("rfft2", jnp.fft.rfft2, general(2, 4, 6), ("float32",)),
]

TOLERANCE = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}


def assert_like(got: Any, want: Any, tol: float) -> None:
    """Same leaves, shapes and dtypes; values close (NaN where jax's are)."""
    got_leaves, want_leaves = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for a, b in zip(got_leaves, want_leaves, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert (a.dtype, a.shape) == (b.dtype, b.shape)
        scale = max(1.0, float(np.nanmax(np.abs(b)))) if b.size and not np.isnan(b).all() else 1.0
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale)


def x64_if_needed(request: pytest.FixtureRequest, *dtypes: str) -> None:
    if any(np.dtype(d).itemsize == (16 if np.dtype(d).kind == "c" else 8) for d in dtypes):
        request.getfixturevalue("x64")


def run(fn: Callable[..., Any], backend: str, *args: Any) -> Any:
    return fn(*args) if backend == "eager" else mlax.jit(fn, backend=backend)(*args)


@pytest.mark.parametrize(("case", "dtype"), [(c, d) for c in CASES for d in c.dtypes],
                         ids=[f"{c.name}-{d}" for c in CASES for d in c.dtypes])
def test_imported_function_matches_jax(case: Case, dtype: str, rng: np.random.Generator,
                                       request: pytest.FixtureRequest) -> None:
    x64_if_needed(request, dtype)
    args = case.args(rng, np.dtype(dtype))
    lowered = jax.jit(case.fun).lower(*args)
    imported = mlax.from_stablehlo(lowered)
    want = jax.jit(case.fun)(*args)
    for backend in BACKENDS:
        assert_like(run(imported, backend, *args), want, TOLERANCE[dtype])


def test_imported_module_holds_only_mlax_ops(rng: np.random.Generator) -> None:
    """The pass (not the front end): every LAPACK call and fft becomes mlax ops."""
    from mlir import ir

    from mlax.dialect import make_context
    from mlax.passes.pipeline import run_pipeline
    from mlax.passes.walk import nested_ops

    a, b = system((4, 4), (4, 2))(rng, np.dtype(np.float32))
    fun = lambda a, b: (jnp.linalg.solve(a, b), jnp.linalg.eigh(a + a.T), jnp.linalg.svd(a),  # noqa: E731
                        jnp.linalg.qr(a), jnp.fft.rfft(b, axis=0), jnp.linalg.eigvals(a))
    text = jax.jit(fun).lower(a, b).compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True)
    with make_context(allow_unregistered_dialects=True) as context:
        module = ir.Module.parse(text, context)
        run_pipeline(module, "mlax-import-stablehlo")
        names = {op.name for op in nested_ops(module.operation)}
    assert not {n for n in names if not n.startswith(("mlax.", "func."))}, names
    assert {"mlax.lu", "mlax.triangular_solve", "mlax.eigh", "mlax.svd", "mlax.geqrf",
            "mlax.householder_product", "mlax.fft", "mlax.eig"} <= names


# --- the LAPACK calls themselves, every result ----------------------------------------------------


def lapack_call(target: str, results: list[tuple[tuple[int, ...], Any, bool]], n_matrices: int = 1,
                **options: str) -> Callable[..., Any]:
    """jax calling jaxlib's ``target`` as jax's lowering does: the first ``n_matrices`` operands and
    the results marked True column-major batches of matrices, ``options`` ui8 characters."""
    def layout(rank: int, matrix: bool) -> tuple[int, ...] | None:
        return (*range(rank - 2), rank - 1, rank - 2) if matrix else None

    def call(*args: Any) -> Any:
        outs = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype, _ in results]
        return jax.ffi.ffi_call(target, outs,
                                input_layouts=[layout(a.ndim, i < n_matrices) for i, a in enumerate(args)],
                                output_layouts=[layout(len(s), m) for s, _, m in results])(
            *args, **{k: np.uint8(ord(v)) for k, v in options.items()})
    return call


@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_gees_results_with_its_eigenvalues(dtype: str, rng: np.random.Generator, lapack: None,
                                           request: pytest.FixtureRequest) -> None:
    """T, Z, the eigenvalues (a real T's 2x2 blocks give the conjugate pairs), sdim and info."""
    x64_if_needed(request, dtype)
    x = random_normal(rng, (2, 5, 5), dtype)
    prefix = "s" if dtype == "float32" else "z"
    values = [((2, 5), np.float32, False)] * 2 if dtype == "float32" else [((2, 5), x.dtype, False)]
    fun = lapack_call(f"lapack_{prefix}gees_ffi", [((2, 5, 5), x.dtype, True)] * 2 + values
                      + [((2,), np.int32, False)] * 2, mode="V", sort="N")
    want = jax.jit(fun)(x)
    if dtype == "float32":
        assert np.any(np.asarray(want[3]) != 0)  # some complex pairs among the eigenvalues
    imported = mlax.from_stablehlo(jax.jit(fun).lower(x))
    for backend in ("eager", "cpu"):
        assert_like(run(imported, backend, x), want, TOLERANCE[dtype])


def test_getrf_info_is_lapacks(rng: np.random.Generator, lapack: None, x64: None) -> None:
    """1-based pivots; info the 1-based column of U's first zero pivot (a zero column), else 0."""
    x = rng.normal(size=(3, 4, 4))
    x[1, :, 2] = 0
    x[2, :, 1] = 0
    fun = lapack_call("lapack_dgetrf_ffi", [((3, 4, 4), x.dtype, True), ((3, 4), np.int32, False),
                                            ((3,), np.int32, False)])
    want = jax.jit(fun)(x)
    assert list(np.asarray(want[2])) == [0, 3, 2]
    imported = mlax.from_stablehlo(jax.jit(fun).lower(x))
    for backend in BACKENDS:
        assert_like(run(imported, backend, x), want, 1e-12)


def test_potrf_upper_keeps_the_lower_triangle(rng: np.random.Generator, lapack: None) -> None:
    """uplo U: U in the upper triangle, the operand's lower triangle untouched; info != 0 exactly
    where LAPACK fails (the factor is then NaN, which jax's select would have made it)."""
    a = random_normal(rng, (2, 3, 3), np.complex64)
    x = np.stack([a[0] @ np.conj(a[0].T) + 3 * np.eye(3), -np.eye(3) + a[1]]).astype(np.complex64)
    fun = lapack_call("lapack_cpotrf_ffi", [((2, 3, 3), x.dtype, True), ((2,), np.int32, False)], uplo="U")
    factor, info = jax.jit(fun)(x)
    imported = mlax.from_stablehlo(jax.jit(fun).lower(x))
    for backend in ("eager", "cpu"):
        got_factor, got_info = run(imported, backend, x)
        assert_like(got_factor[0], factor[0], 2e-5)
        assert list(np.asarray(got_info) == 0) == list(np.asarray(info) == 0) == [True, False]
        assert np.all(np.isnan(np.asarray(got_factor[1])[np.triu_indices(3)]))


def test_syevd_reads_the_upper_triangle(rng: np.random.Generator, lapack: None) -> None:
    x = rng.normal(size=(2, 4, 4)).astype(np.float32)
    fun = lapack_call("lapack_ssyevd_ffi", [((2, 4, 4), x.dtype, True), ((2, 4), x.dtype, False),
                                            ((2,), np.int32, False)], mode="V", uplo="U")
    imported = mlax.from_stablehlo(jax.jit(fun).lower(x))
    for backend in ("eager", "cpu"):
        assert_like(run(imported, backend, x), jax.jit(fun)(x), 2e-4)


def test_geev_left_vectors_only(rng: np.random.Generator, lapack: None) -> None:
    x = rng.normal(size=(2, 4, 4)).astype(np.float32)
    fun = lapack_call("lapack_sgeev_ffi", [((2, 4), x.dtype, False)] * 2 + [((2, 4, 4), np.complex64, True)]
                      * 2 + [((2,), np.int32, False)], compute_left="V", compute_right="N")
    wr, wi, vl, _, info = jax.jit(fun)(x)
    imported = mlax.from_stablehlo(jax.jit(fun).lower(x))
    got_wr, got_wi, got_vl, got_vr, got_info = run(imported, "cpu", x)
    assert_like((got_wr, got_wi, got_vl, got_info), (wr, wi, vl, info), 2e-4)
    assert not np.any(np.asarray(got_vr))


# --- transformations of imported programs ---------------------------------------------------------

GRADS = {
    "cholesky": (lambda a: jnp.sum(jnp.linalg.cholesky(a @ a.T + 4 * jnp.eye(4)) ** 2), "eager"),
    "solve": (lambda a: jnp.sum(jnp.sin(jnp.linalg.solve(a + 4 * jnp.eye(4), a[:, :2]))), "cpu"),
    "eigh": (lambda a: jnp.sum(jnp.linalg.eigh(a + a.T)[0] ** 3), "cpu"),
    "svd": (lambda a: jnp.sum(jnp.linalg.svd(a, compute_uv=False)), "eager"),
    "inv": (lambda a: jnp.sum(jnp.linalg.inv(a + 4 * jnp.eye(4)) ** 2), "cpu"),
    "fft": (lambda a: jnp.sum(jnp.abs(jnp.fft.rfft(a)) ** 2), "eager"),
}


@pytest.mark.parametrize("name", GRADS)
def test_grad_of_imported_program(name: str, rng: np.random.Generator) -> None:
    """mlax differentiates the imported decomposition (its own JVP rules) as jax does."""
    fun, backend = GRADS[name]
    a = rng.normal(size=(4, 4)).astype(np.float32)
    imported = mlax.from_stablehlo(jax.jit(fun).lower(a))
    assert_like(run(mlax.grad(imported), backend, a), jax.grad(fun)(a), 1e-3)


def test_qr_is_not_differentiable_once_lowered(rng: np.random.Generator) -> None:
    """jax lowers qr to geqrf and orgqr, which have no derivative (in jax either): a clear error."""
    a = rng.normal(size=(3, 3)).astype(np.float32)
    imported = mlax.from_stablehlo(jax.jit(lambda v: jnp.sum(jnp.linalg.qr(v)[1])).lower(a))
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'geqrf' not implemented"):
        mlax.grad(imported)(a)


def test_vmap_of_imported_program(rng: np.random.Generator) -> None:
    def fun(a: Any, b: Any) -> Any:
        return jnp.linalg.solve(a, b), jnp.linalg.eigvalsh(a @ a.T)

    a, b = system((3, 4, 4), (3, 4, 2))(rng, np.dtype(np.float32))
    imported = mlax.from_stablehlo(jax.jit(fun).lower(a[0], b[0]))
    assert_like(mlax.jit(mlax.vmap(imported), backend="cpu")(a, b), jax.vmap(fun)(a, b), 2e-4)


# --- what is not imported ---------------------------------------------------------------------------


def test_unsupported_target_is_a_located_error() -> None:
    line = test_unsupported_target_is_a_located_error.__code__.co_firstlineno + 4
    x = np.eye(3, dtype=np.float32)
    with pytest.raises(NotImplementedError, match=r"custom call target 'lapack_sgesvd_ffi'") as info:
        mlax.from_stablehlo(jax.jit(lambda v: lax.linalg.svd(v, algorithm=lax.linalg.SvdAlgorithm.QR))
                            .lower(x))
    assert f"test_import_stablehlo_linalg.py:{line}:" in str(info.value)


def test_unsupported_option_names_the_call(lapack: None) -> None:
    x = np.eye(3, dtype=np.float32)
    fun = lapack_call("lapack_sgees_ffi", [((3, 3), x.dtype, True)] * 2 + [((3,), x.dtype, False)] * 2
                      + [((), np.int32, False)] * 2, mode="V", sort="S")
    imported = mlax.from_stablehlo(jax.jit(fun).lower(x))
    with pytest.raises(NotImplementedError, match=r"stablehlo.custom_call: sort = 'S' \(mlax imports 'N'\)"):
        imported(x)


def test_routine_of_another_type_is_malformed() -> None:
    x = np.eye(3, dtype=np.float32) * 2
    text = jax.jit(jnp.linalg.cholesky).lower(x).as_text().replace("lapack_spotrf_ffi", "lapack_dpotrf_ffi")
    with pytest.raises(ValueError, match="lapack_dpotrf_ffi|dpotrf takes float64 matrices, got float32"):
        mlax.from_stablehlo(text)(x)
