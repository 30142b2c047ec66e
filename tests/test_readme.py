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
