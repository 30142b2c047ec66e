"""tests/sampling.py: a sampled grid keeps every parameter value, is seeded, and reaches its size."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

from tests.sampling import covering_sample


def _grid() -> list[SimpleNamespace]:
    backends = ["cpu", "interpreter", "xla"]
    cases = itertools.product(["add", "mul", "div", "max"], ["f32", "f16", "i32"], backends)
    return [SimpleNamespace(callspec=SimpleNamespace(params={"op": op, "dtype": d, "backend": b}))
            for op, d, b in cases]


def test_every_parameter_value_is_kept() -> None:
    grid = _grid()
    kept = covering_sample(grid, 4, "0:grid")
    for name in ("op", "dtype", "backend"):
        assert {i.callspec.params[name] for i in kept} == {i.callspec.params[name] for i in grid}
    assert len(kept) <= 5  # the greedy cover: 4 cases would do


def test_size_seed_and_order() -> None:
    grid = _grid()
    kept = covering_sample(grid, 10, "0:grid")
    assert len(kept) == 10 and len({id(i) for i in kept}) == 10
    assert kept == covering_sample(grid, 10, "0:grid")
    assert kept != covering_sample(grid, 10, "1:grid")
    assert len(covering_sample(grid, 100, "0:grid")) == len(grid)


def test_unparametrized_items_are_kept_up_to_the_size() -> None:
    plain = [SimpleNamespace(name=str(i)) for i in range(5)]
    assert len(covering_sample(plain, 3, "0:x")) == 3


def test_a_parameter_with_more_values_than_the_size_is_sampled() -> None:
    table = [SimpleNamespace(callspec=SimpleNamespace(params={"op": f"op{i}", "backend": b}))
             for i in range(40) for b in ("cpu", "xla")]
    kept = covering_sample(table, 16, "0:table")
    assert len(kept) == 16
    assert {i.callspec.params["backend"] for i in kept} == {"cpu", "xla"}
