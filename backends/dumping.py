"""``MLAX_DUMP_DIR``: the IR after every pass of a backend's pipeline, one file per pass.

Both native backends dump the same way, ``<entry>.00.input.mlir`` then
``<entry>.NN.<pass>.mlir`` for each element of their pipeline; a backend adds what its own
compiler produces after that (the XLA backend writes XLA's optimized HLO).
"""

from __future__ import annotations

from pathlib import Path

from mlir import ir

from mlax.configuration import config
from mlax.passes.pipeline import build_stages, parse_pipeline, reusable_stages, run_stage


def dump_path(entry: str, suffix: str) -> Path:
    """A file of ``config.dump_dir`` for ``entry`` (the folder made on first use)."""
    dump = Path(config.dump_dir)
    dump.mkdir(parents=True, exist_ok=True)
    return dump / f"{entry}.{suffix}"


def run_dumped(module: ir.Module, pipeline: str, entry: str) -> None:
    """Run ``pipeline`` on ``module`` in place, writing the IR before it and after each pass."""
    dump_path(entry, "00.input.mlir").write_text(str(module))
    stages = build_stages(parse_pipeline(pipeline), module.context)
    for number, stage in enumerate(stages, start=1):
        run_stage(stage, module.operation)
        name = stage.element.name.replace(".", "_")
        dump_path(entry, f"{number:02d}.{name}.mlir").write_text(str(module))


def lower(module: ir.Module, pipeline: str, entry: str) -> None:
    """Run a backend's ``pipeline`` on ``module`` in place: dumped pass by pass when
    ``config.dump_dir`` (``MLAX_DUMP_DIR``) is set, else through the thread's reusable stages."""
    if config.dump_dir:
        run_dumped(module, pipeline, entry)
        return
    for stage in reusable_stages(module.context, pipeline):
        run_stage(stage, module.operation)
