"""passes/walk.py: `matching_ops` takes the ops a pass rewrites without looking inside a match,
so erasing one match (its regions with it) leaves every other one alive."""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir

from mlax.passes.walk import matching_ops, nested_ops

NESTS = """
func.func @f() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c1) step (%c1) {
      scf.reduce
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    scf.reduce
  }
  return
}
"""


def _is_loop(op: ir.Operation) -> bool:
    return op.name == "scf.parallel"


def test_matches_are_outermost_and_in_order(parse: Callable[[str], ir.Module]) -> None:
    module = parse(NESTS)
    every = [op for op in nested_ops(module.operation) if _is_loop(op)]
    found = matching_ops(module.operation, _is_loop)
    assert len(every) == 3 and found == [every[0], every[2]]
    assert matching_ops(module.operation, lambda op: op.name == "builtin.module") == []  # never the root


def test_erasing_each_match_frees_no_other(parse: Callable[[str], ir.Module]) -> None:
    module = parse(NESTS)
    for loop in matching_ops(module.operation, _is_loop):
        assert loop.name == "scf.parallel"  # alive: not inside a match erased before
        loop.erase()
    assert not [op for op in nested_ops(module.operation) if _is_loop(op)]
