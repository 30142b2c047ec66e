"""mlax.numpy dtypes against jax.numpy: scalar types as dtypes and constructors, promotion
queries, finfo/iinfo, the abstract type hierarchy, constants and shape queries, with x64 off
and on."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.numpy.helpers import check_values

SCALAR_TYPES = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                "float16", "bfloat16", "float32", "float64", "float_", "int_", "uint", "single", "double"]
ABSTRACT = ["generic", "number", "inexact", "floating", "integer", "signedinteger", "unsignedinteger"]


@pytest.mark.parametrize("name", SCALAR_TYPES)
def test_scalar_type_is_a_dtype(name: str) -> None:
    m, j = getattr(mnp, name), getattr(jnp, name)
    assert np.dtype(m) == np.dtype(j)
    assert m == np.dtype(j).type and np.dtype(j) == m and hash(m) == hash(np.dtype(j).type)
    assert np.zeros(2, m).dtype == np.dtype(j)
    assert isinstance(np.dtype(j).type(1), m)
    assert mnp.issubdtype(m, np.number) == jnp.issubdtype(j, np.number)


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype")
@pytest.mark.parametrize("name", SCALAR_TYPES)
def test_scalar_type_constructs_arrays(name: str, rng: np.random.Generator) -> None:
    m, j = getattr(mnp, name), getattr(jnp, name)
    values = rng.uniform(0, 120, size=(2, 3)).astype(np.float32)  # in range of every integer type
    check_values(m, lambda v: j(v), values)
    for value in (3, 2.75, True, np.int8(7)):
        got, expected = m(value), j(value)
        assert isinstance(got, mlax.Array)
        assert (got.dtype, got.weak_type, got.item()) == (expected.dtype, expected.weak_type, expected.item())


def test_abstract_types_and_issubdtype() -> None:
    for name in ABSTRACT:
        assert getattr(mnp, name) is getattr(jnp, name)
    concrete = [getattr(mnp, n) for n in SCALAR_TYPES] + [np.float32, "int8", np.dtype("uint16")]
    for a in concrete:
        for b in [getattr(mnp, n) for n in ABSTRACT + ["bool_", "float32", "bfloat16"]]:
            assert mnp.issubdtype(a, b) == jnp.issubdtype(_as_jnp(a), _as_jnp(b)), (a, b)


def _as_jnp(t: Any) -> Any:
    """The jnp scalar type of the same name as an mlax one (anything else unchanged)."""
    return getattr(jnp, t.__name__) if type(t).__name__ == "_ScalarMeta" else t


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype")
def test_promote_types_and_result_type(x64: bool) -> None:
    kinds = ["bool_", "int8", "uint8", "int32", "uint32", "int64", "float16", "bfloat16", "float32",
             "float64"]
    for a in kinds:
        for b in kinds:
            ma, mb, ja, jb = getattr(mnp, a), getattr(mnp, b), getattr(jnp, a), getattr(jnp, b)
            assert mnp.promote_types(ma, mb) == jnp.promote_types(ja, jb), (a, b)
            assert mnp.result_type(ma, mb) == jnp.result_type(ja, jb), (a, b)
    samples = [1, 2.5, True, np.int8(3), np.zeros(2, np.uint8), mnp.float16, np.float32(2)]
    for a in samples:
        for b in samples:
            assert mnp.result_type(a, b) == jnp.result_type(_as_jnp(a), _as_jnp(b)), (a, b)


def test_numpy_float64_scalar_is_not_weak() -> None:
    """np.float64 subclasses float, but JAX checks type(x): it is a strong float64 (float32 in x32)."""
    assert not mnp.asarray(np.float64(2)).weak_type
    x = np.ones(2, np.float16)
    assert mnp.add(x, np.float64(2)).dtype == jnp.add(x, np.float64(2)).dtype
    assert mnp.result_type(mnp.float16, np.float64(2)) == jnp.result_type(jnp.float16, np.float64(2))


def test_finfo_iinfo_and_dtype() -> None:
    for name in ("float16", "bfloat16", "float32", "float64"):
        m, j = mnp.finfo(getattr(mnp, name)), jnp.finfo(getattr(jnp, name))
        assert (m.eps, m.max, m.min, m.tiny, m.bits) == (j.eps, j.max, j.min, j.tiny, j.bits)
    for name in ("int8", "uint8", "int32", "uint32", "int64"):
        m, j = mnp.iinfo(getattr(mnp, name)), jnp.iinfo(getattr(jnp, name))
        assert (m.min, m.max, m.bits) == (j.min, j.max, j.bits)
    assert mnp.dtype(mnp.bfloat16) == jnp.dtype(jnp.bfloat16) == np.dtype(ml_dtypes.bfloat16)
    assert mnp.dtype("float64") == jnp.dtype("float64")


def test_can_cast_and_isdtype() -> None:
    for a in ("int8", "uint8", "float16", "float32", "bool_"):
        for b in ("int16", "int8", "float32", "bfloat16"):
            ma, mb, ja, jb = getattr(mnp, a), getattr(mnp, b), getattr(jnp, a), getattr(jnp, b)
            assert mnp.can_cast(ma, mb) == jnp.can_cast(ja, jb), (a, b)
    kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "numeric",
             ("bool", "real floating"), np.float32]
    for name in ("bool_", "int8", "uint32", "bfloat16", "float32"):
        for kind in kinds:
            expected = jnp.isdtype(getattr(jnp, name), kind)
            assert mnp.isdtype(getattr(mnp, name), kind) == expected, (name, kind)
    with pytest.raises(ValueError, match="unknown kind"):
        mnp.isdtype(mnp.float32, "real")


def test_scalar_and_complex_queries() -> None:
    for value in (2.5, 3, True, np.float32(1), np.ones(()), np.ones(2), mnp.asarray(2.0), mnp.ones(2), "a",
                  [1], 1j, np.ones(2, np.complex64)):
        plain = np.asarray(value) if isinstance(value, mlax.Array) else value
        assert mnp.isscalar(value) == jnp.isscalar(plain), value
        assert mnp.iscomplexobj(value) == jnp.iscomplexobj(plain), value
        assert mnp.isrealobj(value) == jnp.isrealobj(plain), value


def test_constants_and_shape_queries(rng: np.random.Generator) -> None:
    for name in ("pi", "e", "inf", "euler_gamma"):
        assert getattr(mnp, name) == getattr(jnp, name)
    assert np.isnan(mnp.nan) and mnp.newaxis is None
    x = rng.normal(size=(2, 3, 1)).astype(np.float32)
    for value in (x, mnp.asarray(x), 2.5, np.float32(1), np.zeros((0, 4))):
        plain = value if isinstance(value, float) else np.asarray(value)
        assert mnp.ndim(value) == jnp.ndim(plain) and mnp.shape(value) == jnp.shape(plain)
        assert mnp.size(value) == jnp.size(plain)
    assert mnp.size(x, 1) == 3
    assert mlax.jit(lambda a: mnp.zeros(mnp.shape(a)[:2]) + mnp.ndim(a) + mnp.size(a))(x).shape == (2, 3)


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype")
def test_x64_changes_default_and_constructor_dtypes(x64: bool) -> None:
    """Under x64 the 64-bit types are real; otherwise they narrow to 32 bits, as in JAX."""
    for make in (lambda m: m.float64(1), lambda m: m.int64(2), lambda m: m.uint64(3), lambda m: m.float_(1.5),
                 lambda m: m.asarray(1.5), lambda m: m.zeros(2), lambda m: m.arange(3)):
        expected = make(jnp)
        got = make(mnp)
        assert (got.dtype, got.weak_type) == (expected.dtype, expected.weak_type)
    assert jax.config.jax_enable_x64 == x64
