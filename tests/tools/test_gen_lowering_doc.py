"""docs/lowering.md shows the IR the CPU pipeline produces today."""

from __future__ import annotations

from mlax.tools import gen_lowering_doc


def test_lowering_doc_is_fresh() -> None:
    assert gen_lowering_doc.DOC.read_text() == gen_lowering_doc.render(), \
        "docs/lowering.md is stale: run python -m mlax.tools.gen_lowering_doc"


def test_every_stage_is_shown() -> None:
    text = gen_lowering_doc.DOC.read_text()
    for stage in ("mlax", "linalg", "buffers", "loops", "llvm"):
        assert f"`{stage}`" in text
    assert "call @mlax_sgemm" in text and "llvm.func @jit.layer" in text
