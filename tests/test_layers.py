"""Layers import downward only: front end (mlax) -> backends -> passes -> dialect.

Read from the source with `ast` (every import statement, at module level or inside a function),
so a new upward import fails here, naming the line, before it can close a circle again.
`mlax.configuration` (the one place flags and environment variables are read) and
`mlax.caching` (bounded caches) sit below every layer: they import nothing of mlax.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"dialect": "mlax.dialect", "passes": "mlax.passes", "backends": "mlax.backends", "pyfront": "mlax"}
LAYERS = ("mlax.dialect", "mlax.passes", "mlax.backends", "mlax")  # bottom to top
BASE = ("mlax.configuration", "mlax.caching")
# The one upward edge left, and why: geqp3's reference semantics (with initial pivots, which
# SciPy's wrapper cannot take) call LAPACKE's geqp3 in the OpenBLAS the native backends bind.
# Removing it means emulating LAPACK's fixed columns with SciPy's routines.
KNOWN = {("mlax.dialect.ops.householder", "mlax.backends.native.lapack")}


def _modules() -> dict[str, Path]:
    modules = {}
    for folder, package in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            modules[".".join((package, *parts))] = path
    return modules


MODULES = _modules()


def _layer(module: str) -> str:
    return next(layer for layer in LAYERS if module == layer or module.startswith(layer + "."))


def _imports(path: Path) -> Iterator[tuple[str, int]]:
    """(imported mlax module, line) of every import in a file; ``from package import module``
    counts as importing the module."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from ((alias.name, node.lineno) for alias in node.names if alias.name.startswith("mlax"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("mlax"):
            for alias in node.names:
                named = f"{node.module}.{alias.name}"
                yield (named if named in MODULES else node.module), node.lineno


def _upward(module: str) -> list[str]:
    if module in BASE:
        return [f"{module}:{line} imports {target} (a base module imports nothing of mlax)"
                for target, line in _imports(MODULES[module])]
    rank = LAYERS.index(_layer(module))
    return [f"{module}:{line} imports {target}" for target, line in _imports(MODULES[module])
            if target not in BASE and LAYERS.index(_layer(target)) > rank and (module, target) not in KNOWN]


def test_the_layers_are_found() -> None:
    assert {_layer(m) for m in MODULES} == set(LAYERS)
    assert all(base in MODULES for base in BASE)


@pytest.mark.parametrize("layer", LAYERS[:-1])
def test_imports_go_downward(layer: str) -> None:
    found = [line for module in MODULES if _layer(module) == layer for line in _upward(module)]
    assert not found, "upward imports:\n" + "\n".join(found)


def test_the_known_upward_imports_still_exist() -> None:
    """Once an edge of `KNOWN` is gone, it leaves the list."""
    edges = {(module, target) for module in MODULES for target, _ in _imports(MODULES[module])}
    assert KNOWN <= edges


def test_base_modules_import_nothing_of_mlax() -> None:
    found = [line for module in BASE for line in _upward(module)]
    assert not found, "\n".join(found)
