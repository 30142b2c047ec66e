"""The README quickstart runs as written (docs move with the code)."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_quickstart_runs(capsys) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no python block"
    exec(compile(blocks[0], str(README), "exec"), {})
    assert "mlax." in capsys.readouterr().out  # the IR it prints


def test_quickstart_runs_on_the_xla_backend(capsys) -> None:
    """The same quickstart with XLA as the default backend (its stages replace the CPU's)."""
    import mlax

    block = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)[0]
    previous = mlax.config.backend
    mlax.config.update("backend", "xla")
    try:
        exec(compile(block.replace('as_text("linalg")', 'as_text("hlo")'), str(README), "exec"), {})
    finally:
        mlax.config.update("backend", previous)
    out = capsys.readouterr().out
    assert "stablehlo." in out and "HloModule" in out


def test_install_as_jax_block_runs() -> None:
    """The install_as_jax block, in a fresh process (the install is process-wide)."""
    import subprocess
    import sys

    block = next(b for b in re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
                 if "install_as_jax" in b)
    done = subprocess.run([sys.executable, "-c", block + "\nprint(jax.jit.__module__, jnp.sin.__module__)"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["mlax.api", "mlax.numpy.elementwise"]
