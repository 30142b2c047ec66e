"""tests/grid_costs.json from a pytest JUnit XML report: what one case of each test grid costs.

    .venv/bin/python -m pytest -n auto tests --junitxml=run.xml
    .venv/bin/python tools/grid_costs.py run.xml > tests/grid_costs.json

tests/sampling.py sizes each grid's seeded sample by it (every case of a grid whose cases cost
milliseconds, a few of one whose cases cost seconds). The seconds are of the machine the report
came from; a stale or missing entry changes how long the default run takes, never what a case
checks. Only grids of more than a few cases are listed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict

SMALLEST_GRID = 4


def grid_costs(report: str) -> dict[str, float]:
    """Mean seconds per case of each grid (``module[.Class]::function``) with enough cases."""
    times: dict[str, list[float]] = defaultdict(list)
    for case in ElementTree.parse(report).iter("testcase"):
        name = re.sub(r"\[.*", "", case.get("name", ""))
        times[f"{case.get('classname')}::{name}"].append(float(case.get("time") or 0.0))
    return {key: round(sum(t) / len(t), 3) for key, t in sorted(times.items()) if len(t) >= SMALLEST_GRID}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", help="a pytest --junitxml report of the whole suite")
    json.dump(grid_costs(parser.parse_args().report), sys.stdout, indent=0, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
