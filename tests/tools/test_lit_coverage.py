"""The lit tests keep up with the dialect: every op is in the round-trip test."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlax.dialect import OPS

LIT = Path(__file__).resolve().parents[2] / "lit-tests"


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_round_trips_in_lit(name: str) -> None:
    text = (LIT / "Dialect" / "mlax" / "roundtrip.mlir").read_text()
    assert f'= "mlax.{name}"(' in text, (
        f"add mlax.{name} to lit-tests/Dialect/mlax/roundtrip.mlir (input and CHECK line)")


def test_lit_tests_are_ascii() -> None:
    """A stray non-ASCII character (a full-width colon after CHECK) would skip a check silently."""
    for path in LIT.rglob("*.mlir"):
        assert path.read_text().isascii(), f"{path} has non-ASCII characters"
