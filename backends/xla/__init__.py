"""The XLA backend: `pipeline.py` (mlax -> StableHLO, in stages), `executable.py` (XLA through
jaxlib's PJRT client, `pjrt.py`: the one door to jax's private APIs), `sharded.py` (programs
over a mesh). `XlaBackend` declares it, once per platform or device."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from mlir import ir

from mlax.backends.declaration import Executable
from mlax.backends.xla.pipeline import StablehloPipeline


@dataclass(frozen=True)
class XlaBackend:
    """XLA through jaxlib's PJRT client (executable.py) on one device of ``platform``:
    the first platform present (GPU or TPU before the CPU, as JAX picks) when None; a partitioned
    program (`mlax-partition`) runs on the devices of its mesh instead. Declared as data, like
    `NativeBackend`: its name and device; its pipeline (stages and options) is the same for all."""

    name: str
    platform: str | None = None
    device_id: int | None = None

    # Stages XLA prints after the pipeline: its optimized HLO.
    compiler_stages: ClassVar[tuple[str, ...]] = ("hlo",)
    options: ClassVar[StablehloPipeline] = StablehloPipeline()

    @property
    def stages(self) -> tuple[str, ...]:
        return (*self.options.stage_names, *self.compiler_stages)

    @property
    def device(self) -> Any:
        from mlax.backends.xla import pjrt

        found = pjrt.devices(self.platform)
        if self.device_id is None:
            return found[0]
        return next(d for d in found if d.id == self.device_id)

    def compile(self, module: ir.Module, entry: str, donated: tuple[int, ...] = ()) -> Executable:
        from mlax.backends.xla.executable import XlaExecutable

        return XlaExecutable(module, entry, self.device, donated)

    def stage_text(self, module: ir.Module, entry: str, stage: str, debug_info: bool,
                   donated: tuple[int, ...] = ()) -> str:
        if stage == "hlo":
            from mlax.backends.registry import compile_cached  # the registry imports this module

            return compile_cached(self.name, module, entry, donated).optimized_hlo()
        from mlax.backends.xla.executable import lower_for_xla, module_text

        lowered, _ = lower_for_xla(module, entry, donated, to=stage)
        return module_text(lowered, debug_info)
