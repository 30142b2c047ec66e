"""Each TRANSPOSE rule is the adjoint of its op: <L(t), c> == <t, L^T(c)> on random values.

A case is one op with some operands linear (the tangent t) and the others fixed random
constants. One module holds @linear (the op on all operands) and @transposed (the rule,
emitted through an Emitter, from the cotangent c and the constants); both run in the
reference interpreter and the two inner products are compared in float64. Where a constant
operand adds in (add, sub, pad's padding value, dynamic_update_slice's update) the op is
affine, so L(t) is op(t) - op(0). The rules are tested without the vjp driver.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
import pytest
from mlir import ir
from mlir.dialects import func

from mlax.backends.interpreter import run_function
from mlax.dialect import build, dtypes, get_context, infer
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes.autodiff.emit import Emitter
from mlax.passes.autodiff.transpose_rules import TRANSPOSE_RULES
from mlax.passes.registry import PassFailure

pytestmark = pytest.mark.usefixtures("x64")

F64 = np.dtype(np.float64)
F32 = np.dtype(np.float32)
F16 = np.dtype(np.float16)
BF16 = np.dtype(dtypes.bfloat16)


@dataclass
class Case:
    """``op`` on ``operands``; where ``linear`` is true the operand is the tangent."""

    op: str
    operands: list[np.ndarray]
    linear: tuple[bool, ...]
    attrs: dict = field(default_factory=dict)


def _values(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype = F64) -> np.ndarray:
    return np.asarray(rng.standard_normal(shape)).astype(dtype)


def _shape(rng: np.random.Generator, low: int = 0, high: int = 3) -> tuple[int, ...]:
    """A random shape of rank low..high with sizes 1..5 (size-0 dims have their own cases)."""
    return tuple(int(n) for n in rng.integers(1, 6, size=int(rng.integers(low, high + 1))))


def _build(case: Case) -> ir.Module:
    """@linear(operands) -> op(operands); @transposed(c, constants) -> cotangents of the linear operands."""
    specs = [TensorSpec(a.shape, a.dtype) for a in case.operands]
    (out,) = infer(case.op, specs, case.attrs)
    types = [s.to_mlir() for s in specs]
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        linear_fn = func.FuncOp("linear", ir.FunctionType.get(types, [out.to_mlir()]))
        with ir.InsertionPoint(linear_fn.add_entry_block()):
            (y,) = build(case.op, list(linear_fn.arguments), case.attrs)
            func.ReturnOp([y])
        constant_types = [t for t, lin in zip(types, case.linear, strict=True) if not lin]
        linear_types = [t for t, lin in zip(types, case.linear, strict=True) if lin]
        transposed = func.FuncOp("transposed", ir.FunctionType.get([out.to_mlir()] + constant_types,
                                                                   linear_types))
        block = transposed.add_entry_block()
    c, *constants = block.arguments
    known = iter(constants)
    operands = [None if lin else next(known) for lin in case.linear]
    e = Emitter(ir.InsertionPoint(block), ir.Location.unknown())
    cts = TRANSPOSE_RULES[case.op](e, y.owner.operation, [c], operands)
    assert len(cts) == len(case.operands)
    results = []
    for ct, t, lin in zip(cts, types, case.linear, strict=True):
        if not lin:
            assert ct is None, "a constant operand got a cotangent"
            continue
        assert ct is None or ct.type == t, f"cotangent type {ct.type} for an operand of type {t}"
        results.append(e.materialize(ct, t))
    with ir.InsertionPoint(block):
        func.ReturnOp(results)
    assert module.operation.verify()
    return module


def _inner(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """The inner product in float64 and the sum of the magnitudes of its terms."""
    products = a.astype(F64) * b.astype(F64)
    return float(products.sum()), float(np.abs(products).sum())


def check_adjoint(case: Case, rng: np.random.Generator) -> None:
    with get_context(), ir.Location.unknown():
        module = _build(case)
        (y,) = run_function(module, "linear", case.operands)
        zeroed = [np.zeros_like(a) if lin else a for a, lin in zip(case.operands, case.linear, strict=True)]
        (offset,) = run_function(module, "linear", zeroed)
        c = _values(rng, y.shape, y.dtype)
        constants = [a for a, lin in zip(case.operands, case.linear, strict=True) if not lin]
        cts = run_function(module, "transposed", [c] + constants)
    tangents = [a for a, lin in zip(case.operands, case.linear, strict=True) if lin]
    forward, scale = _inner(y.astype(F64) - offset.astype(F64), c)
    backward = 0.0
    for t, ct in zip(tangents, cts, strict=True):
        assert ct.shape == t.shape and ct.dtype == t.dtype
        value, magnitude = _inner(t, ct)
        backward += value
        scale += magnitude
    eps = max(ml_dtypes.finfo(a.dtype).eps for a in [y, *case.operands] if dtypes.is_float(a.dtype))
    assert abs(forward - backward) <= 64 * eps * max(scale, 1e-300), (forward, backward)


# --- random case generators, one per op -------------------------------------------------------------

Generator = Callable[[np.random.Generator], Case]
MASKS2 = [(True, True), (True, False), (False, True)]


def _tag(linear: tuple[bool, ...]) -> str:
    """``tc`` for (linear, constant) operands."""
    return "".join("t" if x else "c" for x in linear)


def _elementwise(op: str, linear: tuple[bool, ...]) -> Generator:
    def make(rng: np.random.Generator) -> Case:
        shape = _shape(rng)
        operands = [_values(rng, shape) for _ in linear]
        if op == "div":  # a denominator away from zero
            operands[1] = np.sign(operands[1]) * rng.uniform(0.5, 2, shape)
        return Case(op, operands, linear)
    return make


def _convert(source: np.dtype, target: np.dtype) -> Generator:
    return lambda rng: Case("convert", [_values(rng, _shape(rng), source)], (True,), {"new_dtype": target})


def _select(linear: tuple[bool, bool], scalar_pred: bool) -> Generator:
    def make(rng: np.random.Generator) -> Case:
        shape = _shape(rng)
        pred = rng.random(() if scalar_pred else shape) < 0.5
        return Case("select", [np.asarray(pred), _values(rng, shape), _values(rng, shape)], (False, *linear))
    return make


def _dot(side: int, dtype: np.dtype = F64, result_dtype: np.dtype = F64) -> Generator:
    """Random dimension numbers: 0-2 batch, contracting and free dimensions per side, in random
    positions, with contracting pairs in random order."""
    def make(rng: np.random.Generator) -> Case:
        n_batch, n_contract, n_lhs, n_rhs = (int(n) for n in rng.integers(0, 3, size=4))
        sizes = {"b": _shape(rng, n_batch, n_batch), "c": _shape(rng, n_contract, n_contract),
                 "l": _shape(rng, n_lhs, n_lhs), "r": _shape(rng, n_rhs, n_rhs)}
        dims = {}
        operands = []
        for name, free in (("lhs", "l"), ("rhs", "r")):
            roles = [(k, i) for k in ("b", "c", free) for i in range(len(sizes[k]))]
            roles = [roles[i] for i in rng.permutation(len(roles))]
            operands.append(_values(rng, tuple(sizes[k][i] for k, i in roles), dtype))
            for key, kind in (("batch", "b"), ("contracting", "c")):
                positions = tuple(roles.index((kind, i)) for i in range(len(sizes[kind])))
                dims[f"{name}_{key}_dimensions"] = positions
        linear = (side == 0, side == 1)
        return Case("dot_general", operands, linear, {**dims, "result_dtype": result_dtype})
    return make


def _fixed_dot(lhs: tuple[int, ...], rhs: tuple[int, ...], lc: tuple[int, ...], rc: tuple[int, ...],
               lb: tuple[int, ...] = (), rb: tuple[int, ...] = (), side: int = 0) -> Generator:
    attrs = {"lhs_contracting_dimensions": lc, "rhs_contracting_dimensions": rc,
             "lhs_batch_dimensions": lb, "rhs_batch_dimensions": rb, "result_dtype": F64}
    linear = (side == 0, side == 1)
    return lambda rng: Case("dot_general", [_values(rng, lhs), _values(rng, rhs)], linear, attrs)


def _broadcast(rng: np.random.Generator) -> Case:
    shape = _shape(rng, 0, 4)
    dims = tuple(int(d) for d in np.flatnonzero(rng.random(len(shape)) < 0.6))
    operand = tuple(shape[d] if rng.random() < 0.5 else 1 for d in dims)
    attrs = {"shape": shape, "broadcast_dimensions": dims}
    return Case("broadcast_in_dim", [_values(rng, operand)], (True,), attrs)


def _reshape(rng: np.random.Generator) -> Case:
    shape = _shape(rng)
    sizes = [int(n) for n in rng.permutation(list(shape) + [1] * int(rng.integers(0, 2)))]
    target = tuple(n for n in sizes if n > 1 or rng.random() < 0.5)  # same sizes, units moved
    return Case("reshape", [_values(rng, shape)], (True,), {"shape": target})


def _transpose(rng: np.random.Generator) -> Case:
    shape = _shape(rng, 0, 4)
    permutation = tuple(int(p) for p in rng.permutation(len(shape)))
    return Case("transpose", [_values(rng, shape)], (True,), {"permutation": permutation})


def _subset(rng: np.random.Generator, rank: int) -> tuple[int, ...]:
    return tuple(int(d) for d in np.flatnonzero(rng.random(rank) < 0.5))


def _rev(rng: np.random.Generator) -> Case:
    shape = _shape(rng)
    return Case("rev", [_values(rng, shape)], (True,), {"dimensions": _subset(rng, len(shape))})


def _reduce_sum(rng: np.random.Generator) -> Case:
    shape = _shape(rng, 0, 4)
    return Case("reduce_sum", [_values(rng, shape)], (True,), {"dimensions": _subset(rng, len(shape))})


def _cumsum(reverse: int) -> Generator:
    def make(rng: np.random.Generator) -> Case:
        shape = _shape(rng, 1, 3)
        attrs = {"axis": int(rng.integers(len(shape))), "reverse": reverse}
        return Case("cumsum", [_values(rng, shape)], (True,), attrs)
    return make


def _slice(rng: np.random.Generator) -> Case:
    shape = _shape(rng, 0, 3)
    starts = [int(rng.integers(0, n + 1)) for n in shape]
    limits = [int(rng.integers(s, n + 1)) for s, n in zip(starts, shape, strict=True)]
    attrs = {"start_indices": tuple(starts), "limit_indices": tuple(limits),
             "strides": tuple(int(k) for k in rng.integers(1, 4, size=len(shape)))}
    return Case("slice", [_values(rng, shape)], (True,), attrs)


def _pad(linear: tuple[bool, bool]) -> Generator:
    """Negative edges (crops), interior padding; the padding value linear or constant."""
    def make(rng: np.random.Generator) -> Case:
        shape = _shape(rng)
        config: list[tuple[int, int, int]] = []
        for n in shape:
            interior = int(rng.integers(0, 3))
            core = n + (n - 1) * interior
            low, high = (int(x) for x in rng.integers(-2, 4, size=2))
            config.append((low, max(high, -low - core), interior))
        attrs = {k: tuple(c[i] for c in config) for i, k in
                 enumerate(("edge_padding_low", "edge_padding_high", "interior_padding"))}
        return Case("pad", [_values(rng, shape), _values(rng, ())], linear, attrs)
    return make


def _concatenate(linear: tuple[bool, bool]) -> Generator:
    def make(rng: np.random.Generator) -> Case:
        shape = _shape(rng, 1, 3)
        dim = int(rng.integers(len(shape)))
        other = tuple(int(rng.integers(1, 5)) if d == dim else n for d, n in enumerate(shape))
        return Case("concatenate", [_values(rng, shape), _values(rng, other)], linear, {"dimension": dim})
    return make


def _starts(rng: np.random.Generator, shape: tuple[int, ...]) -> list[np.ndarray]:
    """Start indices from 3 below 0 to 3 past the end, so the op clamps many of them."""
    dtype = rng.choice([np.int32, np.int64])
    return [np.asarray(rng.integers(-3, n + 4), dtype=dtype) for n in shape]


def _dynamic_slice(rng: np.random.Generator) -> Case:
    shape = _shape(rng)
    sizes = tuple(int(rng.integers(0, n + 1)) for n in shape)
    indices = _starts(rng, shape)
    return Case("dynamic_slice", [_values(rng, shape), *indices], (True,) + (False,) * len(shape),
                {"slice_sizes": sizes})


def _dynamic_update_slice(linear: tuple[bool, bool]) -> Generator:
    def make(rng: np.random.Generator) -> Case:
        shape = _shape(rng)
        update = tuple(int(rng.integers(0, n + 1)) for n in shape)
        return Case("dynamic_update_slice", [_values(rng, shape), _values(rng, update), *_starts(rng, shape)],
                    linear + (False,) * len(shape))
    return make


GENERATORS: dict[str, Generator] = {
    **{f"{op}-{_tag(m)}": _elementwise(op, m) for op in ("add", "sub") for m in MASKS2},
    "neg": _elementwise("neg", (True,)),
    "optimization_barrier": _elementwise("optimization_barrier", (True,)),
    "mul-lhs": _elementwise("mul", (True, False)),
    "mul-rhs": _elementwise("mul", (False, True)),
    "div-numerator": _elementwise("div", (True, False)),
    "convert-f32-f64": _convert(F32, F64),
    "convert-f64-f32": _convert(F64, F32),
    **{f"select-{_tag(m)}-{'scalar' if s else 'full'}": _select(m, s)
       for m in MASKS2 for s in (False, True)},
    "dot-lhs": _dot(0),
    "dot-rhs": _dot(1),
    "dot-lhs-f32-to-f64": _dot(0, F32, F64),
    "dot-rhs-f32-to-f64": _dot(1, F32, F64),
    "dot-lhs-f64-to-f32": _dot(0, F64, F32),
    "dot-rhs-f16-to-f32": _dot(1, F16, F32),
    "dot-lhs-bf16-to-f16": _dot(0, BF16, F16),
    "broadcast_in_dim": _broadcast,
    "reshape": _reshape,
    "transpose": _transpose,
    "rev": _rev,
    "reduce_sum": _reduce_sum,
    "cumsum": _cumsum(0),
    "cumsum-reverse": _cumsum(1),
    "slice": _slice,
    **{f"pad-{_tag(m)}": _pad(m) for m in MASKS2},
    **{f"concatenate-{_tag(m)}": _concatenate(m) for m in MASKS2},
    "dynamic_slice": _dynamic_slice,
    **{f"dynamic_update_slice-{_tag(m)}": _dynamic_update_slice(m) for m in MASKS2},
}

REPEATS = {"dot-lhs": 8, "dot-rhs": 8, "broadcast_in_dim": 5, "slice": 5, "pad-tt": 5, "dynamic_slice": 4}


@pytest.mark.parametrize(("name", "repeat"), [(n, r) for n in GENERATORS for r in range(REPEATS.get(n, 2))])
def test_random_adjoint(rng: np.random.Generator, name: str, repeat: int) -> None:
    check_adjoint(GENERATORS[name](rng), rng)


# --- the layouts and edge shapes named explicitly ---------------------------------------------------

def _fixed(op: str, shapes: list[tuple[int, ...]], linear: tuple[bool, ...], **attrs: object) -> Generator:
    return lambda rng: Case(op, [_values(rng, s) for s in shapes], linear, attrs)


FIXED: dict[str, Generator] = {
    "matmul-lhs": _fixed_dot((2, 3), (3, 4), (1,), (0,)),
    "matmul-rhs": _fixed_dot((2, 3), (3, 4), (1,), (0,), side=1),
    "matmul-transposed-layouts": _fixed_dot((3, 2), (4, 3), (0,), (1,)),
    "matmul-transposed-layouts-rhs": _fixed_dot((3, 2), (4, 3), (0,), (1,), side=1),
    "batch-not-leading": _fixed_dot((2, 5, 3), (3, 5, 4), (2,), (0,), (1,), (1,)),
    "batch-not-leading-rhs": _fixed_dot((2, 5, 3), (3, 5, 4), (2,), (0,), (1,), (1,), side=1),
    "two-batch-swapped": _fixed_dot((4, 2, 3, 6), (3, 4, 6, 2), (2,), (0,), (3, 0), (2, 1), side=1),
    "contract-two-crossed": _fixed_dot((2, 3, 4), (4, 5, 3), (2, 1), (0, 2)),
    "contract-two-crossed-rhs": _fixed_dot((2, 3, 4), (4, 5, 3), (2, 1), (0, 2), side=1),
    "outer-product": _fixed_dot((3,), (1, 4), (), ()),
    "scalar-times-scalar": _fixed_dot((), (), (), (), side=1),
    "vector-dot": _fixed_dot((5,), (5,), (0,), (0,)),
    "broadcast-expand-and-add": _fixed("broadcast_in_dim", [(1, 3)], (True,), shape=(4, 5, 3),
                                       broadcast_dimensions=(1, 2)),
    "broadcast-scalar": _fixed("broadcast_in_dim", [()], (True,), shape=(2, 3), broadcast_dimensions=()),
    "broadcast-unit-to-unit": _fixed("broadcast_in_dim", [(1, 1)], (True,), shape=(1, 4),
                                     broadcast_dimensions=(0, 1)),
    "slice-strided": _fixed("slice", [(7, 5)], (True,), start_indices=(1, 0), limit_indices=(7, 4),
                            strides=(3, 2)),
    "pad-crop-interior": _fixed("pad", [(4, 3), ()], (True, True), edge_padding_low=(-2, 1),
                                edge_padding_high=(1, -3), interior_padding=(2, 1)),
    "reduce-sum-several": _fixed("reduce_sum", [(2, 3, 4, 5)], (True,), dimensions=(0, 2, 3)),
    # size-0 dimensions: the rules must still build well-typed IR
    "add-empty": _fixed("add", [(0, 3), (0, 3)], (True, True)),
    "slice-empty": _fixed("slice", [(4, 3)], (True,), start_indices=(2, 0), limit_indices=(2, 3),
                          strides=(2, 1)),
    "pad-empty-operand": _fixed("pad", [(0, 2), ()], (True, True), edge_padding_low=(2, 0),
                                edge_padding_high=(1, 1), interior_padding=(3, 1)),
    "broadcast-to-empty": _fixed("broadcast_in_dim", [(1,)], (True,), shape=(0, 3),
                                 broadcast_dimensions=(0,)),
    "reduce-sum-empty": _fixed("reduce_sum", [(3, 0)], (True,), dimensions=(1,)),
    "dot-contract-empty": _fixed_dot((2, 0), (0, 3), (1,), (0,), side=1),
    "concatenate-empty-lhs": _fixed("concatenate", [(0, 2), (3, 2)], (True, True), dimension=0),
    "cumsum-empty": _fixed("cumsum", [(0, 2)], (True,), axis=0, reverse=1),
}


@pytest.mark.parametrize("name", list(FIXED))
def test_fixed_adjoint(rng: np.random.Generator, name: str) -> None:
    check_adjoint(FIXED[name](rng), rng)


def test_every_linear_op_has_a_rule() -> None:
    assert set(TRANSPOSE_RULES) == {
        "add", "sub", "neg", "mul", "div", "dot_general", "convert", "broadcast_in_dim", "reshape",
        "transpose", "reduce_sum", "slice", "pad", "concatenate", "rev", "select", "dynamic_slice",
        "dynamic_update_slice", "cumsum", "conv_general_dilated", "reduce_window_sum", "gather", "scatter",
        "scatter_add", "apply_permutation", "optimization_barrier", "triangular_solve",
        # collectives over named axes and the sharding constraint (their own tests: tests/frontend/
        # test_collectives_vmap.py, tests/dialect/test_sharding.py)
        "psum", "all_gather", "psum_scatter", "all_to_all", "ppermute", "sharding_constraint",
        # complex numbers (tests/complex/test_complex_autodiff.py)
        "complex", "real", "imag", "conj",
        # fft: jax's transposes, checked against jax.vjp (tests/fft/test_fft_autodiff.py)
        "fft"}


def test_padding_value_cotangent_ignores_operand_positions(rng: np.random.Generator) -> None:
    """Infinite cotangents where the operand landed do not make the padding value's cotangent inf
    or NaN (it sums the padded positions only)."""
    case = Case("pad", [_values(rng, (3,)), _values(rng, ())], (False, True),
                {"edge_padding_low": (1,), "edge_padding_high": (2,), "interior_padding": (1,)})
    with get_context(), ir.Location.unknown():
        module = _build(case)
        c = np.array([1.0, np.inf, 2.0, -np.inf, 4.0, np.nan, 8.0, 16.0])
        (ct_value,) = run_function(module, "transposed", [c, case.operands[0]])
    assert ct_value == 1.0 + 2.0 + 4.0 + 8.0 + 16.0


@pytest.mark.parametrize("op", ["mul", "dot_general"])
def test_product_linear_in_both_factors_is_refused(op: str) -> None:
    attrs = ({"lhs_contracting_dimensions": (0,), "rhs_contracting_dimensions": (0,),
              "lhs_batch_dimensions": (), "rhs_batch_dimensions": (), "result_dtype": F64}
             if op == "dot_general" else {})
    with get_context(), ir.Location.unknown(), pytest.raises(PassFailure, match="linear in exactly one"):
        _build(Case(op, [np.ones(3), np.ones(3)], (True, True), attrs))
