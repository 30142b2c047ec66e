"""Where jax refuses an input, mlax refuses it with jax's error type (and, where jax's words
are fixed, its message), plus the user's line; where jax computes, mlax computes or says
clearly why it cannot (instead of raising NumPy's message or returning other numbers).

- rank: jax 0.10.2 computes on arrays of any rank. mlax's eager values are NumPy arrays,
  whose ufuncs stop at 32 dimensions and whose arrays stop at 64: ranks 33..64 compute like
  jax's; above 64, eager ops and the NumPy-backed backends raise a ValueError saying so (the
  XLA backend computes, as jax).
- ``x[2**40]``: a Python int index past the index dtype (int32; int64 under x64) is jax's
  OverflowError, not a clamped read.
- ``x[[1, 1]]``: a non-tuple sequence as the whole index is jax's TypeError.
- float8 / float6 / float4 and 1-4 bit integers: jax computes with them; mlax does not (yet)
  and raises TypeError naming the dtype, the function or argument, and the user's line.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax import lax

HERE = "test_api_errors.py"
RANK33 = (1,) * 30 + (2, 1, 3)


def _jax_error(fn) -> BaseException:
    with pytest.raises(Exception) as info:
        fn()
    return info.value


# --- rank ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sin", "add", "where", "clip", "compare", "sort", "argsort", "top_k",
                                  "cumsum", "broadcast", "grad"])
def test_rank_above_32_computes_as_jax(name: str, rng: np.random.Generator) -> None:
    fns = {
        "sin": lambda np_, a: np_.sin(a),
        "add": lambda np_, a: a + a * 2,
        "where": lambda np_, a: np_.where(a > 0, a, 0.5),
        "clip": lambda np_, a: np_.clip(a, -0.5, 0.5),
        "compare": lambda np_, a: a >= a[..., :1],
        "sort": lambda np_, a: np_.sort(a, axis=-1),
        "argsort": lambda np_, a: np_.argsort(a, axis=30),
        "top_k": lambda np_, a: (mlax.lax if np_ is mnp else jax.lax).top_k(a, 2),
        "cumsum": lambda np_, a: np_.cumsum(a, axis=-1),
        "broadcast": lambda np_, a: np_.broadcast_to(a[..., :1], a.shape) * a,
        "grad": lambda np_, a: (mlax if np_ is mnp else jax).grad(lambda v: np_.sum(np_.tanh(v) * v))(a),
    }
    x = rng.standard_normal(RANK33).astype(np.float32)
    expected = fns[name](jnp, x)
    for run in (lambda a: fns[name](mnp, a), mlax.jit(lambda a: fns[name](mnp, a)),
                mlax.jit(lambda a: fns[name](mnp, a), backend="interpreter")):
        for ours, theirs in zip(jax.tree_util.tree_leaves(run(x)), jax.tree_util.tree_leaves(expected),
                                strict=True):
            assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
            np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6, atol=1e-6)


def test_rank_above_64_is_a_clear_error_where_numpy_holds_the_values() -> None:
    shape = (1,) * 65
    assert jnp.zeros(shape).ndim == 65  # jax computes; mlax's eager values are NumPy arrays
    with pytest.raises(ValueError, match=r"mlax.broadcast_in_dim would make an array of rank 65, but mlax "
                                         r"computes outside jit on NumPy arrays, which have at most 64 "
                                         r"dimensions") as info:
        mnp.zeros(shape)
    assert HERE in str(info.value)
    with pytest.raises(ValueError, match=r"result 0 of @lambda has rank 65, but the cpu backend holds it "
                                         r"as a NumPy array, which has at most 64 dimensions"):
        mlax.jit(lambda x: mnp.broadcast_to(x, shape), backend="cpu").lower(np.float32(1)).compile()(
            np.float32(1))
    with pytest.raises(ValueError, match=r"the result of mlax.broadcast_in_dim has rank 65, but the "
                                         r"interpreter holds it"):
        mlax.jit(lambda x: mnp.broadcast_to(x, shape).sum(), backend="interpreter")(np.float32(1))
    # inside a compiled program any rank is fine; XLA returns it as jax does
    assert float(mlax.jit(lambda x: mnp.broadcast_to(x, shape).sum())(np.float32(2))) == 2.0
    assert mlax.jit(lambda x: mnp.broadcast_to(x, shape), backend="xla")(np.float32(2)).ndim == 65


# --- integer indices past the index dtype --------------------------------------------------


@pytest.mark.parametrize("index", [2**40, 2**31, -2**31 - 1, 2**63, (1, 2**40), (2**40, slice(None))],
                         ids=str)
def test_python_int_index_past_int32_is_jaxs_overflow_error(index) -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    theirs = _jax_error(lambda: jnp.asarray(x)[index])
    assert type(theirs) is OverflowError
    for get in (lambda a: a[index], lambda a: a.at[index].get()):
        with pytest.raises(OverflowError, match=re.escape(str(theirs))) as info:
            get(mnp.asarray(x))
        assert HERE in str(info.value)
        with pytest.raises(OverflowError, match=re.escape(str(theirs))):
            mlax.jit(get)(x)


def test_python_int_index_within_int32_still_clamps() -> None:
    """(A NumPy int64 past int32 is left alone: jax wraps it to int32 silently, mlax clamps it.)"""
    x = np.arange(5, dtype=np.float32)
    for index in (2**31 - 1, -2**31, 7, -9):
        assert float(mnp.asarray(x)[index]) == float(jnp.asarray(x)[index])


def test_python_int_index_under_x64_is_checked_against_int64(x64: None) -> None:
    x = np.arange(5, dtype=np.float32)
    assert float(mnp.asarray(x)[2**40]) == float(jnp.asarray(x)[2**40]) == 4.0
    theirs = _jax_error(lambda: jnp.asarray(x)[2**63])
    with pytest.raises(OverflowError, match=re.escape(str(theirs))):
        mnp.asarray(x)[2**63]


# --- a list as the whole index -------------------------------------------------------------


@pytest.mark.parametrize("index", [[1, 1], [True, False, True], [slice(None), 0], [0, [1, 2]], [None]],
                         ids=str)
def test_list_index_is_jaxs_type_error(index) -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    theirs = _jax_error(lambda: jnp.asarray(x)[index])
    assert type(theirs) is TypeError
    for use in (lambda a: a[index], lambda a: a.at[index].set(0.0), lambda a: a.at[index].get()):
        with pytest.raises(TypeError, match=re.escape(str(theirs))) as info:
            use(mnp.asarray(x))
        assert HERE in str(info.value)
        with pytest.raises(TypeError, match=re.escape(str(theirs))):
            mlax.jit(use)(x)
    # what the message asks for works, as in jax
    fixed = tuple(index) if "tuple(seq)" in str(theirs) else np.asarray(index)
    np.testing.assert_array_equal(np.asarray(mnp.asarray(x)[fixed]), np.asarray(jnp.asarray(x)[fixed]))


# --- float8 and friends --------------------------------------------------------------------

NARROW = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float4_e2m1fn", "int4", "uint4", "int2"]


@pytest.mark.parametrize("name", NARROW)
def test_narrow_dtypes_are_refused_by_name(name: str) -> None:
    dtype = np.dtype(getattr(ml_dtypes, name))
    data = np.array([1, 0, 1], dtype=dtype)
    expected = re.escape(f"mlax does not support dtype {name} (8-, 6- and 4-bit floats and 1-, 2- and "
                         "4-bit integers are not supported yet")
    calls = {
        "mlax.numpy.zeros": lambda: mnp.zeros(3, dtype),
        "mlax.numpy.asarray": lambda: mnp.asarray(data),
        "mlax.numpy.astype": lambda: mnp.arange(3.0).astype(dtype),
        "new_dtype of mlax.lax.convert_element_type": lambda: lax.convert_element_type(mnp.ones(3), dtype),
        "Argument a of lambda": lambda: mlax.jit(lambda a: a * 2)(data),
        "Argument v of lambda": lambda: mlax.vmap(lambda v: v)(data),
        "": lambda: mnp.sin(jnp.asarray(data)),  # a jax array of that dtype, read as an operand
    }
    for what, call in calls.items():
        with pytest.raises(TypeError, match=expected) as info:
            call()
        assert what in str(info.value) and HERE in str(info.value), str(info.value)
