"""Running mlax IR through `mlax-lower-to-stablehlo` and XLA, against the interpreter.

`run_on_xla` compiles one function of an mlax module with the XLA backend (the StableHLO
pipeline, then jaxlib's PJRT client on the CPU) and runs it on NumPy inputs;
`check_against_interpreter` compares that with the dialect's reference semantics.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from mlir import ir

from mlax.dialect import dtypes, get_context
from mlax.runtime.backend import get_backend
from mlax.runtime.interpreter import run_function


def run_on_xla(text: str, entry: str, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    with get_context():
        module = ir.Module.parse(text)
        executable = get_backend("xla").compile(module, entry)
    return [np.asarray(out) for out in executable(list(args))]


def run_on_interpreter(text: str, entry: str, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    with get_context():
        return [np.asarray(out) for out in run_function(ir.Module.parse(text), entry, list(args))]


def assert_bits_equal(actual: np.ndarray, expected: np.ndarray, rtol: float = 0.0) -> None:
    """Same dtype and shape; floats equal bit for bit (any NaN matching any NaN) unless
    ``rtol``; everything else exactly equal."""
    assert actual.dtype == expected.dtype, f"dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"shape {actual.shape} != {expected.shape}"
    is_float = actual.dtype.kind == "f" or actual.dtype == dtypes.bfloat16
    if rtol or not is_float:
        if is_float:
            np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64),
                                       rtol=rtol, atol=rtol, equal_nan=True)
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
