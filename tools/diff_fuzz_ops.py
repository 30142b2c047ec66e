"""The op catalog of tools/diff_fuzz.py: how to build a random, well-typed call of each op.

Every entry builds a front-end call (``lax.*`` / ``jnp.*``, the same text for mlax and jax, since
mlax's modules mirror jax's) from operands the generator hands it. What an entry states:

- ``dialect``: the mlax op it reaches; the dtypes it is offered are the ones that op's inference
  rule accepts (probed from the op table, dialect/registry.py), so a new dtype on an op is fuzzed
  without touching this file. Entries with no dialect op (composites) list their dtypes.
- ``ulps`` and ``where``: how far two correct implementations may drift at this op (in units of
  the last place of the operand's dtype) and whether that drift is best modelled on the op's
  result ("out": transcendental functions, correctly rounded arithmetic that a compiler may fuse)
  or on its operands ("in": sums, products, dot products, whose order of accumulation is free).
  diff_fuzz perturbs the oracle by these amounts to tell ill-conditioned programs from bugs.
- ``exact_in``: the op is discontinuous in those operands (floor, compare, float -> int, argmax,
  bit casts...), so the generator feeds them only values that every backend computes bit for bit
  (inputs, and results of exact ops on exact values). ``tie_grad``: the op's derivative is
  discontinuous at ties (max, sort, max pooling...), so under grad it too gets exact operands,
  where ties are then real ties and every backend must break them as jax does.

A generator function returns ``(template, operands)`` or None when it cannot apply; the
template is a Python expression whose ``{0}``, ``{1}``... are the operands. Inside the bodies of
control flow, ``_pb(...)`` marks a value the oracle's perturbation reaches (each iteration's
rounding); reproducers leave it out.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
ALL_DTYPES = ("bool", *INTS, *FLOATS, "complex64")
X64_ONLY = ("int64", "uint64", "float64")


def is_float(dtype: str) -> bool:
    return dtype in FLOATS


def is_int(dtype: str) -> bool:
    return dtype in INTS


def dtype_literal(dtype: str) -> str:
    return "jnp.bool_" if dtype == "bool" else f"jnp.{dtype}"


def np_dtype(dtype: str) -> np.dtype:
    if dtype == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


@dataclass
class OpEntry:
    name: str
    gen: Callable[..., Any]
    dialect: str | None = None
    probe_attrs: dict[str, Any] = field(default_factory=dict)
    probe_arity: int = 1
    dtypes: tuple[str, ...] | None = None  # explicit (composites) or filled in by probing
    ulps: float = 0.0
    where: str = "out"  # "out" | "in"
    exact_in: tuple[int, ...] = ()
    tie_grad: bool = False
    weight: float = 1.0
    elementwise: bool = False  # operands and result share one shape and no attribute names a size


CATALOG: dict[str, OpEntry] = {}


def entry(name: str, gen: Callable[..., Any], **kwargs: Any) -> OpEntry:
    op = OpEntry(name, gen, **kwargs)
    CATALOG[name] = op
    return op


_PROBED = False


def probe_dtypes() -> None:
    """Fill each entry's dtypes from its dialect op's inference rule (once per process)."""
    global _PROBED
    if _PROBED:
        return
    from mlax.dialect.registry import OPS
    from mlax.dialect.tensor_spec import TensorSpec

    for op in CATALOG.values():
        if op.dtypes is not None:
            continue
        definition = OPS[op.dialect or op.name]
        accepted = []
        for dtype in ALL_DTYPES:
            spec = TensorSpec((2,), np_dtype(dtype))
            try:
                definition.infer(*[spec] * op.probe_arity, **{**definition.defaults, **op.probe_attrs})
            except Exception:  # noqa: BLE001 - the op refuses this dtype
                continue
            accepted.append(dtype)
        op.dtypes = tuple(accepted)
    _PROBED = True


# --- generators --------------------------------------------------------------------------------
# Each takes (g, op) where g is diff_fuzz.Gen: g.rng (random.Random), g.pick(...), g.shape(...).


def _unary(fn: str, extra: str = "") -> Callable[..., Any]:
    def gen(g: Any, op: OpEntry) -> Any:
        x = g.pick(op.dtypes, exact=0 in op.exact_in, tie=op.tie_grad)
        return f"{fn}({{0}}{extra})", [x]
    return gen


def _binary(fn: str) -> Callable[..., Any]:
    def gen(g: Any, op: OpEntry) -> Any:
        x = g.pick(op.dtypes, exact=0 in op.exact_in, tie=op.tie_grad)
        y = g.pick((x.dtype,), shape=x.shape, exact=1 in op.exact_in, tie=op.tie_grad, avoid=x)
        return f"{fn}({{0}}, {{1}})", [x, y]
    return gen


def _select(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes)
    y = g.pick((x.dtype,), shape=x.shape, avoid=x)
    pred = g.pick(("bool",), shape=x.shape, exact=True)
    return "lax.select({0}, {1}, {2})", [pred, x, y]


def _clamp(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes, tie=True)
    scalar = g.rng.random() < 0.5
    shape = () if scalar else x.shape
    lo = g.pick((x.dtype,), shape=shape, tie=True, avoid=x)
    hi = g.pick((x.dtype,), shape=shape, tie=True, avoid=x)
    return "lax.clamp({1}, {0}, {2})", [x, lo, hi]


def _convert(g: Any, op: OpEntry) -> Any:
    target = g.rng.choice([d for d in g.dtypes if d != "complex64"])
    x = g.pick([d for d in op.dtypes if d != "complex64"], exact=target in INTS or target == "bool")
    return f"lax.convert_element_type({{0}}, {dtype_literal(target)})", [x]


_WIDTH = {"bool": 1, "int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "float16": 16, "bfloat16": 16,
          "int32": 32, "uint32": 32, "float32": 32, "int64": 64, "uint64": 64, "float64": 64}


def _bitcast(g: Any, op: OpEntry) -> Any:
    x = g.pick([d for d in op.dtypes if d not in ("bool", "complex64")], exact=True)
    targets = [d for d in g.dtypes if d not in ("bool", "complex64") and _WIDTH[d] == _WIDTH[x.dtype]]
    return f"lax.bitcast_convert_type({{0}}, {dtype_literal(g.rng.choice(targets))})", [x]


def _compare(fn: str) -> Callable[..., Any]:
    def gen(g: Any, op: OpEntry) -> Any:
        x = g.pick([d for d in op.dtypes if d != "complex64" or fn in ("lax.eq", "lax.ne")], exact=True)
        y = g.pick((x.dtype,), shape=x.shape, exact=True, avoid=x)
        return f"{fn}({{0}}, {{1}})", [x, y]
    return gen


def _broadcast_in_dim(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes, max_rank=2)
    new_rank = min(x.rank + g.rng.randint(0, 2), 3)
    dims = sorted(g.rng.sample(range(new_rank), x.rank))
    shape = [g.dim() for _ in range(new_rank)]
    for d, size in zip(dims, x.shape, strict=True):
        shape[d] = size if size != 1 or g.rng.random() < 0.5 else shape[d]
    return f"lax.broadcast_in_dim({{0}}, {tuple(shape)}, {tuple(dims)})", [x]


def _reshape(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes)
    size = math.prod(x.shape)
    factors = []
    rest = size
    for _ in range(g.rng.randint(0, 3)):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0] if rest else [0, 1]
        d = g.rng.choice(divisors)
        factors.append(d)
        rest = rest // d if d else rest
    if size == 0 and 0 not in factors:
        factors.append(0)
    elif size:
        factors.append(rest)
    g.rng.shuffle(factors)
    return f"lax.reshape({{0}}, {tuple(factors)})", [x]


def _transpose(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes, min_rank=2)
    perm = list(range(x.rank))
    g.rng.shuffle(perm)
    return f"lax.transpose({{0}}, {tuple(perm)})", [x]


def _rev(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes, min_rank=1)
    dims = sorted(g.rng.sample(range(x.rank), g.rng.randint(1, x.rank)))
    return f"lax.rev({{0}}, {tuple(dims)})", [x]


def _slice(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes, min_rank=1)
    start, limit, strides = [], [], []
    for n in x.shape:
        a = g.rng.randint(0, n)
        b = g.rng.randint(a, n)
        start.append(a)
        limit.append(b)
        strides.append(g.rng.choice([1, 1, 2, 3]))
    return f"lax.slice({{0}}, {tuple(start)}, {tuple(limit)}, {tuple(strides)})", [x]


def _dynamic_slice(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes, min_rank=1)
    sizes = tuple(g.rng.randint(0, n) for n in x.shape)
    starts = tuple(g.rng.randint(-2, n + 1) for n in x.shape)
    return f"lax.dynamic_slice({{0}}, {starts}, {sizes})", [x]


def _dynamic_update_slice(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes, min_rank=1)
    sizes = tuple(g.rng.randint(0, n) for n in x.shape)
    update = g.pick((x.dtype,), shape=sizes, avoid=x)
    starts = tuple(g.rng.randint(-2, n + 1) for n in x.shape)
    return f"lax.dynamic_update_slice({{0}}, {{1}}, {starts})", [x, update]


def _concatenate(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes, min_rank=1)
    axis = g.rng.randrange(x.rank)
    shape = list(x.shape)
    shape[axis] = g.dim()
    y = g.pick((x.dtype,), shape=tuple(shape), avoid=x)
    return f"lax.concatenate([{{0}}, {{1}}], {axis})", [x, y]


def _pad(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes, min_rank=1)
    config = []
    for n in x.shape:
        interior = g.rng.choice([0, 0, 1, 2]) if n > 1 else 0
        grown = n + max(n - 1, 0) * interior
        lo = g.rng.randint(-min(grown, 2), 2)
        hi = g.rng.randint(-min(grown + lo, 2), 2) if grown + lo > 0 else g.rng.randint(0, 2)
        config.append((lo, hi, interior))
    value = g.pick((x.dtype,), shape=())
    return f"lax.pad({{0}}, {{1}}, {tuple(config)})", [x, value]


def _reduce(fn: str) -> Callable[..., Any]:
    def gen(g: Any, op: OpEntry) -> Any:
        x = g.pick(op.dtypes, tie=op.tie_grad)
        axes = tuple(sorted(g.rng.sample(range(x.rank), g.rng.randint(0, x.rank))))
        return f"{fn}({{0}}, {axes})", [x]
    return gen


def _arg(fn: str) -> Callable[..., Any]:
    def gen(g: Any, op: OpEntry) -> Any:
        x = g.pick([d for d in op.dtypes if d != "complex64"], min_rank=1, exact=True)
        axis = g.rng.randrange(x.rank)
        if x.shape[axis] == 0:
            return None
        index = g.rng.choice(["int32", "int32", "int8", "uint8"])
        return f"{fn}({{0}}, {axis}, {dtype_literal(index)})", [x]
    return gen


def _cumulative(fn: str) -> Callable[..., Any]:
    def gen(g: Any, op: OpEntry) -> Any:
        x = g.pick(op.dtypes, min_rank=1, tie=op.tie_grad)
        axis = g.rng.randrange(x.rank)
        return f"{fn}({{0}}, {axis}, reverse={g.rng.random() < 0.3})", [x]
    return gen


_WINDOW_INIT = {"lax.add": "0", "lax.max": "-jnp.inf", "lax.min": "jnp.inf"}


def _reduce_window(kind: str) -> Callable[..., Any]:
    def gen(g: Any, op: OpEntry) -> Any:
        x = g.pick([d for d in op.dtypes if d not in ("bool", "complex64")], min_rank=1, max_rank=3,
                   tie=op.tie_grad)
        if is_float(x.dtype) or kind == "lax.add":
            init = f"jnp.array({_WINDOW_INIT[kind]}, {dtype_literal(x.dtype)})"
        else:
            bound = "min" if kind == "lax.max" else "max"
            init = f"jnp.array(jnp.iinfo({dtype_literal(x.dtype)}).{bound}, {dtype_literal(x.dtype)})"
        dims, strides, pads, base, wdil = [], [], [], [], []
        for _ in x.shape:
            dims.append(g.rng.choice([1, 1, 2, 2, 3]))
            strides.append(g.rng.choice([1, 1, 2]))
            pads.append((g.rng.choice([0, 0, 1]), g.rng.choice([0, 0, 1])))
            base.append(g.rng.choice([1, 1, 1, 2]))
            wdil.append(g.rng.choice([1, 1, 1, 2]))
        for n, d, (lo, hi), b, w in zip(x.shape, dims, pads, base, wdil, strict=True):
            if (max(n - 1, 0) * b + 1 if n else 0) + lo + hi < (d - 1) * w + 1:
                return None
        return (f"lax.reduce_window({{0}}, {init}, {kind}, {tuple(dims)}, {tuple(strides)}, {tuple(pads)}, "
                f"{tuple(base)}, {tuple(wdil)})"), [x]
    return gen


def _dot_general(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes, min_rank=1, max_rank=3)
    rank = x.rank
    dims = list(range(rank))
    g.rng.shuffle(dims)
    n_contract = g.rng.randint(0, min(rank, 2))
    contract_x = dims[:n_contract]
    batch_x = dims[n_contract:n_contract + g.rng.randint(0, rank - n_contract)]
    free_y = [g.dim() for _ in range(g.rng.randint(0, 1))]
    # y's layout: batch dims first, then contracting, then free (shuffled by a permutation).
    y_shape = [x.shape[d] for d in batch_x] + [x.shape[d] for d in contract_x] + free_y
    order = list(range(len(y_shape)))
    g.rng.shuffle(order)
    inverse = {old: new for new, old in enumerate(order)}
    y_shape = tuple(y_shape[i] for i in order)
    batch_y = [inverse[i] for i in range(len(batch_x))]
    contract_y = [inverse[len(batch_x) + i] for i in range(len(contract_x))]
    y = g.pick((x.dtype,), shape=y_shape, avoid=x)
    numbers = ((tuple(contract_x), tuple(contract_y)), (tuple(batch_x), tuple(batch_y)))
    return f"lax.dot_general({{0}}, {{1}}, {numbers})", [x, y]


def _conv(g: Any, op: OpEntry) -> Any:
    spatial = g.rng.choice([1, 1, 2])
    groups = g.rng.choice([1, 1, 2])
    n = g.rng.choice([1, 2])
    c_in = groups * g.rng.choice([1, 2])
    c_out = groups * g.rng.choice([1, 2])
    size = [g.rng.randint(1, 5) for _ in range(spatial)]
    kernel = [g.rng.randint(1, 3) for _ in range(spatial)]
    x = g.pick(op.dtypes, shape=(n, c_in, *size))
    w = g.pick((x.dtype,), shape=(c_out, c_in // groups, *kernel), avoid=x)
    strides = tuple(g.rng.choice([1, 1, 2]) for _ in range(spatial))
    padding = tuple((g.rng.choice([0, 0, 1]), g.rng.choice([0, 0, 1])) for _ in range(spatial))
    lhs_dil = tuple(g.rng.choice([1, 1, 2]) for _ in range(spatial))
    rhs_dil = tuple(g.rng.choice([1, 1, 2]) for _ in range(spatial))
    for s, k, (lo, hi), ld, rd in zip(size, kernel, padding, lhs_dil, rhs_dil, strict=True):
        if (s - 1) * ld + 1 + lo + hi < (k - 1) * rd + 1:
            return None
    return (f"lax.conv_general_dilated({{0}}, {{1}}, {strides}, {padding}, {lhs_dil}, {rhs_dil}, "
            f"feature_group_count={groups})"), [x, w]


def _take(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes, min_rank=1)
    axis = g.rng.randrange(x.rank)
    n = x.shape[axis]
    idx = g.index_input(shape=(g.rng.randint(0, 4),), low=-n - 1, high=n + 1)
    mode = g.rng.choice(["clip", "fill"])
    return f"jnp.take({{0}}, {{1}}, axis={axis}, mode={mode!r})", [x, idx]


def _scatter(method: str) -> Callable[..., Any]:
    def gen(g: Any, op: OpEntry) -> Any:
        x = g.pick(op.dtypes, min_rank=1, tie=method in ("min", "max"))
        n = x.shape[0]
        if method == "set":  # distinct indices: the order of duplicate updates is unspecified
            count = g.rng.randint(0, n)
            idx = g.index_input(values=g.rng.sample(range(n), count))
        else:
            count = g.rng.randint(0, 4)
            idx = g.index_input(shape=(count,), low=-1, high=n + 1)
        update = g.pick((x.dtype,), shape=(count, *x.shape[1:]), avoid=x)
        return f"{{0}}.at[{{1}}].{method}({{2}}, mode='drop')", [x, idx, update]
    return gen


def _sort(g: Any, op: OpEntry) -> Any:
    x = g.pick([d for d in op.dtypes if d != "complex64"], min_rank=1, tie=True)
    dim = g.rng.randrange(x.rank)
    if g.rng.random() < 0.5:
        return f"lax.sort({{0}}, dimension={dim})", [x]
    x = g.pick((x.dtype,), shape=x.shape, exact=True) if not x.exact else x
    y = g.pick(g.dtypes, shape=x.shape, avoid=x)
    return f"lax.sort(({{0}}, {{1}}), dimension={dim}, num_keys=1)", [x, y]


def _top_k(g: Any, op: OpEntry) -> Any:
    x = g.pick([d for d in op.dtypes if d != "complex64"], min_rank=1, exact=True)
    k = g.rng.randint(0, x.shape[-1])
    return f"lax.top_k({{0}}, {k})", [x]


_BODY_UNARY = ("lax.neg", "lax.sin", "lax.exp", "lax.tanh", "lax.abs")
_BODY_BINARY = ("lax.add", "lax.mul", "lax.sub", "lax.max")


def _cond(g: Any, op: OpEntry) -> Any:
    x = g.pick(FLOATS)
    pred = g.pick(("bool",), shape=(), exact=True)
    a, b = g.rng.sample(_BODY_UNARY, 2)
    return f"lax.cond({{0}}, lambda a: _pb({a}(a)), lambda a: _pb({b}(a)), {{1}})", [pred, x]


def _fori(g: Any, op: OpEntry) -> Any:
    x = g.pick(FLOATS)
    y = g.pick((x.dtype,), shape=x.shape, avoid=x)
    trips = g.rng.randint(0, 3)
    body = g.rng.choice(_BODY_BINARY)
    un = g.rng.choice(("lax.tanh", "lax.sin", "lax.neg"))
    return f"lax.fori_loop(0, {trips}, lambda i, c: _pb({un}({body}(c, {{1}}))), {{0}})", [x, y]


def _scan(g: Any, op: OpEntry) -> Any:
    xs = g.pick(FLOATS, min_rank=1)
    init = g.pick((xs.dtype,), shape=xs.shape[1:], avoid=xs)
    body = g.rng.choice(_BODY_BINARY)
    un = g.rng.choice(_BODY_UNARY)
    rev = g.rng.random() < 0.3
    step = f"lambda c, x: (_pb({body}(c, x)), _pb({un}(c)))"
    return f"lax.scan({step}, {{0}}, {{1}}, reverse={rev})", [init, xs]


def _softmax(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes, min_rank=1, tie=True)
    return f"nn.softmax({{0}}, axis={g.rng.randrange(x.rank)})", [x]


def _logsumexp(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes, min_rank=1, tie=True)
    return f"nn.logsumexp({{0}}, axis={g.rng.randrange(x.rank)})", [x]


def _max_pool(g: Any, op: OpEntry) -> Any:
    """Max pooling as flax/stax write it: reduce_window max over the trailing dims, stride = window."""
    x = g.pick(op.dtypes, min_rank=2, max_rank=3, tie=True)
    window = tuple([1] * (x.rank - 1) + [g.rng.choice([2, 3])])
    if x.shape[-1] < window[-1]:
        return None
    return f"lax.reduce_window({{0}}, -jnp.inf, lax.max, {window}, {window}, 'VALID')", [x]


# --- the catalog ---------------------------------------------------------------------------------

_TRANSCENDENTAL = ("exp", "exp2", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "logistic",
                   "erf", "erfc", "erf_inv", "cbrt")
for _name in ("neg", "abs"):
    entry(_name, _unary(f"lax.{_name}"), tie_grad=_name == "abs")
for _name in ("sign", "floor", "ceil", "is_finite"):
    entry(_name, _unary(f"lax.{_name}"), exact_in=(0,))
_ROUND = {"rounding_method": "away_from_zero"}
entry("round", _unary("lax.round"), exact_in=(0,), probe_attrs=_ROUND)
entry("round_even", _unary("lax.round", ", lax.RoundingMethod.TO_NEAREST_EVEN"), dialect="round",
      exact_in=(0,), probe_attrs=_ROUND)
for _name in _TRANSCENDENTAL:
    entry(_name, _unary(f"lax.{_name}"), ulps=4)
entry("sqrt", _unary("lax.sqrt"), ulps=1)
entry("rsqrt", _unary("lax.rsqrt"), ulps=2)
entry("not", _unary("lax.bitwise_not"))
entry("population_count", _unary("lax.population_count"))

for _name in ("add", "sub", "mul", "div"):
    entry(_name, _binary(f"lax.{_name}"), probe_arity=2, ulps=1)
entry("rem", _binary("lax.rem"), probe_arity=2, exact_in=(0, 1))
entry("pow", _binary("lax.pow"), probe_arity=2, ulps=4, exact_in=(1,))
entry("atan2", _binary("lax.atan2"), probe_arity=2, ulps=4)
for _name in ("max", "min"):
    entry(_name, _binary(f"lax.{_name}"), probe_arity=2, tie_grad=True)
for _name, _fn in (("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"),
                   ("shift_left", "shift_left"), ("shift_right_logical", "shift_right_logical"),
                   ("shift_right_arithmetic", "shift_right_arithmetic")):
    entry(_name, _binary(f"lax.{_fn}"), probe_arity=2)
entry("nextafter", _binary("lax.nextafter"), probe_arity=2, exact_in=(0, 1))
for _direction in ("eq", "ne", "lt", "le", "gt", "ge"):
    entry(_direction, _compare(f"lax.{_direction}"), dialect="compare", probe_arity=2,
          probe_attrs={"comparison_direction": _direction.upper()}, exact_in=(0, 1))
entry("select", _select, dtypes=tuple(d for d in ALL_DTYPES))
entry("clamp", _clamp, probe_arity=3, tie_grad=True)
entry("convert", _convert, dtypes=ALL_DTYPES)
entry("bitcast_convert", _bitcast, dtypes=ALL_DTYPES, exact_in=(0,))

for _name, _gen in (("broadcast_in_dim", _broadcast_in_dim), ("reshape", _reshape),
                    ("transpose", _transpose), ("rev", _rev), ("slice", _slice),
                    ("dynamic_slice", _dynamic_slice), ("dynamic_update_slice", _dynamic_update_slice),
                    ("concatenate", _concatenate), ("pad", _pad)):
    entry(_name, _gen, dtypes=ALL_DTYPES, weight=0.6)

entry("reduce_sum", _reduce("lax.reduce_sum"), dialect="reduce_sum", probe_attrs={"dimensions": (0,)},
      ulps=2, where="in")
entry("reduce_prod", _reduce("lax.reduce_prod"), dialect="reduce_prod", probe_attrs={"dimensions": (0,)},
      ulps=4, where="out")
for _name in ("reduce_max", "reduce_min"):
    entry(_name, _reduce(f"lax.{_name}"), probe_attrs={"dimensions": (0,)}, tie_grad=True)
for _name in ("reduce_and", "reduce_or"):
    entry(_name, _reduce(f"lax.{_name}"), probe_attrs={"dimensions": (0,)})
for _name in ("argmax", "argmin"):
    entry(_name, _arg(f"lax.{_name}"), probe_attrs={"axis": 0, "index_dtype": np.dtype("int32")},
          exact_in=(0,))
entry("cumsum", _cumulative("lax.cumsum"), probe_attrs={"axis": 0, "reverse": False}, ulps=2, where="in")
entry("cumprod", _cumulative("lax.cumprod"), probe_attrs={"axis": 0, "reverse": False}, ulps=4)
for _name in ("cummax", "cummin"):
    entry(_name, _cumulative(f"lax.{_name}"), probe_attrs={"axis": 0, "reverse": False}, tie_grad=True)

_WINDOW_PROBE = {"window_dimensions": (1,), "window_strides": (1,), "padding": (0, 0),
                 "base_dilation": (1,), "window_dilation": (1,)}
entry("reduce_window_sum", _reduce_window("lax.add"), dialect="reduce_window_sum",
      probe_attrs=_WINDOW_PROBE, ulps=2, where="in")
entry("reduce_window_max", _reduce_window("lax.max"), dialect="reduce_window_max",
      probe_attrs=_WINDOW_PROBE, tie_grad=True)
entry("reduce_window_min", _reduce_window("lax.min"), dialect="reduce_window_min",
      probe_attrs=_WINDOW_PROBE, tie_grad=True)
entry("max_pool", _max_pool, dtypes=FLOATS, tie_grad=True)
entry("dot_general", _dot_general, dtypes=("bool", *INTS, *FLOATS), ulps=2, where="in")
entry("conv_general_dilated", _conv, dtypes=FLOATS, ulps=2, where="in", weight=0.7)

entry("take", _take, dtypes=tuple(d for d in ALL_DTYPES if d != "complex64"))
for _method in ("set", "add", "mul", "min", "max"):
    entry(f"scatter_{_method}", _scatter(_method), dtypes=tuple(d for d in ALL_DTYPES if d != "complex64"),
          ulps=2 if _method in ("add", "mul") else 0, where="in", tie_grad=_method in ("min", "max"),
          weight=0.5)
entry("sort", _sort, dtypes=ALL_DTYPES, tie_grad=True)
entry("top_k", _top_k, dtypes=("bool", *INTS, *FLOATS), exact_in=(0,))

entry("cond", _cond, dtypes=FLOATS, ulps=4, weight=0.5)
entry("fori_loop", _fori, dtypes=FLOATS, ulps=6, weight=0.5)
entry("scan", _scan, dtypes=FLOATS, ulps=6, weight=0.5)
entry("logaddexp", _binary("jnp.logaddexp"), dtypes=FLOATS, ulps=4, tie_grad=True)
entry("softmax", _softmax, dtypes=FLOATS, ulps=6)
entry("logsumexp", _logsumexp, dtypes=FLOATS, ulps=6)

_ELEMENTWISE_EXTRA = {"select", "clamp", "convert", "logaddexp"}
for _op in CATALOG.values():
    _op.elementwise = _op.gen.__qualname__.startswith(("_unary", "_binary", "_compare")) or \
        _op.name in _ELEMENTWISE_EXTRA


# --- linear algebra, FFT and library functions (composites of many ops) -------------------------

_LINALG_FLOATS = ("float32", "float64")


def _square(g: Any, op: OpEntry, batch: bool = True) -> Any:
    n = g.rng.randint(1, 4)
    lead = (g.rng.randint(1, 2),) if batch and g.rng.random() < 0.3 else ()
    return g.pick(op.dtypes, shape=(*lead, n, n)), n


def _spd(ref: str, n: int) -> str:
    """A well-conditioned symmetric positive definite matrix made from ``ref``."""
    return f"(jnp.matmul({ref}, jnp.swapaxes({ref}, -1, -2)) + {n + 1} * jnp.eye({n}, dtype={ref}.dtype))"


def _cholesky(g: Any, op: OpEntry) -> Any:
    x, n = _square(g, op)
    return f"jnp.linalg.cholesky({_spd('{0}', n)})", [x]


def _eigvalsh(g: Any, op: OpEntry) -> Any:
    x, n = _square(g, op)
    return "jnp.linalg.eigvalsh({0} + jnp.swapaxes({0}, -1, -2))", [x]


def _svdvals(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes, shape=(g.rng.randint(1, 4), g.rng.randint(1, 4)))
    return "jnp.linalg.svd({0}, compute_uv=False)", [x]


def _qr_r(g: Any, op: OpEntry) -> Any:
    x = g.pick(op.dtypes, shape=(g.rng.randint(1, 4), g.rng.randint(1, 4)))
    return "jnp.abs(jnp.linalg.qr({0}, mode='r'))", [x]


def _solve(g: Any, op: OpEntry) -> Any:
    x, n = _square(g, op, batch=False)
    b = g.pick((x.dtype,), shape=(n, g.rng.randint(1, 3)), avoid=x)
    return f"jnp.linalg.solve({{0}} + {2 * n + 2} * jnp.eye({n}, dtype={{0}}.dtype), {{1}})", [x, b]


def _triangular_solve(g: Any, op: OpEntry) -> Any:
    x, n = _square(g, op, batch=False)
    b = g.pick((x.dtype,), shape=(n, g.rng.randint(1, 3)), avoid=x)
    lower = g.rng.random() < 0.5
    tri = "jnp.tril" if lower else "jnp.triu"
    return (f"lax.linalg.triangular_solve({tri}({{0}}) + {n + 2} * jnp.eye({n}, dtype={{0}}.dtype), {{1}}, "
            f"left_side=True, lower={lower})"), [x, b]


def _slogdet(g: Any, op: OpEntry) -> Any:
    x, n = _square(g, op)
    return f"jnp.linalg.slogdet({{0}} + {2 * n + 2} * jnp.eye({n}, dtype={{0}}.dtype))[1]", [x]


def _fft(fn: str) -> Callable[..., Any]:
    def gen(g: Any, op: OpEntry) -> Any:
        x = g.pick(op.dtypes, min_rank=1, max_rank=2)
        if x.shape[-1] == 0:
            return None
        return f"{fn}({{0}})", [x]
    return gen


def _library(template: str, min_rank: int = 0, axis: bool = False) -> Callable[..., Any]:
    def gen(g: Any, op: OpEntry) -> Any:
        x = g.pick(op.dtypes, min_rank=max(min_rank, 1 if axis else 0), tie=op.tie_grad,
                   exact=0 in op.exact_in)
        extra = f", axis={g.rng.randrange(x.rank)}" if axis else ""
        return template.replace("AXIS", extra), [x]
    return gen


entry("cholesky", _cholesky, dtypes=_LINALG_FLOATS, ulps=8, where="in", weight=0.4)
entry("eigvalsh", _eigvalsh, dtypes=_LINALG_FLOATS, ulps=8, where="in", weight=0.4)
entry("svdvals", _svdvals, dtypes=_LINALG_FLOATS, ulps=8, where="in", weight=0.4)
entry("qr_r", _qr_r, dtypes=_LINALG_FLOATS, ulps=8, where="in", weight=0.4)
entry("solve", _solve, dtypes=_LINALG_FLOATS, ulps=8, where="in", weight=0.4)
entry("triangular_solve", _triangular_solve, dtypes=_LINALG_FLOATS, ulps=8, where="in", weight=0.4)
entry("slogdet", _slogdet, dtypes=_LINALG_FLOATS, ulps=8, where="in", weight=0.4)
entry("fft", _fft("jnp.fft.fft"), dtypes=("float32", "complex64"), ulps=4, where="in", weight=0.4)
entry("rfft", _fft("jnp.fft.rfft"), dtypes=("float32",), ulps=4, where="in", weight=0.4)
entry("relu", _library("nn.relu({0})"), dtypes=FLOATS, tie_grad=True)
entry("gelu", _library("nn.gelu({0}, approximate=False)"), dtypes=FLOATS, ulps=6)
entry("silu", _library("nn.silu({0})"), dtypes=FLOATS, ulps=4)
entry("log_softmax", _library("nn.log_softmax({0}AXIS)", axis=True), dtypes=FLOATS, ulps=6, tie_grad=True)
entry("mean", _library("jnp.mean({0}AXIS)", axis=True), dtypes=FLOATS, ulps=2, where="in")
entry("var", _library("jnp.var({0}AXIS)", axis=True), dtypes=FLOATS, ulps=4, where="in")
entry("norm", _library("jnp.linalg.norm({0})"), dtypes=FLOATS, ulps=4, where="in", tie_grad=True)
entry("argsort", _library("jnp.argsort({0}AXIS)", axis=True), dtypes=("bool", *INTS, *FLOATS),
      exact_in=(0,))
entry("median", _library("jnp.median({0}AXIS)", axis=True), dtypes=FLOATS, tie_grad=True, weight=0.5)
entry("where", _select, dtypes=ALL_DTYPES)  # jnp.where through select
CATALOG["where"].gen = lambda g, op: ("jnp.where({0}, {1}, {2})", _select(g, op)[1])
CATALOG["where"].elementwise = True
