"""mlax.profiler: annotations are context managers (and a decorator) that record nothing
outside a trace and record their names, with mlax work inside them, during one."""

from __future__ import annotations

import glob
from pathlib import Path

import numpy as np

import mlax
import mlax.numpy as mnp


def _recorded(directory: Path) -> bytes:
    files = glob.glob(str(directory / "**" / "*.xplane.pb"), recursive=True)
    assert len(files) == 1, files
    return Path(files[0]).read_bytes()


def test_annotations_record_only_inside_a_trace(tmp_path: Path) -> None:
    compiled = mlax.jit(lambda x: mnp.sin(x) * 2)

    @mlax.profiler.annotate_function
    def profiled_step(x: np.ndarray) -> mlax.Array:
        return compiled(x)

    x = np.linspace(-1, 1, 5, dtype=np.float32)
    with mlax.profiler.TraceAnnotation("annotation_before_the_trace"):
        expected = profiled_step(x)
    with mlax.profiler.trace(str(tmp_path)):
        with mlax.profiler.StepTraceAnnotation("train_loop", step_num=7):
            with mlax.profiler.TraceAnnotation("region_with_mlax_work"):
                out = profiled_step(x)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))
    assert profiled_step.__name__ == "profiled_step"
    recorded = _recorded(tmp_path)
    for name in (b"train_loop", b"region_with_mlax_work", b"profiled_step"):
        assert name in recorded, name
    assert b"annotation_before_the_trace" not in recorded


def test_install_as_jax_names() -> None:
    from mlax import jax_modules

    for name in ("TraceAnnotation", "StepTraceAnnotation", "annotate_function", "trace", "start_trace"):
        assert jax_modules.status("jax.profiler", name) == "mlax"
