"""tools/peer_tests.py: other people's test suites on jax and on mlax.

CI runs a fixed sample of the tests optax's wheel ships (both runs, about a minute) and checks
that the runner refuses to count as mlax's what the real jax computed. The libraries' whole
selections run behind the ``peer`` marker (``pytest -m peer tests/tools/test_peer_tests.py``),
from checkouts named by ``PEER_SRC_<LIBRARY>`` (for optax, its installed wheel by default)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import optax
import pytest

from mlax.tools import peer_tests

SITE_PACKAGES = Path(optax.__file__).resolve().parent.parent
# Small files of optax's own tests, shipped in its wheel; every one of their tests that passes on
# jax passes on mlax.
OPTAX_SAMPLE = ("optax/_src/update_test.py", "optax/_src/combine_test.py", "optax/transforms/_adding_test.py",
                "optax/transforms/_clipping_test.py", "optax/schedules/_join_test.py")


def test_optax_sample_passes_on_mlax_as_on_jax(tmp_path: Path) -> None:
    report = peer_tests.run_suite("optax", SITE_PACKAGES, OPTAX_SAMPLE, timeout=120, work=tmp_path)
    assert not report.refused, report.format()
    assert report.mlax.checks and all(v is True for v in report.mlax.checks.values()), report.mlax.checks
    assert len(report.jax_passed()) >= 30, report.format()
    assert report.mlax_passed_of_jax() == report.jax_passed(), report.format()
    text = report.format()
    assert f"mlax: {len(report.jax_passed())} of jax's {len(report.jax_passed())} pass (100.0 %)" in text
    assert not list(tmp_path.glob("optax")), "nothing laid out may shadow the installed package"


def _fake_suite(tmp_path: Path, files: dict[str, str]) -> Path:
    src = tmp_path / "src"
    for name, text in files.items():
        path = src / "optax" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return src


def test_a_test_the_real_jax_computed_is_not_an_mlax_pass(tmp_path: Path) -> None:
    src = _fake_suite(tmp_path, {"fake_test.py": """
        import sys

        import jax
        import jax.numpy as jnp
        import numpy as np


        def test_on_mlax():
            assert float(jnp.add(1.0, 2.0)) == 3.0


        def test_on_the_real_jax():
            # what a module of jax passed through to the real jax does
            real_jnp = sys.modules["jax.numpy"].__dict__.get("_mlax_real", jnp)
            assert float(np.asarray(real_jnp.add(1.0, 2.0))) == 3.0


        def test_fails_on_both():
            assert jnp.ones(2).shape == (3,)
    """, "broken_test.py": "import no_such_module_anywhere\n"})
    report = peer_tests.run_suite("optax", src, ["optax/*_test.py"], timeout=60, work=tmp_path / "work")
    assert not report.refused, report.format()
    assert {t.split("::")[-1] for t in report.jax_passed()} == {"test_on_mlax", "test_on_the_real_jax"}
    assert {t.split("::")[-1] for t in report.mlax_passed_of_jax()} == {"test_on_mlax"}
    (cause, count), = report.causes().items()
    assert count == 1 and cause.startswith("ran on the real jax: ") and cause.endswith("fake_test"), cause
    failed = next(r for t, r in report.jax.tests.items() if t.endswith("test_fails_on_both"))
    assert failed["cause"].startswith("AssertionError: assert (N,) == (N,)")
    for run in (report.jax, report.mlax):  # a file that does not import: the others still run
        assert list(run.collect_errors.values()) == [
            "ModuleNotFoundError: No module named 'no_such_module_anywhere'"]
    assert "1 of jax's 2 pass (50.0 %)" in report.format()


def test_a_run_where_a_module_holds_the_real_jax_is_refused(tmp_path: Path) -> None:
    src = _fake_suite(tmp_path, {"holds_test.py": """
        import sys

        import jax.numpy as jnp

        REAL_NUMPY = sys.modules["jax.numpy"].__dict__.get("_mlax_real")  # a library that kept jax's


        def test_anything():
            assert jnp.ones(2).shape == (2,)
    """})
    report = peer_tests.run_suite("optax", src, ["optax/holds_test.py"], timeout=60, modes=("mlax",),
                                  work=tmp_path / "work")
    assert report.refused and "holds_test" in " ".join(report.refused), report.refused
    assert "REFUSED" in report.format()


def test_normalize_cause() -> None:
    normalize = peer_tests.normalize_cause
    assert normalize("ValueError", "\nshapes (3, 4) and (5,) at 0x7f00aa in /tmp/x/y.py\nmore") == \
        "ValueError: shapes (N, N) and (N,) at <addr> in <path>"
    assert normalize("AssertionError", "") == "AssertionError"
    assert normalize("TypeError", "got -1.5e-3 for float32[2,3]") == "TypeError: got N for float32[N,N]"
    text = "_ ERROR _\nTraceback:\nE   ImportError: cannot import name 'x'\nE   (details)\n"
    assert peer_tests.collect_error_cause(text) == "ImportError: cannot import name 'x'"


def test_every_suite_names_an_installed_or_known_layout() -> None:
    assert set(peer_tests.SUITES) == {"optax", "flax", "equinox", "chex", "distrax", "dm-haiku"}
    assert peer_tests.source_version(peer_tests.SUITES["optax"], SITE_PACKAGES) == optax.__version__
    files = peer_tests.select_files(SITE_PACKAGES, peer_tests.SUITES["optax"].files)
    assert "optax/_src/alias_test.py" in files and len(files) >= 12


PEER_SUITES = ["optax", "flax", "equinox", "chex", "distrax", "dm-haiku"]


@pytest.mark.peer
@pytest.mark.parametrize("library", PEER_SUITES)
def test_whole_selection(library: str, tmp_path: Path) -> None:
    """The suite's whole selection: the run is mlax's and its report is printed (the numbers
    go to docs/compatibility.md)."""
    src = os.environ.get(f"PEER_SRC_{library.upper().replace('-', '_')}")
    if library == "optax" and not src:
        src = str(SITE_PACKAGES)
    if not src:
        pytest.skip(f"set PEER_SRC_{library.upper().replace('-', '_')} to a checkout of {library}")
    report = peer_tests.run_suite(library, src, timeout=300, work=tmp_path)
    print(report.format(40))
    assert not report.refused, report.format()
    assert report.jax_passed()


def test_doc_section_replaces_its_own_section_only(tmp_path: Path) -> None:
    summary = {"suite": "optax", "version": "0.2.8", "files": ["optax/_src/alias_test.py"], "jax_passed": 10,
               "mlax_passed": 9, "rate": 90.0, "causes": {"TypeError: a | b": 1}}
    doc = tmp_path / "compat.md"
    doc.write_text("# Title\n\n## JAX's documentation pages\n\nmeasured\n")
    peer_tests.write_doc([summary], doc)
    first = doc.read_text()
    head = "# Title\n\n## JAX's documentation pages\n\nmeasured\n\n"
    assert first.startswith(head + peer_tests.DOC_SECTION)
    assert "| optax 0.2.8 | `alias_test.py` | 10 | 9 | 90.0 % |" in first
    assert "- 1 x TypeError: a / b" in first
    doc.write_text(first + "\n## After\n\nkept\n")
    peer_tests.write_doc([{**summary, "mlax_passed": 10, "rate": 100.0, "causes": {}}], doc)
    second = doc.read_text()
    assert second.count(peer_tests.DOC_SECTION) == 1 and "| 10 | 10 | 100.0 % |" in second
    assert "measured" in second and second.endswith("## After\n\nkept\n") and "a / b" not in second
