"""tools/docs_runner.py: how pages are cut into cells and how two cells' outputs are compared.

The pages themselves are jax's and are not part of mlax: the run over them is behind the
``docs`` marker and reads a jax checkout named by MLAX_JAX_SRC.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from mlax.tools import docs_runner as dr

# A small page in the MyST notebook format, written for this test.
PAGE = """---
jupytext:
  text_representation:
    format_name: myst
---

# A page

Some prose with a fence that is not a cell:

```python
print("not run")
```

```{code-cell} ipython3
:id: abc
:tags: [raises-exception]

import math
raise ValueError("expected")
```

```{code-cell}
---
tags: [hide-output]
---
%timeit math.sqrt(2.0)
x = 3
x * 2
```

```{code-cell}
!pip install something
```

```{code-cell}
data = urllib.request.urlopen("https://example.com")
```

```{code-cell}
%%time
y = x + 1
y
```
"""


def test_myst_cells_and_options() -> None:
    cells = dr.split_myst(PAGE)
    assert [c.index for c in cells] == [1, 2, 3, 4, 5]
    assert cells[0].tags == ("raises-exception",)
    assert cells[0].source == 'import math\nraise ValueError("expected")'
    assert cells[1].tags == ("hide-output",)
    assert cells[1].source == "math.sqrt(2.0);\nx = 3\nx * 2"
    assert cells[0].skip is None and cells[1].skip is None
    assert cells[2].skip == "pip install"
    assert cells[3].skip == "needs the internet"
    assert cells[4].source == "y = x + 1\ny" and cells[4].skip is None
    assert PAGE.splitlines()[cells[0].line - 1].startswith("```{code-cell}")


def test_ipynb_cells() -> None:
    notebook = {"cells": [
        {"cell_type": "markdown", "source": ["# title"]},
        {"cell_type": "code", "source": ["%xmode minimal\n", "a = 1\n", "a"], "metadata": {}},
        {"cell_type": "code", "source": "jax.devices('gpu')", "metadata": {"tags": ["raises-exception"]}},
    ]}
    cells = dr.split_ipynb(json.dumps(notebook))
    assert [c.source for c in cells] == ["\na = 1\na", "jax.devices('gpu')"]
    assert cells[1].tags == ("raises-exception",) and cells[1].skip == "needs a GPU or TPU"


# A small page written as doctests (as jax's aot.md is), written for this test.
DOCTEST_PAGE = """# Stages

Prose, then examples:

```python
>>> a = 2
>>> # a comment on its own is not a cell
>>> def double(v):
...   return 2 * v
>>> double(a)
4
>>> double(None)  # doctest: +IGNORE_EXCEPTION_DETAIL
Traceback (most recent call last):
TypeError: ...
>>> open_the_network()  # doctest: +SKIP

```

```shell
>>> not_python = True
```
"""


def test_doctest_examples_are_cells() -> None:
    cells = dr.split_doctest(DOCTEST_PAGE)
    assert [c.source.removeprefix(dr.DOCTEST_PRELUDE) for c in cells] == [
        "a = 2", "def double(v):\n  return 2 * v", "double(a)",
        "double(None)  # doctest: +IGNORE_EXCEPTION_DETAIL", "open_the_network()  # doctest: +SKIP"]
    assert cells[0].source.startswith(dr.DOCTEST_PRELUDE)
    assert cells[3].tags == ("raises-exception",) and cells[3].skip is None
    assert cells[4].skip == "doctest +SKIP"
    assert DOCTEST_PAGE.splitlines()[cells[2].line - 1] == ">>> double(a)"
    assert dr.split_myst(DOCTEST_PAGE) == []


# A page whose examples are plain fences (written for this test).
FENCED_PAGE = """
# Checks

```python
import math

@staticmethod
def half(v):
  return v / 2
half(4.0)
# >> 2.0
check(-1)
# ValueError: negative
value = half(
    6.0)  # IndexError raised here
```

```python
def fragment(:
```
"""


def test_fenced_statements_are_cells() -> None:
    cells = dr.split_fenced(FENCED_PAGE)
    assert [c.source.removeprefix(dr.DOCTEST_PRELUDE) for c in cells] == [
        "import math", "@staticmethod\ndef half(v):\n  return v / 2", "half(4.0)", "check(-1)",
        "value = half(\n    6.0)  # IndexError raised here", "def fragment(:"]
    assert cells[0].source.startswith(dr.DOCTEST_PRELUDE)
    assert [c.tags for c in cells[:5]] == [(), (), (), ("raises-exception",), ("raises-exception",)]
    assert FENCED_PAGE.splitlines()[cells[1].line - 1] == "@staticmethod"
    assert cells[5].skip is not None and all(c.skip is None for c in cells[:5])
    assert dr.split_doctest(FENCED_PAGE) == [] and dr.split_myst(FENCED_PAGE) == []


def test_skip_reasons_ignore_comments() -> None:
    assert dr.skip_reason("x = 1  # see https://example.com", ()) is None
    assert dr.skip_reason("# pip install foo\nx = 1", ()) is None
    assert dr.skip_reason("x = 1", ("skip-execution",)) == "tagged skip-execution"
    assert dr.skip_reason("from scipy import datasets\nimage = datasets.face()", ()) == "needs the internet"
    assert dr.skip_reason("%%bash\nls", ()) == "cell magic %%bash"


def test_numbers_within_tolerance_match() -> None:
    assert dr.compare_text("Array([1.        , 0.33333334], dtype=float32)",
                           "Array([1.0000001, 0.3333333], dtype=float32)") is None
    assert dr.compare_text("[ 1.e-09  2.e+00]", "[0. 2.]") is None  # small absolute difference
    assert dr.compare_text("nan -inf", "nan -inf") is None
    assert dr.compare_text("[1.+2.j]", "[1.0000001+2.j]") is None


def test_changed_number_fails_and_says_which() -> None:
    reason = dr.compare_text("grad: 0.5", "grad: 0.51")
    assert reason is not None and reason.startswith("different value: jax 0.5, mlax 0.51")
    assert dr.cause_of(reason) == "different value"
    assert dr.compare_text("-1.0", "1.0") is not None


def test_ints_and_bools_exact() -> None:
    assert dr.compare_text("[1 2 3]", "[1 2 4]") is not None
    assert dr.compare_text("100000", "100001") is not None
    assert dr.compare_text("3", "3.") is not None  # an int where jax shows a float
    assert dr.compare_text("True", "False") is not None
    assert dr.compare_text("(True, 7)", "(True , 7)") is None  # spacing is not a value


def test_text_exact_after_normalising() -> None:
    assert dr.compare_text("<function f at 0x7f3a2b1c>", "<function f at 0x55d0aa>") is None
    assert dr.compare_text("id 140234567890123", "id 139999999999999") is None
    assert dr.compare_text("took 1.23 ms", "took 45 µs") is None
    assert dr.compare_text("File /usr/lib/python3.11/x.py", "File /opt/venv/lib/y.py") is None
    assert dr.compare_text("dtype=float32", "dtype=float64") is not None
    assert dr.compare_text("PartitionSpec('x', None)", "PartitionSpec('y', None)") is not None
    reason = dr.compare_text("a b", "a b c")
    assert reason is not None and "only mlax shows more" in reason
    assert dr.cause_of("different text: jax 'JitTracer', mlax 'Traced' (jax: a | mlax: b)") == \
        "different text: jax 'JitTracer', mlax 'Traced'"


def test_judge() -> None:
    ok = {"stdout": "1.0\n", "value": None, "error": None}
    type_error = {"type": "TypeError", "mro": ["TypeError"], "message": "bad\nmore"}
    err = {"stdout": "", "value": None, "error": type_error}
    plain, expecting = dr.Cell(1, "x"), dr.Cell(2, "x", ("raises-exception",))
    assert dr.judge(plain, ok, {**ok, "stdout": "1.0000001\n"}) == ("match", "")
    assert dr.judge(plain, err, ok) == ("jax-error", "TypeError: bad")
    assert dr.judge(plain, ok, err) == ("fail", "TypeError: bad")
    assert dr.judge(expecting, err, err)[0] == "match"
    assert dr.judge(expecting, err, ok) == ("fail", "no exception where jax raises TypeError")
    crash = {"crash": "process died (SIGSEGV)", "error": {"type": "Crash", "mro": [], "message": ""}}
    assert dr.judge(plain, ok, crash) == ("fail", "crash: process died (SIGSEGV)")
    assert dr.judge(plain, ok, {**ok, "after_crash": True}) == ("after-crash", "match")
    on_jax = dr.judge(plain, ok, {**ok, "real_jax": ["add from docs_page"]})
    assert on_jax[0] == "fail" and on_jax[1].startswith("ran on the real jax")
    assert dr.judge(dr.Cell(3, "x", skip="pip install"), None, None) == ("skipped", "pip install")


def test_run_cell_shows_last_expression_like_a_notebook() -> None:
    namespace: dict = {}
    value, flags = dr._run_cell("from __future__ import annotations\nx = 2\nx + 1", namespace, 0)
    assert value == 3 and flags
    assert dr._run_cell("x;", namespace, flags)[0] is None
    assert dr._run_cell("def f(a: Undefined): pass\nf.__annotations__", namespace, flags)[0] == \
        {"a": "Undefined"}  # the future import holds for the cells after


def test_a_dead_process_loses_one_cell(tmp_path: Path) -> None:
    """A cell that kills its process, or hangs where no signal reaches it, is marked; the cells
    after it run in a new process that replayed the cells before (so ``a`` is still defined).
    These cells never import jax, so the children start fast."""
    cells = [dr.Cell(1, "a = 41"), dr.Cell(2, "import os\nos.abort()"), dr.Cell(3, "print(a + 1)"),
             dr.Cell(4, "import signal, time\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})\n"
                        "time.sleep(30)"),
             dr.Cell(5, "a"), dr.Cell(6, "while True: pass"), dr.Cell(7, "import numpy\nnumpy.random.rand()")]
    page = tmp_path / "page.md"
    page.write_text("")
    results = dr.run_mode("jax", page, cells, tmp_path, devices=1, timeout=0.3, grace=0.3)
    assert results[1]["error"] is None and not results[1]["after_crash"]
    assert results[2]["crash"].startswith("process died (SIGABRT")
    assert results[3]["stdout"] == "42\n" and results[3]["after_crash"]
    assert results[4]["crash"].startswith("killed: past 0.3 s")
    assert results[5]["value"] == "41"
    assert results[6]["error"]["type"] == "CellTimeout"
    import numpy

    assert results[7]["value"] == repr(numpy.random.RandomState(0).rand())  # the page's own seeded draws


@pytest.mark.docs
def test_jax_documentation_pages(tmp_path: Path) -> None:
    """The run over jax's own pages: MLAX_JAX_SRC is a jax checkout (MLAX_DOCS_PAGES narrows it)."""
    src = os.environ.get("MLAX_JAX_SRC")
    if not src:
        pytest.skip("set MLAX_JAX_SRC to a checkout of jax's source at the installed version")
    pages = os.environ.get("MLAX_DOCS_PAGES", "").split()
    out = tmp_path / "docs.json"
    argv = ["--jax-src", src, "--json", str(out), *(["--pages", *pages] if pages else [])]
    assert dr.main(argv) == 0
    result = json.loads(out.read_text())
    for page in result["pages"]:
        print(f"{page['page']}: {page['match']}/{page['match'] + page['fail']} match", file=sys.stderr)
    assert all(page["run"] for page in result["pages"])
