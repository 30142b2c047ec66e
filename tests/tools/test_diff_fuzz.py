"""The differential fuzzer (tools/diff_fuzz.py): random programs on every backend against jax.

The default run checks the fuzzer itself (determinism, comparison rules, an injected bug is
found and shrunk to a runnable reproducer) and runs a small seeded sample of programs on the
eager interpreter, the interpreter, cpu and xla backends: every disagreement must be one that
``KNOWN`` documents. The long form runs thousands of programs, in batches:

    MLAX_FUZZ_CASES=2000 MLAX_FUZZ_SEED=1 .venv/bin/pytest -p no:xdist -m fuzz tests/tools/test_diff_fuzz.py

(or, with worker processes, time limits, shrinking and a summary:
``python tools/diff_fuzz.py --seed 1 --programs 2000 --out fuzz-out``; docs/reliability.md).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from mlax.tools import diff_fuzz
from mlax.tools.diff_fuzz_ops import CATALOG, np_dtype

SAMPLE = int(os.environ.get("MLAX_DIFF_FUZZ_SAMPLE", "40"))
SAMPLE_SEED = 20260
CASES = int(os.environ.get("MLAX_FUZZ_CASES", "2000"))
BASE_SEED = int(os.environ.get("MLAX_FUZZ_SEED", "0"))
BATCH = 50
BACKENDS = ("eager", "interpreter", "cpu", "xla")


def _unknown(record: dict) -> list[str]:
    return [f"program {record['index']}: {f.get('min_summary', f['summary'])}\n{f.get('repro', '')}"
            for f in record.get("findings", []) if not f.get("known")]


def test_programs_are_a_function_of_seed_and_index() -> None:
    one, again, other = (diff_fuzz.generate(5, 3), diff_fuzz.generate(5, 3), diff_fuzz.generate(5, 4))
    assert diff_fuzz.program_source(one) == diff_fuzz.program_source(again)
    assert [i.data.tobytes() for i in one.inputs] == [i.data.tobytes() for i in again.inputs]
    assert diff_fuzz.program_source(one) != diff_fuzz.program_source(other)


@pytest.mark.parametrize("op", sorted(CATALOG))
def test_every_catalog_op_is_generated(op: str) -> None:
    """Each op of the catalog makes programs (jax accepts the call; the dtypes come from the op table)."""
    for index in range(30):
        prog = diff_fuzz.generate(0, index, ops=[op], transforms=["plain"])
        if op in prog.ops:
            return
    pytest.fail(f"no program of 30 uses {op}")


def test_catalog_dtypes_come_from_the_op_table() -> None:
    diff_fuzz.ops_mod.probe_dtypes()
    assert "bfloat16" in CATALOG["sin"].dtypes and "int32" not in CATALOG["sin"].dtypes
    popcount = CATALOG["population_count"].dtypes
    assert "uint8" in popcount and "float32" not in popcount


def test_comparison_rules() -> None:
    f32 = np.float32
    want = np.array([np.nan, np.inf, 0.0, 1.0, 1.0, -2.0], f32)
    got = np.array([np.nan, np.finfo(f32).max, -0.0, np.nextafter(f32(1), f32(2)), 1.001, -2.0], f32)
    # NaN == NaN, inf is one ulp above the largest float, -0 == +0, 1 ulp is within tolerance
    assert diff_fuzz.elementwise_bad(want, got, 0.0).tolist() == [False, False, False, False, True, False]
    bf16 = np_dtype("bfloat16")
    assert not diff_fuzz.elementwise_bad(np.array([1.0], bf16), np.array([1.0078125], bf16), 0.0).any()
    assert diff_fuzz.elementwise_bad(np.array([3], np.int8), np.array([4], np.int8), 0.0).all()


def test_ill_conditioned_sums_are_not_reported() -> None:
    """A cancelling sum: the oracle's spread under the allowed drift covers a reordered answer."""
    prog = diff_fuzz.generate(0, 0, ops=["neg"], transforms=["plain"])
    prog.stmts = [diff_fuzz.Stmt(("v9",), "reduce_sum", "lax.reduce_sum({0}, (0,))", ("x0",), 2 * 7, "in")]
    prog.inputs = [diff_fuzz.Input("x0", np.array([1e8, 1.0, -1e8, 3.0] * 8, np.float32))]
    prog.types = {"x0": ((32,), "float32"), "v9": ((), "float32")}
    prog.outputs = ["v9"]
    want = diff_fuzz.run_backend(prog, "jax").leaves
    reordered = diff_fuzz.Outcome(leaves=[np.asarray(want[0] + np.float32(8.0))])
    assert diff_fuzz.compare(prog, want, reordered, "cpu", {}) is None
    wrong = diff_fuzz.Outcome(leaves=[np.asarray(want[0] + np.float32(1e6))])
    assert diff_fuzz.compare(prog, want, wrong, "cpu", {}) is not None


def test_an_injected_bug_is_found_and_shrunk(monkeypatch: pytest.MonkeyPatch) -> None:
    """mlax.lax.sin made wrong: the fuzzer reports it, shrinks the program and writes a reproducer."""
    import mlax

    right = mlax.lax.sin
    monkeypatch.setattr(mlax.lax, "sin", lambda x: right(x) * 1.5)
    seen: set[str] = set()
    for index in range(40):
        record = diff_fuzz.fuzz_one(7, index, ["interpreter"], ["sin", "exp", "add", "reduce_sum"], 60.0,
                                    True, seen, ["plain", "vmap"])
        new = [f for f in record.get("findings", []) if not f["known"]]
        if new and "sin" in new[0].get("min_ops", []):
            break
    else:
        pytest.fail("the broken sin was never caught")
    finding = new[0]
    assert finding["backend"] == "interpreter"
    assert len(finding["min_ops"]) <= 2, finding["repro"]
    assert "lax.sin(" in finding["repro"] and "backend='interpreter'" in finding["repro"]
    namespace: dict = {}
    exec(compile(finding["repro"], "<repro>", "exec"), namespace)  # the reproducer runs standalone
    want, got = namespace["want"], namespace["got"]
    assert any(not np.allclose(np.asarray(w), np.asarray(g), equal_nan=True)
               for w, g in zip(want, got, strict=True))


def test_known_entries_state_their_cause() -> None:
    assert len({k.name for k in diff_fuzz.KNOWN}) == len(diff_fuzz.KNOWN)
    for known in diff_fuzz.KNOWN:
        assert known.status in ("difference", "open") and len(known.cause) > 40, known.name


def test_seeded_sample_has_no_unknown_disagreements() -> None:
    """A few dozen small programs through every backend: each disagreement is in KNOWN."""
    seen: set[str] = set()
    failures = []
    for index in range(SAMPLE):
        record = diff_fuzz.fuzz_one(SAMPLE_SEED, index, BACKENDS, None, 60.0, True, seen)
        failures += _unknown(record)
    assert not failures, f"{len(failures)} unknown disagreement(s):\n" + "\n".join(failures)


def _batch_id(start: int) -> str:
    return f"programs{start}-{min(start + BATCH, CASES) - 1}"


@pytest.mark.fuzz
@pytest.mark.slow
@pytest.mark.parametrize("start", range(0, CASES, BATCH), ids=_batch_id)
def test_fuzz_many_programs(start: int) -> None:
    """Programs [start, start + BATCH) of seed MLAX_FUZZ_SEED: every disagreement is in KNOWN."""
    seen: set[str] = set()
    failures = []
    for index in range(start, min(start + BATCH, CASES)):
        record = diff_fuzz.fuzz_one(BASE_SEED, index, BACKENDS, None, 60.0, True, seen)
        failures += _unknown(record)
    assert not failures, (f"{len(failures)} unknown disagreement(s) (seed {BASE_SEED}):\n"
                          + "\n".join(failures))
