"""backends/xla/device_check.py end to end on this machine's CPU: ``prepare`` writes StableHLO
programs and copies the check beside them; ``run``, from that folder alone (numpy and jax only,
as on the device machine), compiles and calls them as mlax's XLA backend does, checks against
mlax's CPU results and jax's, and times. The command line (tools/device_check.py) hands
``prepare`` the front end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import mlax
from mlax.backends.xla import device_check as xla_device_check
from mlax.tools import device_check


def test_prepare_then_run_without_mlax(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sample = dict(sorted(xla_device_check.PROGRAMS.items())[:3])  # the run side is what is checked here
    monkeypatch.setattr(xla_device_check, "PROGRAMS", sample)
    xla_device_check.prepare(tmp_path / "artifacts", mlax)
    names = {p.name for p in (tmp_path / "artifacts").iterdir()}
    assert {f"{n}.{kind}" for n in sample for kind in ("mlir", "json")} <= names
    assert {"xla_device_check.py", "device_programs.py", "pjrt.py"} <= names
    script = tmp_path / "artifacts" / "xla_device_check.py"
    # The run side must not need mlax: a fresh interpreter that cannot import it.
    argv = ["check", "run", str(tmp_path / "artifacts"), str(tmp_path / "out"), "--repeats", "2"]
    code = ("import sys; sys.modules['mlax'] = None; import runpy; "
            f"sys.argv = {argv!r}; runpy.run_path({str(script)!r}, run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"}, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "out" / "xla_device_check.json").read_text())
    assert report["platform"] == "cpu"
    assert set(report["programs"]) == set(sample)  # the prepared ones
    assert all(p["ok"] for p in report["programs"].values()), report


def test_the_command_line_names_each_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert device_check.main([]) == 2 and "gpu prepare DIR" in capsys.readouterr().err
    assert set(device_check.CHECKS) == {"gpu", "xla"}
