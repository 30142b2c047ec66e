"""The reference interpreter on hand-written modules: calls, errors for what it cannot run."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir

from mlax.backends.interpreter import InterpreterError, run_function
from mlax.dialect import get_context

MODULE = """
func.func @square_plus(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.mul"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlax.add"(%0, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<f32>) {
  %0 = func.call @square_plus(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlax.reduce_sum"(%0) {dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %0, %1 : tensor<3xf32>, tensor<f32>
}
func.func private @f_jvp(tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    attributes {mlax.jvp = {callee = @square}}
func.func @square(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.mul"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @uses_jvp(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0:2 = func.call @f_jvp(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#1 : tensor<3xf32>
}
"""


def _module() -> ir.Module:
    with get_context():
        return ir.Module.parse(MODULE)


def test_calls_and_reductions(rng: np.random.Generator) -> None:
    x = rng.uniform(-2, 2, 3).astype(np.float32)
    out, total = run_function(_module(), "main", [x])
    np.testing.assert_allclose(out, x * x + x, rtol=1e-6)
    np.testing.assert_allclose(total, np.sum(x * x + x), rtol=1e-5)
    assert out.dtype == np.float32 and total.shape == ()


def test_unresolved_transformation_is_named() -> None:
    with pytest.raises(InterpreterError, match=r"@f_jvp is an unresolved mlax.jvp transformation"):
        run_function(_module(), "uses_jvp", [np.ones(3, np.float32)])


def test_wrong_argument_count_and_unknown_function() -> None:
    with pytest.raises(InterpreterError, match="takes 1 arguments, got 2"):
        run_function(_module(), "main", [np.ones(3, np.float32)] * 2)
    with pytest.raises(InterpreterError, match="no function @nope"):
        run_function(_module(), "nope", [])
