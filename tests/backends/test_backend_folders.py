"""One folder per backend (CONVENTIONS 14): a backend's folder imports, of backends/, only
itself, native/ (what CPU and GPU share) and the modules every backend shares (declaration,
dumping, memory_limits, device_programs); native/ imports no backend; only the registry (and
the tools above it) gathers the backends. tests/test_layers.py keeps the layers themselves.
"""

from __future__ import annotations

import pytest

from tests.test_layers import MODULES, _imports

FOLDERS = ("cpu", "gpu", "xla")
SHARED = ("declaration", "dumping", "memory_limits", "device_programs")
# The one edge back up, and why: the XLA backend's "hlo" stage prints the executable the
# process-wide compile cache (the registry's) holds, so that as_text("hlo") compiles once.
KNOWN = {("mlax.backends.xla", "mlax.backends.registry")}


def _folder(module: str) -> str | None:
    """The backend folder (or native) of a module of backends/, None for a shared module."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[2] in (*FOLDERS, "native") else None


def _wrong_imports(module: str) -> list[str]:
    own = _folder(module)
    found = []
    for target, line in _imports(MODULES[module]):
        if not target.startswith("mlax.backends.") or (module, target) in KNOWN:
            continue
        theirs = _folder(target)
        if own == "native":
            allowed = theirs == "native" or target.split(".")[2] in SHARED
        else:
            allowed = theirs in (own, "native") or theirs is None and target.split(".")[2] in SHARED
        if not allowed:
            found.append(f"{module}:{line} imports {target}")
    return found


@pytest.mark.parametrize("folder", (*FOLDERS, "native"))
def test_a_backend_folder_imports_no_other(folder: str) -> None:
    modules = [m for m in MODULES if _folder(m) == folder]
    assert modules, f"backends/{folder} holds no module"
    found = [line for m in modules for line in _wrong_imports(m)]
    assert not found, "\n".join(found)


def test_the_known_edges_still_exist() -> None:
    edges = {(module, target) for module in MODULES for target, _ in _imports(MODULES[module])}
    assert KNOWN <= edges
