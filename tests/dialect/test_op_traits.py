"""Each op's traits (dialect/registry.py) are stated once, on the op, and hang together."""

from __future__ import annotations

import pytest

from mlax.dialect import OPS
from mlax.dialect.registry import (
    SHARDING_KINDS,
    complex_ops,
    define_op,
    stablehlo_names,
    stablehlo_to_mlax,
)


def test_elementwise_ops_are_pointwise_for_sharding() -> None:
    assert all(op.sharding == "pointwise" for op in OPS.values() if op.elementwise)
    assert {op.sharding for op in OPS.values()} <= {None, *SHARDING_KINDS}


def test_linear_ops_have_derivatives() -> None:
    both = sorted(name for name, op in OPS.items() if op.linear and op.zero_derivative)
    assert both == [], f"linear and zero-derivative at once: {both}"
    for name, op in OPS.items():
        assert all(0 <= i < len(op.operands) for i in op.linear), name


def test_stablehlo_names_both_ways() -> None:
    forward, inverse = stablehlo_names(), stablehlo_to_mlax()
    assert len(forward) == len(inverse) > 40
    assert {hlo: name for name, hlo in forward.items()} == inverse
    assert all(hlo.startswith(("stablehlo.", "chlo.")) for hlo in inverse)
    assert inverse["stablehlo.negate"] == "neg" and forward["nextafter"] == "chlo.next_after"


def test_complex_ops_are_the_traits() -> None:
    ops = complex_ops()
    assert {"add", "conj", "fft", "dot_general", "gather"} <= ops
    assert not {"erf", "floor", "and", "top_k", "axis_index"} & ops


def test_the_docs_family_is_the_defining_module() -> None:
    assert OPS["neg"].family == "Elementwise ops" and OPS["select"].family == "Comparison ops"
    assert OPS["reduce_sum"].family == "Reductions"


@pytest.mark.parametrize(("traits", "message"), [
    ({"linear": (2,)}, "linear positions"),
    ({"stablehlo": "negate"}, "in full"),
    ({"sharding": "diagonal"}, "unknown sharding kind"),
])
def test_bad_traits_are_refused(traits: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        define_op("not_an_op", "(operand: T) -> (result: T)", infer=lambda x: x, reference=lambda x: x,
                  summary="-", **traits)
    assert "not_an_op" not in OPS
