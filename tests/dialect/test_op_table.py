"""The op table is the single source: IRDL file, docs, builders, interpreter, lax wrappers agree."""

from __future__ import annotations

import pytest

import mlax.lax as lax
from mlax.dialect import OPS, irdl_gen
from mlax.tools import gen_docs

# Ops whose mlax.lax wrapper has another name (as in jax.lax), or none.
LAX_NAMES = {
    "constant": None,  # made by mlax.numpy.asarray and by constants in traces
    "compare": "eq",
    "not": "bitwise_not",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
    "convert": "convert_element_type",
    "bitcast_convert": "bitcast_convert_type",
    "iota": "broadcasted_iota",
    "sharding_constraint": "with_sharding_constraint",
    # jax.lax.linalg's primitives live in mlax.lax.linalg, as in jax
    "cholesky": "linalg.cholesky",
    "triangular_solve": "linalg.triangular_solve",
    "lu": "linalg.lu",
    "qr": "linalg.qr",
    "eigh": "linalg.eigh",
    "svd": "linalg.svd",
    "eig": "linalg.eig",
    "schur": "linalg.schur",
    "geqrf": "linalg.geqrf",
    "geqp3": "linalg.geqp3",
    "householder_product": "linalg.householder_product",
    "ormqr": "linalg.ormqr",
    "hessenberg": "linalg.hessenberg",
    "tridiagonal": "linalg.tridiagonal",
}


def test_irdl_file_is_generated_from_the_table() -> None:
    assert irdl_gen.IRDL_PATH.read_text() == irdl_gen.render(), (
        "dialect/mlax.irdl.mlir is stale: run python -m mlax.tools.gen_irdl")


def test_docs_are_generated_from_the_table() -> None:
    assert gen_docs.DOCS_PATH.read_text() == gen_docs.render(), (
        "docs/dialect.md is stale: run python -m mlax.tools.gen_docs")


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_is_complete(name: str) -> None:
    op = OPS[name]
    assert callable(op.infer) and callable(op.reference)
    assert op.summary.strip(), f"mlax.{name} has no summary"
    assert f"### `mlax.{name}`" in gen_docs.DOCS_PATH.read_text()
    assert f"irdl.operation @{name} " in irdl_gen.IRDL_PATH.read_text()
    lax_name = LAX_NAMES.get(name, name)
    if lax_name is not None:
        module, _, attribute = lax_name.rpartition(".")
        wrapper = getattr(getattr(lax, module) if module else lax, attribute, None)
        assert callable(wrapper), f"mlax.lax has no wrapper {lax_name} for mlax.{name}"
