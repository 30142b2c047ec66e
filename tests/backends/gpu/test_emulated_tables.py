"""The numpy test tables (elementwise unary and binary, manipulation, reductions, products,
einsum: tests/numpy, the tables test_vmap_tables and test_autodiff_numpy_tables share) through
``backend="gpu"`` and the lockstep kernel emulator, against the CPU backend: values and dtypes.
A program the GPU pipeline refuses must say so with a NotImplementedError naming the op and
pointing to backend="cpu"; only the families docs/gpu.md lists as refused may be (float
remainders). Small shapes: the emulator runs every thread in NumPy."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import jax
import ml_dtypes
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax import lax
from tests.backends.gpu.kernel_emulator import emulate
from tests.backends.gpu.test_emulated_kernels import _compare, _tolerance
from tests.dialect import test_elementwise as lax_tables
from tests.numpy import test_linalg_axes, test_math_more
from tests.numpy.test_elementwise import BINARY, FLOAT_ONLY, HALF_PRECISION, INTEGER_MINDED, UNARY
from tests.numpy.test_indexing import INDICES, UPDATES
from tests.numpy.test_linalg import EINSUM, PRODUCT_SHAPES
from tests.numpy.test_manipulation import CASES
from tests.numpy.test_reductions import CUMULATIVE, REDUCTIONS, SINGLE_AXIS
from tests.oracle import FLOAT_DTYPES, random_array

Maker = Callable[[np.random.Generator], list[np.ndarray]]
Program = tuple[Callable, Maker, str]
COMPLEX = {"real", "imag", "conj", "conjugate", "isreal", "iscomplex"}
INTEGER_ONLY = {"bitwise_count", "bitwise_not", "invert", "bitwise_invert", "bitwise_and", "bitwise_or",
                "bitwise_xor", "left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift"}
SHIFTS = {"left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift"}
SHAPE = (4, 6)


def _args(shapes: Any, dtype: Any = np.float32, low: float = -2.0, high: float = 2.0) -> Maker:
    return lambda rng: [random_array(rng, s, dtype, low, high) for s in shapes]


def _domain(name: str) -> tuple[float, float]:
    """Inputs inside the function's domain (NaN-free comparisons of values)."""
    if name == "arccosh":
        return 1.2, 3.0
    if name in ("arcsin", "arccos", "arctanh"):
        return -0.9, 0.9
    if name.startswith("log") or name == "sqrt":
        return 0.1, 3.0
    return -3.0, 3.0


def _unary(name: str, dtype: Any) -> Program:
    return getattr(mnp, name), _args([SHAPE], dtype, *_domain(name)), _kind(dtype)


def _binary(name: str, dtype: Any) -> Program:
    if name in SHIFTS:
        return getattr(mnp, name), lambda rng: [random_array(rng, SHAPE, np.int32),
                                                rng.integers(0, 31, SHAPE).astype(np.int32)], "f32"
    if dtype.kind == "i":  # a divisor of zero now and then (Python-semantics integer division)
        return getattr(mnp, name), lambda rng: [random_array(rng, SHAPE, dtype), np.where(
            rng.random(SHAPE) < 0.2, 0, random_array(rng, SHAPE, dtype)).astype(dtype)], "f32"
    return getattr(mnp, name), _args([SHAPE] * 2, dtype, 0.3, 2.5), "f32"


def _reduction(name: str, axis: Any) -> Program:
    fn = getattr(mnp, name)
    return (lambda x: fn(x, axis=axis)), _args([(2, 3, 4)], np.float32, 0.5, 1.5), "f32"


def _edges(dtype: Any) -> np.ndarray:
    """The dialect table's special floats (NaN, infinities, -0.0...) or integer limits."""
    if dtype == np.bool_:
        return np.array([False, True])
    return np.array(lax_tables.SPECIAL, dtype) if dtype in FLOAT_DTYPES else lax_tables._ints(dtype)


def _lax_unary(name: str, dtype: Any) -> Program:
    domain = lax_tables.UNARY[name][1] or (-3.0, 3.0)
    return getattr(lax, name), lambda rng: [np.concatenate([random_array(rng, (24,), dtype, *domain),
                                                            _edges(dtype)])], _kind(dtype)


def _lax_binary(name: str, dtype: Any) -> Program:
    """Random pairs, then every pair of the special or edge values (INT_MIN / -1, x % 0...)."""
    def make(rng: np.random.Generator) -> list[np.ndarray]:
        if name.startswith("shift"):
            x = np.concatenate([random_array(rng, (24,), dtype), _edges(dtype)])
            return [x, lax_tables._shift_amounts(rng, x.shape, dtype)]
        special = np.array(lax_tables.BINARY_SPECIAL, dtype) if dtype in FLOAT_DTYPES else _edges(dtype)
        x, y = lax_tables._grid(special)
        return [np.concatenate([random_array(rng, (24,), dtype), x]),
                np.concatenate([random_array(rng, (24,), dtype), y])]
    return getattr(lax, name), make, _kind(dtype)


def _indexing(k: int) -> dict[str, Program]:
    """``x[index]`` and the k-th update method ``x.at[index].method(values)`` of test_indexing."""
    index, method = INDICES[k], UPDATES[k % len(UPDATES)]
    shape = (4, 5, 6)
    indexed = np.empty(shape)[index].shape
    tag = repr(index).replace(" ", "")
    return {f"indexing/get{tag}": ((lambda x: x[index]), _args([shape]), "f32"),
            f"indexing/{method}{tag}": ((lambda x, u: getattr(x.at[index], method)(u)),
                                        _args([shape, indexed]), "f32")}


def _linalg_axes(name: str, dtype: np.dtype) -> Program:
    spell, shapes = test_linalg_axes.CASES[name]
    return spell(mnp), lambda rng: test_linalg_axes._arrays(rng, dtype, *shapes), \
        "half" if dtype.itemsize == 2 else "tf32" if dtype.kind == "f" else "f32"


def _kind(dtype: Any) -> str:
    return "half" if np.dtype(dtype).itemsize == 2 and np.dtype(dtype).kind not in "iu" else "f32"


MATH_ERRORS = {"gcd-bool", "ldexp_float_exponent-float32", "packbits_float-float32", "unpackbits_int8-int8"}


def _programs() -> dict[str, Program]:
    """name -> (function, argument maker, tolerance kind of test_emulated_kernels._tolerance);
    the dtypes test_elementwise checks values on: float32, then int8 for the integer-minded
    unary functions (and int32: int8 and int32 lower differently), float16/bfloat16 for the
    half-precision ones, int32 for binary ones."""
    out: dict[str, Program] = {}
    i8, i32, f32 = np.dtype(np.int8), np.dtype(np.int32), np.dtype(np.float32)
    for name in sorted(set(UNARY) - COMPLEX):
        out[f"unary/{name}-{'int32' if name in INTEGER_ONLY else 'float32'}"] = _unary(
            name, i32 if name in INTEGER_ONLY else f32)
        if name in INTEGER_MINDED - INTEGER_ONLY:
            out[f"unary/{name}-int8"] = _unary(name, i8)
            out[f"unary/{name}-int32"] = _unary(name, i32)
        elif name in HALF_PRECISION:
            half = np.dtype((np.float16, ml_dtypes.bfloat16)[len(name) % 2])
            out[f"unary/{name}-{half.name}"] = _unary(name, half)
    for name in sorted(BINARY):
        if name not in INTEGER_ONLY:
            out[f"binary/{name}-float32"] = _binary(name, f32)
        if name not in FLOAT_ONLY:
            out[f"binary/{name}-int32"] = _binary(name, i32)
    for name, (dtypes, _) in sorted(lax_tables.UNARY.items()):
        for dtype in dtypes:
            out[f"lax/{name}-{np.dtype(dtype).name}"] = _lax_unary(name, dtype)
    for name, dtypes in sorted(lax_tables.BINARY.items()):
        for dtype in dtypes:
            out[f"lax/{name}-{np.dtype(dtype).name}"] = _lax_binary(name, dtype)
    for name, case in sorted(CASES.items()):
        out[f"manipulation/{name}"] = (case[0](mnp), _args(case[1]), "f32")
    for name in sorted(set(REDUCTIONS) | set(CUMULATIVE)):
        for axis in (None, 1, (0, 2)):
            if not (isinstance(axis, tuple) and (name in CUMULATIVE or name in SINGLE_AXIS)):
                out[f"reduction/{name}-{axis}".replace(" ", "")] = _reduction(name, axis)
    for name, shapes in PRODUCT_SHAPES.items():
        for k, pair in enumerate(shapes):
            out[f"product/{name}-{k}"] = (getattr(mnp, name), _args(pair), "tf32")
    for k in range(len(INDICES)):
        out.update(_indexing(k))
    for param in test_linalg_axes.CASE_PARAMS:
        name, dtype = param.values
        if not (dtype == np.bool_ and "cross" in name):  # bool cross products: jax refuses them too
            out[f"linalg_axes/{name}-{dtype.name}"] = _linalg_axes(name, dtype)
    for param in test_math_more.ELEMENTWISE_CASES:
        name, dtype = param.values
        # The Python-scalar cases pass no array to run on; MATH_ERRORS are test_math_more's errors.
        if isinstance(dtype, np.dtype) and f"{name}-{dtype.name}" not in MATH_ERRORS:
            spell, _, make = test_math_more.ELEMENTWISE[name]
            out[f"math_more/{name}-{dtype.name}"] = (spell(mnp), lambda rng, m=make, d=dtype: [
                np.asarray(a) for a in m(rng, d)], _kind(dtype))
    for spec, shapes in EINSUM:
        out[f"einsum/{spec}"] = ((lambda *a, s=spec: mnp.einsum(s, *a)), _args(shapes), "tf32")
    return out


PROGRAMS = _programs()

# The refusals docs/gpu.md lists ("What each op family becomes"): a float remainder (fmod). Math
# functions without an mlax polynomial (sin, pow, atan2...) call libdevice, linked from the
# nvidia-cuda-nvcc-cu12 wheel that the test extra installs.
FLOAT_REMAINDERS = {"divmod", "floor_divide", "fmod", "mod", "remainder", "rem"}


def _refusal(name: str) -> str | None:
    """The message a refused program's NotImplementedError must hold, None where none is expected."""
    function, _, dtype = name.split("/")[1].rpartition("-")
    if not dtype.startswith(("int", "uint")) and function in FLOAT_REMAINDERS:
        return r"arith\.remf \(a floating-point remainder\) needs CUDA's libdevice \(fmod\)"
    return None


REFUSED = {name: pattern for name in PROGRAMS if (pattern := _refusal(name)) is not None}
# Findings: what the GPU pipeline or the emulator gets wrong on these programs (strict xfails:
# a fix makes them pass and fail, to be moved out of here). Found and fixed: int32 abs was a
# libdevice call (now PTX abs.s32), the emulator lacked math.ctpop.
FINDINGS: dict[str, str] = {}
SLOW_EVERY = 4  # one program in SLOW_EVERY of each family runs by default, the others under -m slow


def _lower(name: str, rng: np.random.Generator) -> tuple[Any, list[np.ndarray], Callable, str]:
    f, make, kind = PROGRAMS[name]
    arguments = make(rng)
    return mlax.jit(f, backend="gpu").lower(*arguments), arguments, f, kind


def _marks(name: str, k: int) -> list[Any]:
    marks = [pytest.mark.xfail(reason=FINDINGS[name], strict=True)] if name in FINDINGS else []
    return marks + ([pytest.mark.slow] if k % SLOW_EVERY else [])


def _params(names: list[str]) -> list[Any]:
    """Every family's k-th program by name: a default subset spread over each table."""
    family: dict[str, int] = {}
    params = []
    for name in names:
        k = family[name.split("/")[0]] = family.get(name.split("/")[0], -1) + 1
        params.append(pytest.param(name, marks=_marks(name, k), id=name))
    return params


@pytest.mark.parametrize("name", _params(sorted(set(PROGRAMS) - set(REFUSED))))
def test_table_programs_agree_with_the_cpu_backend(name: str, rng: np.random.Generator) -> None:
    lowered, arguments, f, kind = _lower(name, rng)
    lowered.as_text("nvvm", debug_info=False)  # the whole pipeline accepts it (refusals come late)
    expected = mlax.jit(f, backend="cpu")(*arguments)
    actual = emulate(lowered, *arguments)
    # TF32's tolerance scales with the largest result, which an empty result has not.
    empty = any(np.size(leaf) == 0 for leaf in jax.tree_util.tree_leaves(expected))
    _compare(actual, expected, *_tolerance("f32" if empty else kind, expected))


@pytest.mark.parametrize("name", _params(sorted(REFUSED)))
def test_refused_table_programs_name_the_op_and_the_cpu_backend(name: str, rng: np.random.Generator) -> None:
    lowered = _lower(name, rng)[0]
    with pytest.raises(NotImplementedError) as refusal:
        lowered.as_text("nvvm", debug_info=False)
    message = str(refusal.value)
    assert re.search(REFUSED[name], message), message
    assert re.search(r"\.py:\d+:\d+: error: ", message), message  # at the user's line
    assert 'use backend="cpu" or backend="xla" for this program' in message
