"""Which passes mlax's verifier checks (`ModulePass.sees_mlax_ops`): those of a native pipeline
up to `mlax-lower-to-linalg`, where mlax ops exist; the backends' passes after it say they
never meet one, so MLIR's verifier alone checks them (a walk of the module per pass saved)."""

from __future__ import annotations

import pytest

from mlax.backends.cpu.pipeline import CpuPipeline
from mlax.backends.gpu.pipeline import GpuPipeline
from mlax.passes.pipeline import parse_pipeline
from mlax.passes.registry import get_pass


@pytest.mark.parametrize("pipeline", [CpuPipeline(), GpuPipeline()], ids=lambda p: p.argument)
def test_passes_see_mlax_ops_until_the_dialect_is_lowered(pipeline) -> None:
    names = [e.name for e in parse_pipeline(pipeline.elements_text()) if e.is_mlax]
    boundary = names.index("mlax-lower-to-linalg")
    for position, name in enumerate(names):
        assert get_pass(name).sees_mlax_ops == (position <= boundary), name
