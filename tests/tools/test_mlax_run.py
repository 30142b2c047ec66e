"""mlax-run: input parsing, result formatting, running an entry, errors without tracebacks."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from mlax.dialect.tensor_spec import TensorSpec
from mlax.tools import mlax_run
from mlax.tools.mlax_opt import ToolError
from mlax.tools.mlax_run import format_array, format_results, parse_input, random_input

ARGS = "tensor<2x3xf32>, tensor<i32>, tensor<2xi1>"
PROGRAM = f"""
func.func @main(%x: tensor<2x3xf32>, %i: tensor<i32>, %b: tensor<2xi1>) -> ({ARGS}) {{
  %0 = "mlax.neg"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "mlax.add"(%i, %i) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %2 = "mlax.not"(%b) : (tensor<2xi1>) -> tensor<2xi1>
  return %0, %1, %2 : {ARGS}
}}
func.func private @main_jvp({ARGS}, {ARGS}) -> ({ARGS}, {ARGS})
    attributes {{mlax.jvp = {{callee = @main}}}}
func.func @uses_jvp(%x: tensor<2x3xf32>, %i: tensor<i32>, %b: tensor<2xi1>) -> tensor<2x3xf32> {{
  %r:6 = func.call @main_jvp(%x, %i, %b, %x, %i, %b) : ({ARGS}, {ARGS}) -> ({ARGS}, {ARGS})
  return %r#3 : tensor<2x3xf32>
}}
"""


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "p.mlir"
    path.write_text(PROGRAM)
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        status = mlax_run.main(argv)
    except SystemExit as exit_:
        status = exit_.code
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(("array", "text"), [
    (np.array(2.5, np.float32), "2.5"),
    (np.array([0.1, -0.0, np.nan, np.inf, -np.inf, 1e20], np.float32), "[0.1, -0.0, nan, inf, -inf, 1e+20]"),
    (np.array([0.1], np.float64), "[0.1]"),
    (np.array([1 / 3], np.float16), "[0.3333]"),
    (np.array([1 / 3], ml_dtypes.bfloat16), "[0.333984]"),
    (np.arange(6, dtype=np.uint8).reshape(2, 3), "[[0, 1, 2], [3, 4, 5]]"),
    (np.array([-128, 127], np.int8), "[-128, 127]"),
    (np.array([[True], [False]]), "[[true], [false]]"),
    (np.zeros((2, 0), np.float32), "[[], []]"),
    (np.zeros((0,), np.int32), "[]"),
])
def test_format_array(array: np.ndarray, text: str) -> None:
    assert format_array(array) == text


def test_format_precision_and_results() -> None:
    assert format_array(np.array([1 / 3, 2e-7], np.float32), precision=3) == "[0.333, 2e-07]"
    assert format_results([np.array(1, np.int32), np.ones((1, 2), np.float16)]) == (
        "result[0]: tensor<i32> = 1\nresult[1]: tensor<1x2xf16> = [[1.0, 1.0]]\n")


@pytest.mark.parametrize(("text", "spec", "expected"), [
    ("[[1, 2], [3, 4]]", TensorSpec((2, 2), np.float32), np.array([[1, 2], [3, 4]], np.float32)),
    ("[NaN, -Infinity]", TensorSpec((2,), np.float64), np.array([np.nan, -np.inf])),
    ("2.5", TensorSpec((2, 1), np.float16), np.full((2, 1), 2.5, np.float16)),
    ("[True, False]", TensorSpec((2,), np.bool_), np.array([True, False])),
    ("(1, 2)", TensorSpec((2,), np.uint32), np.array([1, 2], np.uint32)),
    ("7", TensorSpec((), np.int8), np.array(7, np.int8)),
])
def test_parse_input(text: str, spec: TensorSpec, expected: np.ndarray) -> None:
    value = parse_input(text, spec, 0)
    assert (value.shape, value.dtype) == (expected.shape, expected.dtype)
    np.testing.assert_array_equal(value, expected)


@pytest.mark.parametrize(("text", "message"), [
    ("[1, 2, 3]", r"input 0 has shape \(3,\) but the argument is tensor<2xf32>"),
    ("[[1], [2, 3]]", "not a rectangular array of numbers"),
    ('"abc"', "not a rectangular array of numbers"),
    ("abc", "cannot read input 'abc': expected JSON or a Python literal"),
])
def test_parse_input_errors(text: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        parse_input(text, TensorSpec((2,), np.float32), 0)


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.int8, np.uint32, np.bool_])
def test_random_input_is_deterministic_and_typed(dtype: object) -> None:
    spec = TensorSpec((3, 4), np.dtype(dtype))
    a = random_input(np.random.default_rng(1), spec)
    b = random_input(np.random.default_rng(1), spec)
    assert (a.shape, a.dtype) == (spec.shape, spec.dtype)
    np.testing.assert_array_equal(a, b)
    if np.dtype(dtype).kind == "u":
        assert (a >= 0).all()


def test_runs_entry(program: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run([str(program), "--entry", "main", "--input", "[[1, -2.5, 0], [NaN, 3, -0.0]]",
                            "--input", "21", "--input", "[true, false]"], capsys)
    assert (status, err) == (0, "")
    assert out == ("result[0]: tensor<2x3xf32> = [[-1.0, 2.5, -0.0], [nan, -3.0, 0.0]]\n"
                   "result[1]: tensor<i32> = 42\n"
                   "result[2]: tensor<2xi1> = [false, true]\n")


def test_random_inputs(program: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = run([str(program), "--entry", "main", "--random-inputs", "3"], capsys)
    assert first[0] == 0 and first == run([str(program), "--entry", "main", "--random-inputs", "3"], capsys)


@pytest.mark.parametrize(("args", "message"), [
    (["--entry", "nope", "--random-inputs", "0"], "mlax-run: error: no function @nope in the module"),
    (["--entry", "main", "--input", "1"], "mlax-run: error: @main takes 3 arguments, got 1 --input"),
    (["--entry", "uses_jvp", "--random-inputs", "0"],
     "mlax-run: error: @uses_jvp calls transformation declarations @main_jvp (mlax.jvp); resolve them first"),
    (["--entry", "main_jvp", "--random-inputs", "0"], "calls transformation declarations @main_jvp"),
    (["--entry", "main", "--backend", "tpu"], "invalid choice: 'tpu'"),
    (["--entry", "main", "--input", "1", "--random-inputs", "0"], "not allowed with argument"),
])
def test_errors(program: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    status, out, err = run([str(program), *args], capsys)
    assert (status, out) == (1, "")
    assert message in err and "Traceback" not in err


def test_invalid_module_prints_diagnostics(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text('func.func @f(%x: tensor<2xf32>) -> tensor<2xi32> {\n'
                    '  %0 = "mlax.neg"(%x) : (tensor<2xf32>) -> tensor<2xi32>\n'
                    '  return %0 : tensor<2xi32>\n}\n')
    status, _, err = run([str(path), "--entry", "f", "--random-inputs", "0"], capsys)
    assert status == 1
    assert err.startswith(f"{path}:2:8: error: ")


def test_non_utf8_and_guarded_input_are_located_errors(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """mlax-run reads through mlax-opt's reader and parser, with their checks."""
    path = tmp_path / "bad.mlir"
    path.write_bytes(b"func.func private @f() attributes {x = \xff}\n")
    status, _, err = run([str(path), "--entry", "f", "--random-inputs", "0"], capsys)
    assert status == 1 and err.startswith(f"{path}:1:40: error: invalid UTF-8 byte 0xff")
    path.write_text("func.func private @f(tensor<4611686018427387904x2xf32>)\n")
    status, _, err = run([str(path), "--entry", "f", "--random-inputs", "0"], capsys)
    assert status == 1 and err.startswith(f"{path}:1:22: error: the nonzero dimensions of")
