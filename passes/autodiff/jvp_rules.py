"""JVP rules of `mlax-autodiff`: for each mlax op, the ops that compute its output tangent.

Each rule follows JAX's rule for the matching lax primitive (jax/_src/lax/lax.py and
control_flow/loops.py), so derivatives at edge points agree with `jax.jvp`: ties of
max/min split the tangent, reduce_prod and cumprod multiply out the other factors instead
of dividing (exact at zeros), pow's exponent derivative is 0 at x = 0, |x|' is +1 at 0.
Every op a rule emits that consumes a tangent is linear in it and has a transpose rule
(add, sub, neg, mul by a primal, div by a primal, dot_general with one tangent operand,
float convert, the shape ops, reduce_sum, select with a primal predicate, cumsum), so
reverse mode can transpose it; values computed from primals alone (masks, cos(x)) may use
any op. A tangent of None is a symbolic zero; float results only ever get tangents.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from mlir import ir

from mlax.dialect import OPS, dtypes, read_attributes
from mlax.passes.autodiff.emit import Emitter, MaybeValue, is_float, spec
from mlax.passes.autodiff.jvp_rules_collectives import COLLECTIVE_JVP_RULES
from mlax.passes.autodiff.jvp_rules_complex import COMPLEX_JVP_RULES
from mlax.passes.autodiff.jvp_rules_decompositions import DECOMPOSITION_JVP_RULES
from mlax.passes.autodiff.jvp_rules_eig import EIG_JVP_RULES
from mlax.passes.autodiff.jvp_rules_fft import FFT_JVP_RULES
from mlax.passes.autodiff.jvp_rules_indexing import INDEXING_JVP_RULES
from mlax.passes.autodiff.jvp_rules_sorting import SORTING_JVP_RULES
from mlax.passes.autodiff.jvp_rules_spectral import SPECTRAL_JVP_RULES
from mlax.passes.autodiff.jvp_rules_undefined import UNDEFINED_JVP_RULES
from mlax.passes.autodiff.jvp_rules_windowed import WINDOWED_JVP_RULES
from mlax.passes.registry import PassFailure

JvpRule = Callable[[Emitter, ir.Operation, list[ir.Value], list[MaybeValue], list[ir.Value]],
                   list[MaybeValue]]
# The tangent contribution of one operand of an elementwise op: (e, t, *primals, out) -> value.
Partial = Callable[..., ir.Value]
# A value paired with its tangent, as the tree reductions and scans carry them.
Dual = tuple[ir.Value, ir.Value]


def zero_rule(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
              outs: list[ir.Value]) -> list[MaybeValue]:
    """Ops whose derivative is zero (or that have no float result): every tangent is None."""
    return [None] * len(outs)


def _name(op: ir.Operation) -> str:
    return op.name.removeprefix("mlax.")


def _broadcast_to(e: Emitter, value: ir.Value, like: ir.Value) -> ir.Value:
    """A rank-0 ``value`` broadcast to ``like``'s shape (clamp's bounds); others unchanged."""
    shape = spec(like).shape
    if spec(value).shape == shape:
        return value
    return e("broadcast_in_dim", value, shape=shape, broadcast_dimensions=())


def _compare(e: Emitter, x: ir.Value, y: ir.Value, direction: str) -> ir.Value:
    return e("compare", x, y, comparison_direction=direction)


# --- elementwise: one partial derivative per operand -------------------------------------------


def _sum_partials(e: Emitter, partials: Sequence[Partial | None], primals: Sequence[ir.Value],
                  tangents: Sequence[MaybeValue], out: ir.Value) -> MaybeValue:
    total = None
    for partial, t in zip(partials, tangents, strict=True):
        if t is not None and partial is not None:
            total = e.add(total, partial(e, t, *primals, out))
    return total


def _elementwise(*partials: Partial | None) -> JvpRule:
    """The rule of an elementwise op: the sum of the partials of the operands with tangents."""

    def rule(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
             outs: list[ir.Value]) -> list[MaybeValue]:
        if not is_float(outs[0]):
            return [None]
        return [_sum_partials(e, partials, primals, tangents, outs[0])]

    return rule


def _scaled(factor: Callable[..., ir.Value]) -> Partial:
    """t * factor(e, *primals, out): the partial of an operand with derivative ``factor``."""
    return lambda e, t, *args: e("mul", t, factor(e, *args))


def _square(e: Emitter, x: ir.Value) -> ir.Value:
    return e("mul", x, x)


def _exp_neg_square(e: Emitter, x: ir.Value) -> ir.Value:
    return e("exp", e("neg", _square(e, x)))


def _abs(e: Emitter, t: ir.Value, x: ir.Value, out: ir.Value) -> ir.Value:
    """JAX: select(x >= 0, t, -t), so the slope at +-0 is +1 (and -1 at NaN); for complex x,
    real(t * conj(x) / |x|) with |x| = 0 read as 1."""
    if dtypes.is_complex(spec(x).dtype):
        magnitude = _replace_zero(e, e("convert", out, new_dtype=spec(x).dtype))
        return e("real", e("mul", t, e("div", e("conj", x), magnitude)))
    return e("select", _compare(e, x, e.zeros(x), "GE"), t, e("neg", t))


def _replace_zero(e: Emitter, x: ir.Value) -> ir.Value:
    return e("select", _compare(e, x, e.zeros(x), "EQ"), e.full(x, 1), x)


def _trunc(e: Emitter, q: ir.Value) -> ir.Value:
    return e("mul", e("sign", q), e("floor", e("abs", q)))


def _balanced(e: Emitter, x: ir.Value, out: ir.Value, y: ir.Value) -> ir.Value:
    """JAX's _balanced_eq: 1 where x chose ``out``, 1/2 where y chose it too, else 0."""
    chose = e("select", _compare(e, x, out, "EQ"), e.full(out, 1), e.zeros(out))
    return e("div", chose, e("select", _compare(e, y, out, "EQ"), e.full(out, 2), e.full(out, 1)))


_SQRT_PI = math.sqrt(math.pi)

_UNARY: dict[str, Partial] = {
    "neg": lambda e, t, x, y: e("neg", t),
    "abs": _abs,
    "exp": _scaled(lambda e, x, y: y),
    "exp2": _scaled(lambda e, x, y: e("mul", y, e.full(y, math.log(2)))),
    "expm1": _scaled(lambda e, x, y: e("add", y, e.full(y, 1))),
    "log": lambda e, t, x, y: e("div", t, x),
    "log1p": lambda e, t, x, y: e("div", t, e("add", x, e.full(x, 1))),
    "sqrt": _scaled(lambda e, x, y: e("div", e.full(y, 0.5), y)),
    "rsqrt": _scaled(lambda e, x, y: e("mul", e.full(y, -0.5), e("div", y, x))),
    "cbrt": _scaled(lambda e, x, y: e("div", e.full(y, 1 / 3), _square(e, y))),
    "sin": _scaled(lambda e, x, y: e("cos", x)),
    "cos": _scaled(lambda e, x, y: e("neg", e("sin", x))),
    "tan": _scaled(lambda e, x, y: e("add", e.full(y, 1), _square(e, y))),
    "tanh": _scaled(lambda e, x, y: e("mul", e("add", e.full(y, 1), y), e("sub", e.full(y, 1), y))),
    "logistic": _scaled(lambda e, x, y: e("mul", y, e("sub", e.full(y, 1), y))),
    "erf": _scaled(lambda e, x, y: e("mul", e.full(x, 2 / _SQRT_PI), _exp_neg_square(e, x))),
    "erfc": _scaled(lambda e, x, y: e("mul", e.full(x, -2 / _SQRT_PI), _exp_neg_square(e, x))),
    "erf_inv": _scaled(lambda e, x, y: e("mul", e.full(y, _SQRT_PI / 2), e("exp", _square(e, y)))),
}

# max/min: the tangent of the operand that was chosen, half of each on ties (JAX).
_CHOOSER = (_scaled(lambda e, x, y, o: _balanced(e, x, o, y)),
            _scaled(lambda e, x, y, o: _balanced(e, y, o, x)))

_BINARY: dict[str, tuple[Partial, Partial]] = {
    "add": (lambda e, t, x, y, o: t, lambda e, t, x, y, o: t),
    "sub": (lambda e, t, x, y, o: t, lambda e, t, x, y, o: e("neg", t)),
    "mul": (lambda e, t, x, y, o: e("mul", t, y), lambda e, t, x, y, o: e("mul", x, t)),
    # d(x/y)/dy = -(x/y)/y: linear in t through the output and y (reverse mode keeps those, not
    # a full-size -x/y^2 beside them)
    "div": (lambda e, t, x, y, o: e("div", t, y),
            lambda e, t, x, y, o: e("neg", e("mul", e("div", t, y), o))),
    "rem": (lambda e, t, x, y, o: t,
            _scaled(lambda e, x, y, o: e("neg", _trunc(e, e("div", x, y))))),
    "pow": (_scaled(lambda e, x, y, o: e("mul", y, e("pow", x, e("sub", y, e.full(y, 1))))),
            _scaled(lambda e, x, y, o: e("mul", e("log", _replace_zero(e, x)), o))),
    "max": _CHOOSER,
    "min": _CHOOSER,
    "atan2": (_scaled(lambda e, x, y, o: e("div", y, e("add", _square(e, x), _square(e, y)))),
              _scaled(lambda e, x, y, o: e("div", e("neg", x), e("add", _square(e, x), _square(e, y))))),
}


def _clamp(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
           outs: list[ir.Value]) -> list[MaybeValue]:
    """JAX: the operand's tangent passes strictly inside (min, max), min's where min > x and
    min < max, max's where max < x; at ties no tangent passes. Rank-0 bounds broadcast."""
    if dtypes.is_complex(spec(primals[1]).dtype):  # jax's rule compares them with lax.gt, which refuses
        raise PassFailure("mlax.clamp has no derivative for complex operands: complex numbers are unordered "
                          "(jax's clamp JVP refuses them too)", op.location, kind=TypeError)
    lo, x, hi = (_broadcast_to(e, v, primals[1]) for v in primals)
    both = lambda a, b: e("and", a, b)  # noqa: E731
    masks = (both(_compare(e, lo, x, "GT"), _compare(e, lo, hi, "LT")),
             both(_compare(e, x, lo, "GT"), _compare(e, x, hi, "LT")),
             _compare(e, hi, x, "LT"))
    total = None
    for mask, t in zip(masks, tangents, strict=True):
        if t is not None:
            total = e.add(total, e("select", mask, _broadcast_to(e, t, x), e.zeros(x)))
    return [total]


# --- linear ops: the same op on the tangents ---------------------------------------------------


def _linear(*positions: int) -> JvpRule:
    """The default JVP of an op with the ``linear`` trait (dialect/registry.py): the op applied
    to the tangents of operands ``positions`` (zeros where None) and the primal values of the
    others (indices, predicates), with the op's own attributes."""

    def rule(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
             outs: list[ir.Value]) -> list[MaybeValue]:
        if not is_float(outs[0]):
            return [None]
        operands = [e.materialize(tangents[i], v) if i in positions else v for i, v in enumerate(primals)]
        return [e(_name(op), *operands, **read_attributes(op))]

    return rule


def _dot_general(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
                 outs: list[ir.Value]) -> list[MaybeValue]:
    """Bilinear: ta.b + a.tb with the op's dimension numbers and result_dtype."""
    (a, b), (ta, tb), attrs = primals, tangents, read_attributes(op)
    if not is_float(outs[0]):
        return [None]
    lhs = None if ta is None else e("dot_general", ta, b, **attrs)
    return [e.add(lhs, None if tb is None else e("dot_general", a, tb, **attrs))]


# --- reductions ----------------------------------------------------------------------------------


def _reduce_chooser(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
                    outs: list[ir.Value]) -> list[MaybeValue]:
    """reduce_max/min (JAX's _reduce_chooser_jvp_rule): the mean of the tangents at the
    positions equal to the result (ties share equally; NaN results get NaN tangents). The
    tangents are picked by a select, not multiplied by the 0/1 indicator: its transpose gives
    0, not inf * 0 = NaN, where nothing equals a NaN result, as XLA's simplification of jax's
    product does (grad of max over a NaN is 0 in jax)."""
    (x,), (t,), (out,) = primals, tangents, outs
    dims = read_attributes(op)["dimensions"]
    shape = spec(x).shape
    kept = tuple(d for d in range(len(shape)) if d not in dims)
    spread = e("broadcast_in_dim", out, shape=shape, broadcast_dimensions=kept)
    equal = _compare(e, x, spread, "EQ")
    counts = e("reduce_sum", e("convert", equal, new_dtype=spec(x).dtype), dimensions=dims)
    return [e("div", e("reduce_sum", e("select", equal, t, e.zeros(x)), dimensions=dims), counts)]


def _take(e: Emitter, x: ir.Value, axis: int, start: int, limit: int | None = None,
          stride: int = 1) -> ir.Value:
    """``x[start:limit:stride]`` along ``axis``."""
    shape = spec(x).shape
    starts = [0] * len(shape)
    limits = list(shape)
    strides = [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, shape[axis] if limit is None else limit, stride
    return e("slice", x, start_indices=tuple(starts), limit_indices=tuple(limits), strides=tuple(strides))


def _pad_axis(e: Emitter, x: ir.Value, value: float, *, axis: int, low: int, high: int,
              interior: int) -> ir.Value:
    """``x`` padded with the constant ``value`` along ``axis`` only."""
    rank = len(spec(x).shape)
    lows, highs, interiors = [0] * rank, [0] * rank, [0] * rank
    lows[axis], highs[axis], interiors[axis] = low, high, interior
    padding = e("constant", value=np.asarray(value, dtype=spec(x).dtype))
    return e("pad", x, padding, edge_padding_low=tuple(lows), edge_padding_high=tuple(highs),
             interior_padding=tuple(interiors))


def _dual_map(fn: Callable[[ir.Value], ir.Value], pair: Dual) -> Dual:
    return fn(pair[0]), fn(pair[1])


def _combiner(name: str) -> Callable[[Emitter, Dual, Dual], Dual]:
    """The binary op ``name`` on (value, tangent) pairs, differentiated by its own partials."""

    def combine(e: Emitter, a: Dual, b: Dual) -> Dual:
        out = e(name, a[0], b[0])
        return out, _sum_partials(e, _BINARY[name], (a[0], b[0]), (a[1], b[1]), out)

    return combine


def _reduce_prod(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
                 outs: list[ir.Value]) -> list[MaybeValue]:
    """JAX's _reduce_prod_jvp_rule: the reduced dimensions flattened to a leading axis, then
    halves multiplied pairwise down a tree (odd halves padded with 1), differentiated
    through; exact where elements are zero."""
    (x,), (t,), (out,) = primals, tangents, outs
    dims = tuple(read_attributes(op)["dimensions"])
    if not dims:
        return [t]
    shape = spec(x).shape
    kept = tuple(d for d in range(len(shape)) if d not in dims)
    n = math.prod(shape[d] for d in dims)
    if n == 0:
        return [None]
    flat = (n, *(shape[d] for d in kept))
    pair = _dual_map(lambda v: e("reshape", e("transpose", v, permutation=dims + kept), shape=flat), (x, t))
    combine = _combiner("mul")
    while n > 1:
        n1 = (n + 1) // 2
        first = _dual_map(lambda v, n1=n1: _take(e, v, 0, 0, n1), pair)
        second = _dual_map(lambda v, n1=n1: _take(e, v, 0, n1), pair)
        if n1 != n - n1:
            second = (_pad_axis(e, second[0], 1, axis=0, low=0, high=1, interior=0),  # times 1
                      _pad_axis(e, second[1], 0, axis=0, low=0, high=1, interior=0))
        pair, n = combine(e, first, second), n1
    return [e("reshape", pair[1], shape=spec(out).shape)]


def _interleave(e: Emitter, a: ir.Value, b: ir.Value, axis: int) -> ir.Value:
    """a[0], b[0], a[1], b[1], ... along ``axis`` (a has as many elements as b, or one more)."""
    same = spec(a).shape[axis] == spec(b).shape[axis]
    return e("add", _pad_axis(e, a, 0, axis=axis, low=0, high=1 if same else 0, interior=1),
             _pad_axis(e, b, 0, axis=axis, low=1, high=0 if same else 1, interior=1))


def _associative_scan(e: Emitter, combine: Callable[[Emitter, Dual, Dual], Dual], elems: Dual,
                      axis: int) -> Dual:
    """JAX's associative_scan (parallel prefix) on a (value, tangent) pair."""
    n = spec(elems[0]).shape[axis]
    if n < 2:
        return elems
    reduced = combine(e, _dual_map(lambda v: _take(e, v, axis, 0, n - 1, 2), elems),
                      _dual_map(lambda v: _take(e, v, axis, 1, n, 2), elems))
    odd = _associative_scan(e, combine, reduced, axis)
    rest = _dual_map(lambda v: _take(e, v, axis, 2, n, 2), elems)
    if n % 2 == 0:
        odd_len = spec(odd[0]).shape[axis]
        even = combine(e, _dual_map(lambda v: _take(e, v, axis, 0, odd_len - 1), odd), rest)
    else:
        even = combine(e, odd, rest)
    # the first element of a scan is the first element of elems
    value, tangent = (e("concatenate", _take(e, v, axis, 0, 1), w, dimension=axis)
                      for v, w in zip(elems, even, strict=True))
    return _interleave(e, value, odd[0], axis), _interleave(e, tangent, odd[1], axis)


def _cumulative(combine_op: str) -> JvpRule:
    """cumprod/cummax/cummin (JAX's _cumulative_jvp_rule): the parallel prefix scan of the
    binary op, differentiated through (so ties of cummax/cummin split as max/min do)."""
    combine = _combiner(combine_op)

    def rule(e: Emitter, op: ir.Operation, primals: list[ir.Value], tangents: list[MaybeValue],
             outs: list[ir.Value]) -> list[MaybeValue]:
        attrs = read_attributes(op)
        axis, reverse = attrs["axis"], attrs["reverse"]
        pair = (primals[0], tangents[0])
        if reverse:
            pair = _dual_map(lambda v: e("rev", v, dimensions=(axis,)), pair)
        tangent = _associative_scan(e, combine, pair, axis)[1]
        return [e("rev", tangent, dimensions=(axis,)) if reverse else tangent]

    return rule


# --- the table ---------------------------------------------------------------------------------

# The ops with the ``zero_derivative`` trait (the front end reads this too).
ZERO_DERIVATIVE = tuple(name for name, op in OPS.items() if op.zero_derivative)

# Derived from the traits first (zero derivative; the default JVP of a linear op); the rules
# below replace a default where JAX's rule has another form (add, sub, neg: sums of partials;
# complex, real, imag, conj: jvp_rules_complex.py).
JVP_RULES: dict[str, JvpRule] = {
    **{name: zero_rule for name in ZERO_DERIVATIVE},
    **{name: _linear(*op.linear) for name, op in OPS.items() if op.linear},
    **{name: _elementwise(partial) for name, partial in _UNARY.items()},
    **{name: _elementwise(*partials) for name, partials in _BINARY.items()},
    "clamp": _clamp,
    "dot_general": _dot_general,
    "reduce_prod": _reduce_prod,
    "reduce_max": _reduce_chooser,
    "reduce_min": _reduce_chooser,
    "cumprod": _cumulative("mul"),
    "cummax": _cumulative("max"),
    "cummin": _cumulative("min"),
    **WINDOWED_JVP_RULES,
    **INDEXING_JVP_RULES,
    **SORTING_JVP_RULES,
    **COLLECTIVE_JVP_RULES,
    **COMPLEX_JVP_RULES,
    **DECOMPOSITION_JVP_RULES,
    **FFT_JVP_RULES,
    **SPECTRAL_JVP_RULES,
    **EIG_JVP_RULES,
    **UNDEFINED_JVP_RULES,
}
