"""mlax-opt: parsing with file positions, pipelines and flags, --split-input-file,
--verify-diagnostics, exit statuses, and no Python tracebacks for bad input."""

from __future__ import annotations

import io
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from mlir import ir

from mlax.dialect import make_context
from mlax.passes import registry
from mlax.passes.diagnostics import Diagnostic, FileLoc
from mlax.passes.registry import ModulePass, register_pass
from mlax.tools import mlax_opt
from mlax.tools.mlax_opt import Chunk, check_expectations, expectations, parse_source, split_input

BIN = Path(sys.executable).parent

GOOD = """// a comment first
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = "mlax.mul"(%x, %one) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
"""

BAD_TYPES = """func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "mlax.reshape"(%x) {shape = array<i64: 4>} : (tensor<3xf32>) -> tensor<4xf32>
  return %x : tensor<3xf32>
}
"""


def run(argv: list[str], capsys: pytest.CaptureFixture[str], stdin: bytes | None = None,
        monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    if stdin is not None and monkeypatch is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    try:
        status = mlax_opt.main(argv)
    except SystemExit as exit_:  # argparse
        status = exit_.code
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def good(tmp_path: Path) -> Path:
    path = tmp_path / "good.mlir"
    path.write_text(GOOD)
    return path


def test_prints_verified_module(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run([str(good)], capsys)
    assert (status, err) == (0, "")
    assert '"mlax.mul"(%arg0, %0)' in out and out.startswith("module {")


def test_pass_flags_and_pipeline_agree(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flagged = run(["--mlax-cleanup", str(good)], capsys)
    piped = run([str(good), "--pass-pipeline=builtin.module(mlax-cleanup)"], capsys)
    assert flagged == piped
    assert flagged[0] == 0 and "mlax.mul" not in flagged[1]


def test_pass_flag_options(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run([str(good), "--mlax-cleanup=simplify=false"], capsys)
    assert status == 0 and "mlax.mul" in out


def test_flags_and_pipeline_are_exclusive(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run([str(good), "--mlax-cleanup", "--pass-pipeline=cse"], capsys)
    assert (status, out) == (1, "")
    assert err == "mlax-opt: error: use either --pass-pipeline or per-pass flags, not both\n"


def test_stdin_and_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    out_path = tmp_path / "out.mlir"
    status, out, _ = run(["-", "-o", str(out_path), "--mlir-print-op-generic"], capsys, GOOD.encode(),
                         monkeypatch)
    assert (status, out) == (0, "")
    assert '"func.func"()' in out_path.read_text()


def test_print_debuginfo(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run([str(good), "--mlir-print-debuginfo"], capsys)
    assert f'loc("{good}":4:8)' in out


@pytest.mark.parametrize(("text", "where", "message"), [
    (BAD_TYPES, ":2:8: error: 'mlax.reshape' op cannot reshape (3,) (3 elements) to (4,) (4 elements)",
     '  %0 = "mlax.reshape"'),
    ("func.func @f( {\n", ":1:14: error: expected non-function type", "func.func @f( {"),
    ('"mlax.nope"() : () -> ()\n', ":1:1: error: unregistered operation 'mlax.nope'", '"mlax.nope"'),
    ("func.func private @d() attributes {mlax.jvp = {callee = @x}}\n",
     ":1:1: error: mlax.jvp declaration @d: callee @x is not a function of this module", "func.func private"),
])
def test_bad_input_reports_diagnostics(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                       where: str, message: str) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    status, out, err = run([str(path)], capsys)
    assert (status, out) == (1, "")
    assert err.startswith(f"{path}{where}")
    assert err.splitlines()[1].startswith(message)
    assert "Traceback" not in err


@pytest.mark.parametrize(("data", "where", "byte"), [
    (b"// ok\nfunc.func @f() {\xff\n", "2:17", "0xff (invalid start byte)"),
    (b"\xc3", "1:1", "0xc3 (unexpected end of data)"),
    ("// caf\u00e9\n".encode() + b"  \xe2\x82(", "2:3", "0xe2 (invalid continuation byte)"),
])
def test_non_utf8_input_is_a_located_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch, data: bytes, where: str,
                                           byte: str) -> None:
    """The position of the first bad byte (columns in bytes, as MLIR counts them), from a file
    or from stdin; lit files stay ASCII, so this lives here."""
    path = tmp_path / "bytes.mlir"
    path.write_bytes(data)
    for argv, name, stdin in (([str(path)], str(path), None), (["-"], "<stdin>", data)):
        status, out, err = run(argv, capsys, stdin, monkeypatch)
        assert (status, out) == (1, "")
        message = f"error: invalid UTF-8 byte {byte}; the input must be UTF-8 text"
        assert err.splitlines()[0] == f"{name}:{where}: {message}"
        assert "internal error" not in err


def test_usage_errors(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run([str(good) + ".missing"], capsys)[2].startswith("mlax-opt: error: could not open input file")
    assert run([str(good), "--pass-pipeline=bogus"], capsys)[0] == 1
    status, _, err = run([str(good), "--no-such-flag"], capsys)
    assert status == 1 and "unrecognized arguments: --no-such-flag" in err


def test_allow_unregistered_dialect(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "u.mlir"
    path.write_text('"foo.bar"() : () -> ()\n')
    assert run([str(path)], capsys)[0] == 1
    status, out, _ = run([str(path), "--allow-unregistered-dialect"], capsys)
    assert status == 0 and '"foo.bar"()' in out


def test_print_ir_after_all(good: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert mlax_opt.main([str(good), "--mlax-cleanup", "--mlir-print-ir-after-all"]) == 0
    assert "IR Dump After Cleanup (mlax-cleanup)" in capfd.readouterr().err


# --- parsing and splitting ------------------------------------------------------------------


def test_split_keeps_file_line_numbers() -> None:
    text = "a\n// -----\nb\nc\n// ----- tail\nd"
    assert split_input(text, True) == [Chunk("a\n", 1), Chunk("b\nc\n", 3), Chunk("d", 6)]
    assert split_input(text, False) == [Chunk(text, 1)]


@pytest.mark.parametrize("text", [
    "module {\n  func.func private @a()\n}",  # an explicit module
    "func.func private @a()",  # one op on line 1: wrapped in a module
    "// c\nfunc.func private @a()\nfunc.func private @b()",  # several ops
    "",  # nothing: an empty module
])
def test_parse_source_always_gives_a_module(text: str) -> None:
    context = make_context()
    module, diagnostics = parse_source(Chunk(text, 1), "in.mlir", context)
    assert module is not None and module.name == "builtin.module" and diagnostics == []


def test_parse_source_positions_in_later_chunks() -> None:
    context = make_context()
    module, diagnostics = parse_source(Chunk("// x\nfunc.func @a( {\n", 10), "in.mlir", context)
    assert module is None
    assert diagnostics[0].loc == FileLoc("in.mlir", 11, 14)


# --- --verify-diagnostics -------------------------------------------------------------------


def test_expectation_designators() -> None:
    chunk = Chunk("x // expected-error {{here}}\n// expected-note@+1 {{next}}\ny\n"
                  "// expected-warning@-3 {{first}} expected-remark@7 {{seven}}\n", 5)
    found = [(e.severity, e.line, e.text) for e in expectations(chunk, "f.mlir")]
    assert found == [("error", 5, "here"), ("note", 7, "next"), ("warning", 5, "first"),
                     ("remark", 7, "seven")]


def test_check_expectations_reports_unexpected_and_missing() -> None:
    chunk = Chunk("// expected-error@+1 {{bad thing}}\nx\n// expected-error {{never}}\n", 1)
    expected = expectations(chunk, "f.mlir")
    diagnostics = [
        Diagnostic("error", "a bad thing happened", FileLoc("f.mlir", 2, 1),
                   notes=(Diagnostic("note", "see current operation: x", FileLoc("f.mlir", 2, 1)),)),
        Diagnostic("error", "surprise", FileLoc("f.mlir", 2, 1)),
    ]
    problems = check_expectations(diagnostics, expected)
    assert [(p.message, p.loc) for p in problems] == [
        ("unexpected error: surprise", FileLoc("f.mlir", 2, 1)),
        ('expected error "never" was not produced', FileLoc("f.mlir", 3, 4)),
    ]


def test_verify_diagnostics_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "v.mlir"
    good_chunk = BAD_TYPES.replace("  %0 = ", "  // expected-error@+1 {{cannot reshape}}\n  %0 = ")
    path.write_text(good_chunk + "// -----\n" + GOOD + "// -----\n" + BAD_TYPES)
    status, out, err = run([str(path), "--split-input-file", "--verify-diagnostics"], capsys)
    assert status == 1
    assert out.count("module {") == 1, "the chunk that verifies is printed"
    assert err.startswith(f"{path}:15:8: error: unexpected error: 'mlax.reshape' op cannot reshape")
    path.write_text(good_chunk + "// -----\n" + GOOD)
    assert run([str(path), "--split-input-file", "--verify-diagnostics"], capsys)[:3:2] == (0, "")


# --- internal errors ----------------------------------------------------------------------


@dataclass
class BuggyPass(ModulePass):
    argument = "mlax-test-buggy"
    summary = "raises a Python exception"

    def run(self, module: ir.Operation) -> None:
        raise ZeroDivisionError("division by zero")


def test_internal_error_is_one_line_unless_asked(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    register_pass(BuggyPass)
    try:
        status, _, err = run([str(good), "--mlax-test-buggy"], capsys)
        assert status == 1 and "Traceback" not in err
        assert "error: pass 'mlax-test-buggy' failed with an internal error: ZeroDivisionError" in err
    finally:
        del registry.PASSES[BuggyPass.argument]


def test_console_scripts_never_show_tracebacks(tmp_path: Path) -> None:
    """The installed entry points (one process each; the rest of the tests run in-process)."""
    path = tmp_path / "bad.mlir"
    path.write_text(BAD_TYPES)
    for argv in ([str(BIN / "mlax-opt"), str(path)],
                 [str(BIN / "mlax-run"), str(path), "--entry", "f", "--random-inputs", "0"]):
        result = subprocess.run(argv, capture_output=True, text=True, check=False)
        assert result.returncode == 1, result.stderr
        assert f"{path}:2:8: error: 'mlax.reshape' op" in result.stderr
        assert "Traceback" not in result.stderr
