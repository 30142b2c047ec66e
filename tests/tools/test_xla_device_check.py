"""tools/xla_device_check.py end to end on this machine's CPU: ``prepare`` writes portable
artifacts that ``run`` (numpy and jax only, as on the GPU machine) compiles, checks against
mlax's CPU results and jax's, and times."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mlax.tools import xla_device_check

SCRIPT = Path(xla_device_check.__file__)


def test_prepare_then_run_without_mlax(tmp_path: Path) -> None:
    xla_device_check.prepare(tmp_path / "artifacts")
    names = {p.name for p in (tmp_path / "artifacts").iterdir()}
    assert {f"{n}.stablehlo" for n in xla_device_check.PROGRAMS} <= names
    # The run side must not need mlax: a fresh interpreter that cannot import it.
    argv = ["check", "run", str(tmp_path / "artifacts"), str(tmp_path / "out"), "--repeats", "2"]
    code = ("import sys; sys.modules['mlax'] = None; import runpy; "
            f"sys.argv = {argv!r}; runpy.run_path({str(SCRIPT)!r}, run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"}, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((tmp_path / "out" / "xla_device_check.json").read_text())
    assert report["platform"] == "cpu"
    assert set(report["programs"]) == set(xla_device_check.PROGRAMS)
    assert all(p["ok"] for p in report["programs"].values()), report
