"""The last ops to take complex values against jax 0.10.2: clamp (XLA's order: real parts only),
iota/arange, atan2, scatter max/min (lexicographic), bitcast to the same type, the collectives
other than psum (under vmap with an axis name and under shard_map), jnp.sort_complex and
jax.scipy.special's wofz, erfcx (complex) and sph_harm_y; eagerly, under jit on the native and
XLA backends, under grad/jvp and vmap; and the refusals jax makes (clip, bitcast to another
type, the derivative of clamp)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np
import pytest
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

import mlax
import mlax.numpy as mnp
import mlax.scipy.special as msp
from mlax import lax
from tests.complex.test_complex import BACKENDS, random_complex, run

pytestmark = pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning",
                                        "ignore:Casting from complex:DeprecationWarning")

CASES = [(np.complex64, backend) for backend in BACKENDS] + [(np.complex128, "cpu"), (np.complex128, "xla")]
TOLERANCE = {np.dtype(np.complex64): 2e-5, np.dtype(np.float32): 2e-5,
             np.dtype(np.complex128): 1e-12, np.dtype(np.float64): 1e-12}


def _x64(dtype: Any, request: pytest.FixtureRequest) -> None:
    if np.dtype(dtype).itemsize == 16 or np.dtype(dtype) == np.float64:
        request.getfixturevalue("x64")


def _close(got: Any, want: Any, rtol: float | None = None) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    tol = TOLERANCE.get(want.dtype, 0) if rtol is None else rtol
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _check_all(got: dict[str, Any], want: dict[str, Any], rtol: float | None = None) -> None:
    assert got.keys() == want.keys()
    for name in want:
        try:
            _close(got[name], want[name], rtol)
        except AssertionError as error:
            raise AssertionError(f"{name}: {error}") from None


def _ops(np_: Any, lax_: Any, special: Any) -> Callable[..., dict[str, Any]]:
    index = np.array([0, 2, 2, 5, 7])
    return lambda z, w, lo, hi: {
        "clamp": lax_.clamp(lo, z, hi),
        "clamp_scalar_bounds": lax_.clamp(lo[0], z, hi[1]),
        "iota": lax_.iota(z.dtype, 6) * z[0],
        "broadcasted_iota": lax_.broadcasted_iota(z.dtype, (2, 3), 1),
        "arange": np_.arange(1, 4, 0.5, dtype=z.dtype),
        "atan2": lax_.atan2(z, w),
        "arctan2": np_.arctan2(z, 2.0),
        "scatter_max": np_.asarray(z).at[index].max(w[:5]),
        "scatter_min": lax_.scatter_min(z, index[:, None], w[:5], lax_.ScatterDimensionNumbers(
            update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))),
        "bitcast": lax_.bitcast_convert_type(z, z.dtype),
        "sort_complex": np_.sort_complex(np_.stack([z, w])),
        "sort_complex_int": np_.sort_complex(np_.asarray(np.array([[3, -1, 2], [0, 7, -5]], np.int32))),
        "wofz": special.wofz(z * 2),
        "wofz_real": special.wofz(np_.real(z)),
        "erfcx": special.erfcx(w),
    }


@pytest.mark.parametrize(("dtype", "backend"), CASES)
def test_ops_against_jax(dtype: Any, backend: str, rng: np.random.Generator,
                         request: pytest.FixtureRequest) -> None:
    _x64(dtype, request)
    z, w, lo, hi = (random_complex(rng, (8,), dtype) for _ in range(4))
    lo[:3] = z[:3].real + 1j * lo[:3].imag  # real ties: clamp keeps the bound
    hi[3:5] = z[3:5].real - 1j  # and hi
    w[1] = z[1].real + 1j * w[1].imag  # a real tie between two scatter updates' targets
    with jax.enable_x64(dtype == np.complex128):
        want = _ops(jnp, jax.lax, jsp)(z, w, lo, hi)
    # wofz in the lower half plane multiplies exp(-z^2) (up to e^36 here): relative error grows
    _check_all(run(_ops(mnp, lax, msp), backend, z, w, lo, hi), want,
               rtol=1e-4 if dtype == np.complex64 else 1e-10)


def test_ties_and_nans_bit_for_bit() -> None:
    """Every triple of parts in {-1, 0, 1, nan}: clamp compares the real parts only (XLA's), and
    scatter max/min combine (current, update) lexicographically, a NaN picking the update."""
    parts = np.array([-1.0, 0.0, 1.0, np.nan], np.float32)
    values = (parts[:, None] + 1j * parts[None, :]).reshape(-1).astype(np.complex64)
    lo, x, hi = (a.reshape(-1) for a in np.meshgrid(values, values, values, indexing="ij"))

    def fn(np_: Any, lax_: Any) -> Callable[[Any, Any, Any], tuple[Any, ...]]:
        index = np.arange(x.size) // 4
        return lambda lo, x, hi: (lax_.clamp(lo, x, hi), np_.asarray(lo).at[index].max(x),
                                  np_.asarray(hi).at[index].min(x))

    want = fn(jnp, jax.lax)(lo, x, hi)
    for backend in BACKENDS:
        for got, expected in zip(run(fn(mnp, lax), backend, lo, x, hi), want, strict=True):
            bits = (np.asarray(v).view(np.uint32) for v in (got, expected))
            np.testing.assert_array_equal(*bits)


def _loss(np_: Any, lax_: Any, special: Any) -> Callable[[Any, Any], Any]:
    index = np.array([1, 4, 4, 0])

    def loss(z: Any, w: Any) -> Any:
        angle = lax_.atan2(z, w)
        extremes = np_.asarray(z).at[index].max(w[:4]) + np_.asarray(w).at[index].min(z[2:6] * 1j)
        return np_.real(np_.sum(angle ** 2) + np_.sum(extremes * np_.conj(extremes[::-1]))) + \
            np_.imag(np_.sum(special.wofz(z / 2) * np_.sort_complex(w)))

    return loss


@pytest.mark.parametrize(("dtype", "backend"), CASES[:-1])
def test_grad_against_jax(dtype: Any, backend: str, rng: np.random.Generator,
                          request: pytest.FixtureRequest) -> None:
    _x64(dtype, request)
    z, w = random_complex(rng, (6,), dtype), random_complex(rng, (6,), dtype)
    with jax.enable_x64(dtype == np.complex128):
        want = jax.grad(_loss(jnp, jax.lax, jsp), argnums=(0, 1))(z, w)
    got = run(mlax.grad(_loss(mnp, lax, msp), argnums=(0, 1)), backend, z, w)
    for g, v in zip(got, want, strict=True):
        _close(g, v, rtol=2e-4 if dtype == np.complex64 else 1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_holomorphic_derivatives_and_jvp(backend: str, rng: np.random.Generator) -> None:
    z, w = random_complex(rng, (), np.complex64), random_complex(rng, (), np.complex64)

    def holomorphic(special: Any, lax_: Any) -> Callable[[Any], Any]:
        return lambda z: lax_.atan2(z, w) + special.wofz(z / 3) * special.erfcx(z / 4)

    _close(run(mlax.grad(holomorphic(msp, lax), holomorphic=True), backend, z),
           jax.grad(holomorphic(jsp, jax.lax), holomorphic=True)(z), rtol=1e-4)
    vectors = random_complex(rng, (2, 5), np.complex64)
    product = lambda a: lax.atan2(a, a[::-1]) * msp.wofz(a)  # noqa: E731
    got = run(lambda a, t: mlax.jvp(product, (a,), (t,)), backend, *vectors)
    want = jax.jvp(lambda a: jax.lax.atan2(a, a[::-1]) * jsp.wofz(a), (vectors[0],), (vectors[1],))
    for g, v in zip(got, want, strict=True):
        _close(g, v, rtol=1e-4)


@pytest.mark.parametrize("backend", ("cpu", "xla"))
def test_vmap(backend: str, rng: np.random.Generator) -> None:
    z, w = random_complex(rng, (3, 5), np.complex64), random_complex(rng, (3, 5), np.complex64)

    def fn(np_: Any, lax_: Any, special: Any) -> Callable[[Any, Any], Any]:
        return lambda z, w: (lax_.clamp(w[0], z, w[1]), lax_.atan2(z, w), np_.sort_complex(z),
                             special.wofz(w), np_.asarray(z).at[np.array([1, 1, 3])].max(w[:3]),
                             lax_.iota(z.dtype, 5) + z[0])

    got = run(mlax.vmap(fn(mnp, lax, msp)), backend, z, w)
    for g, v in zip(got, jax.vmap(fn(jnp, jax.lax, jsp))(z, w), strict=True):
        _close(g, v, rtol=1e-4)


# --- collectives ------------------------------------------------------------------------------------

COLLECTIVES: dict[str, Callable[[Any], Callable[[Any], Any]]] = {
    "pmax": lambda lib: lambda x: lib.lax.pmax(x, "i"),
    "pmin": lambda lib: lambda x: lib.lax.pmin(x, "i"),
    "pmean": lambda lib: lambda x: lib.lax.pmean(x, "i"),
    "all_gather": lambda lib: lambda x: lib.lax.all_gather(x, "i", axis=1, tiled=True),
    "all_gather_untiled": lambda lib: lambda x: lib.lax.all_gather(x, "i"),
    "psum_scatter": lambda lib: lambda x: lib.lax.psum_scatter(x, "i", scatter_dimension=1, tiled=True),
    "ppermute": lambda lib: lambda x: lib.lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]),
    "ppermute_partial": lambda lib: lambda x: lib.lax.ppermute(x, "i", [(0, 2), (1, 0)]),
    "all_to_all": lambda lib: lambda x: lib.lax.all_to_all(x, "i", 1, 0, tiled=True),
    "pbroadcast": lambda lib: lambda x: lib.lax.pbroadcast(x, "i", 2),
}


def _all_collectives(lib: Any) -> Callable[[Any], dict[str, Any]]:
    """Every collective but the partial permutation (jax's vmap takes full permutations only)."""
    return lambda x: {name: make(lib)(x) for name, make in COLLECTIVES.items() if name != "ppermute_partial"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_collectives_under_vmap(backend: str, rng: np.random.Generator) -> None:
    """pmax/pmin over vmap lanes are lexicographic, as jax's (they reduce the batch axis)."""
    x = random_complex(rng, (4, 2, 8), np.complex64)
    x[1, 0] = x[0, 0].real + 1j * x[1, 0].imag  # real ties across lanes
    got = run(mlax.vmap(_all_collectives(mlax), axis_name="i"), backend, x)
    _check_all(got, jax.vmap(_all_collectives(jax), axis_name="i")(x))


def test_grad_of_collectives_under_vmap(rng: np.random.Generator) -> None:
    x = random_complex(rng, (4, 8), np.complex64)

    def loss(lib: Any) -> Callable[[Any], Any]:
        np_ = lib.numpy

        def body(v: Any) -> Any:
            moved = lib.lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]) * v
            gathered = lib.lax.all_gather(v, "i", tiled=True)
            scattered = lib.lax.psum_scatter(v * v, "i", tiled=True)
            swapped = lib.lax.all_to_all(v, "i", 0, 0, tiled=True)
            return np_.real(np_.sum(moved ** 2) + np_.sum(gathered * 1j) * scattered[0]) + \
                np_.imag(np_.sum(swapped * v))

        return lambda x: np_.sum(lib.vmap(body, axis_name="i")(x))

    _close(mlax.grad(loss(mlax))(x), jax.grad(loss(jax))(x), rtol=1e-4)


@pytest.fixture
def line() -> Mesh:
    return Mesh(np.array(jax.devices()[:4]), ("i",))


@pytest.fixture(params=["xla", "interpreter"])
def mesh_backend(request: pytest.FixtureRequest) -> Any:
    """As tests/frontend/test_shard_map.py: a program with a mesh goes to xla from the cpu backend."""
    previous = mlax.config.backend
    mlax.config.update("backend", "cpu" if request.param == "xla" else request.param)
    yield request.param
    mlax.config.update("backend", previous)


def _shard_mapped(lib: Any, body: Callable[[Any], Any], mesh: Mesh) -> Callable[[Any], Any]:
    return lib.jit(lib.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i")))


def test_collectives_under_shard_map(line: Mesh, mesh_backend: str, rng: np.random.Generator) -> None:
    x = random_complex(rng, (8, 8), np.complex64)
    for name, make in COLLECTIVES.items():
        if name in ("pmax", "pmin", "pbroadcast", "all_gather_untiled"):
            continue  # below; pbroadcast has no XLA lowering in jax; the untiled gather is checked under vmap
        _close(_shard_mapped(mlax, make(mlax), line)(x), _shard_mapped(jax, make(jax), line)(x))


@pytest.mark.parametrize("name", ["pmax", "pmin"])
def test_pmax_pmin_under_shard_map(name: str, line: Mesh, mesh_backend: str,
                                   rng: np.random.Generator) -> None:
    """The simulated devices give jax's lexicographic values (jax's vmap result); XLA's CPU all-reduce
    cannot run the lexicographic combiner, in jax as in mlax."""
    x = random_complex(rng, (8, 4), np.complex64)
    mapped = _shard_mapped(mlax, COLLECTIVES[name](mlax), line)
    if mesh_backend == "xla":
        with pytest.raises(Exception, match="Unsupported reduction computation"):
            _shard_mapped(jax, COLLECTIVES[name](jax), line)(x)
        with pytest.raises(Exception, match="Unsupported reduction computation"):
            mapped(x)
        return
    lanes = jax.vmap(COLLECTIVES[name](jax), axis_name="i")(x.reshape(4, 2, 4)).reshape(8, 4)
    _close(mapped(x), lanes)


# --- sph_harm_y ------------------------------------------------------------------------------------


def _harmonic_arguments(rng: np.random.Generator, dtype: Any, count: int = 12,
                        n_max: int = 6) -> tuple[np.ndarray, ...]:
    n = rng.integers(0, n_max + 1, count).astype(np.int32)
    m = np.array([rng.integers(-k, k + 1) for k in n], np.int32)
    theta = rng.uniform(0, np.pi, count).astype(dtype)
    theta[:2] = (0, np.pi)  # the poles
    phi = rng.uniform(0, 2 * np.pi, count).astype(dtype)
    return n, m, theta, phi


@pytest.mark.parametrize(("dtype", "backend"), [(np.float32, b) for b in BACKENDS] + [(np.float64, "cpu")])
def test_sph_harm_y(dtype: Any, backend: str, rng: np.random.Generator,
                    request: pytest.FixtureRequest) -> None:
    _x64(dtype, request)
    n, m, theta, phi = _harmonic_arguments(rng, dtype)

    def harmonics(special: Any) -> Callable[..., dict[str, Any]]:
        return lambda n, m, theta, phi: {
            "values": special.sph_harm_y(n, m, theta, phi, n_max=6),
            "clipped_degrees": special.sph_harm_y(n, m, theta, phi, n_max=3),
            "scalar_angles": special.sph_harm_y(n, np.int32(1), theta[3], 0.5, n_max=6),
        }

    with jax.enable_x64(dtype == np.float64):
        want = harmonics(jsp)(n, m, theta, phi)
    got = run(harmonics(msp), backend, n, m, theta, phi)
    if backend == "eager":  # n_max defaults to max(n), which needs a concrete n
        got["default_n_max"] = msp.sph_harm_y(n, m, theta, phi)
        want["default_n_max"] = jsp.sph_harm_y(n, m, theta, phi)
    _check_all(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sph_harm_y_grad_and_vmap(backend: str, rng: np.random.Generator) -> None:
    n, m, theta, phi = _harmonic_arguments(rng, np.float32, count=8, n_max=4)
    theta[:2] = (0.3, 2.9)  # the derivative of sqrt(1 - cos^2) is infinite at the poles

    def loss(np_: Any, special: Any) -> Callable[[Any, Any], Any]:
        def f(t: Any, p: Any) -> Any:
            y = special.sph_harm_y(n, m, t, p, n_max=4)
            return np_.sum(np_.abs(y * (1 + 2j)) ** 2 + np_.imag(y) * t)
        return f

    got = run(mlax.grad(loss(mnp, msp), argnums=(0, 1)), backend, theta, phi)
    for g, v in zip(got, jax.grad(loss(jnp, jsp), argnums=(0, 1))(theta, phi), strict=True):
        _close(g, v, rtol=1e-4)
    batched = np.stack([phi, phi[::-1]])
    _close(run(mlax.vmap(lambda p: msp.sph_harm_y(n, m, theta, p, n_max=4)), backend, batched),
           jax.vmap(lambda p: jsp.sph_harm_y(n, m, theta, p, n_max=4))(batched), rtol=1e-5)


# --- refusals ------------------------------------------------------------------------------------


def test_refusals_as_jax(rng: np.random.Generator) -> None:
    z = random_complex(rng, (4,), np.complex64)
    for lib, np_ in ((jax, jnp), (mlax, mnp)):
        with pytest.raises(ValueError, match="Complex values have no ordering and cannot be clipped"):
            np_.clip(z, 0, 1)
        with pytest.raises(ValueError, match="Complex values have no ordering"):
            np_.clip(np.arange(4.0), max=1j)
        for new_dtype in (np.float32, np.int32):
            with pytest.raises(TypeError, match="does not support .*complex values unless the operand and"):
                lib.lax.bitcast_convert_type(z, new_dtype)
        with pytest.raises(TypeError, match="does not support .*complex values unless the operand and"):
            lib.lax.bitcast_convert_type(np.ones((4, 2), np.float32), np.complex64)
        with pytest.raises(ValueError, match="axis -1 is out of bounds for array of dimension 0"):
            np_.sort_complex(np.complex64(1))
        with pytest.raises(NotImplementedError, match="'diff_n' argument"):
            lib.scipy.special.sph_harm_y(np.array([1]), 0, 0.5, 0.5, diff_n=1)
    with pytest.raises(mlax.errors.ConcretizationTypeError, match="n_max"):
        mlax.jit(lambda n: msp.sph_harm_y(n, 0, np.float32(0.5), np.float32(0.1)))(np.array([2], np.int32))
    # jax's clamp JVP compares complex values with lax.gt (a TypeError); mlax's names clamp
    with pytest.raises(TypeError, match="gt does not accept dtype complex64"):
        jax.grad(lambda z: jnp.real(jax.lax.clamp(z[0], z, z[1]).sum()))(z)
    with pytest.raises(TypeError, match="mlax.clamp has no derivative for complex operands"):
        mlax.grad(lambda z: mnp.real(lax.clamp(z[0], z, z[1]).sum()))(z)
