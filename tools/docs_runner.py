"""Run JAX's documentation pages cell by cell on jax and on mlax, and compare what each cell shows.

    python tools/docs_runner.py --jax-src DIR [--pages P ...] [--devices N] [--timeout S]
                                [--site DIR] [--json OUT] [--markdown]

DIR is a checkout of jax's source at the installed version; the pages (MyST ``.md``, ``.ipynb``,
markdown whose examples are doctests, or else plain ```python fences, one cell per statement;
paths relative to DIR/docs) are read from it, never copied into mlax. Each page
runs twice, one process each: on the real jax, and on mlax (``mlax.install_as_jax()`` runs
before the first cell, so the page's ``import jax`` gets mlax). A cell shows what a notebook
shows: its stdout and the repr of its last expression. The two are compared by value: numbers
within a tolerance, ints and booleans exactly, words exactly, after addresses, ids, timings and
paths are normalised (so a sharding or a dtype compares as its text).

A cell is *match*, *fail* (with a reason), *jax-error* (jax raised where the page does not
expect it: not counted), *skipped* (needs the internet, a GPU/TPU, pip, a shell) or
*after-crash* (a process died earlier on the page: the cells after it ran in a new process
that replayed the cells before, so their state may differ; not counted). A process that dies
in a cell (abort, segfault, a native hang past ``--timeout``) marks that cell and is
restarted on the cells after it. Computations of the real jax asked for by the page in the mlax
run (through a module mlax passes through) make the cell fail: they are not mlax's.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import io
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import types
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# The pages of issue 36, as they are named in jax 0.10.2's docs/, with the number of host
# devices each needs. The classic ones first (jax 0.10.2 has no docs/new_docs/ 101 and 201
# pages; "jit, autodiff, vmap tutorials" are jit-compilation, automatic-differentiation and
# automatic-vectorization; "working with pytrees" is custom_pytrees; tracing completes JAX 101;
# shard_map is the sharding page run on 8 devices beside parallel, which holds explicit
# sharding); then the guides to the current API: mutable refs, ahead-of-time stages and export
# (doctest pages), and callbacks with their effects. Then the advanced guides that run on a CPU
# with nothing more (autodiff in depth, jaxprs, dtypes, debugging; the last three pages are
# plain fences that jax's docs show without running).
DEFAULT_PAGES: tuple[tuple[str, int], ...] = (
    ("notebooks/thinking_in_jax.md", 1), ("notebooks/Common_Gotchas_in_JAX.md", 1),
    ("key-concepts.md", 1), ("jit-compilation.md", 1), ("automatic-vectorization.md", 1),
    ("automatic-differentiation.md", 1), ("pytrees.md", 1), ("custom_pytrees.md", 1),
    ("random-numbers.md", 1), ("control-flow.md", 1), ("stateful-computations.md", 1),
    ("tracing.md", 1), ("gradient-checkpointing.md", 1), ("notebooks/autodiff_cookbook.md", 1),
    ("parallel.md", 8), ("notebooks/shard_map.md", 8),
    ("array_refs.md", 1), ("aot.md", 1), ("export/export.md", 8), ("external-callbacks.md", 1),
    ("notebooks/Custom_derivative_rules_for_Python_code.md", 1), ("higher-order.md", 1),
    ("jacobian-vector-products.md", 1), ("complex-differentiation.md", 1),
    ("notebooks/convolutions.md", 1), ("notebooks/vmapped_log_probs.md", 1),
    ("notebooks/autodiff_remat.md", 1), ("jaxpr.md", 1), ("default_dtypes.md", 1), ("debugging.md", 1),
    ("debugging/print_breakpoint.md", 1), ("debugging/checkify_guide.md", 1), ("buffer_donation.md", 1),
)
RTOL, ATOL = 1e-5, 1e-6
STATUSES = ("match", "fail", "jax-error", "skipped", "after-crash")
MAX_TEXT = 4000


# ---------------------------------------------------------------- pages into cells


@dataclasses.dataclass
class Cell:
    """One code cell: its source (magics already turned into Python), tags, the line it starts
    on, and why it is not run (None when it is)."""

    index: int
    source: str
    tags: tuple[str, ...] = ()
    line: int = 0
    skip: str | None = None


_SKIPS: tuple[tuple[str, str], ...] = (
    (r"^\s*[!%]+\s*pip\b|\bpip install\b", "pip install"),
    (r"^\s*!", "shell command"),
    # (scipy.datasets downloads its images through pooch)
    (r"https?://|\burllib\b|\brequests\.get\b|\btfds\.load\b|\bwget\b|download=True|\bload_dataset\("
     r"|\bscipy\.datasets\b|\bfrom scipy import datasets\b", "needs the internet"),
    (r"""devices\(\s*['"](?:gpu|tpu|cuda)|backend\s*=\s*['"](?:gpu|tpu|cuda)|jax_platforms.*(?:gpu|tpu)"""
     r"|\bpltpu\b|\bplgpu\b|\bjax\.experimental\.pallas\.(?:tpu|mosaic_gpu|triton)\b", "needs a GPU or TPU"),
)
_DROPPED_MAGICS = re.compile(r"^\s*%(?:xmode|matplotlib|load_ext|config|env|reload_ext|autoreload)\b.*$")


def skip_reason(source: str, tags: Sequence[str]) -> str | None:
    """Why a cell cannot run here, from its tags and its code (comments aside)."""
    if "skip-execution" in tags:
        return "tagged skip-execution"
    code = "\n".join(line.split("  #")[0] for line in source.splitlines()
                     if not line.lstrip().startswith("#"))
    for pattern, why in _SKIPS:
        if re.search(pattern, code, re.M):
            return why
    if re.match(r"\s*%%(?!time)", source):
        return "cell magic " + source.split()[0]
    return None


def python_of(source: str) -> str:
    """The cell as plain Python: ``%%time``/``%%timeit`` and ``%time``/``%timeit`` run their code
    once (timeit's value not shown, as IPython shows none), other line magics are dropped."""
    lines = source.splitlines()
    quiet = False
    if lines and re.match(r"\s*%%time(it)?\b", lines[0]):
        quiet = lines[0].lstrip().startswith("%%timeit")
        lines = lines[1:]
    out = []
    for line in lines:
        magic = re.match(r"^(\s*)%(time(?:it)?)\s+((?:-\w+\s*\d*\s+)*)(.*)$", line)
        if magic:
            indent, name, _, code = magic.groups()
            out.append(indent + code + (";" if name == "timeit" else ""))
        elif _DROPPED_MAGICS.match(line):
            out.append("")
        else:
            out.append(line)
    text = "\n".join(out)
    return text + ";" if quiet and text.strip() else text


def _tags(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        import yaml

        value = yaml.safe_load(value)
    return tuple(str(t) for t in (value or ()))


def split_myst(text: str) -> list[Cell]:
    """The code cells of a MyST markdown page: ```{code-cell} fences, with their options either
    as ``:key: value`` lines or as a ``---`` YAML block."""
    lines = text.splitlines()
    cells: list[Cell] = []
    i = 0
    while i < len(lines):
        fence = re.match(r"^(`{3,}|~{3,})\{code-cell\}", lines[i])
        i += 1
        if not fence:
            continue
        start, options = i, {}
        if i < len(lines) and lines[i].strip() == "---":
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "---"), i)
            import yaml

            options = yaml.safe_load("\n".join(lines[i + 1:end])) or {}
            i = end + 1
        else:
            while i < len(lines) and re.match(r"^:[\w-]+:", lines[i]):
                key, _, value = lines[i][1:].partition(":")
                options[key] = value.strip()
                i += 1
        body = []
        while i < len(lines) and not re.match(rf"^{fence.group(1)}\s*$", lines[i]):
            body.append(lines[i])
            i += 1
        i += 1
        source = "\n".join(body).strip("\n")
        tags = _tags(options.get("tags"))
        cells.append(Cell(len(cells) + 1, python_of(source), tags, start, skip_reason(source, tags)))
    return cells


def split_ipynb(text: str) -> list[Cell]:
    """The code cells of a notebook (its stored outputs are not used: jax's run is the reference)."""
    cells: list[Cell] = []
    for cell in json.loads(text).get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        tags = _tags(cell.get("metadata", {}).get("tags"))
        cells.append(Cell(len(cells) + 1, python_of(source), tags, 0, skip_reason(source, tags)))
    return cells


# What jax's doctest run (its conftest.py) puts in every page's namespace.
DOCTEST_PRELUDE = "import numpy as np\nimport jax\nimport jax.numpy as jnp\nfrom jax import lax\n"


def split_doctest(text: str) -> list[Cell]:
    """The examples of a page written as doctests (```python fences holding ``>>>`` lines, as
    aot.md and export.md are): one cell per example, so that each one's output is compared. An
    example whose expected output is a traceback is tagged raises-exception; ``+SKIP`` ones are
    skipped. The first cell starts with the names jax's doctest namespace provides."""
    import doctest

    parser = doctest.DocTestParser()
    cells: list[Cell] = []
    for fence in re.finditer(r"^```python[^\n]*\n(.*?)^```", text, re.M | re.S):
        first_line = text.count("\n", 0, fence.start(1)) + 1
        for example in parser.get_examples(fence.group(1)):
            skip = "doctest +SKIP" if example.options.get(doctest.OPTIONFLAGS_BY_NAME["SKIP"]) else None
            tags = ("raises-exception",) if example.exc_msg is not None else ()
            source = example.source.rstrip("\n")
            if not any(line.strip() and not line.lstrip().startswith("#") for line in source.splitlines()):
                continue  # a comment line of its own: nothing to run
            cells.append(Cell(len(cells) + 1, python_of(source), tags, first_line + example.lineno,
                              skip or skip_reason(source, tags)))
    if cells:
        cells[0].source = DOCTEST_PRELUDE + cells[0].source
    return cells


# A comment after a statement that names an exception: the page shows the statement raising.
_EXPECTED_ERROR = re.compile(r"#\s*(?:[\w.]+\.)?\w*(?:Error|Exception)\b")


def split_fenced(text: str) -> list[Cell]:
    """The statements of a page whose examples are plain ```python fences (jax's docs build
    shows them without running them: checkify_guide.md, buffer_donation.md...): one cell per
    top-level statement, so each one's value is compared as a doctest example's is. A
    statement followed by a comment naming an exception (``# ValueError: ...``) is tagged
    raises-exception; a fence that is not Python on its own (a fragment) is skipped. The
    first cell starts with the names jax's doctest namespace provides."""
    cells: list[Cell] = []
    for fence in re.finditer(r"^```python[^\n]*\n(.*?)^```", text, re.M | re.S):
        first_line = text.count("\n", 0, fence.start(1)) + 1
        lines = fence.group(1).splitlines()
        try:
            statements = ast.parse(fence.group(1)).body
        except SyntaxError:
            source = fence.group(1).strip("\n")
            cells.append(Cell(len(cells) + 1, source, (), first_line, "a fragment, not Python on its own"))
            continue
        starts = [min([n.lineno for n in getattr(node, "decorator_list", [])] + [node.lineno]) - 1
                  for node in statements]
        for k, node in enumerate(statements):
            end = node.end_lineno or node.lineno
            following = lines[end - 1:starts[k + 1] if k + 1 < len(statements) else len(lines)]
            tags = ("raises-exception",) if any(_EXPECTED_ERROR.search(line) for line in following) else ()
            source = "\n".join(lines[starts[k]:end])
            cells.append(Cell(len(cells) + 1, python_of(source), tags, first_line + starts[k],
                              skip_reason(source, tags)))
    if cells:
        cells[0].source = DOCTEST_PRELUDE + cells[0].source
    return cells


def read_page(path: Path) -> list[Cell]:
    """A page's code cells: a notebook's, a MyST page's code-cells, else its doctest examples,
    else the statements of its ```python fences."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        return split_ipynb(text)
    return split_myst(text) or split_doctest(text) or split_fenced(text)


# ---------------------------------------------------------------- comparing what cells show

_NORMALISE: tuple[tuple[str, str], ...] = (
    (r"0x[0-9a-fA-F]+", "<addr>"),
    (r"\b\d+(?:\.\d+)?\s*(?:ns|µs|us|ms|s|sec|seconds|min)\b(?:\s*±\s*\S+\s*\S+)?(?: per loop.*)?", "<time>"),
    (r"(?:[A-Za-z]:)?(?:/[\w.\-]+){2,}/?", "<path>"),
    (r"(?<![\w.])\d{12,}(?![\w.])", "<id>"),
)
_TOKEN = re.compile(r"""
    (?P<num>(?:(?<![\w.)\]])[-+])?(?:inf|nan)(?!\w)
           |(?:(?<![\w.)\]])[-+])?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?j?(?![\w]))
  | (?P<word><\w+>|[A-Za-z_]\w*)
  | (?P<other>\S)""", re.X)


def normalise(text: str) -> str:
    """What varies between two runs of the same program: addresses, ids, timings, paths."""
    for pattern, replacement in _NORMALISE:
        text = re.sub(pattern, replacement, text)
    return text


def tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) tokens: ``num``, ``word`` or ``other`` (one character); whitespace ignored."""
    return [(m.lastgroup or "other", m.group()) for m in _TOKEN.finditer(normalise(text))]


def _number(text: str) -> complex | float | int:
    if text.endswith("j"):
        return complex(text)
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    return float(text)


def numbers_equal(a: str, b: str) -> bool:
    """Ints and their kind exactly; floats (and complex) within RTOL relative plus ATOL absolute."""
    x, y = _number(a), _number(b)
    if type(x) is not type(y):
        return False
    if isinstance(x, int):
        return x == y
    parts = [(x.real, y.real), (x.imag, y.imag)] if isinstance(x, complex) else [(x, y)]
    return all((math.isnan(p) and math.isnan(q)) or math.isclose(p, q, rel_tol=RTOL, abs_tol=ATOL)
               for p, q in parts)


def _context(toks: list[tuple[str, str]], at: int) -> str:
    return " ".join(t for _, t in toks[max(0, at - 3):at + 4])[:80]


def compare_text(jax_text: str, mlax_text: str) -> str | None:
    """None when the two show the same values; else the first difference, saying which kind."""
    a, b = tokens(jax_text), tokens(mlax_text)
    for i, (ta, tb) in enumerate(zip(a, b, strict=False)):
        if ta[0] == tb[0] == "num":
            if not numbers_equal(ta[1], tb[1]):
                return f"different value: jax {ta[1]}, mlax {tb[1]} (in: {_context(a, i)})"
        elif ta != tb:
            return (f"different text: jax '{ta[1]}', mlax '{tb[1]}' (jax: {_context(a, i)} | "
                    f"mlax: {_context(b, i)})")
    if len(a) != len(b):
        longer, who = (a, "jax") if len(a) > len(b) else (b, "mlax")
        return f"different text: only {who} shows more (in: {_context(longer, min(len(a), len(b)) + 3)})"
    return None


def cause_of(reason: str) -> str:
    """The group a failure's reason falls in: its numbers, quoted contexts and addresses made
    uniform (``different value`` is one group; texts are grouped by the differing tokens)."""
    if reason.startswith("different value"):
        return "different value"
    if reason.startswith("raises "):
        return reason.partition(":")[0]
    reason = re.sub(r" \((?:in|jax): .*$", "", reason)
    reason = re.sub(r"\bP\([^()]*\)", "P(...)", normalise(reason))  # the partition specs of one cause
    reason = re.sub(r"(?<![\w.])-?\d+(\.\d+)?(e[-+]?\d+)?", "N", reason)
    return re.sub(r"\s+", " ", reason)[:200]


def _first_line(message: str) -> str:
    return next((line.strip() for line in message.splitlines() if line.strip()), "")


def judge(cell: Cell, jax: dict[str, Any] | None, mlax: dict[str, Any] | None) -> tuple[str, str]:
    """(status, reason) of a cell from its results on jax and on mlax."""
    if cell.skip:
        return "skipped", cell.skip
    if jax is None or mlax is None:
        return "jax-error" if jax is None else "fail", "not run (the process stopped before this cell)"
    jerr, merr = jax.get("error"), mlax.get("error")
    status, reason = "match", ""
    if jerr and "raises-exception" not in cell.tags:
        status, reason = "jax-error", f"{jerr['type']}: {_first_line(jerr['message'])}"
    elif mlax.get("crash"):
        status, reason = "fail", f"crash: {mlax['crash']}"
    elif jerr and not merr:
        status, reason = "fail", f"no exception where jax raises {jerr['type']}"
    elif merr and not jerr:
        status, reason = "fail", f"{merr['type']}: {_first_line(merr['message'])}"
    elif jerr and merr and jerr["type"] not in merr["mro"]:
        status, reason = "fail", f"raises {merr['type']} where jax raises {jerr['type']}: " + _first_line(
            merr["message"])
    else:
        for part in ("stdout", "value"):
            diff = compare_text(jax.get(part) or "", mlax.get(part) or "")
            if diff:
                status, reason = "fail", diff + ("" if part == "stdout" else " [last expression]")
                break
    if status in ("match", "fail") and mlax.get("real_jax"):
        status, reason = "fail", "ran on the real jax: " + mlax["real_jax"][0]
    if status != "jax-error" and (jax.get("after_crash") or mlax.get("after_crash")):
        return "after-crash", f"{status}: {reason}" if reason else status
    return status, reason


# ---------------------------------------------------------------- running a page (the parent)


def _events(path: Path) -> list[dict[str, Any]]:
    out = []
    if path.exists():
        for line in path.read_text().splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                out.append(json.loads(line))
    return out


def child_env(devices: int, site: str | None) -> dict[str, str]:
    """The children's environment: CPU only, N host devices, matplotlib off-screen."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    if devices > 1:
        flags = re.sub(r"--xla_force_host_platform_device_count=\d+", "", env.get("XLA_FLAGS", ""))
        env["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={devices}".strip()
        env["JAX_NUM_CPU_DEVICES"] = str(devices)
    if site:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (site, env.get("PYTHONPATH")) if p)
    return env


def run_mode(mode: str, page: Path, cells: list[Cell], work: Path, *, devices: int, timeout: float,
             site: str | None = None, log: Any = None, max_restarts: int = 12,
             grace: float = 30.0) -> dict[int, dict[str, Any]]:
    """Run ``cells`` on ``mode`` in a child process; a child that dies (or hangs in native code
    past ``timeout`` + ``grace``) is restarted on the cells after the one it was in, replaying
    the cells before it (less those a process died in). Results by cell index."""
    cells_path = work / "cells.json"
    cells_path.write_text(json.dumps([dataclasses.asdict(c) for c in cells]))
    results: dict[int, dict[str, Any]] = {}
    dead: set[int] = set()  # cells a process died in: not replayed
    start, restarts = 1, 0
    env = child_env(devices, site)
    while start <= len(cells) and restarts <= max_restarts:
        events_path = work / f"events-{mode}-{restarts}.jsonl"
        command = [sys.executable, str(Path(__file__).resolve()), "--child", mode, str(cells_path),
                   str(events_path), str(start), ",".join(map(str, sorted(dead))), str(timeout)]
        with open(work / f"{mode}.log", "a") as stderr:
            child = subprocess.Popen(command, cwd=page.parent, env=env, stdout=stderr, stderr=stderr)
            hung = False
            while child.poll() is None:
                time.sleep(0.2)
                events = _events(events_path)
                last = events[-1] if events else {}
                if last.get("event") == "start" and time.time() - last["time"] > timeout + grace:
                    hung = True
                    child.kill()
                    child.wait()
        events = _events(events_path)
        for event in events:
            if event["event"] == "cell":
                results[event["cell"]] = {**event, "after_crash": restarts > 0}
        if events and events[-1]["event"] == "end":
            break
        open_cell = events[-1]["cell"] if events and events[-1]["event"] == "start" else None
        if open_cell is None:  # died before its first cell: say so on every cell left
            for cell in cells[start - 1:]:
                results.setdefault(cell.index, {"error": {"type": "ProcessError", "mro": [],
                                                          "message": f"exit {child.returncode}"}})
            break
        why = (f"killed: past {timeout:g} s in native code" if hung
               else f"process died ({_exit_name(child.returncode)})")
        dead.add(open_cell)
        if not events[-1].get("replay"):
            results[open_cell] = {"crash": why, "error": {"type": "Crash", "mro": ["Crash"], "message": why},
                                  "after_crash": restarts > 0}
            start = open_cell + 1
        restarts += 1
        if log:
            print(f"    [{mode}] cell {open_cell}: {why}; restarting at cell {start}", file=log, flush=True)
    return results


def _exit_name(code: int | None) -> str:
    if code is not None and code < 0:
        with contextlib.suppress(ValueError):
            return signal.Signals(-code).name
    return f"exit {code}"


@dataclasses.dataclass
class PageReport:
    page: str
    devices: int
    cells: list[dict[str, Any]]
    seconds: dict[str, float]

    def counts(self) -> dict[str, int]:
        counted = Counter(c["status"] for c in self.cells)
        shown = sum(c["status"] == "match" and c.get("shows", False) for c in self.cells)
        return {"cells": len(self.cells), "run": len(self.cells) - counted["skipped"],
                **{s: counted[s] for s in STATUSES}, "match with output": shown}

    def rate(self) -> float | None:
        c = self.counts()
        judged = c["match"] + c["fail"]
        return 100.0 * c["match"] / judged if judged else None

    def causes(self) -> Counter[str]:
        return Counter(c["cause"] for c in self.cells if c["status"] == "fail")


def _shown(result: dict[str, Any] | None) -> dict[str, Any]:
    if not result:
        return {}
    return {k: (v[:MAX_TEXT] if isinstance(v, str) else v) for k, v in result.items()
            if k in ("stdout", "value", "error", "crash", "real_jax")}


def run_page(src_docs: Path, name: str, devices: int, *, timeout: float, site: str | None = None,
             log: Any = None) -> PageReport:
    """Run one page on jax, then on mlax, and judge each cell."""
    page = (src_docs / name).resolve()
    cells = read_page(page)
    work = Path(tempfile.mkdtemp(prefix="docs-runner-"))
    results, seconds = {}, {}
    for mode in ("jax", "mlax"):
        if log:
            print(f"  [{mode}] {name}: {len(cells)} cells, {devices} device(s); logs in {work}",
                  file=log, flush=True)
        began = time.monotonic()
        results[mode] = run_mode(mode, page, cells, work, devices=devices, timeout=timeout, site=site,
                                 log=log)
        seconds[mode] = round(time.monotonic() - began, 1)
    judged = []
    for cell in cells:
        jax, mlax = results["jax"].get(cell.index), results["mlax"].get(cell.index)
        status, reason = judge(cell, jax, mlax)
        entry = {"cell": cell.index, "line": cell.line, "status": status, "reason": reason,
                 "cause": cause_of(reason) if status == "fail" else None,
                 "shows": bool(jax and (jax.get("stdout") or jax.get("value") or jax.get("error")))}
        if status in ("fail", "after-crash"):
            entry.update(source=cell.source[:MAX_TEXT], jax=_shown(jax), mlax=_shown(mlax))
        judged.append(entry)
    return PageReport(name, devices, judged, seconds)


# ---------------------------------------------------------------- reports


def grouped_causes(reports: Sequence[PageReport]) -> list[dict[str, Any]]:
    """Failures of all pages by cause, largest first: count, pages, one example."""
    groups: dict[str, dict[str, Any]] = {}
    for report in reports:
        for c in report.cells:
            if c["status"] != "fail":
                continue
            g = groups.setdefault(c["cause"], {"cause": c["cause"], "count": 0, "pages": Counter(),
                                               "examples": []})
            if len(g["examples"]) < 3:
                g["examples"].append(f"{report.page} cell {c['cell']} (line {c['line']}): {c['reason']}")
            g["count"] += 1
            g["pages"][report.page] += 1
    return sorted(({**g, "pages": dict(g["pages"])} for g in groups.values()), key=lambda g: -g["count"])


def markdown(reports: Sequence[PageReport], top: int = 30) -> str:
    """The summary table and the causes, as docs/compatibility.md shows them."""
    lines = ["| page | devices | cells | run | match (with output) | fail | jax-error | skipped "
             "| after-crash | match % |", "| --- " + "| ---: " * 9 + "|"]
    total: Counter[str] = Counter()
    for r in reports:
        c = r.counts()
        total.update(c)
        rate = r.rate()
        lines.append(f"| `{r.page}` | {r.devices} | {c['cells']} | {c['run']} | {c['match']} "
                     f"({c['match with output']}) | {c['fail']} | "
                     f"{c['jax-error']} | {c['skipped']} | {c['after-crash']} | "
                     f"{'-' if rate is None else f'{rate:.0f}'} |")
    judged = total["match"] + total["fail"]
    lines.append(f"| all | | {total['cells']} | {total['run']} | {total['match']} "
                 f"({total['match with output']}) | {total['fail']} | "
                 f"{total['jax-error']} | {total['skipped']} | {total['after-crash']} | "
                 f"{100.0 * total['match'] / judged if judged else 0:.0f} |")
    lines += ["", "Failures by cause, largest first (cells; pages; one example):", ""]
    for g in grouped_causes(reports)[:top]:
        pages = ", ".join(f"{p} {n}" for p, n in sorted(g["pages"].items(), key=lambda kv: -kv[1]))
        lines.append(f"- **{g['count']}** `{g['cause']}` ({pages}); e.g. {g['examples'][0]}")
    lines += ["", "Per page, failures by cause:", ""]
    for r in reports:
        causes = r.causes()
        if causes:
            lines.append(f"- `{r.page}`: " + "; ".join(f"{n}x `{cause[:100]}`"
                                                       for cause, n in causes.most_common()))
    return "\n".join(lines)


def summary(reports: Sequence[PageReport], src: Path) -> dict[str, Any]:
    import importlib.metadata

    return {"jax_src": str(src), "jax": importlib.metadata.version("jax"),
            "pages": [{"page": r.page, "devices": r.devices, "seconds": r.seconds, **r.counts(),
                       "match_rate": r.rate(), "causes": dict(r.causes().most_common()), "cells": r.cells}
                      for r in reports],
            "causes": grouped_causes(reports)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jax-src", required=True, help="a checkout of jax's source (its docs/ is read)")
    parser.add_argument("--pages", nargs="+", help="pages relative to DIR/docs (default: issue 36's set)")
    parser.add_argument("--devices", type=int, help="host devices for every page (default: per page, 1 or 8)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per cell (default 120)")
    parser.add_argument("--site", help="folders (os.pathsep-separated) put first on the children's "
                        "PYTHONPATH (matplotlib for the plotting pages, or a snapshot of mlax)")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--markdown", action="store_true", help="print the summary as markdown")
    args = parser.parse_args(argv)
    src = Path(args.jax_src).resolve()
    docs = src / "docs"
    defaults = dict(DEFAULT_PAGES)
    pages = [(p, args.devices or defaults.get(p, 1)) for p in args.pages] if args.pages else [
        (p, args.devices or n) for p, n in DEFAULT_PAGES]
    missing = [p for p, _ in pages if not (docs / p).is_file()]
    if missing:
        raise SystemExit(f"docs_runner: no such page under {docs}: {', '.join(missing)}")
    reports = []
    for name, devices in pages:
        report = run_page(docs, name, devices, timeout=args.timeout, site=args.site, log=sys.stderr)
        c = report.counts()
        print(f"{name}: {c['match']}/{c['match'] + c['fail']} match, {c['fail']} fail, "
              f"{c['jax-error']} jax-error, {c['skipped']} skipped, {c['after-crash']} after-crash "
              f"({report.seconds})", file=sys.stderr, flush=True)
        reports.append(report)
        if args.json:  # after each page, so that a long run keeps what it has
            Path(args.json).write_text(json.dumps(summary(reports, src), indent=1, default=str))
    if args.markdown:
        print(markdown(reports))
    return 0


# ---------------------------------------------------------------- the child: one page on one of jax, mlax


class CellTimeout(BaseException):  # noqa: N818 (the name in the report)
    """A cell past its time (a BaseException, so that the page's ``except Exception`` cannot eat it)."""


def _run_cell(source: str, namespace: dict[str, Any], flags: int) -> tuple[Any, int]:
    """Execute a cell as IPython does: all of it, and the value of its last statement when that
    is an expression not ended by ``;``. Returns the value (None: nothing shown) and the
    ``from __future__`` flags in force for the cells after."""
    import __future__

    tree = ast.parse(source, "<cell>", "exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";"):
        last = ast.Expression(tree.body.pop().value)
    code = compile(tree, "<cell>", "exec", flags=flags, dont_inherit=True)
    for feature in __future__.all_feature_names:
        if code.co_flags & getattr(__future__, feature).compiler_flag:
            flags |= getattr(__future__, feature).compiler_flag
    exec(code, namespace)
    value = eval(compile(last, "<cell>", "eval", flags=flags, dont_inherit=True), namespace) if last else None
    return value, flags


def _own_random_draws(page: str) -> None:
    """Pages draw from numpy's global generator unseeded, and jax draws from it too (at import, in
    its cluster detection): the page's own draws come from a ``RandomState(0)`` of the page's, so
    that both runs draw the same numbers whatever the library beneath takes."""
    import random

    import numpy

    random.seed(0)
    shared, own = numpy.random.mtrand._rand, numpy.random.RandomState(0)
    for name in dir(shared):
        function = getattr(numpy.random, name, None)
        if name.startswith("_") or getattr(function, "__self__", None) is not shared:
            continue

        def routed(*args: Any, _name: str = name, _function: Any = function, **kwargs: Any) -> Any:
            if sys._getframe(1).f_globals.get("__name__") == page:
                return getattr(own, _name)(*args, **kwargs)
            return _function(*args, **kwargs)

        setattr(numpy.random, name, routed)


def child_main(argv: Sequence[str]) -> int:
    mode, cells_path, events_path, start, dead, timeout = argv
    if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        del sys.path[0]  # tools/ is not the page's business
    sys.path.insert(0, os.getcwd())
    cells = [Cell(**c) for c in json.loads(Path(cells_path).read_text())]
    skip = {int(i) for i in dead.split(",") if i}
    events = open(events_path, "a", buffering=1)  # noqa: SIM115

    def emit(**event: Any) -> None:
        events.write(json.dumps(event, default=str) + "\n")

    watch = None
    if mode == "mlax":
        import mlax

        mlax.install_as_jax()
        import jax

        if jax.jit is not mlax.jit:
            raise SystemExit("docs_runner: `import jax` does not give mlax; refusing to report it as mlax's")
        from mlax.tools.peer_tests import RealJaxWatch

        watch = RealJaxWatch()
        watch.install()
    page = types.ModuleType("docs_page")  # a real module: dataclasses and pickle look cells' classes up
    sys.modules["docs_page"] = page
    sys.argv = ["docs_page"]
    _own_random_draws(page.__name__)

    def alarm(signum: int, frame: Any) -> None:
        raise CellTimeout(f"past {float(timeout):g} s")

    signal.signal(signal.SIGALRM, alarm)
    flags = 0
    for cell in cells:
        if cell.skip or cell.index in skip:
            continue
        replay = cell.index < int(start)
        emit(event="start", cell=cell.index, replay=replay, time=time.time())
        out, value, error = io.StringIO(), None, None
        began = time.monotonic()
        if watch is not None:
            watch.test = "cell"
        signal.setitimer(signal.ITIMER_REAL, float(timeout))
        try:
            with contextlib.redirect_stdout(out):
                shown, flags = _run_cell(cell.source, page.__dict__, flags)
                if re.search(r"\bdebug\b|callback", cell.source) and "jax" in sys.modules:
                    barrier = getattr(sys.modules["jax"], "effects_barrier", None)
                    if barrier is not None:
                        barrier()
                value = None if shown is None else repr(shown)
        except (Exception, CellTimeout, SystemExit) as exc:
            error = {"type": type(exc).__name__, "mro": [t.__name__ for t in type(exc).__mro__],
                     "message": str(exc)[:MAX_TEXT]}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        ran = watch.seen.pop("cell", None) if watch is not None else None
        if not replay:
            emit(event="cell", cell=cell.index, stdout=out.getvalue()[:MAX_TEXT * 4], value=value,
                 error=error, real_jax=ran[:3] if ran else None, seconds=round(time.monotonic() - began, 3))
    emit(event="end")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sys.exit(child_main(sys.argv[2:]))
    sys.exit(main())
