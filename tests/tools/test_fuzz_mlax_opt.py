"""mlax-opt never gives an internal error: mutated lit inputs through its pass pipelines.

The cases (fuzz_inputs.py: the lit tests' inputs with bytes flipped, tokens deleted or
doubled, numbers and element types swapped, symbols renamed, functions deleted, text cut,
non-UTF-8 bytes put in...) run in this process, through mlax-opt's ``main``, and each must
end with a result and exit status 0 or with diagnostics and exit status 1: never "internal
error" or a Python traceback. An abort inside MLIR kills the test process, which fails the
run too. The default run takes 300 cases; more on demand, and another seed:

    MLAX_FUZZ_CASES=5000 MLAX_FUZZ_SEED=1 .venv/bin/pytest -p no:xdist -m fuzz tests/tools

(``-m fuzz`` selects these tests alone, ``-m "not fuzz"`` leaves them out). To hunt for
aborts without losing the run at the first one, use the supervisor, which runs the cases in
worker processes and reports each abort with its case:

    .venv/bin/python -m tests.tools.fuzz_runner --start 0 --count 10000 --report fuzz.jsonl
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.tools.fuzz_inputs import case
from tests.tools.fuzz_runner import run_case

CASES = int(os.environ.get("MLAX_FUZZ_CASES", "300"))
BASE_SEED = int(os.environ.get("MLAX_FUZZ_SEED", "0"))
BATCH = 50

pytestmark = pytest.mark.fuzz


def _batch_id(start: int) -> str:
    return f"cases{start}-{min(start + BATCH, CASES) - 1}"


@pytest.mark.parametrize("start", range(0, CASES, BATCH), ids=_batch_id)
def test_no_internal_errors(start: int, tmp_path: Path) -> None:
    """Cases [start, start + BATCH): every failure of the batch is listed with its case."""
    failures = []
    for index in range(start, min(start + BATCH, CASES)):
        fuzz_case = case(index, BASE_SEED)
        problem = run_case(fuzz_case, tmp_path).problem
        if problem is not None:
            failures.append(f"{fuzz_case}\n    {problem}")
    assert not failures, f"{len(failures)} case(s) failed (seed {BASE_SEED}):\n" + "\n".join(failures)


def test_cases_are_reproducible() -> None:
    """A case is a function of its index and seed alone (so a failure names all it needs)."""
    assert case(7, BASE_SEED) == case(7, BASE_SEED)
    assert case(7, BASE_SEED) != case(8, BASE_SEED)
