"""docs/batching.md lists the batching rules the table holds today."""

from __future__ import annotations

from mlax.tools import gen_batching_doc


def test_batching_doc_is_fresh() -> None:
    assert gen_batching_doc.DOC.read_text() == gen_batching_doc.render(), \
        "docs/batching.md is stale: run python -m mlax.tools.gen_batching_doc"
