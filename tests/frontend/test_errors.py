"""Errors users see: Python control flow on traced values, bad operands, with source lines."""

from __future__ import annotations

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

    with pytest.raises(mlax.ConcretizationTypeError) as info:
        mlax.jit(relu_branchy)(np.float32(1.0))
    message = str(info.value)
    assert "bool()" in message
    assert "relu_branchy" in message
    assert "test_errors.py" in message  # where the value was made
    assert "mlax.lax.cond" in message and "static_argnums" in message


@pytest.mark.parametrize("conversion, call", [
    ("int()", int), ("float()", float), ("bool()", bool),
    ("NumPy array", np.asarray), (".item()", lambda t: t.item()),
])
def test_concretization_of_arguments(conversion: str, call) -> None:
    def f(x):
        return call(x)

    with pytest.raises(mlax.ConcretizationTypeError, match=r"argument x") as info:
        mlax.jit(f)(np.float32(2.0))
    assert conversion in str(info.value)


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
