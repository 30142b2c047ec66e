"""The device checks' command line: compile here, check and time on another machine.

    python -m mlax.tools.device_check gpu prepare DIR [--small]   # backends/gpu/device_check.py
    python -m mlax.tools.device_check xla prepare DIR             # backends/xla/device_check.py
    python -m mlax.tools.device_check {gpu,xla} run DIR [OUT] [--repeats N]

Each check lives with its backend; ``prepare`` compiles with the front end, which a backend may
not import (layers import downward), so this entry point hands it ``mlax``. ``prepare`` copies
the check into DIR, where ``python DIR/<gpu|xla>_device_check.py run DIR`` needs no mlax.
"""

from __future__ import annotations

import sys
from types import ModuleType

import mlax
from mlax.backends.gpu import device_check as gpu
from mlax.backends.xla import device_check as xla

CHECKS: dict[str, ModuleType] = {"gpu": gpu, "xla": xla}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in CHECKS:
        print(__doc__, file=sys.stderr)
        return 2
    return CHECKS[argv[0]].main(argv[1:], front=mlax)


if __name__ == "__main__":
    sys.exit(main())
