"""mlax.profiler on the native CPU backend: every kernel of a profiled call is recorded with its
time, what it is and the user's source line (mlax-profile-kernels), results are unchanged, and
programs called outside a profile never run the timed variant."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.passes.abi import PROFILE_CAPACITY

HERE = os.path.basename(__file__)


def _line_of(fun, text: str) -> int:
    """The line of ``fun``'s source that contains ``text``."""
    lines, first = inspect.getsourcelines(fun)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _layer(w, x):
    h = mnp.tanh(x @ w)  # the gemm and its activation
    return mnp.sum(h * h, axis=1)  # a reduction


def test_each_kernel_is_recorded_with_its_source_line() -> None:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((64, 48), np.float32)
    x = rng.standard_normal((32, 64), np.float32)
    program = mlax.jit(_layer)
    expected = np.asarray(program(w, x))
    with mlax.profiler.kernel_profile() as profile:
        got = [np.asarray(program(w, x)) for _ in range(3)]
    for out in got:
        np.testing.assert_array_equal(out, expected)
    assert len(profile.calls) == 3
    call = profile.calls[0]
    kinds = [k.kind for k in call.kernels]
    assert "sgemm" in kinds and "reduction" in kinds, kinds
    gemm = call.kernels[kinds.index("sgemm")]
    assert gemm.type == "f32[32,48]" and gemm.bytes == 4 * (64 * 48 + 32 * 64 + 32 * 48)
    assert f"{__file__}:{_line_of(_layer, 'x @ w')}" in gemm.source
    reduction = call.kernels[kinds.index("reduction")]
    assert f"{__file__}:{_line_of(_layer, 'mnp.sum')}" in reduction.source
    for call in profile.calls:  # every kernel once per call, inside the call, in program order
        assert sorted(call.events[:, 0].tolist()) == list(range(len(call.kernels)))
        starts, ends = call.events[:, 1], call.events[:, 2]
        assert np.all(ends >= starts) and starts.min() >= call.start and ends.max() <= call.end
        assert np.all(np.diff(starts) >= 0)
    table = profile.table()
    assert "sgemm" in table and f"{HERE}:{_line_of(_layer, 'x @ w')}" in table
    assert "3 calls of 1 programs" in table


def test_loop_bodies_are_recorded_per_step_inside_their_loop() -> None:
    def cumulative(h, xs):
        def step(h, x):
            h = mnp.sin(h) + x
            return h, mnp.max(h)
        return mlax.lax.scan(step, h, xs)

    program = mlax.jit(cumulative)
    h, xs = np.float32(np.arange(8)) / 8, np.random.default_rng(1).standard_normal((7, 8), np.float32)
    expected = program(h, xs)
    with mlax.profiler.kernel_profile() as profile:
        got = program(h, xs)
    for a, b in zip(expected, got, strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    (call,) = profile.calls
    loops = [i for i, k in enumerate(call.kernels) if k.kind == "loop" and k.is_span]
    body = [i for i, k in enumerate(call.kernels) if f":{_line_of(cumulative, 'mnp.sin')}" in k.source
            and not k.is_span]
    assert loops and body
    counts = np.bincount(call.events[:, 0], minlength=len(call.kernels))
    assert all(counts[i] == 7 for i in body), counts  # once per step
    spans = [row for row in call.events.tolist() if row[0] in loops]
    inner = [row for row in call.events.tolist() if row[0] in body]
    assert any(all(s[1] <= r[1] and r[2] <= s[2] for r in inner) for s in spans)


def test_a_full_event_buffer_counts_what_it_drops() -> None:
    steps = PROFILE_CAPACITY + 5000
    program = mlax.jit(lambda x: mlax.lax.fori_loop(0, steps, lambda i, v: v * 0.5 + 1.0, x))
    x = np.ones(4, np.float32)
    expected = np.asarray(program(x))
    with mlax.profiler.kernel_profile() as profile:
        got = np.asarray(program(x))
    np.testing.assert_array_equal(got, expected)
    (call,) = profile.calls
    assert len(call.events) == PROFILE_CAPACITY and call.dropped >= 5000
    assert "were not recorded" in profile.table()


def test_threads_record_their_own_calls() -> None:
    first = mlax.jit(lambda x: mnp.exp(x) @ x)
    second = mlax.jit(lambda x: mnp.sum(mnp.cos(x), axis=0))
    x = np.random.default_rng(2).standard_normal((48, 48), np.float32)
    expected = np.asarray(first(x)), np.asarray(second(x))
    errors: list[BaseException] = []

    def run(program, want) -> None:
        try:
            for _ in range(20):
                np.testing.assert_allclose(np.asarray(program(x)), want, rtol=1e-6)
        except BaseException as error:  # noqa: BLE001 (reported by the main thread)
            errors.append(error)

    with mlax.profiler.kernel_profile() as profile:
        pairs = zip((first, second), expected, strict=True)
        threads = [threading.Thread(target=run, args=pair) for pair in pairs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors
    assert len(profile.calls) == 40
    for call in profile.calls:
        assert sorted(call.events[:, 0].tolist()) == list(range(len(call.kernels)))


def test_outside_a_profile_the_program_runs_untimed() -> None:
    program = mlax.jit(lambda x: mnp.tanh(x) * 3)
    x = np.linspace(-2, 2, 9, dtype=np.float32)
    program(x)
    with mlax.profiler.kernel_profile():
        pass
    program(x)
    executable = program.lower(x).compile()._executable
    assert executable._profiled is None


def test_trace_writes_the_kernels_beside_jaxs_trace(tmp_path: Path) -> None:
    program = mlax.jit(_layer)
    w, x = np.ones((16, 8), np.float32), np.ones((4, 16), np.float32)
    with mlax.profiler.trace(str(tmp_path)):
        program(w, x)
    traces = list(tmp_path.glob("mlax-kernels-*.trace.json"))
    tables = list(tmp_path.glob("mlax-kernels-*.txt"))
    assert len(traces) == 1 and len(tables) == 1
    events = json.loads(traces[0].read_text())["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert {e["name"] for e in kernels} >= {"sgemm", "reduction"}
    assert all(e["dur"] >= 0 and e["args"]["source"] for e in kernels)
    assert any(e["name"] == "jit(_layer)" for e in events)
    assert "sgemm" in tables[0].read_text()
    assert list(tmp_path.glob("plugins/profile/*/*.xplane.pb"))  # jax's own trace too


@pytest.mark.slow
def test_mlax_profile_records_the_whole_process(tmp_path: Path) -> None:
    code = ("import numpy as np, mlax, mlax.numpy as mnp\n"
            "mlax.jit(lambda x: mnp.sum(mnp.exp(x)))(np.ones(100, np.float32))\n")
    env = {**os.environ, "MLAX_PROFILE": str(tmp_path)}
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=300)
    (table,) = tmp_path.glob("mlax-kernels-*.txt")
    assert "reduction" in table.read_text() and "<string>:2" in table.read_text()
