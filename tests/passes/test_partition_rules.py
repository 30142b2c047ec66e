"""`mlax-partition`'s rule table: every op of the dialect has a sharding rule, the explicit
fallback, the pass's own handling, or an explicit refusal; and the factor mappings of the
trickier families (reshape, dot_general, broadcasts) are what they should be."""

from __future__ import annotations

import math

import pytest

from mlax.dialect import OPS
from mlax.passes.partition.factors import MAX, PASS, REPLICATED, SUM, absorb, local_shape, normalize, project
from mlax.passes.partition.rules import FALLBACK, RULES, SPECIAL, UNSUPPORTED

SIZES = {"x": 2, "y": 2, "z": 3}


def axis_size(axes) -> int:
    return math.prod(SIZES[a] for a in axes)


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_has_exactly_one_entry(name: str) -> None:
    tables = [name in RULES, name in FALLBACK, name in SPECIAL, name in UNSUPPORTED]
    assert sum(tables) == 1, f"mlax.{name}: a sharding rule, FALLBACK, SPECIAL or UNSUPPORTED (exactly one)"


def test_tables_name_only_ops_of_the_dialect() -> None:
    assert not (set(RULES) | FALLBACK | SPECIAL | set(UNSUPPORTED)) - set(OPS)


def _through(rule, spec):
    """The spec the result gets from an operand spec, and the operand's local shape."""
    shardings = [None] * len(rule.sizes)
    absorb(rule, rule.operands[0], spec, shardings, axis_size)
    decided = normalize(rule, shardings, axis_size)
    return project(rule.results[0], decided), local_shape(rule, rule.results[0], decided, axis_size)


@pytest.mark.parametrize(("source", "target", "spec", "expected", "local"), [
    ((8, 4), (32,), (("x",), ()), (("x",),), (16,)),               # merge: the major part survives
    ((8, 4), (32,), (("x", "y"), ()), (("x", "y"),), (8,)),
    ((8, 4), (32,), ((), ("x",)), ((),), (32,)),                   # a minor part cannot
    ((32,), (4, 8), (("x", "y"),), (("x", "y"), ()), (1, 8)),      # split
    ((32,), (2, 16), (("x", "y"),), (("x",), ("y",)), (1, 8)),     # a split spanning two dims
    ((6, 4), (4, 6), (("x",), ()), (("x",), ()), (2, 6)),          # common major digit 2
    ((6, 4), (4, 6), (("z",), ()), ((), ()), (4, 6)),              # 3 is no common digit
    ((2, 1, 6), (12,), (("x",), (), ("y",)), (("x", "y"),), (3,)),  # x split whole: y follows
])
def test_reshape_factors(source, target, spec, expected, local) -> None:
    rule = RULES["reshape"]({"shape": target}, [source], [target])
    for dims, shape in ((rule.operands[0], source), (rule.results[0], target)):
        assert tuple(math.prod(rule.sizes[f] for f in fs) for fs in dims) == shape
    assert _through(rule, spec) == (expected, local)


def test_dot_general_factors() -> None:
    attrs = {"lhs_batch_dimensions": (0,), "rhs_batch_dimensions": (0,), "lhs_contracting_dimensions": (2,),
             "rhs_contracting_dimensions": (1,), "result_dtype": None}
    rule = RULES["dot_general"](attrs, [(4, 8, 6), (4, 6, 2)], [(4, 8, 2)])
    kinds = {rule.sizes[f]: rule.kinds[f] for f in range(len(rule.sizes))}
    assert kinds == {4: PASS, 8: PASS, 6: SUM, 2: PASS}
    assert rule.results[0] == (rule.operands[0][0], rule.operands[0][1], rule.operands[1][2])


def test_reductions_and_broadcasts() -> None:
    rule = RULES["reduce_max"]({"dimensions": (1,)}, [(4, 6)], [(4,)])
    assert rule.kinds == (PASS, MAX)
    rule = RULES["broadcast_in_dim"]({"shape": (4, 6), "broadcast_dimensions": (0, 1)}, [(1, 6)], [(4, 6)])
    assert rule.kinds[rule.operands[0][0][0]] == REPLICATED and rule.operands[0][1] == rule.results[0][1]
    assert RULES["constant"]({"value": __import__("numpy").arange(3.0)}, [], [(3,)]) is None


def test_first_seen_wins_and_axes_are_used_once() -> None:
    rule = RULES["add"]({}, [(4, 6), (4, 6)], [(4, 6)])
    shardings = [None] * len(rule.sizes)
    absorb(rule, rule.operands[0], (("x",), ()), shardings, axis_size)
    absorb(rule, rule.operands[1], (("y",), ("x",)), shardings, axis_size)
    assert normalize(rule, shardings, axis_size) == [("x",), ()]
