"""Imports inside functions, below the front end, stay where a reason is written down.

An import inside a function hides a dependency from the module's head (and from a reader);
it is kept only to defer a cost (every autodiff rule table), to keep jax's private modules
out of ``import mlax``, for a script that runs where mlax is not installed, or to break a
cycle that is named here.
Each one in dialect/, passes/ and backends/ is listed with its reason; a new one fails here
until it is listed or moved to the module's head. (tests/test_layers.py checks their direction;
tests/test_frontend_imports.py does the same for the front end.)
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_layers import MODULES, _layer

_CYCLE = "a cycle: the executable imports its backend's declaration from the package"
_JAX_PRIVATE = ("jax's private modules load only when XLA is used: a jax that moved them breaks "
                "the XLA backend (tests/backends/test_pjrt.py says where), not every import of mlax")
_COPIED = "prepare only: the copied script runs where mlax is not installed"
# (module, imported module) -> why the import waits for a call
DEFERRED = {
    ("mlax.dialect.ops.householder", "mlax.backends.native.lapack"):
        "geqp3's reference semantics call OpenBLAS's LAPACKE (tests/test_layers.py KNOWN)",
    ("mlax.passes.autodiff.jvp", "mlax.passes.autodiff.vjp"):
        "a cycle: reverse mode is built on forward mode; a split JVP asks vjp to linearize",
    ("mlax.passes.autodiff.control_flow", "mlax.passes.autodiff.vjp"):
        "a cycle: a scan's split JVP asks vjp to split its body, its transpose to transpose it",
    ("mlax.passes.expand_transforms", "mlax.passes.autodiff.emit"):
        "importing passes.autodiff loads every rule table (more than compiling a small program)",
    ("mlax.passes.simulate_devices", "mlax.passes.autodiff.emit"):
        "importing passes.autodiff loads every rule table; most programs have no shard_map",
    ("mlax.passes.registry", "mlax.passes.pipeline"):
        "a cycle: the pipeline module parses pass names through the registry",
    ("mlax.backends.cpu", "mlax.backends.cpu.executable"): _CYCLE,
    ("mlax.backends.cpu.disk_cache", "mlax.backends"): "the packages' folders, read at run time",
    ("mlax.backends.cpu.disk_cache", "mlax.dialect"): "the packages' folders, read at run time",
    ("mlax.backends.cpu.disk_cache", "mlax.passes"): "the packages' folders, read at run time",
    ("mlax.backends.gpu", "mlax.backends.gpu.executable"): _CYCLE,
    ("mlax.backends.gpu.device_check", "mlax.backends.gpu"): _COPIED,
    ("mlax.backends.gpu.device_check", "mlax.backends.gpu.artifact"): _COPIED,
    ("mlax.backends.xla.device_check", "mlax.backends.xla"): _COPIED,
    ("mlax.backends.registry", "mlax.backends.xla"): _JAX_PRIVATE,
    ("mlax.backends.xla", "mlax.backends.xla"): _JAX_PRIVATE,
    ("mlax.backends.xla", "mlax.backends.xla.executable"): _CYCLE,
    ("mlax.backends.xla", "mlax.backends.registry"):
        "a cycle: the registry declares XlaBackend, whose hlo stage reads the registry's compile cache",
}


def _deferred(path: Path) -> set[str]:
    """The mlax modules ``path`` imports inside a function (``from package import name``
    counts as the package)."""
    found = set()
    for function in ast.walk(ast.parse(path.read_text())):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                    and node.module.startswith("mlax"):
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name.startswith("mlax"))
    return found


def _all_deferred() -> set[tuple[str, str]]:
    return {(module, target) for module, path in MODULES.items() if _layer(module) != "mlax"
            for target in _deferred(path)}


def test_every_deferred_import_has_a_reason() -> None:
    unlisted = sorted(_all_deferred() - DEFERRED.keys())
    assert not unlisted, ("imports inside functions without a reason in DEFERRED (move them to the "
                          "module's head, or list why they wait):\n"
                          + "\n".join(f"{m} imports {t}" for m, t in unlisted))


def test_every_listed_import_still_waits() -> None:
    """Once an import moves to the head (or goes), it leaves the list."""
    assert not DEFERRED.keys() - _all_deferred()
