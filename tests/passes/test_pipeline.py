"""Textual pipelines: parsing, mixing mlax and upstream passes, errors that name the stage."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from mlir import ir

from mlax.passes import registry
from mlax.passes.diagnostics import FileLoc
from mlax.passes.pipeline import Element, PipelineError, parse_pipeline, run_pipeline
from mlax.passes.registry import ModulePass, PassFailure, register_pass
from mlax.passes.walk import nested_ops

PROGRAM = """
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %one = "mlax.constant"() {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = "mlax.mul"(%x, %one) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "mlax.exp"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "mlax.exp"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %3 = "mlax.add"(%1, %2) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %3 : tensor<3xf32>
}
func.func private @unused() -> ()
"""


def op_names(module: ir.Module) -> list[str]:
    return [op.name for op in nested_ops(module.operation)]


@pytest.mark.parametrize(("text", "expected"), [
    ("builtin.module(mlax-cleanup)", "mlax-cleanup"),
    ("mlax-cleanup, cse", "mlax-cleanup, cse"),
    ("builtin.module(mlax-cleanup{fold-limit=16 cse=false}, canonicalize{max-iterations=2})",
     "mlax-cleanup{fold-limit=16 cse=false}, canonicalize{max-iterations=2}"),
    ("builtin.module( func.func( cse , canonicalize ) , symbol-dce )",
     "func.func(cse, canonicalize), symbol-dce"),
    ('mlax-cleanup{a="{x} y"}', 'mlax-cleanup{a="{x} y"}'),
    ("builtin.module()", ""),
    ("", ""),
])
def test_parse_and_print(text: str, expected: str) -> None:
    elements = parse_pipeline(text)
    assert ", ".join(map(str, elements)) == expected
    assert parse_pipeline(expected) == elements


def test_parse_structure() -> None:
    (outer,) = parse_pipeline("builtin.module(func.func(cse, canonicalize{max-iterations=1}))")
    assert outer == Element("func.func", nested=(Element("cse"), Element("canonicalize", "max-iterations=1")))
    assert not outer.is_mlax
    assert parse_pipeline("mlax-cleanup")[0].is_mlax


@pytest.mark.parametrize(("text", "message"), [
    ("builtin.module(cse", "expected ')' at column 19"),
    ("cse,,dce", "expected a pass name at column 5"),
    ("canonicalize{max-iterations=1", "unbalanced '{' at column 13"),
    ("cse dce", "unexpected 'd' at column 5"),
    ("func.func(mlax-cleanup)", "mlax-cleanup is a module pass; it cannot be nested under 'func.func'"),
])
def test_syntax_errors_name_the_position(text: str, message: str) -> None:
    with pytest.raises(PipelineError, match=re.escape(message)):
        parse_pipeline(text)


def test_mixed_pipeline_runs_in_order(parse: Callable[[str], ir.Module]) -> None:
    module = parse(PROGRAM)
    run_pipeline(module, "builtin.module(mlax-cleanup, symbol-dce, func.func(canonicalize))")
    assert op_names(module) == ["func.func", "mlax.exp", "mlax.add", "func.return"]


@pytest.mark.parametrize(("pipeline", "message"), [
    ("no-such-pass", "bad element 'no-such-pass': 'no-such-pass' does not refer to a registered pass"),
    ("canonicalize{bogus=1}", "bad element 'canonicalize{bogus=1}'"),
    ("mlax-no-such-pass", r"unknown mlax pass 'mlax-no-such-pass' \(registered: .*mlax-cleanup"),
    ("mlax-cleanup{fold-limit=big}", "mlax-cleanup: option 'fold-limit' expects int, got 'big'"),
])
def test_bad_elements_fail_before_anything_runs(parse: Callable[[str], ir.Module], pipeline: str,
                                                message: str) -> None:
    module = parse(PROGRAM)
    before = str(module)
    with pytest.raises(PipelineError, match=message):
        run_pipeline(module, f"mlax-cleanup, {pipeline}")
    assert str(module) == before


@dataclass
class FailingPass(ModulePass):
    argument = "mlax-test-fail"
    summary = ("fails at the first mlax.exp (PassFailure; how=unsupported: one of kind "
               "NotImplementedError), or with a bug (how=bug), or breaks the IR")
    how: str = "failure"

    def run(self, module: ir.Operation) -> None:
        exp = next(op for op in nested_ops(module) if op.name == "mlax.exp")
        if self.how == "bug":
            raise KeyError("oops")
        if self.how == "break":  # a reshape whose type IRDL accepts but inference rejects
            with ir.InsertionPoint(exp), exp.location:
                ir.Operation.create("mlax.reshape", results=[ir.RankedTensorType.get([2], ir.F32Type.get())],
                                    operands=[exp.operands[0]],
                                    attributes={"shape": ir.DenseI64ArrayAttr.get([2])})
            return
        kind = NotImplementedError if self.how == "unsupported" else ValueError
        raise PassFailure("cannot handle this exp", exp.location, kind=kind)


@pytest.fixture
def failing_pass() -> Iterator[None]:
    register_pass(FailingPass)
    yield
    del registry.PASSES[FailingPass.argument]


def test_pass_failure_names_pass_and_location(failing_pass: None, context: ir.Context) -> None:
    exp = '%1 = "mlax.exp"(%0) : (tensor<3xf32>) -> tensor<3xf32>'
    module = ir.Module.parse(PROGRAM.replace(exp, exp + ' loc("prog.py":7:3)'))
    with pytest.raises(PipelineError) as info:
        run_pipeline(module, "mlax-cleanup{cse=false}, mlax-test-fail")
    assert info.value.message == "pass 'mlax-test-fail' failed"
    (diag,) = info.value.diagnostics
    assert (diag.severity, diag.message) == ("error", "cannot handle this exp")
    assert diag.loc == FileLoc("prog.py", 7, 3)
    assert "cannot handle this exp" in str(info.value)


def test_pass_failure_of_a_kind_is_an_error_of_that_kind(failing_pass: None,
                                                         parse: Callable[[str], ir.Module]) -> None:
    """A rule refusing what jax refuses with NotImplementedError (or TypeError) fails the pipeline
    with an error of that type too, still a PipelineError with its diagnostics."""
    with pytest.raises(NotImplementedError, match="cannot handle this exp") as info:
        run_pipeline(parse(PROGRAM), "mlax-test-fail{how=unsupported}")
    assert isinstance(info.value, PipelineError) and info.value.diagnostics
    with pytest.raises(PipelineError) as info:  # the next failure of the thread has its own kind
        run_pipeline(parse(PROGRAM), "mlax-test-fail")
    assert not isinstance(info.value, NotImplementedError)


def test_bug_in_a_pass_is_an_internal_error(failing_pass: None, parse: Callable[[str], ir.Module]) -> None:
    with pytest.raises(PipelineError, match=r"pass 'mlax-test-fail\{how=bug\}' failed with an internal "
                                            r"error: KeyError: 'oops'") as info:
        run_pipeline(parse(PROGRAM), "mlax-test-fail{how=bug}")
    assert isinstance(info.value.__cause__, KeyError)


def test_ir_broken_by_a_pass_is_caught_after_it(failing_pass: None,
                                                parse: Callable[[str], ir.Module]) -> None:
    with pytest.raises(PipelineError, match=r"the IR produced by pass 'mlax-test-fail\{how=break\}' does not "
                                            r"verify") as info:
        run_pipeline(parse(PROGRAM), "mlax-test-fail{how=break}")
    assert "'mlax.reshape' op" in info.value.diagnostics[0].message
    run_pipeline(parse(PROGRAM), "mlax-test-fail{how=break}", verify_each=False)


def test_upstream_failure_names_the_element(parse: Callable[[str], ir.Module]) -> None:
    module = parse(PROGRAM)
    with pytest.raises(PipelineError, match="pass 'one-shot-bufferize' failed") as info:
        run_pipeline(module, "mlax-cleanup, one-shot-bufferize")
    assert "op was not bufferized" in info.value.diagnostics[0].message


def test_print_ir_after_all(parse: Callable[[str], ir.Module], capfd: pytest.CaptureFixture[str]) -> None:
    run_pipeline(parse(PROGRAM), "mlax-cleanup, cse", print_ir_after_all=True)
    err = capfd.readouterr().err
    assert "IR Dump After Cleanup (mlax-cleanup)" in err
    assert "IR Dump After CSE (cse)" in err
