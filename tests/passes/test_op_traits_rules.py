"""The generic rules follow from the ops' traits (dialect/registry.py): batching, the pointwise
sharding rule, the StableHLO renamings both ways, the zero and linear JVPs. An op that gains a
trait gains these rules; tests/passes/test_*_rules.py check what the rules compute."""

from __future__ import annotations

import pytest

from mlax.dialect import OPS
from mlax.dialect.registry import stablehlo_names, stablehlo_to_mlax
from mlax.import_stablehlo.table import CONVERTERS
from mlax.passes.autodiff.jvp_rules import JVP_RULES, ZERO_DERIVATIVE, zero_rule
from mlax.passes.autodiff.transpose_rules import TRANSPOSE_RULES
from mlax.passes.batching import rules as batching
from mlax.passes.lower_to_stablehlo import RULES as STABLEHLO_RULES
from mlax.passes.lower_to_stablehlo import elementwise as stablehlo_elementwise
from mlax.passes.partition import rules as partition

ELEMENTWISE = sorted(name for name, op in OPS.items() if op.elementwise)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_ops_batch_and_shard_generically(name: str) -> None:
    assert batching.BATCH_RULES[name] is batching._elementwise
    assert partition.RULES[name] is partition.elementwise


def test_fallback_sharding_is_the_trait() -> None:
    assert partition.FALLBACK == {name for name, op in OPS.items() if op.sharding == "fallback"}


def test_zero_derivative_ops() -> None:
    assert set(ZERO_DERIVATIVE) == {name for name, op in OPS.items() if op.zero_derivative}
    assert all(JVP_RULES[name] is zero_rule for name in ZERO_DERIVATIVE)


@pytest.mark.parametrize("name", sorted(name for name, op in OPS.items() if op.linear))
def test_linear_ops_have_a_jvp_and_a_transpose(name: str) -> None:
    assert JVP_RULES[name] is not zero_rule
    assert name in TRANSPOSE_RULES, f"mlax.{name} is linear: reverse mode transposes it"


@pytest.mark.parametrize("name", sorted(stablehlo_names()))
def test_renamings_lower_to_their_stablehlo_op(name: str) -> None:
    rule = STABLEHLO_RULES[name]
    assert rule.__module__.endswith(".renamings") or rule is stablehlo_elementwise.RULES.get(name)


@pytest.mark.parametrize(("hlo", "name"), sorted(stablehlo_to_mlax().items()))
def test_the_importer_reads_the_inverse_map(hlo: str, name: str) -> None:
    assert hlo in CONVERTERS, f"{hlo} (mlax.{name}'s StableHLO name) has no importer"
    if OPS[name].elementwise and hlo != "stablehlo.optimization_barrier":
        assert CONVERTERS[hlo].target == f"mlax.{name}"
