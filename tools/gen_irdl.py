"""Regenerate dialect/mlax.irdl.mlir from the op table: ``python -m mlax.tools.gen_irdl``."""

from __future__ import annotations

import sys

from mlax.dialect.irdl_gen import IRDL_PATH, render
from mlax.dialect.registry import OPS


def main() -> None:
    IRDL_PATH.write_text(render())
    print(f"wrote {IRDL_PATH} ({len(OPS)} ops)", file=sys.stderr)


if __name__ == "__main__":
    main()
