"""What mlax prints reads back in: every lit test's `mlax-opt` output, and every named stage of
every backend's pipeline (and the IR after each pass of the native ones, as ``MLAX_DUMP_DIR``
writes it), parse and verify again in `mlax-opt` and in upstream ``mlir-opt --irdl-file``.

The lit RUN lines run through `mlax-opt`'s ``main`` in this process; their outputs are read
back by its per-chunk step (source guard, parse, three-way verification, print) in one shared
context, and must print back unchanged; ``mlir-opt`` runs once per test on all the texts,
split with ``// -----``. StableHLO is unregistered in both (it prints in generic form), so
texts holding it are read with unregistered dialects allowed, and once more by jax's own MLIR
(`pjrt.jax_ir_context`), which has StableHLO's and Shardy's verifiers.

A program partitioned for Shardy is the one text neither `mlax-opt` nor ``mlir-opt`` can
read: its body is called from inside ``sdy.manual_computation`` (as jax emits it too), and
MLIR takes an unknown op with one region for a possible symbol table, so the ``func.call``
there cannot be resolved. jax's MLIR reads it; the GSPMD form reads everywhere.
"""

from __future__ import annotations

import argparse
import functools
import re
import shlex
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import jax
import mlir
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P
from mlir import ir

import mlax
import mlax.numpy as jnp
from mlax import lax
from mlax.api import Lowered
from mlax.backends.xla import pjrt
from mlax.dialect import make_context
from mlax.dialect.irdl_gen import IRDL_PATH
from mlax.passes.diagnostics import errors, format_all
from mlax.passes.pipeline import parse_pipeline
from mlax.tools import mlax_opt

LIT = Path(__file__).resolve().parents[2] / "lit-tests"
MLIR_OPT = Path(mlir.__path__[0]) / "bin" / "mlir-opt"
SPLIT = "// -----\n"


@dataclass(frozen=True)
class Printed:
    """IR text that mlax printed: where it came from, and how to read it back."""

    label: str
    text: str
    stablehlo: bool  # holds StableHLO (generic ops of a dialect mlax-opt and mlir-opt lack)
    split: bool = False  # several modules joined by `// -----` (--split-input-file output)
    debuginfo: bool = False  # printed with locations (--mlir-print-debuginfo)
    shardy: bool = False  # holds sdy.manual_computation: only jax's MLIR reads it (docstring)


@pytest.fixture(scope="module")
def context() -> ir.Context:
    return make_context()


def read_back(printed: Printed, context: ir.Context) -> tuple[str | None, str]:
    """(what went wrong or None, the text printed again) for ``printed`` read by mlax-opt."""
    options = mlax_opt.Options((), verify_diagnostics=False, print_ir_after_all=False,
                               debuginfo=printed.debuginfo, generic=False)
    context.allow_unregistered_dialects = printed.stablehlo
    outputs, problems = [], []
    with context:
        for chunk in mlax_opt.split_input(printed.text, printed.split):
            again, diagnostics, failure = mlax_opt.process_chunk(chunk, printed.label, context, options)
            if errors(diagnostics) or failure or again is None:
                problems.append(format_all(diagnostics, {printed.label: printed.text}) or str(failure))
            outputs.append(again or "")
    problem = f"{printed.label}: mlax-opt cannot read it back:\n" + "\n".join(problems) if problems else None
    return problem, SPLIT.join(outputs)


def mlir_opt_problems(texts: list[Printed], tmp_path: Path) -> list[str]:
    """What upstream mlir-opt (with the mlax IRDL) says about ``texts``: one process for the
    registered ones, one for those holding StableHLO."""
    problems = []
    for stablehlo in (False, True):
        chunks = [p for p in texts if p.stablehlo == stablehlo]
        if not chunks:
            continue
        source = tmp_path / f"all{int(stablehlo)}.mlir"
        starts, lines, parts = [], 1, []
        for printed in chunks:
            text = printed.text if printed.text.endswith("\n") else printed.text + "\n"
            starts.append((lines, printed.label))
            parts.append(text + SPLIT)
            lines += text.count("\n") + 1
        source.write_text("".join(parts))
        argv = [str(MLIR_OPT), f"--irdl-file={IRDL_PATH}", "--split-input-file", "-o", "/dev/null",
                str(source), *["--allow-unregistered-dialect"] * stablehlo]
        result = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        if result.returncode == 0:
            continue
        found = re.finditer(rf"^{re.escape(str(source))}:(\d+):\d+: error: .*$", result.stderr, re.M)
        located = [f"{next(label for start, label in reversed(starts) if start <= int(m.group(1)))}: "
                   f"mlir-opt: {m.group()}" for m in found]
        problems += located or [f"mlir-opt failed: {result.stderr[-2000:]}"]
    return problems


# --- the lit tests' outputs ----------------------------------------------------------------------


def run_lines(path: Path) -> list[str]:
    """The RUN lines of a lit test, continuation lines joined."""
    commands, pending = [], ""
    for line in path.read_text().splitlines():
        match = re.search(r"RUN:\s?(.*)$", line)
        if match is None:
            continue
        text = match.group(1).rstrip()
        if text.endswith("\\"):
            pending += text[:-1] + " "
        else:
            commands.append(pending + text)
            pending = ""
    return commands


def mlax_opt_runs(path: Path) -> list[list[str]]:
    """The arguments of each RUN line that starts with ``%mlax-opt ... %s`` (and is expected to
    succeed: ``not %mlax-opt`` prints nothing to read back)."""
    runs = []
    for command in run_lines(path):
        words = shlex.split(command.split("|")[0])
        if words[:1] == ["%mlax-opt"] and "%s" in words:
            runs.append([str(path) if w == "%s" else w for w in words[1:]])
    return runs


LIT_FILES = sorted(p for p in LIT.rglob("*.mlir") if mlax_opt_runs(p))


def _lit_id(path: Path) -> str:
    return str(path.relative_to(LIT))


# The outputs of each file's RUN lines, kept for the mlir-opt test.
_LIT_OUTPUTS: dict[Path, list[Printed]] = {}


def _stablehlo(argv: list[str]) -> bool:
    return "--allow-unregistered-dialect" in argv or any(
        name in word for word in argv for name in mlax_opt.STABLEHLO_PASSES)


@functools.cache
def _parser() -> argparse.ArgumentParser:
    return mlax_opt.build_parser()


def opt(argv: list[str]) -> tuple[int, str, str]:
    """(exit status, output, stderr) of ``mlax-opt argv``: its ``main`` without the command
    line's own checks (one context fewer per run)."""
    passes, rest = mlax_opt.split_pass_flags(argv)
    args = _parser().parse_args(rest)
    elements = parse_pipeline(args.pass_pipeline or ", ".join(passes))
    options = mlax_opt.Options(elements, args.verify_diagnostics, args.mlir_print_ir_after_all,
                               args.mlir_print_debuginfo, args.mlir_print_op_generic)
    out, err, status = mlax_opt.run(Path(args.input).read_text(), args.input, options,
                                    args.split_input_file, args.allow_unregistered_dialect)
    return status, out, err


def _lit_printed(path: Path) -> list[Printed]:
    if path not in _LIT_OUTPUTS:
        printed = []
        for argv in mlax_opt_runs(path):
            status, out, err = opt(argv)
            label = f"{_lit_id(path)}: mlax-opt {shlex.join('%s' if a == str(path) else a for a in argv)}"
            assert status == 0 or "--verify-diagnostics" in argv, f"{label} failed:\n{err}"
            if out.strip():
                assert "--mlir-print-op-generic" not in argv, "read it back in generic form too"
                printed.append(Printed(label, out, _stablehlo(argv), SPLIT in out,
                                       "--mlir-print-debuginfo" in argv))
        _LIT_OUTPUTS[path] = printed
    return _LIT_OUTPUTS[path]


@pytest.mark.parametrize("path", LIT_FILES, ids=_lit_id)
def test_lit_outputs_read_back(path: Path, context: ir.Context) -> None:
    """Each `%mlax-opt ... %s` RUN line's output parses, verifies, and prints back unchanged."""
    problems = []
    for printed in _lit_printed(path):
        problem, again = read_back(printed, context)
        if problem is None and again != printed.text:
            problem = f"{printed.label}: prints differently once read back"
        problems += [problem] if problem else []
    assert not problems, "\n".join(problems)


def test_lit_outputs_read_back_in_mlir_opt(tmp_path: Path) -> None:
    """The same outputs, all in one upstream mlir-opt process."""
    texts = [p for path in LIT_FILES for p in _lit_printed(path)]
    assert len(texts) > 200
    problems = mlir_opt_problems(texts, tmp_path)
    assert not problems, "\n".join(problems)


# --- every stage of every backend -------------------------------------------------------------------

BACKENDS = ("cpu", "xla", "gpu")
# XLA's optimized HLO is XLA's text, not MLIR.
NOT_MLIR = {"hlo"}


def _floats(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)


def _matmul(x, y):
    return jnp.sum(jnp.tanh(x @ y) * 2.0, axis=0)


def _control_flow(x):
    def body(carry, row):
        return carry * 0.5 + jnp.sin(row), carry.sum()

    carry, sums = lax.scan(body, x[0], x)
    grown = lax.while_loop(lambda v: v[0] < 10.0, lambda v: v + 1.0, carry)
    return lax.cond(grown.sum() > 0, lambda a: a * 2, lambda a: -a, grown), sums


def _indexing(x, i):
    return x[i].sum() + x.at[i].add(1.0)[1:3, ::2].sum() + jnp.sort(x, axis=1)[0]


def _grad(x):
    return mlax.grad(lambda v: jnp.sum(jnp.exp(v) ** 2))(x)


def _vmap(x):
    return mlax.vmap(lambda v: jnp.cumsum(v) @ v)(x)


def _dtypes(x, b, i):
    return (x.astype(jnp.bfloat16) * 2).astype(jnp.float32) + (i // 3).astype(jnp.float32), b & (i > 2)


def _conv(x, k):
    return lax.conv_general_dilated(x, k, (1, 1), "SAME")


def _random(key):
    return mlax.random.normal(key, (3, 4)), mlax.random.uniform(mlax.random.fold_in(key, 3), (5,))


PROGRAMS: dict[str, tuple[Callable, Callable[[], tuple]]] = {
    "matmul": (_matmul, lambda: (_floats(4, 3), _floats(3, 5))),
    "control_flow": (_control_flow, lambda: (_floats(5, 3),)),
    "indexing": (_indexing, lambda: (_floats(4, 6), np.array([2, 0], np.int32))),
    "grad": (_grad, lambda: (_floats(4),)),
    "vmap": (_vmap, lambda: (_floats(3, 4),)),
    "dtypes": (_dtypes, lambda: (_floats(4), np.array([True, False, True, True]),
                                 np.arange(4, dtype=np.int32))),
    "conv": (_conv, lambda: (_floats(1, 2, 6, 6), _floats(3, 2, 3, 3))),
    "random": (_random, lambda: (mlax.random.PRNGKey(0),)),
}
# The GPU road is the slow one (each stage runs its pipeline from the start): the programs
# whose kernels differ most.
GPU_PROGRAMS = ("matmul", "control_flow", "indexing", "dtypes")


def _sharded_program() -> tuple[Callable, tuple]:
    """A shard_map with a collective, jitted over a 2x2 mesh of the session's CPU devices (XLA
    only: the native backends run one device)."""
    mesh = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("x", "y"))
    mapped = mlax.shard_map(lambda a: lax.psum(jnp.sin(a), "y"), mesh=mesh, in_specs=P("x", "y"),
                            out_specs=P("x", None))
    jitted = mlax.jit(lambda a, b: mapped(a) + b.sum(), backend="xla",
                      in_shardings=(NamedSharding(mesh, P("x", "y")), None))
    return jitted, (_floats(4, 4), _floats(4, 4))


def _stages(label: str, lowering: Lowered, shardy: bool = False) -> Iterator[Printed]:
    for stage in lowering.STAGES:
        if stage not in NOT_MLIR:
            yield Printed(f"{label}/{stage}", lowering.as_text(stage), stablehlo=stage == "stablehlo",
                          debuginfo=True, shardy=shardy and stage == "stablehlo")


def stage_texts() -> Iterator[Printed]:
    """Every named stage of every backend for the programs (with locations, as printed by
    default), and of a sharded program for both of jax's partitioners."""
    for name, (f, make) in PROGRAMS.items():
        for backend in BACKENDS if name in GPU_PROGRAMS else ("cpu", "xla"):
            yield from _stages(f"{name}/{backend}", mlax.jit(f, backend=backend).lower(*make()))
    before = jax.config.jax_use_shardy_partitioner
    for shardy in (True, False):
        jax.config.update("jax_use_shardy_partitioner", shardy)
        try:
            jitted, args = _sharded_program()
            yield from _stages(f"sharded-{'shardy' if shardy else 'gspmd'}/xla", jitted.lower(*args), shardy)
        finally:
            jax.config.update("jax_use_shardy_partitioner", before)


def dumped_texts(tmp_path: Path) -> Iterator[Printed]:
    """The IR after each pass of the native backends' pipelines (``MLAX_DUMP_DIR``; XLA's are
    the named stages above), for one program."""
    before = mlax.config.dump_dir
    f, make = PROGRAMS["control_flow"]
    for backend, last in (("cpu", "llvm"), ("gpu", "binary")):
        dump = tmp_path / "dump" / backend
        mlax.config.update("dump_dir", str(dump))
        try:
            mlax.jit(f, backend=backend).lower(*make()).as_text(last)
        finally:
            mlax.config.update("dump_dir", before)
        files = sorted(dump.glob("*.mlir"))
        assert len(files) > 5, files
        for path in files:
            yield Printed(f"{backend} dump {path.name}", path.read_text(), stablehlo=False)


@pytest.fixture(scope="module")
def stages(tmp_path_factory: pytest.TempPathFactory) -> list[Printed]:
    return [*stage_texts(), *dumped_texts(tmp_path_factory.mktemp("stages"))]


def test_every_stage_reads_back(stages: list[Printed], context: ir.Context) -> None:
    """Each text parses, verifies and prints back unchanged, locations included."""
    labels = {p.label.rsplit("/", 1)[-1] for p in stages}
    assert {"mlax", "linalg", "buffers", "loops", "llvm", "partitioned", "stablehlo", "gpu", "nvvm",
            "binary"} <= labels
    problems = []
    for printed in stages:
        if printed.shardy:
            continue
        problem, again = read_back(printed, context)
        if problem is None and again != printed.text:
            problem = f"{printed.label}: prints differently once read back"
        problems += [problem] if problem else []
    assert not problems, "\n".join(problems)


def test_every_stage_reads_back_in_mlir_opt(stages: list[Printed], tmp_path: Path) -> None:
    problems = mlir_opt_problems([p for p in stages if not p.shardy], tmp_path)
    assert not problems, "\n".join(problems)


def test_stablehlo_stages_verify_in_jax(stages: list[Printed]) -> None:
    """The StableHLO texts, read by jax's MLIR: StableHLO's (and Shardy's) own verifiers."""
    from jaxlib.mlir import ir as jax_ir

    texts = [p for p in stages if p.stablehlo]
    assert any(p.shardy for p in texts) and len(texts) > len(PROGRAMS)
    problems = []
    with pjrt.jax_ir_context():
        for printed in texts:
            try:
                jax_ir.Module.parse(printed.text)
            except jax_ir.MLIRError as error:
                problems.append(f"{printed.label}: {error}")
    assert not problems, "\n".join(problems)


def test_shardy_program_is_refused_with_a_located_error(stages: list[Printed], context: ir.Context) -> None:
    """The one text mlax-opt cannot read (module docstring) is refused cleanly, at the call."""
    printed = next(p for p in stages if p.shardy)
    problem, _ = read_back(printed, context)
    assert problem is not None
    assert "'func.call' op 'mlax_spmd_body' does not reference a valid function" in problem
