"""Control flow decided on the device, on the GPU backend (mlax-gpu-host-reads, the plan's loop,
while and if steps): every program lowers to PTX; the artifact's plan holds the host loops and
branches, with predicates read from device memory; the loader, copied alone, drives the
stand-in driver (tests/backends/gpu/fake_libcuda.c) through a while loop whose predicate comes from an
input (kernels do not run there) and a counted loop whose index reaches the kernels; the host
scalar functions agree with MLIR's integer semantics. Numerics need a GPU (skipped here)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax import lax
from mlax.backends.gpu import loader as gpu_loader
from mlax.backends.gpu.artifact import export_gpu
from mlax.backends.gpu.loader import Artifact, all_steps
from tests.backends.gpu.conftest import needs_gpu, run_loader_alone
from tests.oracle import assert_same, random_array


def _scan(x: Any) -> Any:
    return lax.scan(lambda c, r: (mnp.tanh(c + r), c * 2.0), mnp.zeros(x.shape[1], x.dtype), x)


def _while(x: Any) -> Any:
    return lax.while_loop(lambda s: s[1].sum() < 100.0, lambda s: (s[0] + 1, s[1] * 2.0 + 1.0), (0, x))


def _fori(x: Any) -> Any:
    return lax.fori_loop(0, 5, lambda i, c: c * 0.5 + i, x)


def _cond(x: Any) -> Any:
    return lax.cond(x.sum() > 0, lambda a: a * 2.0, lambda a: a - 1.0, x) * 3.0


def _nested(x: Any) -> Any:
    halve_or_add = lambda i, c: lax.cond(c.sum() > 1.0, lambda a: a * 0.5, lambda a: a + 1.0, c)  # noqa: E731
    return lax.fori_loop(0, 3, halve_or_add, x)


def _flag_loop(flag: Any, x: Any) -> Any:
    """A while loop whose first predicate is an input (the stand-in driver runs no kernel). The
    flag has one element, not none: the loader's upload flattens rank-0 inputs to rank 1."""
    return lax.while_loop(lambda s: s[0][0], lambda s: (s[1][:1] > 1e30, s[1] * 2.0), (flag, x))[1]


# name -> (function, argument shapes)
PROGRAMS: dict[str, tuple[Callable, tuple[tuple[int, ...], ...]]] = {
    "scan": (_scan, ((5, 37),)), "reverse_scan": (lambda x: lax.scan(
        lambda c, r: (c * r, c + r), mnp.ones(x.shape[1], x.dtype), x, reverse=True), ((4, 9),)),
    "while": (_while, ((6,),)), "fori": (_fori, ((3, 7),)), "cond": (_cond, ((33,),)),
    "nested": (_nested, ((4, 5),)),
    # an index computed on the device, read by the host and passed to the slicing kernel
    "dynamic_slice": (lambda x: lax.dynamic_slice(x, (mnp.argmax(x[:, 0]).astype(np.int32), np.int32(1)),
                                                  (2, 3)) * 2.0, ((5, 4),)),
}


def _plan(rng: np.random.Generator, name: str) -> tuple[Artifact, list[np.ndarray]]:
    f, shapes = PROGRAMS[name]
    arguments = [random_array(rng, shape, np.float32) for shape in shapes]
    return export_gpu(mlax.jit(f, backend="gpu").lower(*arguments)), arguments


def _kinds(steps: list[dict[str, Any]]) -> list[str]:
    return [step["op"] for step in steps]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_program_lowers_to_ptx(name: str, rng: np.random.Generator) -> None:
    artifact, _ = _plan(rng, name)
    launches = [s for s in all_steps(artifact.plan["steps"]) if s["op"] == "launch"]
    assert launches and all(f".entry {s['kernel']}(" in artifact.ptx[s["module"]] for s in launches)
    assert artifact.plan["version"] == gpu_loader.VERSION == 2


def test_a_scan_is_a_counted_loop_whose_index_reaches_its_kernels(rng: np.random.Generator) -> None:
    plan = _plan(rng, "scan")[0].plan
    loops = [s for s in plan["steps"] if s["op"] == "loop"]
    assert len(loops) == 1 and (loops[0]["lower"], loops[0]["upper"], loops[0]["step"]) == (
        ["c", 0], ["c", 5], ["c", 1])
    iv = {"register": loops[0]["iv"], "type": "i64"}
    launches = [s for s in loops[0]["body"] if s["op"] == "launch"]
    assert len(launches) == 2 and all(iv in s["args"] for s in launches)  # its row of xs, of ys
    assert "read" not in _kinds(list(all_steps(plan["steps"])))  # no predicate to read
    # The carry: a value slot set before the loop and at the end of each iteration.
    before = plan["steps"][plan["steps"].index(loops[0]) - 1]
    assert before["op"] == "move" and loops[0]["body"][-1]["op"] == "move"
    carry = before["buffers"][0][0]
    assert plan["buffers"][carry]["kind"] == "value" and loops[0]["body"][-1]["buffers"][0][0] == carry


def test_a_while_loop_reads_its_predicate_from_the_device(rng: np.random.Generator) -> None:
    plan = _plan(rng, "while")[0].plan
    (loop,) = [s for s in plan["steps"] if s["op"] == "while"]
    reads = [s for s in loop["before"] if s["op"] == "read"]
    assert len(reads) == 1 and reads[0]["dtype"] == "int8" and reads[0]["offset"] == 0  # a bool's byte
    truncation = loop["before"][loop["before"].index(reads[0]) + 1]
    assert truncation == {"op": "set", "dst": truncation["dst"], "fn": "trunc",
                          "args": [["r", reads[0]["dst"]], ["c", 1]]}
    assert loop["predicate"] == ["r", truncation["dst"]]
    assert "launch" in _kinds(loop["before"]) and "launch" in _kinds(loop["after"])
    assert plan["buffers"][reads[0]["buffer"]]["kind"] == "temporary"


def test_a_cond_reads_its_predicate_then_branches(rng: np.random.Generator) -> None:
    plan = _plan(rng, "cond")[0].plan
    kinds = _kinds(plan["steps"])
    assert kinds.index("read") < kinds.index("if")
    (branch,) = [s for s in plan["steps"] if s["op"] == "if"]
    for side in ("then", "else"):
        assert _kinds(branch[side]) == ["alloc", "launch", "move"]
    result = branch["then"][-1]["buffers"][0][0]
    assert branch["else"][-1]["buffers"][0][0] == result and plan["buffers"][result]["kind"] == "value"
    # The result feeds the last kernel (base, offset 0 and stride 1 of a contiguous result).
    last = [s for s in plan["steps"] if s["op"] == "launch"][-1]
    assert last["args"][:3] == [result, ["i64", 0], ["i64", 1]]


def test_an_index_computed_on_the_device_is_read_for_a_kernel(rng: np.random.Generator) -> None:
    plan = _plan(rng, "dynamic_slice")[0].plan
    (read,) = [s for s in plan["steps"] if s["op"] == "read"]
    assert read["dtype"] == "int32"
    functions = [s["fn"] for s in plan["steps"] if s["op"] == "set"]
    assert functions == ["sext", "max", "min", "copy"]  # clamped into the array, as lax does
    index = next(s for s in plan["steps"] if s["op"] == "set" and s["fn"] == "copy")["dst"]
    last = [s for s in plan["steps"] if s["op"] == "launch"][-1]
    assert {"register": index, "type": "i64"} in last["args"]


@pytest.mark.parametrize("a, b", [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 3)])
def test_host_integer_functions_round_as_mlir_does(a: int, b: int) -> None:
    functions = gpu_loader.FUNCTIONS
    quotient = int(np.trunc(a / b))  # arith.divsi/remsi round toward zero
    assert functions["div"](a, b) == quotient and functions["rem"](a, b) == a - b * quotient
    assert functions["trunc"](a, 8) == np.int64(a).astype(np.int8) and functions["trunc"](a, 1) == a & 1
    assert functions["sext"](1, 1) == -1 and functions["sext"](255, 8) == -1
    assert functions["ult"](-1, 0) == 0 and functions["slt"](-1, 0) == 1
    assert functions["select"](0, a, b) == b and functions["ne"](a, b) == int(a != b)


@pytest.mark.parametrize("flag", [False, True])
def test_the_loader_runs_a_while_loop_as_its_predicate_says(flag: bool, rng: np.random.Generator,
                                                            tmp_path: Path, fake_driver: Path) -> None:
    """The first predicate is the input flag, copied into the loop's carry and read back from
    the device (a one-byte dtoh); the body's kernels run once when it is true, never when false
    (the next predicate is a fresh buffer's byte: 0, since kernels do not run on the stand-in)."""
    x = random_array(rng, (8,), np.float32)
    flags = np.array([flag])
    artifact = export_gpu(mlax.jit(_flag_loop, backend="gpu").lower(flags, x))
    (loop,) = [s for s in artifact.plan["steps"] if s["op"] == "while"]
    before, after = ([s["kernel"] for s in loop[part] if s["op"] == "launch"] for part in ("before", "after"))
    assert after
    done, lines, outputs = run_loader_alone(tmp_path, fake_driver, artifact, [flags, x])
    assert done.returncode == 0, done.stderr
    calls = [i for i, line in enumerate(lines) if line.startswith("htod ") and line.endswith(" 1")]
    assert len(calls) == 2  # each call uploads the flag (and x)
    reads = [line for line in lines if line.startswith("dtoh ") and line.endswith(" 1")]
    assert len(reads) == 2 * (1 + flag)  # one read per test of the predicate
    launches = [line.split()[1] for line in lines if line.startswith("launch ")]
    assert launches == 2 * ((before + after) * flag + before)
    if not flag:  # no kernel ran: the output is x, copied in and out by the device
        for output in outputs:
            np.testing.assert_array_equal(output, x)


def test_the_loader_passes_a_counted_loops_index_to_its_kernels(rng: np.random.Generator, tmp_path: Path,
                                                                fake_driver: Path) -> None:
    artifact, arguments = _plan(rng, "scan")
    (loop,) = [s for s in artifact.plan["steps"] if s["op"] == "loop"]
    first = next(s for s in loop["body"] if s["op"] == "launch")
    position = first["args"].index({"register": loop["iv"], "type": "i64"})
    done, lines, outputs = run_loader_alone(tmp_path, fake_driver, artifact, arguments)
    assert done.returncode == 0, done.stderr
    params = [lines[i + 1].split()[1:] for i, line in enumerate(lines) if line.startswith("launch ")
              and lines[i + 1].startswith("params") and i + 1 < len(lines)]
    rows = [int(p[position]) for p in params if len(p) == len(first["args"])]
    assert rows == [0, 1, 2, 3, 4] * 2  # two calls of five steps
    allocations = [line for line in lines if line.startswith("alloc ")]
    frees = [line for line in lines if line.startswith("free ")]
    # The carry's buffers alternate (two live at once), are reused by the second call, and all
    # are freed at the end.
    assert len(allocations) == len(frees) and len({a.split()[1] for a in allocations}) == len(allocations)
    assert [(o.shape, o.dtype) for o in outputs] == [((37,), np.float32), ((5, 37), np.float32)] * 2


@needs_gpu
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_agree_with_the_cpu_backend(name: str, rng: np.random.Generator) -> None:
    f, shapes = PROGRAMS[name]
    arguments = [random_array(rng, shape, np.float32) for shape in shapes]
    assert_same(mlax.jit(f, backend="gpu")(*arguments), mlax.jit(f, backend="cpu")(*arguments),
                rtol=2e-5, atol=1e-6)
