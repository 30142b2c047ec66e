"""mlax.callback declarations (dialect/callbacks.py): declare, read back, verify, reparse."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import mlir
import pytest
from mlir import ir

from mlax.dialect import make_context
from mlax.dialect.callbacks import (
    CALLBACK_KIND,
    callback_declarations,
    check_results,
    declare_callback,
    read_callback,
)
from mlax.dialect.irdl_gen import IRDL_PATH
from mlax.dialect.transforms import KINDS, DeclarationError, read_transform, verify_transforms

MLIR_OPT = Path(mlir.__path__[0]) / "bin" / "mlir-opt"


@pytest.fixture
def module() -> Iterator[ir.Module]:
    with make_context(), ir.Location.unknown():
        yield ir.Module.parse("")


def _types(*texts: str) -> list[ir.Type]:
    return [ir.Type.parse(t) for t in texts]


@pytest.mark.parametrize(
    ("kind", "results", "method"),
    [("debug", (), None), ("pure", ("tensor<2xi32>", "tensor<i1>"), "expand_dims"), ("pure", (), None)],
)
def test_declare_read_verify_roundtrip(
    module: ir.Module, kind: str, results: tuple, method: str | None
) -> None:
    op = declare_callback(
        module,
        "cb",
        _types("tensor<3xf32>", "tensor<ui32>"),
        _types(*results),
        id=5,
        kind=kind,
        ordered=True,
        callback_name="f",
        vmap_method=method,
        loc=ir.Location.file("user.py", 4, 1),
    )
    assert [str(t) for t in ir.FunctionType(op.type).results] == list(results)
    transform = read_callback(op)
    assert transform == read_transform(op)
    assert (transform.name, transform.kind) == ("cb", CALLBACK_KIND)
    assert transform.fields == {"id": 5, "kind": kind, "ordered": True, "name": "f", "vmap_method": method}
    assert verify_transforms(module) == []
    assert set(callback_declarations(module.operation)) == {"cb"}
    reparsed = ir.Module.parse(str(module))
    assert read_callback(next(iter(reparsed.body.operations))) == transform


def test_upstream_mlir_opt_reads_declarations(module: ir.Module) -> None:
    declare_callback(
        module, "cb", _types("tensor<3xf32>"), [], id=1, kind="debug", ordered=False, callback_name="f"
    )
    result = subprocess.run(
        [str(MLIR_OPT), f"--irdl-file={IRDL_PATH}"],
        input=str(module),
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "mlax.callback" in result.stdout


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"kind": "impure"}, "kind must be one of 'pure', 'debug', 'io', got 'impure'"),
        ({"kind": "debug", "vmap_method": "sequential"}, "vmap_method 'sequential' needs kind 'pure'"),
        (
            {"kind": "pure", "vmap_method": "vectorized"},
            "vmap_method 'vectorized' needs kind 'pure' and one of",
        ),
        ({"kind": "pure", "id": -1}, "id must be >= 0, got -1"),
    ],
)
def test_bad_fields(module: ir.Module, fields: dict, message: str) -> None:
    arguments = {"id": 0, "ordered": False, "callback_name": "f", **fields}
    with pytest.raises(DeclarationError, match=message):
        declare_callback(module, "cb", [], [], **arguments)


def test_debug_callbacks_have_no_results(module: ir.Module) -> None:
    with pytest.raises(DeclarationError, match="a debug callback has no results"):
        declare_callback(
            module, "cb", [], _types("tensor<f32>"), id=0, kind="debug", ordered=False, callback_name="f"
        )
    transform = read_callback(
        declare_callback(module, "ok", [], [], id=0, kind="debug", ordered=False, callback_name="f")
    )
    with pytest.raises(DeclarationError, match="@ok: a debug callback has no results"):
        check_results(transform, ir.FunctionType.get([], _types("tensor<f32>")))


def test_the_kind_is_registered() -> None:
    assert [f.name for f in KINDS[CALLBACK_KIND].fields] == ["id", "kind", "ordered", "name", "vmap_method"]
