"""Shared by the library scripts: pick jax or mlax-as-jax, and report numbers as JSON.

Each script runs as ``python script.py jax|mlax``; with ``mlax`` it calls
``mlax.install_as_jax()`` before anything imports jax, so the library runs on mlax unchanged.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def choose_jax() -> str:
    """Install mlax as jax when asked on the command line; returns the name of the runtime."""
    runtime = sys.argv[1] if len(sys.argv) > 1 else "jax"
    if runtime == "mlax":
        import mlax

        mlax.install_as_jax()
    return runtime


def report(**values: Any) -> None:
    """Print the results the test compares: floats and nested lists of floats."""
    import numpy as np

    def plain(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [plain(v) for v in x]
        return np.asarray(x, dtype=np.float64).tolist()

    print("RESULT " + json.dumps({k: plain(v) for k, v in values.items()}))
