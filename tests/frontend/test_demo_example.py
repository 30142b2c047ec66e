"""examples/demo.py (what `make demo` runs) runs to the end: its own checks against jax pass."""

from __future__ import annotations

import pytest

from tests.frontend.examples import load_example


@pytest.mark.parametrize("backend", ["cpu", "xla"], indirect=True)
def test_demo_runs(capsys, backend) -> None:
    load_example("demo").main()
    out = capsys.readouterr().out
    assert "mlax-autodiff" in out and "lax.scan" in out
