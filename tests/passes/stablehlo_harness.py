"""Running mlax IR through `mlax-lower-to-stablehlo` and XLA, against the interpreter.

`run_on_xla` compiles one function of an mlax module with the XLA backend (the StableHLO
pipeline, then jaxlib's PJRT client on the CPU) and runs it on NumPy inputs;
`check_against_interpreter` compares that with the dialect's reference semantics; `op_module`
writes the module of one mlax op that most tests feed them. The second half serves the op
tests: random shapes and values with the edge cases mixed in (`values`), and `check_lowering`,
one op through XLA against the interpreter and, optionally, against jax's own lowering.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import jax
import ml_dtypes
import numpy as np
from mlir import ir

from mlax.backends.interpreter import run_function
from mlax.backends.registry import get_backend
from mlax.dialect import dtypes, get_context
from mlax.dialect.registry import OPS
from mlax.dialect.tensor_spec import TensorSpec
from mlax.passes.pipeline import run_pipeline

Shape = tuple[int, ...]


def tensor_text(shape: Shape, dtype: np.dtype) -> str:
    """``tensor<3x4xf32>`` for a shape and a NumPy dtype."""
    return f"tensor<{''.join(f'{d}x' for d in shape)}{dtypes.mlir_name(np.dtype(dtype))}>"


def op_module(op: str, args: Sequence[np.ndarray], results: Sequence[tuple[Shape, np.dtype]],
              attrs: str = "") -> str:
    """``func.func @f`` applying ``mlax.<op>`` (attribute dictionary ``attrs``) to its
    arguments, of the arrays' types, and returning the op's results."""
    types = [tensor_text(a.shape, a.dtype) for a in args]
    outs = [tensor_text(shape, dtype) for shape, dtype in results]
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    operands = ", ".join(f"%a{i}" for i in range(len(args)))
    signature = f"({', '.join(outs)})"
    names = ", ".join(f"%r#{i}" for i in range(len(outs)))
    return (f"func.func @f({params}) -> {signature} {{\n"
            f'  %r:{len(outs)} = "mlax.{op}"({operands}) {attrs} : ({", ".join(types)}) -> {signature}\n'
            f"  return {names} : {', '.join(outs)}\n}}\n")


def run_on_xla(text: str, entry: str, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    with get_context():
        module = ir.Module.parse(text)
        executable = get_backend("xla").compile(module, entry)
    return [np.asarray(out) for out in executable(list(args))]


def run_on_interpreter(text: str, entry: str, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    with get_context():
        return [np.asarray(out) for out in run_function(ir.Module.parse(text), entry, list(args))]


def assert_bits_equal(actual: np.ndarray, expected: np.ndarray, rtol: float = 0.0,
                      atol: float | None = None) -> None:
    """Same dtype and shape; floats equal bit for bit (any NaN matching any NaN) unless
    ``rtol`` (then within ``rtol`` relatively or ``atol``, by default ``rtol``, absolutely:
    XLA flushes subnormal results to zero); everything else exactly equal."""
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    is_float = actual.dtype.kind == "f" or actual.dtype == dtypes.bfloat16
    if rtol or not is_float:
        if is_float:
            np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64),
                                       rtol=rtol, atol=rtol if atol is None else atol,
                                       equal_nan=True)
        else:
            np.testing.assert_array_equal(actual, expected)
        return
    flat = [np.ascontiguousarray(a).reshape(-1) for a in (actual, expected)]
    with np.errstate(invalid="ignore"):
        nan = [np.isnan(a.astype(np.float64)) for a in flat]
    np.testing.assert_array_equal(*nan)
    flat = [a[~nan[1]] for a in flat]
    np.testing.assert_array_equal(*(a.view(np.uint8) for a in flat))


def check_against_interpreter(text: str, entry: str, args: Sequence[np.ndarray],
                              rtol: float = 0.0) -> None:
    """The XLA backend and the interpreter agree on ``entry`` of ``text`` (see
    `assert_bits_equal`)."""
    expected = run_on_interpreter(text, entry, args)
    actual = run_on_xla(text, entry, args)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        assert_bits_equal(a, e, rtol)


# --- random operands and one-op checks ----------------------------------------------------------

BF16 = dtypes.bfloat16
FLOATS = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16), BF16]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32)]
BOOL = np.dtype(np.bool_)
DTYPES = [*FLOATS, *INTS, BOOL]
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 2.5, -2.5, 1.0, -1.0, 3e9]


def name(dtype: np.dtype) -> str:
    """The MLIR name of a dtype (test ids, attributes)."""
    return dtypes.mlir_name(np.dtype(dtype))


def random_shape(rng: np.random.Generator, rank: int | None = None) -> Shape:
    """Sizes 1-5; rank 0-3 unless given."""
    rank = int(rng.integers(0, 4)) if rank is None else rank
    return tuple(int(d) for d in rng.integers(1, 6, size=rank))


def values(rng: np.random.Generator, dtype: np.dtype, shape: Shape) -> np.ndarray:
    """Random values of ``dtype`` with the edge cases mixed in: floats get +-0, +-inf, NaN,
    ties of rounding and a value too big for f16 (but no subnormals, which XLA's CPU flushes);
    integers get 0, -1 (all ones), INT_MIN and INT_MAX (as bit patterns when unsigned)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape))
    if dtype == BOOL:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtypes.is_float(dtype):
        flat = rng.normal(scale=3.0, size=size)
        special = np.array(SPECIAL)
    else:
        signed = np.dtype(f"i{dtype.itemsize}")
        flat = rng.integers(-9, 10, size=size).astype(signed)
        special = np.array([0, -1, np.iinfo(signed).min, np.iinfo(signed).max], signed)
    count = min(size, len(special), max(1, size // 2))
    flat[:count] = rng.permutation(special)[:count]
    with np.errstate(over="ignore"):
        out = flat.astype(dtype) if dtypes.is_float(dtype) else flat.view(dtype)
    return rng.permutation(out).reshape(shape)


def ulps(dtype: np.dtype, n: float) -> float:
    """``n`` units in the last place of ``dtype`` (at 1.0), as a relative tolerance."""
    return n * float(ml_dtypes.finfo(dtype).eps)


def accepts(op: str, dtype: np.dtype, n: int = 1, **attrs: object) -> bool:
    """Whether ``mlax.<op>`` takes ``n`` operands of ``dtype`` (its own shape inference says)."""
    try:
        OPS[op].infer(*[TensorSpec((2,), np.dtype(dtype))] * n, **attrs)
    except (TypeError, ValueError):
        return False
    return True


def result_specs(op: str, args: Sequence[np.ndarray], **attrs: object) -> list[tuple[Shape, np.dtype]]:
    """The (shape, dtype) of each result of ``mlax.<op>`` on ``args``, by its shape inference."""
    specs = OPS[op].infer(*[TensorSpec(a.shape, a.dtype) for a in args], **attrs)
    specs = specs if isinstance(specs, tuple) else (specs,)
    return [(tuple(s.shape), np.dtype(s.dtype)) for s in specs]


def i64s(numbers: Sequence[int]) -> str:
    """``array<i64: ...>``."""
    return f"array<i64: {', '.join(str(int(v)) for v in numbers)}>" if len(numbers) else "array<i64>"


def attributes(**attrs: Sequence[int] | int | str) -> str:
    """An attribute dictionary: integer lists as arrays, integers as i64, strings verbatim."""
    def text(v: Sequence[int] | int | str) -> str:
        return v if isinstance(v, str) else f"{v} : i64" if isinstance(v, int) else i64s(v)

    return "{" + ", ".join(f"{k} = {text(v)}" for k, v in attrs.items()) + "}"


def unsigned_zeros(x: np.ndarray) -> np.ndarray:
    """``x`` with -0.0 made +0.0 (where the sign of a zero is the implementation's choice)."""
    return x + np.zeros((), x.dtype) if dtypes.is_float(x.dtype) else x


def check_lowering(op: str, args: Sequence[np.ndarray], attrs: str = "", rtol: float = 0.0,
                   jax_fn: Callable[..., object] | None = None, zero_signs: bool = True,
                   **py_attrs: object) -> np.ndarray:
    """XLA and the interpreter agree on ``mlax.<op>`` (within ``rtol``, else bit for bit; the
    sign of zeros aside unless ``zero_signs``) and, given ``jax_fn``, XLA equals jax's own
    lowering bit for bit. ``attrs`` are the attributes as written in the IR, ``py_attrs`` as
    shape inference takes them. Returns XLA's result."""
    text = op_module(op, args, result_specs(op, args, **py_attrs), attrs)
    (actual,) = run_on_xla(text, "f", args)
    (expected,) = run_on_interpreter(text, "f", args)
    same = (lambda x: x) if zero_signs else unsigned_zeros
    assert_bits_equal(same(actual), same(expected), rtol)
    if jax_fn is not None:
        assert_bits_equal(actual, np.asarray(jax.jit(jax_fn)(*args)))
    return actual


def lower(text: str) -> str:
    """``text`` after mlax-lower-to-stablehlo, printed generically."""
    with get_context():
        module = ir.Module.parse(text)
        run_pipeline(module, "mlax-lower-to-stablehlo")
        return module.operation.get_asm(print_generic_op_form=True)
