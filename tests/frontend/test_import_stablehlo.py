"""`mlax-import-stablehlo`: jax's StableHLO rewritten into mlax IR in place.

The imported module must hold only mlax ops (and func), keep the entry's name, and compute
what jax computes (run by the interpreter, the cpu backend, and back through
`mlax-stablehlo-pipeline` on XLA); mlax-opt runs the pass on files, allowing the stablehlo
dialect by itself, and reports what cannot be imported as located errors.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax
from mlir import ir

from mlax.backends.interpreter import run_function
from mlax.backends.registry import get_backend
from mlax.dialect import get_context, make_context
from mlax.passes.pipeline import PipelineError, run_pipeline
from mlax.passes.walk import nested_ops
from mlax.tools import mlax_opt


def generic(fun: Callable[..., Any], *args: Any) -> str:
    lowered = jax.jit(fun, keep_unused=True).lower(*args)
    module = lowered.compiler_ir("stablehlo")
    return module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True)


def imported(text: str, pipeline: str = "mlax-import-stablehlo") -> ir.Module:
    """``text`` after ``pipeline``, in a context of its own that allows unregistered dialects."""
    with make_context(allow_unregistered_dialects=True) as context:
        module = ir.Module.parse(text, context)
        run_pipeline(module, pipeline)
        return ir.Module.parse(module.operation.get_asm(enable_debug_info=True), get_context())


def mlp_loss(w1: Any, b1: Any, w2: Any, b2: Any, x: Any, y: Any) -> Any:
    return jnp.mean((jnp.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2)


def rnn(w: Any, xs: Any) -> Any:
    return lax.scan(lambda h, x: (jnp.tanh(w @ h + x), jnp.sum(h)), jnp.zeros(3), xs)


def normals(*shapes: tuple[int, ...]) -> Callable[[np.random.Generator], list[np.ndarray]]:
    return lambda r: [r.normal(size=s).astype(np.float32) for s in shapes]


PROGRAMS = {
    "mlp": (mlp_loss, normals((3, 4), (4,), (4, 2), (2,), (5, 3), (5, 2))),
    "rnn": (rnn, normals((3, 3), (6, 3))),
    "sort_argmax": (lambda x: (jnp.sort(x, 0), jnp.argmax(x, 1), jnp.cumsum(x, 0)), normals((4, 5))),
    "indexing": (lambda x, i: (x[i], x.at[i].add(1.0), lax.dynamic_slice(x, (i[0], 1), (2, 2))),
                 lambda r: [*normals((5, 3))(r), r.integers(-5, 5, (3,)).astype(np.int32)]),
    "switch": (lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x),
               lambda r: [np.asarray(r.integers(-1, 4), np.int32), r.normal(size=(3,)).astype(np.float32)]),
}


def check(outs: list[Any], want: Any) -> None:
    want = jax.tree.leaves(want)
    assert len(outs) == len(want)
    for got, expected in zip(outs, want, strict=True):
        assert np.asarray(got).dtype == np.asarray(expected).dtype
        np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name", PROGRAMS)
def test_imported_module_is_mlax_and_computes_as_jax(name: str, rng: np.random.Generator) -> None:
    fun, make_args = PROGRAMS[name]
    args = make_args(rng)
    module = imported(generic(fun, *args))
    ops = {op.name for op in nested_ops(module.operation)}
    assert not {n for n in ops if not n.startswith(("mlax.", "func."))}, ops
    assert "main" in [ir.StringAttr(op.attributes["sym_name"]).value for op in module.body.operations
                      if op.operation.name == "func.func"]
    want = jax.jit(fun)(*args)
    check(run_function(module, "main", args), want)
    with get_context():
        check(get_backend("cpu").compile(module, "main")(list(args)), want)


@pytest.mark.parametrize("name", ["mlp", "sort_argmax", "switch"])
def test_round_trip_through_mlax_to_xla(name: str, rng: np.random.Generator) -> None:
    """jax -> StableHLO -> mlax (this pass) -> StableHLO (mlax-stablehlo-pipeline) -> XLA."""
    fun, make_args = PROGRAMS[name]
    args = make_args(rng)
    module = imported(generic(fun, *args))
    with get_context():
        check(get_backend("xla").compile(module, "main")(list(args)), jax.jit(fun)(*args))


def test_entry_option_keeps_the_name(rng: np.random.Generator) -> None:
    x = rng.normal(size=(3,)).astype(np.float32)
    text = generic(lambda v: jnp.sin(v) * 2, x).replace('sym_name = "main"', 'sym_name = "loss"')
    module = imported(text, "mlax-import-stablehlo{entry=loss}")
    check(run_function(module, "loss", [x]), np.sin(x) * 2)
    with pytest.raises(PipelineError) as info:
        imported(text)
    assert "no function @main" in str(info.value)


def test_64_bit_program(rng: np.random.Generator) -> None:
    x = rng.normal(size=(3,))
    with jax.enable_x64(True):
        text = generic(lambda v: jnp.cos(v) + jnp.arange(3.0), x)
    module = imported(text)
    assert "tensor<3xf64>" in str(module)
    with jax.enable_x64(True):
        check(run_function(module, "main", [x]), np.cos(x) + np.arange(3.0))


def test_needs_unregistered_dialects() -> None:
    text = generic(lambda v: v + 1, np.zeros(2, np.float32))
    with make_context(allow_unregistered_dialects=True) as context:
        module = ir.Module.parse(text, context)
        context.allow_unregistered_dialects = False
        with pytest.raises(PipelineError) as info:
            run_pipeline(module, "mlax-import-stablehlo")
    assert "must allow unregistered dialects" in str(info.value)


# --- mlax-opt -------------------------------------------------------------------------------------


def opt(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = mlax_opt.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_mlax_opt_imports_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "loss.mlir"
    path.write_text(generic(mlp_loss, *PROGRAMS["mlp"][1](np.random.default_rng(0))))
    status, out, err = opt([str(path), "--mlax-import-stablehlo"], capsys)
    assert status == 0, err
    assert "func.func @main" in out and '"mlax.dot_general"' in out and "stablehlo." not in out
    status, out, err = opt([str(path), "--pass-pipeline=builtin.module(mlax-import-stablehlo, mlax-cleanup)"],
                           capsys)
    assert status == 0 and '"mlax.tanh"' in out, err
    # StableHLO still needs the flag where no pass of the pipeline reads it.
    status, _, err = opt([str(path), "--mlax-cleanup"], capsys)
    assert status == 1 and "stablehlo" in err


def test_mlax_opt_reports_located_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = generic(lambda k: lax.rng_bit_generator(k, (2, 3))[1], np.zeros(4, np.uint32))
    lines = ir.Module.parse(lines, make_context(allow_unregistered_dialects=True)).operation.get_asm(
        print_generic_op_form=True)  # no locations: the diagnostics point into the file
    path = tmp_path / "rng.mlir"
    path.write_text(lines)
    line = next(n for n, text in enumerate(lines.splitlines(), 1) if "stablehlo.rng_bit_generator" in text)
    status, out, err = opt([str(path), "--mlax-import-stablehlo"], capsys)
    assert status == 1 and not out
    assert f"rng.mlir:{line}:" in err and "stablehlo.rng_bit_generator: mlax has no counterpart" in err
    assert "Traceback" not in err and "internal error" not in err
