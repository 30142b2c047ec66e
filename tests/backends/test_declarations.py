"""Each backend is declared once, and everything that names its stages derives from that:
``Lowered.as_text(stage)`` prints what mlax-opt prints for the backend's pipeline text up to that
stage, for every backend and every stage its pipeline has."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest

import mlax
from mlax.backends.registry import BACKENDS, get_backend
from mlax.passes.registry import make_pass
from mlax.tools import mlax_opt

PIPELINE_STAGES = [(name, stage) for name in ("interpreter", "cpu", "gpu", "xla")
                   for stage in BACKENDS[name].options.stage_names]


def main(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Named ``main``: XLA's entry keeps its name, so its last stage needs no renaming."""
    return mlax.numpy.tanh(x @ y).sum(axis=0), mlax.numpy.cumsum(x, axis=1)


@pytest.mark.parametrize(("backend", "stage"), PIPELINE_STAGES, ids=[f"{b}-{s}" for b, s in PIPELINE_STAGES])
def test_as_text_is_what_mlax_opt_prints(backend: str, stage: str, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((8, 8)).astype(np.float32) for _ in range(2))
    lowered = mlax.jit(main, backend=backend).lower(x, y)
    source = tmp_path / "main.mlir"
    source.write_text(lowered.as_text("mlax", debug_info=False))
    pipeline = get_backend(backend).options
    text = dataclasses.replace(pipeline, to=stage).textual()
    capsys.readouterr()
    status = mlax_opt.main([str(source), f"--pass-pipeline=builtin.module({text})",
                            *(["--allow-unregistered-dialect"] if backend == "xla" else [])])
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert _untimed(printed) == _untimed(lowered.as_text(stage, debug_info=False))


def _untimed(text: str) -> str:
    """Without gpu.binary's compile times, which differ between two compiles."""
    return re.sub(r"TimeInMs = \d+", "TimeInMs = T", text).strip()


def test_pipeline_text_reads_back() -> None:
    """The textual form parses back to the same options (what a dump's pass names come from)."""
    for backend in ("interpreter", "cpu", "gpu", "xla"):
        options = get_backend(backend).options
        name, option_text = re.fullmatch(r"([\w-]+)\{(.*)\}", options.textual()).groups()
        assert make_pass(name, option_text) == options


def test_options_are_frozen_and_hashable() -> None:
    """The compile cache's key holds them: two pipelines with other options are other programs."""
    cpu = get_backend("cpu")
    assert hash(cpu.options) == hash(dataclasses.replace(cpu.options))
    assert dataclasses.replace(cpu.options, blas=not cpu.options.blas) != cpu.options
    with pytest.raises(dataclasses.FrozenInstanceError):
        cpu.options.to = "loops"  # type: ignore[misc]


def test_the_stage_option_and_help_derive_from_the_stages() -> None:
    """`to` defaults to the last stage and its help lists them all; mlax-opt's help for the
    pipeline names the stages (last_stage, PassPipeline.STAGES)."""
    for backend in ("interpreter", "cpu", "gpu", "xla"):
        options = get_backend(backend).options
        cls, names = type(options), options.stage_names
        field = next(f for f in dataclasses.fields(cls) if f.name == "to")
        assert field.default == names[-1]
        assert field.metadata["help"].endswith(", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1
                                               else names[0])
        assert f"(stages: {', '.join(names)})" in mlax_opt._pass_flag_help(cls.argument)
