"""Loading examples/*.py as modules (they run their main() only as scripts)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load_example(name: str) -> ModuleType:
    if str(EXAMPLES) not in sys.path:  # the examples import their shared `training` module
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(f"mlax_example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
