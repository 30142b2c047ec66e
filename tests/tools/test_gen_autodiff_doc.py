"""docs/autodiff.md lists the rules the autodiff tables hold today."""

from __future__ import annotations

from mlax.dialect.registry import OPS
from mlax.passes.autodiff.jvp_rules import JVP_RULES
from mlax.tools import gen_autodiff_doc


def test_autodiff_doc_is_fresh() -> None:
    assert gen_autodiff_doc.DOC.read_text() == gen_autodiff_doc.render(), \
        "docs/autodiff.md is stale: run python -m mlax.tools.gen_autodiff_doc"


def test_every_op_has_a_jvp_rule() -> None:
    assert sorted(set(OPS) - set(JVP_RULES)) == []
