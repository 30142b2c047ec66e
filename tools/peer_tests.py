"""Run a JAX library's own test suite on jax and on mlax, and compare.

    python tools/peer_tests.py LIBRARY SRC_DIR [--files F ...] [-k EXPR] [--timeout S] [--json OUT]
    python tools/peer_tests.py --doc OUT.json [OUT.json ...]   # the section of docs/compatibility.md

LIBRARY is one of optax, flax, equinox, chex, distrax, dm-haiku; SRC_DIR a checkout of the
library's source repository at the installed version (for optax, distrax and dm-haiku, whose
wheels ship their tests, the site-packages folder the library is installed in does too). The
runner copies the chosen test files (the issue's default selection, or ``--files``, paths
relative to SRC_DIR; globs allowed) with the support files they import (conftest.py,
__init__.py, helpers) to a folder under /tmp, renamed so that nothing there shadows the
installed package, and runs them with pytest against the INSTALLED package, twice, one
process each:

- on jax, as the library's developers do;
- on mlax: ``mlax.install_as_jax()`` runs first thing in the process, before pytest, the
  library or its tests import jax.

Each test has a time limit (``--timeout``, SIGALRM; a test stuck in native code is killed
with its process, which is restarted on the tests left). Both runs use the same neutral pytest
configuration (not the library's: its ``filterwarnings = error`` and plugin options are left
out, for both). The report gives per suite the tests passing on jax, how many of those pass on
mlax, and the failures on mlax grouped by cause (exception type and first line of its
message, numbers, addresses and paths normalized).

**Only mlax is counted as mlax.** The mlax run checks that it ran on mlax and refuses to
report otherwise: ``jax.jit is mlax.jit``, jax.numpy makes mlax Arrays, and no module of the
library or its tests holds a module or a function of the real jax that mlax redirects. Every
computation of the real jax (its ``Primitive.bind``) is watched: one asked for by code outside
jax and mlax (a library calling a jax module mlax passes through, ``jax.experimental.checkify``
...) makes the test that ran it a failure with cause ``ran on the real jax``, so a test never
counts as passing on mlax because jax did the work; outside any test (at import) it refuses
the run. (A real ``jax.jit`` function called again from its compiled cache does not bind: it
is caught at its first call, which traces.)

No upstream test file is part of mlax: tests/tools/test_peer_tests.py runs a fixed sample of
the tests optax's wheel ships; the rest is behind the ``peer`` marker.
"""

from __future__ import annotations

import argparse
import dataclasses
import glob
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

MODES = ("jax", "mlax")


@dataclasses.dataclass(frozen=True)
class Suite:
    """A library's test suite: the package it tests, the folder of SRC_DIR its tests live in
    (copied whole, as ``peer_<name>``, less the test files not chosen and the library's own
    code), the default selection of test files (relative to SRC_DIR) and the support files
    (globs relative to ``root``) copied beside them."""

    name: str
    package: str
    dist: str
    root: str
    files: tuple[str, ...]
    support: tuple[str, ...] = ()


SUITES: dict[str, Suite] = {s.name: s for s in (
    Suite("optax", "optax", "optax", "optax", (
        "optax/_src/alias_test.py", "optax/_src/transform_test.py", "optax/_src/update_test.py",
        "optax/_src/combine_test.py", "optax/losses/*_test.py", "optax/schedules/*_test.py",
        "optax/transforms/_clipping_test.py", "optax/transforms/_adding_test.py")),
    Suite("flax", "flax", "flax", "tests", (
        "tests/linen/linen_module_test.py", "tests/linen/linen_linear_test.py",
        "tests/linen/linen_activation_test.py", "tests/linen/linen_attention_test.py",
        "tests/linen/linen_combinators_test.py", "tests/linen/linen_test.py",
        "tests/linen/initializers_test.py", "tests/nnx/module_test.py", "tests/nnx/rngs_test.py",
        "tests/nnx/variable_test.py", "tests/nnx/optimizer_test.py", "tests/nnx/nn/*_test.py"),
        ("**/conftest.py", "**/__init__.py")),
    Suite("equinox", "equinox", "equinox", "tests", tuple(
        f"tests/test_{name}.py" for name in ("module", "nn", "jit", "filters", "tree", "ad", "vmap",
                                             "update", "eval_shape", "stateful")),
        ("conftest.py", "__init__.py", "helpers.py")),
    Suite("chex", "chex", "chex", "chex", (
        "chex/_src/asserts_test.py", "chex/_src/dataclass_test.py", "chex/_src/variants_test.py")),
    Suite("distrax", "distrax", "distrax", "distrax", (
        "distrax/_src/distributions/normal_test.py", "distrax/_src/distributions/categorical_test.py",
        "distrax/_src/bijectors/bijector_test.py", "distrax/_src/bijectors/scalar_affine_test.py",
        "distrax/_src/bijectors/tanh_test.py"), ("**/conftest.py",)),
    Suite("dm-haiku", "haiku", "dm-haiku", "haiku", (
        "haiku/_src/basic_test.py", "haiku/_src/conv_test.py", "haiku/_src/module_test.py",
        "haiku/_src/base_test.py"), ("**/conftest.py",)),
)}

PYTEST_INI = """[pytest]
# the peer runner's neutral configuration (the library's own is not used, on jax or on mlax)
addopts = -p no:cacheprovider -p no:xdist -p no:randomly
"""


# ---------------------------------------------------------------- the parent: layout, runs, report


def installed_version(suite: Suite) -> str | None:
    try:
        return importlib.metadata.version(suite.dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def source_version(suite: Suite, src: Path) -> str | None:
    """The version the checkout says it is, where it says it in one of the usual places."""
    package = src / suite.package
    names = ("version.py", "__init__.py", "_version.py")
    candidates = [src / "pyproject.toml", *(package / name for name in names)]
    for path in candidates:
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        match = re.search(r'^(?:__version__|version)\s*=\s*["\']([0-9][^"\']*)["\']', text, re.M)
        if match:
            return match.group(1)
    return None


def select_files(src: Path, patterns: Iterable[str]) -> list[str]:
    chosen: list[str] = []
    for pattern in patterns:
        matches = sorted(str(Path(p).relative_to(src)) for p in glob.glob(str(src / pattern)))
        if not matches:
            raise SystemExit(f"peer_tests: no test file matches {pattern!r} under {src}")
        chosen += [m for m in matches if m not in chosen]
    return chosen


def lay_out(suite: Suite, src: Path, files: Sequence[str], work: Path) -> list[str]:
    """Copy the chosen test files and their support files into ``work/peer_<name>/`` (the suite's
    root renamed, so no copied folder shadows the installed package); their paths there."""
    root = src / suite.root
    target_root = work / f"peer_{suite.package}"
    copied = []
    for rel in files:
        path = src / rel
        if not path.is_relative_to(root):
            raise SystemExit(f"peer_tests: {rel} is not under the suite's test folder {suite.root}")
        target = target_root / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        copied.append(str(target.relative_to(work)))
    for pattern in suite.support:
        for path in root.glob(pattern):
            rel_parts = path.relative_to(root).parts
            if "__pycache__" in rel_parts or not path.is_file():
                continue
            target = target_root / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists():
                shutil.copy2(path, target)
    (work / "pytest.ini").write_text(PYTEST_INI)
    return copied


@dataclasses.dataclass
class RunResult:
    mode: str
    tests: dict[str, dict[str, Any]]
    collect_errors: dict[str, str]
    checks: dict[str, Any]
    refused: list[str]
    seconds: float
    restarts: int

    def passed(self) -> set[str]:
        return {t for t, r in self.tests.items() if r["outcome"] == "passed"}


def _read_events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    events = []
    for line in path.read_text().splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            pass  # a line cut by a kill
    return events


def run_mode(mode: str, work: Path, files: Sequence[str], *, timeout: float, keyword: str | None,
             extra_args: Sequence[str] = (), max_restarts: int = 20, log: Any = None) -> RunResult:
    """One run of the laid-out tests on ``mode`` (jax or mlax): a child process, restarted on
    the tests left when one kills it (a crash, or a test past its time in native code)."""
    events_path = work / f"events-{mode}.jsonl"
    done_path = work / f"done-{mode}.txt"
    events_path.unlink(missing_ok=True)
    done_path.write_text("")
    args = [*files, "-q", "--import-mode=importlib", "--continue-on-collection-errors", *extra_args]
    if keyword:
        args += ["-k", keyword]
    env = {**os.environ, "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "cpu"),
           "PYTHONDONTWRITEBYTECODE": "1"}
    start = time.monotonic()
    restarts = 0
    stdout_log = open(work / f"pytest-{mode}.log", "w")  # noqa: SIM115
    while True:
        command = [sys.executable, str(Path(__file__).resolve()), "--child", mode, str(events_path),
                   str(done_path), str(timeout), *args]
        child = subprocess.Popen(command, cwd=work, env=env, stdout=stdout_log, stderr=subprocess.STDOUT)
        hung = None
        while child.poll() is None:
            time.sleep(1.0)
            events = _read_events(events_path)
            open_test = _open_test(events)
            if open_test is not None and time.time() - open_test[1] > timeout + 60:
                hung = open_test[0]
                child.kill()
                child.wait()
        events = _read_events(events_path)
        open_test = _open_test(events)
        if any(e.get("event") == "session_end" for e in events) or open_test is None:
            break  # done (or pytest stopped before any test: its log says why)
        # killed: the test it was in fails, the rest runs in a new process
        if open_test is not None:
            cause = (f"PeerTimeout: past {timeout:g} s in native code, process killed" if hung
                     else f"Crash: the test process died (exit {child.returncode})")
            with open(events_path, "a") as out:
                out.write(json.dumps({"event": "result", "nodeid": open_test[0], "outcome": "failed",
                                      "cause": cause}) + "\n")
        restarts += 1
        if restarts > max_restarts:
            break
        done = {e["nodeid"] for e in _read_events(events_path) if e.get("event") == "result"}
        done_path.write_text("\n".join(sorted(done)))
        if log:
            print(f"  [{mode}] restarting after {open_test[0]}", file=log, flush=True)
    stdout_log.close()
    return load_run(mode, work, time.monotonic() - start, restarts)


def load_run(mode: str, work: Path, seconds: float = 0.0, restarts: int = 0) -> RunResult:
    """The results of the run on ``mode`` recorded in ``work``."""
    events = _read_events(work / f"events-{mode}.jsonl")
    tests, collect_errors, checks, refused = {}, {}, {}, []
    for event in events:
        kind = event.get("event")
        if kind == "result":
            tests[event["nodeid"]] = event
        elif kind == "collect_error":
            collect_errors[event["nodeid"]] = event["cause"]
        elif kind == "checks":
            checks.update(event["checks"])
            refused += event.get("refused", [])
        elif kind == "refused":
            refused.append(event["reason"])
    if mode == "mlax" and not checks and not refused:
        refused.append("the mlax run ended before its checks ran")
    if not seconds and events:
        times = [e["time"] for e in events if "time" in e]
        seconds = max(times) - min(times) if times else 0.0
    return RunResult(mode, tests, collect_errors, checks, refused, seconds, restarts)


def _open_test(events: list[dict[str, Any]]) -> tuple[str, float] | None:
    """The test started last and not finished, with its start time."""
    started: dict[str, float] = {}
    for event in events:
        if event.get("event") == "start":
            started[event["nodeid"]] = event["time"]
        elif event.get("event") == "result":
            started.pop(event["nodeid"], None)
    if not started:
        return None
    nodeid = max(started, key=started.get)
    return nodeid, started[nodeid]


@dataclasses.dataclass
class SuiteReport:
    suite: str
    version: str | None
    source_version: str | None
    files: list[str]
    jax: RunResult
    mlax: RunResult
    work: str

    @property
    def refused(self) -> list[str]:
        return self.mlax.refused

    def jax_passed(self) -> set[str]:
        return self.jax.passed()

    def mlax_passed_of_jax(self) -> set[str]:
        return self.jax_passed() & self.mlax.passed()

    def rate(self) -> float:
        return 100.0 * len(self.mlax_passed_of_jax()) / max(1, len(self.jax_passed()))

    def causes(self) -> Counter[str]:
        """Why each test passing on jax does not pass on mlax."""
        causes: Counter[str] = Counter()
        for nodeid in sorted(self.jax_passed() - self.mlax.passed()):
            result = self.mlax.tests.get(nodeid)
            if result is not None:
                causes[result.get("cause") or result["outcome"]] += 1
                continue
            file = nodeid.split("::")[0]
            causes[f"not collected: {self.mlax.collect_errors.get(file, 'not run')}"] += 1
        return causes

    def summary(self) -> dict[str, Any]:
        return {"suite": self.suite, "version": self.version, "files": self.files,
                "jax_passed": len(self.jax_passed()), "mlax_passed": len(self.mlax_passed_of_jax()),
                "rate": round(self.rate(), 1), "refused": self.refused,
                "mlax_only_passes": len(self.mlax.passed() - self.jax_passed()),
                "jax_failed": sum(r["outcome"] == "failed" for r in self.jax.tests.values()),
                "jax_skipped": sum(r["outcome"] == "skipped" for r in self.jax.tests.values()),
                "jax_collect_errors": self.jax.collect_errors, "checks": self.mlax.checks,
                "seconds": {"jax": round(self.jax.seconds), "mlax": round(self.mlax.seconds)},
                "causes": dict(self.causes().most_common())}

    def format(self, top: int = 25) -> str:
        lines = [f"{self.suite} {self.version} ({len(self.files)} files from the source at "
                 f"{self.source_version or 'an unknown version'})"]
        if self.source_version and self.version and self.source_version != self.version:
            lines.append(f"  WARNING: the tests are of {self.source_version}, the installed package is "
                         f"{self.version}")
        jax_tests = self.jax.tests.values()
        errors = len(self.jax.collect_errors)
        not_collected = f", {errors} files not collected" if errors else ""
        lines.append(f"  jax : {len(self.jax_passed())} passed, "
                     f"{sum(r['outcome'] == 'failed' for r in jax_tests)} failed, "
                     f"{sum(r['outcome'] == 'skipped' for r in jax_tests)} skipped{not_collected}"
                     f" in {self.jax.seconds:.0f} s")
        if self.refused:
            lines.append("  mlax: REFUSED, this run is not reported as mlax's: " + "; ".join(self.refused))
            return "\n".join(lines)
        lines.append(f"  mlax: {len(self.mlax_passed_of_jax())} of jax's {len(self.jax_passed())} pass "
                     f"({self.rate():.1f} %) in {self.mlax.seconds:.0f} s; "
                     f"{len(self.mlax.passed() - self.jax_passed())} pass on mlax only; checked: "
                     + ", ".join(f"{k}" for k, v in self.mlax.checks.items() if v is True))
        causes = self.causes()
        if causes:
            lines.append("  failures on mlax of tests that pass on jax, by cause:")
            for cause, count in causes.most_common(top):
                lines.append(f"    {count:5d}  {cause}")
            if len(causes) > top:
                shown = sum(count for _, count in causes.most_common(top))
                rest = sum(causes.values()) - shown
                lines.append(f"    ... {len(causes) - top} more causes ({rest} tests)")
        return "\n".join(lines)


def run_suite(library: str, src: str | Path, files: Sequence[str] | None = None, *,
              keyword: str | None = None, timeout: float = 180.0, modes: Sequence[str] = MODES,
              work: str | Path | None = None, log: Any = None) -> SuiteReport:
    """Lay out ``library``'s tests from ``src`` and run them on each of ``modes``."""
    suite = SUITES[library]
    src = Path(src).resolve()
    if installed_version(suite) is None or importlib.util.find_spec(suite.package) is None:
        raise SystemExit(f"peer_tests: {suite.dist} is not installed in this Python ({sys.executable})")
    chosen = select_files(src, files or suite.files)
    work = Path(work) if work else Path(tempfile.mkdtemp(prefix=f"peer-{suite.name}-"))
    work.mkdir(parents=True, exist_ok=True)
    copied = lay_out(suite, src, chosen, work)
    results = {}
    for mode in MODES:
        if mode in modes:
            if log:
                print(f"  [{mode}] running {len(copied)} files in {work}", file=log, flush=True)
            results[mode] = run_mode(mode, work, copied, timeout=timeout, keyword=keyword, log=log)
        elif (work / f"events-{mode}.jsonl").exists():
            results[mode] = load_run(mode, work)  # an earlier run in the same folder
        else:
            results[mode] = RunResult(mode, {}, {}, {}, [f"the {mode} run was not asked for"], 0.0, 0)
    return SuiteReport(suite.name, installed_version(suite), source_version(suite, src), chosen,
                       results["jax"], results["mlax"], str(work))


DOC = Path(__file__).resolve().parents[1] / "docs" / "compatibility.md"
DOC_SECTION = "## JAX's libraries' own test suites"


def doc_section(summaries: Sequence[dict[str, Any]], causes_shown: int = 12) -> str:
    """docs/compatibility.md's section on the peer suites, from the runner's ``--json``
    summaries: per suite the files run, the tests passing on jax, those of them passing on
    mlax, and the failures left by cause."""
    lines = [DOC_SECTION, "",
             "Measured by `tools/peer_tests.py LIBRARY SRC_DIR --json OUT` (the library's own test files "
             "at the installed version, once on jax and once under `mlax.install_as_jax()`, counting the "
             "tests that pass on jax) and written here by `tools/peer_tests.py --doc OUT.json...`; the "
             "generator of this page keeps it as it stands.", "",
             "| suite | files | pass on jax | pass on mlax | rate |", "| --- | --- | ---: | ---: | ---: |"]
    for s in summaries:
        files = ", ".join(f"`{Path(f).name}`" for f in s["files"])
        lines.append(f"| {s['suite']} {s['version']} | {files} | {s['jax_passed']} | {s['mlax_passed']} | "
                     f"{s['rate']} % |")
    for s in summaries:
        causes = sorted(s["causes"].items(), key=lambda kv: -kv[1])
        lines += ["", f"{s['suite']}: failures on mlax of tests that pass on jax, by cause"
                  + (" (none)" if not causes else "")] + ([""] if causes else [])
        lines += [f"- {count} x {cause.replace('|', '/')}" for cause, count in causes[:causes_shown]]
        if len(causes) > causes_shown:
            rest = causes[causes_shown:]
            lines.append(f"- {sum(c for _, c in rest)} more, of {len(rest)} other causes")
    return "\n".join(lines) + "\n"


def write_doc(summaries: Sequence[dict[str, Any]], doc: Path = DOC) -> None:
    """Put ``doc_section(summaries)`` in ``doc``: in place of the section it has, else at its end."""
    text = doc.read_text()
    section = doc_section(summaries)
    if DOC_SECTION in text:
        start = text.index(DOC_SECTION)
        end = text.find("\n## ", start + len(DOC_SECTION))
        text = text[:start] + section + (text[end + 1:] if end != -1 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    doc.write_text(text)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--doc"]:  # --doc SUMMARY.json...: the section of docs/compatibility.md
        write_doc([json.loads(Path(p).read_text()) for p in argv[1:]])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("library", choices=sorted(SUITES))
    parser.add_argument("src", help="a checkout of the library's source at the installed version")
    parser.add_argument("--files", nargs="+", help="test files relative to SRC (globs allowed); "
                        "default: the suite's selection")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per test (default 180)")
    parser.add_argument("--mode", choices=("both", *MODES), default="both",
                        help="run on one only (the other's results are read from --work, if it has them)")
    parser.add_argument("--work", help="folder for the copied tests and logs (default: a new one under /tmp)")
    parser.add_argument("--json", help="write the summary here")
    parser.add_argument("--top", type=int, default=25, help="causes shown")
    args = parser.parse_args(argv)
    modes = MODES if args.mode == "both" else (args.mode,)
    report = run_suite(args.library, args.src, args.files, keyword=args.keyword, timeout=args.timeout,
                       modes=modes, work=args.work, log=sys.stderr)
    print(report.format(args.top))
    if args.json:
        Path(args.json).write_text(json.dumps(report.summary(), indent=1, default=str))
    return 2 if report.refused and "mlax" in modes else 0


# ---------------------------------------------------------------- the child: one pytest process


def normalize_cause(type_name: str, message: str) -> str:
    """``Type: first line of the message``, with what varies between tests made uniform."""
    line = next((ln.strip() for ln in message.splitlines() if ln.strip()), "")
    line = re.sub(r"0x[0-9a-fA-F]+", "<addr>", line)
    line = re.sub(r"(/[\w.\-]+)+/?", "<path>", line)
    line = re.sub(r"(?<![\w.])-?\d+(\.\d+)?(e[-+]?\d+)?", "N", line)
    line = re.sub(r"\s+", " ", line)
    return f"{type_name}: {line}"[:220].rstrip(": ")


def collect_error_cause(text: str) -> str:
    """The cause of a collection error from pytest's text of it: its last ``E   Type: message``
    line that names an exception."""
    errors = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    named = [e for e in errors if re.match(r"^[\w.]+(Error|Exception|Exit|Warning|Interrupt)\b", e)]
    last = named[-1] if named else errors[-1] if errors else (text.strip().splitlines() or [""])[-1]
    type_name, _, message = last.partition(": ")
    return normalize_cause(type_name.rsplit(".", 1)[-1], message)


class PeerTimeout(BaseException):  # noqa: N818 (the name in the report)
    """A test past its time (BaseException, so that ``except Exception`` in a test cannot eat it)."""


_STDLIB = frozenset(sys.stdlib_module_names)
_DELEGATING_BIND = "mlax.extend_primitive"


class RealJaxWatch:
    """Records each computation of the real jax (``Primitive.bind``) that code outside jax and
    mlax asked for, with the test running then."""

    def __init__(self) -> None:
        self.test: str | None = None
        self.seen: dict[str | None, list[str]] = {}

    def install(self) -> None:
        core = sys.modules["jax._src.core"]
        original = core.Primitive.bind
        watch = self

        def bind(primitive: Any, *args: Any, **params: Any) -> Any:
            caller = watch.caller()
            if caller is not None:
                watch.seen.setdefault(watch.test, []).append(f"{primitive.name} from {caller}")
            return original(primitive, *args, **params)

        core.Primitive.bind = bind

    @staticmethod
    def caller() -> str | None:
        """The first module above jax's own frames, unless it is mlax (or the standard library's
        plumbing, which is skipped)."""
        frame = sys._getframe(2)
        while frame is not None:
            module = frame.f_globals.get("__name__", "")
            top = module.partition(".")[0]
            # mlax's jax.extend.core.Primitive hands jax's tracers to jax's bind: not mlax's work
            if top in ("jax", "jaxlib") or top in _STDLIB or top == "__main__" or module == _DELEGATING_BIND:
                frame = frame.f_back
                continue
            return None if top == "mlax" else module
        return None


def mlax_checks() -> tuple[dict[str, Any], list[str]]:
    """That this process runs on mlax: what ``import jax`` gives, what its arrays are, and that no
    module outside jax and mlax holds a real jax module or function that mlax redirects."""
    import types

    import jax  # the shim: this module (__main__) is not one of jax's or mlax's own
    import jax.numpy as jnp

    import mlax
    from mlax import jax_modules
    from mlax.install import _modules_holding_real_jax

    checks: dict[str, Any] = {}
    refused: list[str] = []
    checks["jax.jit is mlax.jit"] = jax.jit is mlax.jit
    checks["jax.numpy makes mlax Arrays"] = isinstance(jnp.zeros(2), mlax.Array) and isinstance(
        jax.jit(lambda x: x + 1)(jnp.ones(2)), mlax.Array)
    holders = _modules_holding_real_jax()
    checks["no module holds a real jax module"] = not holders
    real_functions: dict[int, str] = {}
    for module_name in jax_modules.REDIRECTS:
        real = jax_modules.real_module(module_name)
        shim = sys.modules.get(module_name)
        for name in jax_modules.public_names(real):
            value = getattr(real, name, None)
            owner = str(getattr(value, "__module__", None) or "")
            jaxs_own = owner.partition(".")[0] in ("jax", "jaxlib")  # (jax.numpy.can_cast is numpy's)
            if not callable(value) or isinstance(value, type) or not jaxs_own:
                continue
            try:
                served = getattr(shim, name)
            except AttributeError:
                served = None
            if served is not value:
                real_functions[id(value)] = f"{module_name}.{name}"
    bound = []
    for module_name, module in list(sys.modules.items()):
        if module_name.partition(".")[0] in ("jax", "jaxlib", "mlax", "__main__") or not isinstance(
                module, types.ModuleType):
            continue
        for attr, value in list(vars(module).items()):
            if id(value) in real_functions and callable(value):
                bound.append(f"{module_name}.{attr} is the real {real_functions[id(value)]}")
    checks["no module holds a real jax function"] = not bound
    for name, ok in checks.items():
        if ok is not True:
            refused.append(f"check failed: {name}")
    if holders:
        refused.append(f"modules holding the real jax: {', '.join(holders[:10])}")
    if bound:
        refused.append("; ".join(bound[:10]))
    return checks, refused


class PeerPlugin:
    """The pytest plugin of the child: times each test, records its outcome and cause, and (on
    mlax) the real jax's computations and the run's checks."""

    def __init__(self, mode: str, events: str, done: str, timeout: float, watch: RealJaxWatch | None) -> None:
        self.mode = mode
        self.events = open(events, "a", buffering=1)  # noqa: SIM115
        self.done = set(Path(done).read_text().split()) if Path(done).exists() else set()
        self.timeout = timeout
        self.watch = watch
        self.current: dict[str, Any] = {}
        signal.signal(signal.SIGALRM, self._alarm)

    def emit(self, **event: Any) -> None:
        self.events.write(json.dumps(event, default=str) + "\n")

    def _alarm(self, signum: int, frame: Any) -> None:
        raise PeerTimeout(f"past {self.timeout:g} s")

    def pytest_collection_modifyitems(self, session: Any, config: Any, items: list[Any]) -> None:
        if self.done:
            items[:] = [item for item in items if item.nodeid not in self.done]

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            cause = collect_error_cause(str(report.longrepr))
            self.emit(event="collect_error", nodeid=report.nodeid, cause=cause)

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.current = {"nodeid": nodeid, "outcome": "passed", "cause": None}
        self.emit(event="start", nodeid=nodeid, time=time.time())
        if self.watch is not None:
            self.watch.test = nodeid
        signal.setitimer(signal.ITIMER_REAL, self.timeout)

    def pytest_runtest_makereport(self, item: Any, call: Any) -> None:
        if call.excinfo is None or self.current.get("nodeid") != item.nodeid:
            return
        if call.excinfo.errisinstance(_skip_exceptions()):
            return
        if self.current["cause"] is None:
            value = call.excinfo.value
            self.current["cause"] = normalize_cause(type(value).__name__, str(value))

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed:
            self.current["outcome"] = "failed"
        elif report.skipped and self.current["outcome"] == "passed":
            self.current["outcome"] = "skipped" if not hasattr(report, "wasxfail") else "xfailed"
        elif report.passed and hasattr(report, "wasxfail") and report.when == "call":
            self.current["outcome"] = "xpassed"

    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        result = dict(self.current)
        if self.watch is not None:
            self.watch.test = None
            ran = self.watch.seen.pop(nodeid, None)
            if ran:
                result["real_jax"] = ran[:5]
                if result["outcome"] == "passed":
                    result["outcome"] = "failed"
                    where = ran[0].split(" from ")[-1]
                    result["cause"] = f"ran on the real jax: {where}"
        if result["outcome"] != "failed":
            result["cause"] = None
        elif result["cause"] is None:
            result["cause"] = "failed (no exception recorded)"
        self.emit(event="result", **result)

    def pytest_sessionfinish(self, session: Any, exitstatus: int) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if self.mode == "mlax":
            checks, refused = mlax_checks()
            outside = {k: v for k, v in (self.watch.seen if self.watch else {}).items() if k is None}
            checks["no real jax computation outside the tests"] = not outside
            if outside:
                refused.append("the real jax computed outside any test: " + "; ".join(outside[None][:5]))
            self.emit(event="checks", checks=checks, refused=refused)
        self.emit(event="session_end")


def _skip_exceptions() -> tuple[type[BaseException], ...]:
    import unittest

    import _pytest.outcomes

    return (_pytest.outcomes.Skipped, unittest.SkipTest)


def child_main(argv: Sequence[str]) -> int:
    mode, events, done, timeout, *pytest_args = argv
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        del sys.path[0]  # the runner's own folder (tools/) is not the tests' business
    watch = None
    if mode == "mlax":
        import mlax

        mlax.install_as_jax()
        watch = RealJaxWatch()
        watch.install()
    else:
        import jax

        assert not hasattr(jax, "_mlax_real"), "the jax run must be on the real jax"
    import pytest

    plugin = PeerPlugin(mode, events, done, float(timeout), watch)
    return pytest.main(list(pytest_args), plugins=[plugin])


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sys.exit(child_main(sys.argv[2:]))
    sys.exit(main())
