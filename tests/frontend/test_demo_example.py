"""examples/demo.py (what `make demo` runs) runs to the end: its own checks against jax pass."""

from __future__ import annotations

from tests.frontend.examples import load_example


def test_demo_runs(capsys) -> None:
    load_example("demo").main()
    out = capsys.readouterr().out
    assert "mlax-autodiff" in out and "lax.scan" in out
