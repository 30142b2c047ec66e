"""Errors users see: Python control flow on traced values, bad operands, with source lines."""

from __future__ import annotations

import operator

import jax
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax import lax


def test_if_on_traced_value_names_value_and_fix() -> None:
    def relu_branchy(x):
        if x > 0:  # the error must point here, at the comparison's result
            return x
        return -x

    with pytest.raises(jax.errors.TracerBoolConversionError) as info:
        mlax.jit(relu_branchy)(np.float32(1.0))
    assert type(info.value) is jax.errors.TracerBoolConversionError  # jax's class, as jax raises it
    message = str(info.value)
    assert message.startswith("Attempted boolean conversion of traced array with shape bool[].")
    assert "tracing the function test_if_on_traced_value_names_value_and_fix.<locals>.relu_branchy" in message
    assert "depends on the value of the argument x." in message
    assert "test_errors.py" in message  # where the value was made
    assert "mlax.lax.cond" in message and "static_argnums" in message


@pytest.mark.parametrize("call", [int, float, bool, complex, np.asarray, range, operator.index, hex,
                                  lambda t: t.item(), lambda t: t.tolist()])
def test_concretization_errors_are_jaxs(call) -> None:
    """Each conversion raises the class jax raises (jax.errors' own, so ``except`` clauses and
    ``type(e) is`` checks written for jax hold), naming the argument the value depends on."""
    with pytest.raises(TypeError) as expected:
        jax.jit(lambda x: call(x))(np.int32(2))
    with pytest.raises(TypeError) as got:
        mlax.jit(lambda x: call(x))(np.int32(2))
    assert type(got.value) is type(expected.value)
    first_line = str(expected.value).splitlines()[0]
    assert str(got.value).splitlines()[0] == first_line
    assert "depends on the value of the argument x." in str(got.value)


def test_derived_values_name_every_argument_they_depend_on() -> None:
    def f(x, y, z):
        return bool(abs(x) * y + 1)  # operators: the same on jax's tracers and mlax's

    with pytest.raises(jax.errors.TracerBoolConversionError) as expected:
        jax.jit(f)(np.float32(1.0), np.float32(2.0), np.float32(3.0))
    with pytest.raises(jax.errors.TracerBoolConversionError) as got:
        mlax.jit(f)(np.float32(1.0), np.float32(2.0), np.float32(3.0))
    sentence = "depends on the values of the arguments x and y."
    assert sentence in str(expected.value) and sentence in str(got.value)


def test_boolean_mask_under_jit_is_jaxs_error() -> None:
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(jax.errors.NonConcreteBooleanIndexError) as expected:
        jax.jit(lambda x: x[x > 1])(x)
    with pytest.raises(jax.errors.NonConcreteBooleanIndexError) as got:
        mlax.jit(lambda x: x[x > 1])(x)
    assert type(got.value) is type(expected.value)
    assert str(got.value).startswith("Array boolean indices must be concrete; got bool[4]\n")


def test_tracer_is_unhashable() -> None:
    with pytest.raises(TypeError, match="unhashable"):
        mlax.jit(lambda x: {x: 1} and x)(np.ones(2))


def test_shape_error_names_op_and_user_line() -> None:
    def f(x, y):
        return lax.add(x, y)

    with pytest.raises(TypeError) as info:
        mlax.jit(f)(np.ones(3, np.float32), np.ones(4, np.float32))
    message = str(info.value)
    assert "mlax.add" in message and "(3,)" in message and "(4,)" in message
    assert "test_errors.py" in message and "in test_shape_error_names_op_and_user_line.<locals>.f" in message


def test_eager_errors_match_traced() -> None:
    with pytest.raises(TypeError, match="mlax.add: lhs and rhs must have the same dtype"):
        lax.add(np.ones(2, np.float32), np.ones(2, np.int32))


def test_broadcast_error_names_function() -> None:
    with pytest.raises(ValueError, match=r"add: shapes \(2,\) and \(3,\) are incompatible"):
        mnp.add(np.ones(2), np.ones(3))


def test_unsupported_dtype() -> None:
    with pytest.raises(TypeError, match="does not support dtype"):
        mnp.asarray(np.ones(2, ml_dtypes.int4))


def test_user_input_not_modified_eagerly() -> None:
    x = np.arange(4, dtype=np.float32)
    y = mnp.asarray(x)
    x[0] = 42.0  # the user's array stays writable and theirs
    assert float(np.asarray(y)[0]) == 0.0
    assert x.flags.writeable
