"""Seeded samples of large test grids, so that the default run stays short as grids grow.

A grid's cases are the items of one test function (its parametrizations and parametrized
fixtures, the backend among them). The default run keeps a seeded sample of each grid, sized by
what a case costs (tests/grid_costs.json, from tools/grid_costs.py): every case where they cost
milliseconds (tables checking one declaration per op), ``HEAVY_SIZE`` where they cost seconds,
``DEFAULT_SIZE`` otherwise; ``@pytest.mark.sampled(k)`` and ``@pytest.mark.every_case`` decide
for one test or module. The rest become ``slow`` (run them with ``-m slow``). The sample holds
every value of every parameter that has at most that many (each dtype, each backend, each mode
is still run), then seeded cases up to the size. ``MLAX_TEST_SAMPLE_SEED`` picks another
sample; the default, 0, keeps CI's run reproducible. Sampling decides which cases run, never
how: a case runs the same in the sample and in the full grid.
"""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from collections.abc import Hashable, Iterable
from pathlib import Path

import pytest

SEED_VARIABLE = "MLAX_TEST_SAMPLE_SEED"
DEFAULT_SIZE = 6
HEAVY_SIZE = 2
CHEAP_SECONDS, HEAVY_SECONDS = 0.1, 1.0  # per case, on the 2-core machine the costs came from
COSTS: dict[str, float] = json.loads((Path(__file__).parent / "grid_costs.json").read_text())


def _value_key(value: object) -> Hashable:
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def _parameter_values(item: pytest.Item) -> set[tuple[str, Hashable]]:
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return set()
    return {(name, _value_key(value)) for name, value in callspec.params.items()}


def covering_sample(items: list[pytest.Item], size: int, seed: str) -> list[pytest.Item]:
    """``size`` (or more) of ``items``: greedily, in a seeded order, the case covering the most
    values not yet covered of the parameters with at most ``size`` values (dtypes, backends,
    modes) until all are, then others in that order until ``size``. A parameter with more
    values (the op of a table of ops) is sampled like the cases."""
    order = list(items)
    random.Random(seed).shuffle(order)
    values = [_parameter_values(item) for item in order]
    counts = Counter(name for name, _ in set().union(*values))
    values = [{(name, v) for name, v in vs if counts[name] <= size} for vs in values]
    uncovered = set().union(*values)
    chosen: list[int] = []
    while uncovered:
        best = max(range(len(order)), key=lambda i: len(values[i] & uncovered))
        chosen.append(best)
        uncovered -= values[best]
    chosen += [i for i in range(len(order)) if i not in chosen][:max(size - len(chosen), 0)]
    return [order[i] for i in chosen]


def _grid_key(item: pytest.Item) -> str:
    """``module[.Class]::function``, as tools/grid_costs.py names a grid from a JUnit report."""
    cls = getattr(item, "cls", None)
    owner = item.module.__name__ + (f".{cls.__name__}" if cls else "")
    return f"{owner}::{getattr(item, 'originalname', item.name)}"


def _sample_size(item: pytest.Item) -> int | None:
    """How many cases of ``item``'s grid the default run keeps (None: all of them)."""
    if getattr(item, "callspec", None) is None or item.get_closest_marker("every_case") is not None:
        return None
    marker = item.get_closest_marker("sampled")
    if marker is not None:
        return marker.args[0]
    cost = COSTS.get(_grid_key(item))
    if cost is not None and cost < CHEAP_SECONDS:
        return None
    return HEAVY_SIZE if cost is not None and cost > HEAVY_SECONDS else DEFAULT_SIZE


def mark_unsampled_slow(items: Iterable[pytest.Item]) -> None:
    """Mark ``slow`` every case of a large grid that its seeded sample leaves out."""
    seed = os.environ.get(SEED_VARIABLE, "0")
    grids: dict[str, list[pytest.Item]] = {}
    for item in items:
        if _sample_size(item) is not None and item.get_closest_marker("slow") is None:
            grids.setdefault(_grid_key(item), []).append(item)
    for key, members in grids.items():
        size = _sample_size(members[0])
        if len(members) <= size:
            continue
        kept = set(map(id, covering_sample(members, size, f"{seed}:{key}")))
        for item in members:
            if id(item) not in kept:
                item.add_marker(pytest.mark.slow)
