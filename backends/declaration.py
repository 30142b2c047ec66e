"""A backend, declared once (CONVENTIONS 7 and 14; Triton's ``BaseBackend``): its name, its
pipeline and its executable.

The pipeline is a registered `PassPipeline` (``mlax-cpu-pipeline``...): its ordered named
stages, each a textual pass pipeline, and its options, a frozen dataclass. The instance a
backend runs with (the options this process found: BLAS, OpenMP) is part of the compile
cache's key, and everything that names a stage derives from it: ``Lowered.as_text(stage)``,
``mlax-opt --pass-pipeline='builtin.module(mlax-cpu-pipeline{to=stage ...})'`` (the same text,
`NativeBackend.pipeline_text`), the files of ``MLAX_DUMP_DIR`` (one per pass of that text) and
docs/lowering.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from mlir import ir

from mlax.backends.dumping import lower
from mlax.passes.registry import PassPipeline

# Called on host buffers (NumPy) or, where it has ``takes_device_buffers``, device buffers too;
# returns host or device buffers (the front end wraps them as Arrays).
Executable = Callable[[Sequence[Any]], list[Any]]


class Backend(Protocol):
    name: str
    # The stages `Lowered.as_text` offers after "mlax" (each backend names its own road).
    stages: tuple[str, ...]

    def compile(self, module: ir.Module, entry: str, donated: tuple[int, ...] = ()) -> Executable: ...

    def stage_text(self, module: ir.Module, entry: str, stage: str, debug_info: bool,
                   donated: tuple[int, ...] = ()) -> str: ...


@dataclass(frozen=True)
class NativeBackend:
    """A backend whose whole road is its pipeline, run by mlax (cpu, gpu): ``pipeline`` gives
    the options this process runs it with (computed on first use: finding libraries costs
    time), ``executable`` compiles a module's entry."""

    name: str
    pipeline: Callable[[], PassPipeline]
    executable: Callable[[ir.Module, str], Executable]

    @property
    def options(self) -> PassPipeline:
        return self.pipeline()

    @property
    def stages(self) -> tuple[str, ...]:
        return self.options.stage_names

    def pipeline_text(self, to: str | None = None) -> str:
        """The pipeline up to stage ``to`` (the whole of it when None), as one textual element."""
        options = self.options
        return options.textual() if to is None else dataclasses.replace(options, to=to).textual()

    def lower(self, module: ir.Module, entry: str, to: str | None = None) -> None:
        """Run the pipeline (up to ``to``) on ``module`` in place; dumped pass by pass when
        ``MLAX_DUMP_DIR`` is set."""
        with module.context:
            lower(module, self.pipeline_text(to), entry)

    def compile(self, module: ir.Module, entry: str, donated: tuple[int, ...] = ()) -> Executable:
        return self.executable(module, entry)

    def stage_text(self, module: ir.Module, entry: str, stage: str, debug_info: bool,
                   donated: tuple[int, ...] = ()) -> str:
        self.lower(module, entry, stage)
        return module.operation.get_asm(enable_debug_info=debug_info)
