"""docs/stablehlo.md lists the lowering and import tables as they are today."""

from __future__ import annotations

from mlax.tools import gen_stablehlo_doc


def test_stablehlo_doc_is_fresh() -> None:
    assert gen_stablehlo_doc.DOC.read_text() == gen_stablehlo_doc.render(), \
        "docs/stablehlo.md is stale: run python -m mlax.tools.gen_stablehlo_doc"


def test_family_shorthand_is_expanded() -> None:
    assert gen_stablehlo_doc._expand("mlax.scatter{,_add}, mlax.cum{sum,max}") == \
        "mlax.scatter mlax.scatter_add, mlax.cumsum mlax.cummax"


def test_the_page_example_runs(capsys) -> None:
    import re

    block = re.findall(r"```python\n(.*?)```", gen_stablehlo_doc.DOC.read_text(), flags=re.S)[0]
    exec(compile(block, str(gen_stablehlo_doc.DOC), "exec"), {})
    assert "stablehlo.tanh" in capsys.readouterr().out
