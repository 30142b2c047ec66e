"""Sharding attributes are verified between stages (passes/verify.py, dialect/sharding.py
`verify_sharding`): a pass that writes a spec the mesh or the type cannot hold fails the
pipeline, named; input is left to mlax-partition, whose errors name it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from mlir import ir

from mlax.dialect.attrs import Spec
from mlax.dialect.sharding import set_arg_spec
from mlax.passes import registry
from mlax.passes.pipeline import PipelineError, run_pipeline
from mlax.passes.registry import ModulePass, register_pass
from mlax.passes.verify import verify_module

MESH = ('mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, '
        "device_ids = array<i64: 0, 1, 2, 3>}")
PROGRAM = f"""
module attributes {{{MESH}}} {{
  func.func @f(%a: tensor<6xf32> {{mlax.sharding = [["x"]]}}) -> tensor<6xf32> {{
    %0 = "mlax.neg"(%a) : (tensor<6xf32>) -> tensor<6xf32>
    return %0 : tensor<6xf32>
  }}
}}
"""


@dataclass
class SplitTooFar(ModulePass):
    """Writes a spec that does not divide its argument (a partitioner bug, for this test)."""

    argument = "mlax-test-split-too-far"
    summary = "test only: shard argument 0 of @f four ways"

    def run(self, module: ir.Operation) -> None:
        function = next(op for op in module.regions[0].blocks[0].operations)
        set_arg_spec(function, 0, Spec((("x", "y"),)))



@pytest.fixture
def split_too_far() -> Iterator[None]:
    register_pass(SplitTooFar)
    yield
    del registry.PASSES[SplitTooFar.argument]


def test_a_good_spec_verifies(parse: Callable[[str], ir.Module]) -> None:
    module = parse(PROGRAM)
    assert verify_module(module.operation, sharding=True) == []
    run_pipeline(module, "mlax-cleanup")  # verified after the stage


def test_a_bad_spec_written_by_a_pass_fails_the_pipeline(split_too_far: None,
                                                         parse: Callable[[str], ir.Module]) -> None:
    with pytest.raises(PipelineError, match="mlax-test-split-too-far' does not verify") as info:
        run_pipeline(parse(PROGRAM), "mlax-test-split-too-far")
    (diag,) = info.value.diagnostics
    assert "of argument 0 of @f implies that the global size of its dimension 0 should be divisible by 4" \
        in diag.message


def test_input_specs_are_left_to_mlax_partition(parse: Callable[[str], ir.Module]) -> None:
    module = parse(PROGRAM.replace('[["x"]]', '[["x", "y"]]'))
    assert verify_module(module.operation) == []
    (diag,) = verify_module(module.operation, sharding=True)
    assert "should be divisible by 4" in diag.message
