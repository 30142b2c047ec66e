"""Shared by the mlax.scipy tests: an ulp-style comparison, and a table of functions checked
against jax in one jit."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

import mlax


def ulp_error(actual: Any, expected: Any, floor: float) -> float:
    """The largest |actual - expected| in ulp of max(|expected|, floor), over finite expected
    values; inf where the NaN/inf patterns differ."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert (a.shape, a.dtype) == (e.shape, e.dtype), ((a.shape, a.dtype), (e.shape, e.dtype))
    if not (np.array_equal(np.isnan(a), np.isnan(e)) and np.array_equal(a[np.isinf(e)], e[np.isinf(e)])):
        return np.inf
    finite = np.isfinite(e)
    if not finite.any():
        return 0.0
    info = np.finfo(e.dtype)
    scale = np.maximum(np.abs(e[finite]), max(floor, float(info.tiny)))
    return float(np.max(np.abs(a[finite].astype(np.float64) - e[finite]) / scale) / info.eps)


def assert_close(actual: Any, expected: Any, ulps: float, floor: float = 0.0, what: str = "") -> None:
    """Same dtype, shape and NaN/inf pattern; within ``ulps`` ulp of max(|expected|, floor)."""
    err = ulp_error(actual, expected, floor)
    assert err <= ulps, f"{what}: {err} ulp (allowed {ulps})"


def as_tuple(x: Any) -> tuple[Any, ...]:
    return x if isinstance(x, tuple) else (x,)


def check_table(table: list[tuple[Any, ...]], ours: Callable[[str], Any], theirs: Callable[[str], Any],
                 dt: Any, jit: bool = True, eager_elements: int = 8) -> None:
    """Every row in one jax.jit and (``jit``) one mlax.jit, the first elements also eagerly;
    without ``jit``, all elements eagerly."""
    inputs = {row[0]: as_tuple(row[1](np.random.default_rng(zlib.crc32(row[0].encode())), dt))
              for row in table}
    expected = jax.jit(lambda ins: {k: theirs(k)(*v) for k, v in ins.items()})(inputs)
    if jit:
        actual = mlax.jit(lambda ins: {k: ours(k)(*v) for k, v in ins.items()})(inputs)
    errors = {}
    for name, _, ulps, floor in table:
        head = [np.asarray(v)[:eager_elements if jit else None] for v in inputs[name]]
        for a, e in zip(as_tuple(ours(name)(*head)), as_tuple(expected[name]), strict=True):
            assert_close(a, np.asarray(e)[:eager_elements if jit else None], ulps, floor, f"{name} eager")
        for a, e in zip(as_tuple(actual[name]) if jit else (), as_tuple(expected[name]), strict=False):
            errors[name] = max(errors.get(name, 0.0), ulp_error(a, e, floor))
    bad = {name: err for (name, _, ulps, _) in table if (err := errors.get(name, 0.0)) > ulps}
    assert not bad, f"beyond tolerance (ulp): {bad}"


# A gradient row: (differentiated argument positions, the derivative's inputs: rng, dtype, lanes ->
# arguments). The derivatives are compared there, away from the table's poles and cancellations.
Inputs = Callable[[np.random.Generator, Any, int], tuple[np.ndarray, ...]]
GradRow = tuple[tuple[int, ...], Inputs]


def uniform(*ranges: tuple[float, float] | float) -> Inputs:
    """A GradRow's inputs: each argument uniform in its range, or a constant."""
    return lambda rng, dt, n: tuple((rng.uniform(*r, n) if isinstance(r, tuple) else np.full(n, r)).astype(dt)
                                    for r in ranges)


def _inputs(table: list[tuple[Any, ...]], dt: Any) -> dict[str, tuple[np.ndarray, ...]]:
    return {row[0]: as_tuple(row[1](np.random.default_rng(zlib.crc32(row[0].encode())), dt)) for row in table}


def _per_lane(api: Any, fn_of: Callable[[str], Any], outputs: dict[str, int], grads: dict[str, GradRow],
              rows_per_jit: int) -> Callable[[dict[str, tuple[Any, ...]]], Any]:
    """``api.jit`` programs of ``rows_per_jit`` rows (LLVM's time grows faster than a program's
    size): per function and output, ``api.vmap`` over the lanes of the output's value and (for
    ``grads``' rows) its ``api.value_and_grad``."""

    def output(name: str, j: int) -> Callable[..., Any]:
        return lambda *args: as_tuple(fn_of(name)(*args))[j]

    def run(ins: dict[str, tuple[Any, ...]]) -> dict[tuple[str, int], Any]:
        return {(name, j): api.vmap(api.value_and_grad(output(name, j), grads[name][0]) if name in grads
                                    else output(name, j))(*args)
                for name, args in ins.items() for j in range(outputs.get(name, 1))}

    programs: dict[int, Any] = {}

    def chunked(ins: dict[str, tuple[Any, ...]]) -> dict[tuple[str, int], Any]:
        names = list(ins)
        out = {}
        for start in range(0, len(names), rows_per_jit):
            program = programs.setdefault(start, api.jit(run))
            out.update(program({name: ins[name] for name in names[start:start + rows_per_jit]}))
        return out

    return chunked


def check_table_with_grads(table: list[tuple[Any, ...]], grads: dict[str, GradRow],
                           ours: Callable[[str], Any], theirs: Callable[[str], Any], dt: Any,
                           outputs: dict[str, int] | None = None, eager_elements: int = 8,
                           grad_ulps: float = 256, grad_floor: float = 1.0, rows_per_jit: int = 4) -> None:
    """Every row under jax.jit and mlax.jit (``rows_per_jit`` rows a program) of vmap (over the
    lanes) of value_and_grad (for ``grads``' rows; the value alone for the others), one compile each:
    values on the table's inputs (the first elements also eagerly), then, through the same
    programs, values and derivatives on the rows' derivative inputs (of the same shapes)."""
    outputs = outputs or {}
    inputs = _inputs(table, dt)
    at_grads = {name: grads[name][1](np.random.default_rng(zlib.crc32(f"d{name}".encode())), dt, len(args[0]))
                if name in grads else args for name, args in inputs.items()}
    ours_run, theirs_run = (_per_lane(api, fn_of, outputs, grads, rows_per_jit)
                            for api, fn_of in ((mlax, ours), (jax, theirs)))
    errors: dict[str, tuple[float, float]] = {}  # (error, allowed) in ulp
    for ins, at in ((inputs, "table"), (at_grads, "grad inputs")):
        actual, expected = ours_run(ins), theirs_run(ins)
        for name, _, ulps, floor in table:
            for j in range(outputs.get(name, 1)):
                (a, a_grads), (e, e_grads) = ((r[name, j] if name in grads else (r[name, j], ()))
                                              for r in (actual, expected))
                errors[f"{name}[{j}] at {at}"] = ulp_error(a, e, floor), ulps
                if at == "grad inputs":
                    for k, (ga, ge) in enumerate(zip(a_grads, e_grads, strict=True)):
                        errors[f"d{name}[{j}]/d{k}"] = ulp_error(ga, ge, grad_floor), grad_ulps
                else:
                    head = [np.asarray(v)[:eager_elements] for v in ins[name]]
                    assert_close(as_tuple(ours(name)(*head))[j], np.asarray(e)[:eager_elements], ulps, floor,
                                 f"{name}[{j}] eager")
    bad = {key: err for key, (err, allowed) in errors.items() if err > allowed}
    assert not bad, f"beyond tolerance (ulp): {bad}"
