"""mlax.nn.initializers against jax.nn.initializers on the same key: shapes, dtypes, weak types
and values, eagerly and under mlax.jit on both backends, plus fans, errors and the API.

Which comparisons are bit for bit, and why:
* every initializer under ``mlax.jit(backend="xla")`` against ``jax.jit`` of jax's: the same ops
  in the same order through the same compiler give the same bits, so this checks each recipe
  (draw, scale, rounding dtype) exactly;
* eagerly and on mlax's own backend against jax's eager call: the constants and the uniform
  draws (``uniform``, the ``*_uniform`` presets) exactly; draws that go through ``erf_inv``
  (``normal``, ``truncated_normal`` and the ``*_normal`` presets) within a few ulp of the scale,
  because XLA fuses the uniform's ``u * (b - a) + a`` into an FMA that mlax.random rounds twice
  and mlax's ``log1p`` inside ``erf_inv`` differs from XLA's by an ulp now and then
  (docs/random.md). jax's own eager and jitted results differ in the same way.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax._src.nn.initializers import _compute_fans as jax_compute_fans

import mlax
import mlax.nn
import mlax.nn.initializers as mini
import mlax.random as mrandom

jini = jax.nn.initializers
BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)

EXACT, ROUNDED = "exact", "rounded"  # ROUNDED: within ULPS ulp of the largest |value|
ULPS = 8

# name -> (builder of an initializer from a module, comparison on mlax's own paths)
SPECS: dict[str, tuple[Callable[[Any], Any], str]] = {
    "zeros": (lambda m: m.zeros, EXACT),
    "ones": (lambda m: m.ones, EXACT),
    "constant": (lambda m: m.constant(-0.37), EXACT),
    "uniform": (lambda m: m.uniform(3.7), EXACT),
    "normal": (lambda m: m.normal(0.3), ROUNDED),
    "truncated_normal": (lambda m: m.truncated_normal(0.3), ROUNDED),
    "truncated_normal_bounds": (lambda m: m.truncated_normal(1.7, lower=-1.5, upper=0.7), ROUNDED),
    "lecun_normal": (lambda m: m.lecun_normal(), ROUNDED),
    "lecun_uniform": (lambda m: m.lecun_uniform(), EXACT),
    "glorot_normal": (lambda m: m.glorot_normal(), ROUNDED),
    "glorot_uniform": (lambda m: m.glorot_uniform(), EXACT),
    "he_normal": (lambda m: m.he_normal(), ROUNDED),
    "he_uniform": (lambda m: m.he_uniform(), EXACT),
    "vs_fan_out_normal": (lambda m: m.variance_scaling(0.7, "fan_out", "normal"), ROUNDED),
    "vs_fan_geo_avg_truncated": (lambda m: m.variance_scaling(1.3, "fan_geo_avg", "truncated_normal"),
                                 ROUNDED),
    "vs_fan_avg_uniform": (lambda m: m.variance_scaling(0.4, "fan_avg", "uniform"), EXACT),
}
# Rank 1 to 4 (the HWIO conv kernel last), every float dtype; rank 1 is an error for the
# variance-scaling family with its default in_axis, in both libraries.
CASES = [((7,), F32), ((5, 3), BF16), ((4, 6, 2), F16), ((3, 3, 4, 8), None), ((16, 9), F32)]
SHAPES = [(7,), (5, 3), (4, 6, 2), (3, 3, 4, 8), (2, 1, 6)]
DTYPES = [F32, BF16, F16, None]


Build = Callable[[Any], Any]
Case = tuple[str, Build, str, Any, Any]  # label, build(module) -> initializer, kind, shape, dtype
JAX_ERRORS = (TypeError, ValueError, IndexError, ZeroDivisionError, NotImplementedError)


def _jax_error(fn: Callable[[], Any]) -> type[BaseException]:
    """The class of the exception that ``fn`` (a call into jax) raises."""
    try:
        fn()
    except Exception as err:  # noqa: BLE001 - whichever jax raises, mlax must raise it too
        return type(err)
    raise AssertionError("jax accepted the input")


def _assert_same(actual: Any, expected: Any, kind: str, label: str) -> None:
    """Same shape, dtype and weak type; values equal (EXACT) or within ULPS ulp of the scale."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert (a.shape, a.dtype, actual.weak_type) == (e.shape, e.dtype, expected.weak_type), label
    if kind == EXACT:
        np.testing.assert_array_equal(a, e, err_msg=label)
    else:
        scale = float(np.max(np.abs(e.astype(np.float64)), initial=0.0))
        atol = ULPS * float(ml_dtypes.finfo(e.dtype).eps) * scale
        np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=0, atol=atol,
                                   err_msg=label)


def _program(cases: list[Case], module: Any) -> Callable[[list[Any]], list[Any]]:
    """All ``cases`` of ``module``'s initializers as one function of their keys (one compile)."""
    inits = [(build(module), shape, dtype) for _, build, _, shape, dtype in cases]
    return lambda keys: [init(k, shape, dtype) for (init, shape, dtype), k in zip(inits, keys, strict=True)]


def check(cases: list[Case], rng: np.random.Generator) -> None:
    """Each case's mlax initializer against jax's on the same (random) key: eagerly and under
    mlax.jit against jax's eager call (as the case's kind says), under mlax.jit on the XLA backend
    against jax.jit bit for bit; or the same exception class as jax, eagerly and traced. The
    jitted comparisons run all cases as one program per library, to compile once."""
    seeds = [int(rng.integers(0, 2**31)) for _ in cases]
    valid, expected = [], []
    for case, seed in zip(cases, seeds, strict=True):
        label, build, kind, shape, dtype = case
        mlax_init, mkey = build(mini), mrandom.PRNGKey(seed)
        try:
            result = build(jini)(jax.random.PRNGKey(seed), shape, dtype)
        except JAX_ERRORS as err:
            with pytest.raises(type(err)):
                mlax_init(mkey, shape, dtype)
            with pytest.raises(type(err)):
                mlax.jit(lambda k, i=mlax_init, s=shape, d=dtype: i(k, s, d))(mkey)
            continue
        _assert_same(mlax_init(mkey, shape, dtype), result, kind, f"{label} eager")
        valid.append((case, seed))
        expected.append(result)
    if not valid:
        return
    cases = [case for case, _ in valid]
    mkeys = [mrandom.PRNGKey(seed) for _, seed in valid]
    jitted = mlax.jit(_program(cases, mini))(mkeys)
    on_xla = mlax.jit(_program(cases, mini), backend="xla")(mkeys)
    jax_jitted = jax.jit(_program(cases, jini))([jax.random.PRNGKey(seed) for _, seed in valid])
    for (label, _, kind, _, _), exp, got, got_xla, exp_xla in zip(cases, expected, jitted, on_xla, jax_jitted,
                                                                    strict=True):
        _assert_same(got, exp, kind, f"{label} mlax.jit")
        _assert_same(got_xla, exp_xla, EXACT, f"{label} mlax.jit(backend='xla') vs jax.jit")


def _cases(names: list[str], shape: Any, dtype: Any) -> list[Case]:
    return [(f"{name}{shape}:{dtype}", *SPECS[name], shape, dtype) for name in names]


@pytest.mark.parametrize(("shape", "dtype"), CASES, ids=[f"{s}-{d}" for s, d in CASES])
def test_matches_jax(shape: Any, dtype: Any, rng: np.random.Generator) -> None:
    check(_cases(list(SPECS), shape, dtype), rng)


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES)
def test_matches_jax_every_shape_and_dtype(shape: Any, rng: np.random.Generator) -> None:
    check([case for dtype in DTYPES for case in _cases(list(SPECS), shape, dtype) * 2], rng)


def test_float64(x64: bool, rng: np.random.Generator) -> None:
    """float64 and the default dtype under x64 (float64 narrows to float32 without it, in both)."""
    names = ["uniform", "normal", "truncated_normal", "lecun_normal", "glorot_uniform", "vs_fan_out_normal",
             "zeros"]
    check(_cases(names, (6, 5), F64) + _cases(["lecun_normal", "ones"], (3, 3, 4, 8), None), rng)


# Kernel layouts: OIHW (in 1, out 0), sequences of axes, batch axes, negative axes, rank 1 with
# explicit axes, a 3D-conv kernel; with every mode, so the receptive field and each denominator
# are checked. (The rank-4 shapes are the HWIO case's, whose jax compiles are then cached.)
LAYOUTS = [((3, 3, 4, 8), {"in_axis": 1, "out_axis": 0}, "fan_in"),
           ((3, 3, 4, 8), {"in_axis": (0, 1, 2), "out_axis": -1}, "fan_out"),
           ((4, 6, 2), {"batch_axis": 0}, "fan_avg"),
           ((2, 6, 7), {"in_axis": -1, "out_axis": -2, "batch_axis": (0,)}, "fan_geo_avg"),
           ((6,), {"in_axis": 0, "out_axis": 0}, "fan_in"),
           ((2, 3, 3, 4, 6), {}, "fan_avg")]
DISTRIBUTIONS = ["truncated_normal", "normal", "uniform"]


def _layout_case(layout: tuple[Any, dict[str, Any], str], distribution: str) -> Case:
    shape, axes, mode = layout

    def build(m: Any) -> Any:
        return m.variance_scaling(1.6, mode, distribution, **axes)

    kind = EXACT if distribution == "uniform" else ROUNDED
    return (f"{mode}-{distribution}-{axes}", build, kind, shape, F32)


def test_variance_scaling_axes(rng: np.random.Generator) -> None:
    """Each layout once, the distributions taking turns (the slow test runs every pairing)."""
    check([_layout_case(layout, DISTRIBUTIONS[i % 3]) for i, layout in enumerate(LAYOUTS[:-1])], rng)


@pytest.mark.slow
def test_variance_scaling_every_axes_and_distribution(rng: np.random.Generator) -> None:
    check([_layout_case(layout, distribution) for layout in LAYOUTS for distribution in DISTRIBUTIONS], rng)


def test_compute_fans() -> None:
    """The fan computation is plain Python in both: equal results, or the same exception
    (rank 0/1 with the default in_axis, an axis out of range, an empty axis)."""
    cases = [((5, 3), {}), ((3, 3, 4, 8), {}), ((8, 4, 3, 3), {"in_axis": 1, "out_axis": 0}),
             ((2, 3, 4, 5), {"in_axis": (1, 2), "out_axis": [3], "batch_axis": 0}), ((6,), {"in_axis": 0}),
             ((), {"in_axis": (), "out_axis": ()}), ((), {}), ((4,), {}), ((3, 4), {"in_axis": 5}),
             ((0, 4), {}), ((3, 0), {}), ((4, 5), {"in_axis": [-2]})]
    for shape, axes in cases:
        try:
            expected = jax_compute_fans(shape, **axes)
        except (ValueError, IndexError, ZeroDivisionError) as err:
            with pytest.raises(type(err)):
                mini._compute_fans(shape, **axes)
            continue
        assert mini._compute_fans(shape, **axes) == expected


def test_edge_shapes(rng: np.random.Generator) -> None:
    """Rank 0, empty axes and an int shape: values or jax's exception (a zero fan divides by zero)."""
    names = ["zeros", "constant", "uniform", "normal", "truncated_normal", "lecun_normal", "he_uniform"]
    check([case for shape in [(), (0, 4), (3, 0), 3] for case in _cases(names, shape, F32)], rng)


def test_constant_array_and_dtypes(rng: np.random.Generator) -> None:
    """``constant`` broadcasts an array value (one that does not broadcast is an error in both),
    keeps an integer dtype and its builder's dtype; zeros and ones take any dtype."""
    row = rng.standard_normal(4).astype(np.float32)
    check([("constant(row)", lambda m: m.constant(row), EXACT, (3, 4), None),
           ("constant(row) bad", lambda m: m.constant(row), EXACT, (3, 5), None),
           ("constant(7) int32", lambda m: m.constant(7), EXACT, (2, 3), np.int32),
           ("constant bf16 default", lambda m: m.constant(2.5, dtype=BF16), EXACT, (2, 3), None),
           ("zeros int8", lambda m: m.zeros, EXACT, (2, 3), np.int8),
           ("ones bool", lambda m: m.ones, EXACT, (2, 3), np.bool_)], rng)


def test_builder_dtype_is_the_default(rng: np.random.Generator) -> None:
    """A builder's dtype is the initializer's default; a dtype at the call overrides it."""
    for build in [lambda m: m.normal(0.5, dtype=F16), lambda m: m.glorot_uniform(dtype=BF16),
                  lambda m: m.truncated_normal(2.0, F16)]:
        seed = int(rng.integers(0, 2**31))
        init, ref = build(mini), build(jini)
        assert init(mrandom.PRNGKey(seed), (4, 3)).dtype == ref(jax.random.PRNGKey(seed), (4, 3)).dtype
        assert init(mrandom.PRNGKey(seed), (4, 3), F32).dtype == F32


def test_errors() -> None:
    """Bad arguments raise jax's exception classes; mode and distribution are checked at the
    call, not when building (as jax)."""
    mkey, jkey = mrandom.PRNGKey(0), jax.random.PRNGKey(0)
    bad = [(lambda m: m.variance_scaling(1.0, "fan_sideways", "normal"), (3, 4), None),
           (lambda m: m.variance_scaling(1.0, "fan_in", "cauchy"), (3, 4), None),
           (lambda m: m.variance_scaling(1.0, "nope", "nope"), (3,), None),  # the fans fail first
           (lambda m: m.lecun_normal(), (3, 4), np.int32), (lambda m: m.he_uniform(), (3, 4), np.int32),
           (lambda m: m.variance_scaling(1.0, "fan_in", "normal"), (3, 4), np.bool_),
           (lambda m: m.normal(), (3, 4), np.int32), (lambda m: m.uniform(), (3, 4), np.int32),
           (lambda m: m.uniform(), (3.0, 4), None), (lambda m: m.lecun_normal(), (3.0, 4), None),
           (lambda m: m.zeros, (None,), None), (lambda m: m.uniform(), (3, 4), "not-a-dtype"),
           (lambda m: m.zeros, (-1, 4), None), (lambda m: m.truncated_normal(), (-1, 4), None)]
    for build, shape, dtype in bad:
        with pytest.raises(_jax_error(lambda b=build, s=shape, d=dtype: b(jini)(jkey, s, d))):
            build(mini)(mkey, shape, dtype)
    for build in [lambda m: m.uniform(), lambda m: m.lecun_normal()]:
        for key_of in [lambda r: r.split(r.PRNGKey(0), 3), lambda r: np.zeros(3, np.uint32),
                       lambda r: np.zeros(2, np.float32)]:
            with pytest.raises(_jax_error(lambda b=build, k=key_of: b(jini)(k(jax.random), (3, 4)))):
                build(mini)(key_of(mrandom), (3, 4))
    with pytest.raises(NotImplementedError, match="out_sharding"):
        mini.zeros(mkey, (2,), out_sharding=object())


def test_keys_jax_typed_and_under_vmap(rng: np.random.Generator) -> None:
    """A jax typed key works (mlax.random reads its data), and the initializers batch over keys."""
    init = mini.glorot_uniform()
    seed = int(rng.integers(0, 2**31))
    np.testing.assert_array_equal(np.asarray(init(jax.random.key(seed), (4, 3))),
                                  np.asarray(jini.glorot_uniform()(jax.random.key(seed), (4, 3))))
    keys = mrandom.split(mrandom.PRNGKey(seed), 3)
    batched = mlax.vmap(lambda k: init(k, (4, 3)))(keys)
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(batched[i]), np.asarray(init(keys[i], (4, 3))))


def test_orthogonal(rng: np.random.Generator) -> None:
    """orthogonal and delta_orthogonal: jax's argument errors, empty results as jax's zeros,
    otherwise jax's draws (a QR of normals, tests/linalg/test_spectral_front.py compares more)."""
    mkey = mrandom.PRNGKey(0)
    ortho, delta = (lambda m: m.orthogonal()), (lambda m: m.delta_orthogonal())
    check([("orthogonal rank 1", ortho, EXACT, (3,), None), ("orthogonal int shape", ortho, EXACT, 3, None),
           ("delta rank 2", delta, EXACT, (3, 3), None), ("delta rank 6", delta, EXACT, (3,) * 6, None),
           ("delta fan_in > fan_out", delta, EXACT, (3, 4, 3), None),
           ("orthogonal empty", ortho, EXACT, (0, 3), None),
           ("orthogonal empty column", lambda m: m.orthogonal(column_axis=0), EXACT, (3, 0), F16),
           ("delta empty", delta, EXACT, (3, 0, 0), None),
           ("delta empty rows", delta, EXACT, (3, 0, 4), BF16)], rng)
    for build, shape in [(lambda m: m.orthogonal(), (3, 4)), (lambda m: m.orthogonal(2.0, 0), (3, 3, 5)),
                         (lambda m: m.delta_orthogonal(), (3, 3, 4, 4))]:
        expected = build(jini)(jax.random.PRNGKey(0), shape)
        np.testing.assert_allclose(np.asarray(build(mini)(mkey, shape)), np.asarray(expected), rtol=1e-5,
                                   atol=1e-6)


def test_api() -> None:
    """The module is reachable as jax's is; it exports jax's names with jax's signatures; the
    aliases are the same functions; everything built is an ``Initializer``."""
    from mlax.nn import initializers

    assert initializers is mini is mlax.nn.initializers
    public = sorted(n for n in dir(jini) if not n.startswith("_"))
    assert sorted(mini.__all__) == public
    for name in public:
        if name == "Initializer":
            continue
        ours, theirs = inspect.signature(getattr(mini, name)), inspect.signature(getattr(jini, name))
        assert [(p.name, p.default, p.kind) for p in ours.parameters.values()] == \
            [(p.name, p.default, p.kind) for p in theirs.parameters.values()], name
    built = inspect.signature(mini.lecun_normal())
    assert list(built.parameters) == list(inspect.signature(jini.lecun_normal()).parameters)
    for alias, name in [("xavier_normal", "glorot_normal"), ("xavier_uniform", "glorot_uniform"),
                        ("kaiming_normal", "he_normal"), ("kaiming_uniform", "he_uniform")]:
        assert getattr(mini, alias) is getattr(mini, name)
    for init in [mini.zeros, mini.ones, mini.constant(1.0), mini.uniform(), mini.he_normal(),
                 mini.orthogonal()]:
        assert isinstance(init, mini.Initializer)
    assert not isinstance(3, mini.Initializer)
    assert mini.zeros(mrandom.PRNGKey(0), (2,)).dtype == jnp.zeros(2).dtype


@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "uniform"])
def test_variance_scaling_complex(distribution: str, rng: np.random.Generator) -> None:
    """Complex kernels draw as jax's: a disk (uniform), a truncated modulus (truncated_normal)."""
    seed, scale = int(rng.integers(0, 2**31)), float(rng.uniform(0.5, 2.0))
    shape = (int(rng.integers(2, 6)), int(rng.integers(2, 6)))
    mine = mini.variance_scaling(scale, "fan_avg", distribution)
    theirs = jini.variance_scaling(scale, "fan_avg", distribution)
    want = theirs(jax.random.PRNGKey(seed), shape, np.complex64)
    for got in (mine(mrandom.PRNGKey(seed), shape, np.complex64),
                mlax.jit(lambda k: mine(k, shape, np.complex64))(mrandom.PRNGKey(seed))):
        assert got.dtype == want.dtype == np.complex64
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["variance_scaling", "normal", "uniform", "truncated_normal", "constant",
                                  "orthogonal", "delta_orthogonal", "lecun_normal", "glorot_uniform",
                                  "he_normal", "kaiming_uniform", "xavier_normal"])
def test_initializer_names_are_jax_s(name: str) -> None:
    """The built initializers carry jax's names (flax prints a module's kernel_init by them)."""
    args = {"variance_scaling": (1.0, "fan_in", "normal"), "constant": (1.0,)}.get(name, ())
    mine, theirs = getattr(mini, name)(*args), getattr(jini, name)(*args)
    assert (mine.__name__, mine.__qualname__) == (theirs.__name__, theirs.__qualname__)
