"""The pass registry: pass argument (``mlax-cleanup``) -> pass class.

A pass is a dataclass deriving from `ModulePass`: its fields are its options (parsed from
``mlax-cleanup{fold-limit=16 cse=false}``; ``fold_limit`` is spelled ``fold-limit``), its
class variables `argument` and `summary` name and describe it, and `run(module_op)`
rewrites a ``builtin.module`` in place. Register it with `@register_pass` and name its
module in `PASS_MODULES`: looking a pass up imports its module only (a pipeline names a few
passes, and importing all of them took longer than a small program's whole compile).
`registered_passes` imports every module of the `mlax.passes` package (mlax-opt's --help, the
"registered: ..." list of an unknown name), so a pass missing from `PASS_MODULES` is still
found, only later; a test checks the table against the registry. Passes report bad input by
emitting error diagnostics at IR locations and raising `PassFailure` (or raising it with a
message and a location).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
import typing
from collections.abc import Sequence
from typing import Any, ClassVar

from mlir import ir


class PassFailure(Exception):
    """A pass cannot do its job on this input; emitted as an error at ``location``. ``kind`` is
    the exception type jax raises for the same input (a derivative jax does not define is a
    NotImplementedError, an operand type a rule refuses a TypeError): the pipeline's error is
    also of that type, so a user's ``except`` written for jax catches mlax's error."""

    def __init__(self, message: str, location: ir.Location | None = None,
                 kind: type[Exception] = ValueError, raised: Exception | None = None) -> None:
        super().__init__(message)
        self.location = location
        self.kind = kind
        # an exception of the user's code the pass ran (a user primitive's rule): the pipeline
        # raises it as it is, as jax lets a rule's exception through, with the location as a note
        self.raised = raised


class ModulePass:
    """Base class of mlax passes (subclasses are dataclasses; fields are options)."""

    argument: ClassVar[str]
    summary: ClassVar[str]
    # Whether the pass can meet mlax ops. If so, mlax's verifier (type inference, shardings)
    # checks its output; a pass that runs only after the dialect is lowered away (the
    # backends') is checked by MLIR's verifier alone: mlax's would walk every op of the module
    # to find nothing to check, about a fifth of a program's time in the passes.
    sees_mlax_ops: ClassVar[bool] = True

    def run(self, module: ir.Operation) -> None:
        raise NotImplementedError


class PassPipeline(ModulePass):
    """A named pipeline: registered like a pass, expanded in place wherever it is named; a
    backend's declaration (backends/declaration.py).

    Subclasses are frozen dataclasses whose fields are the pipeline's options, ``to`` among
    them (the last stage to run, by default the last one: `last_stage`); `stages` lists (stage
    name, pipeline text) pairs for those options, by default the class's `STAGES`.
    `elements_text` is the text of the stages to run, so ``--mlir-print-ir-after-all`` and
    failures name the real passes; `textual` is the pipeline as one element
    (``mlax-cpu-pipeline{to=loops blas=true openmp=true}``), the form dumps and mlax-opt take.
    """

    STAGES: ClassVar[tuple[tuple[str, str], ...]] = ()
    to: str

    @property
    def stages(self) -> tuple[tuple[str, str], ...]:
        """The stages at these options (a pipeline whose options change its stages overrides this)."""
        return self.STAGES

    @property
    def stage_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.stages)

    def check_options(self) -> None:
        """Raise ValueError naming the pipeline and the option for a bad option value."""
        names = self.stage_names
        if self.to not in names:
            raise ValueError(f"{self.argument}: option 'to' must be one of {', '.join(names)}, "
                             f"got '{self.to}'")

    def elements_text(self) -> str:
        self.check_options()
        stages = self.stages
        return ", ".join(text for _, text in stages[:self.stage_names.index(self.to) + 1])

    def textual(self) -> str:
        options = " ".join(f"{option_name(f)}={_option_text(getattr(self, f.name))}"
                           for f in dataclasses.fields(self))
        return f"{self.argument}{{{options}}}"

    def run(self, module: ir.Operation) -> None:
        from mlax.passes.pipeline import run_pipeline

        run_pipeline(module, self.elements_text())


def option(default: Any, help: str) -> Any:
    """A pass option: a dataclass field with a default and a one-line help text."""
    return dataclasses.field(default=default, metadata={"help": help})


def last_stage(stages: Sequence[str] | Sequence[tuple[str, str]]) -> Any:
    """A pipeline's ``to`` option over its stages (names, or (name, text) pairs): the last stage
    to run, by default the last one."""
    names = [stage if isinstance(stage, str) else stage[0] for stage in stages]
    listed = f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else names[0]
    return option(names[-1], f"the last stage to run: {listed}")


PASSES: dict[str, type[ModulePass]] = {}
# Where passes live: the dialect-level ones, each backend's own, and the StableHLO importer (a
# front-end pass: it traces the imported program through mlax.lax).
PASS_PACKAGES = ("mlax.passes", "mlax.backends.native", "mlax.backends.cpu", "mlax.backends.gpu",
                 "mlax.backends.xla", "mlax.backends.interpreter", "mlax.import_stablehlo")
_loaded = False

# Pass argument -> the module that registers it, in one of `PASS_PACKAGES` (names only: looking
# a pass up imports its module, the way upstream's registerAllPasses names every pass;
# tests/passes/test_registry.py checks the table against what importing every module registers).
PASS_MODULES: dict[str, str] = {
    "mlax-approximate-math": "mlax.backends.native.approximate_math",
    "mlax-autodiff": "mlax.passes.autodiff",
    "mlax-batch": "mlax.passes.batching",
    "mlax-buffer-abi": "mlax.backends.native.buffer_abi",
    "mlax-check-gpu-mapped": "mlax.backends.gpu.check_mapped",
    "mlax-cleanup": "mlax.passes.cleanup",
    "mlax-cpu-pipeline": "mlax.backends.cpu.pipeline",
    "mlax-distinct-results": "mlax.backends.native.distinct_results",
    "mlax-early-dealloc": "mlax.backends.cpu.early_dealloc",
    "mlax-exact-libm-calls": "mlax.backends.cpu.exact_libm_calls",
    "mlax-expand-bf16": "mlax.backends.cpu.expand_bf16",
    "mlax-expand-transforms": "mlax.passes.expand_transforms",
    "mlax-gpu-coalesce": "mlax.backends.gpu.coalesce",
    "mlax-gpu-device-buffers": "mlax.backends.gpu.device_buffers",
    "mlax-gpu-host-reads": "mlax.backends.gpu.host_reads",
    "mlax-gpu-kernel-names": "mlax.backends.gpu.kernel_names",
    "mlax-gpu-matmul": "mlax.backends.gpu.matmul",
    "mlax-gpu-native-math": "mlax.backends.gpu.native_math",
    "mlax-gpu-noalias": "mlax.backends.gpu.noalias",
    "mlax-gpu-pipeline": "mlax.backends.gpu.pipeline",
    "mlax-gpu-reductions-inner": "mlax.backends.gpu.reductions_inner",
    "mlax-gpu-row-kernels": "mlax.backends.gpu.row_kernels",
    "mlax-gpu-serial-kernels": "mlax.backends.gpu.serial_kernels",
    "mlax-gpu-sink-views": "mlax.backends.gpu.host_reads",
    "mlax-gpu-vectorize": "mlax.backends.gpu.vectorize",
    "mlax-import-stablehlo": "mlax.import_stablehlo",
    "mlax-inline": "mlax.passes.inline",
    "mlax-interpreter-pipeline": "mlax.backends.interpreter",
    "mlax-linalg-to-blas": "mlax.backends.cpu.linalg_to_blas",
    "mlax-lower-callbacks": "mlax.backends.native.lower_callbacks",
    "mlax-lower-control-flow": "mlax.passes.lower_control_flow",
    "mlax-lower-to-linalg": "mlax.passes.lower_to_linalg",
    "mlax-lower-to-stablehlo": "mlax.passes.lower_to_stablehlo",
    "mlax-outline-kernels": "mlax.backends.cpu.outline_kernels",
    "mlax-parallel-loops": "mlax.backends.cpu.parallel_loops",
    "mlax-partition": "mlax.passes.partition",
    "mlax-prefer-vector-width": "mlax.backends.cpu.prefer_vector_width",
    "mlax-private-fills": "mlax.backends.native.private_fills",
    "mlax-profile-kernels": "mlax.backends.cpu.profile_kernels",
    "mlax-schedule-for-memory": "mlax.backends.native.schedule_for_memory",
    "mlax-simulate-devices": "mlax.passes.simulate_devices",
    "mlax-split-reductions": "mlax.backends.cpu.split_reductions",
    "mlax-stablehlo-pipeline": "mlax.backends.xla.pipeline",
    "mlax-unfuse-contractions": "mlax.backends.native.unfuse_contractions",
    "mlax-widen-bool-buffers": "mlax.backends.native.widen_bool_buffers",
}


def register_pass(cls: type[ModulePass]) -> type[ModulePass]:
    """Class decorator: make ``cls`` available as ``cls.argument`` in pipelines and mlax-opt."""
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"pass {cls.__name__} must be a dataclass (its fields are its options)")
    argument = getattr(cls, "argument", "")
    if not re.fullmatch(r"mlax-[a-z0-9-]+", argument):
        raise ValueError(f"pass {cls.__name__}: argument {argument!r} must look like 'mlax-name'")
    if argument in PASSES and PASSES[argument] is not cls:
        raise ValueError(f"pass argument {argument} registered twice ({PASSES[argument].__name__}, "
                         f"{cls.__name__})")
    home = PASS_MODULES.get(argument)
    if home is not None and cls.__module__ != home:  # its own pass, not yet imported
        raise ValueError(f"pass argument {argument} registered twice ({home}, "
                         f"{cls.__module__}.{cls.__name__})")
    PASSES[argument] = cls
    return cls


def registered_passes() -> dict[str, type[ModulePass]]:
    """All passes by argument, after importing every module of the packages that hold passes."""
    global _loaded
    if not _loaded:
        for package in map(importlib.import_module, PASS_PACKAGES):
            for info in pkgutil.iter_modules(getattr(package, "__path__", [])):  # a module: itself
                if not info.name.startswith("_"):
                    importlib.import_module(f"{package.__name__}.{info.name}")
        _loaded = True
    return PASSES


def find_pass(argument: str) -> type[ModulePass] | None:
    """The pass ``argument`` (importing its module only, when `PASS_MODULES` names it), or None
    if no pass has that name (upstream passes: ``canonicalize``)."""
    cls = PASSES.get(argument)
    if cls is None and argument in PASS_MODULES:
        importlib.import_module(PASS_MODULES[argument])
        cls = PASSES.get(argument)
    if cls is None and argument.startswith("mlax-"):
        cls = registered_passes().get(argument)
    return cls


def get_pass(argument: str) -> type[ModulePass]:
    cls = find_pass(argument)
    if cls is None:
        known = ", ".join(sorted(registered_passes()))
        raise ValueError(f"unknown mlax pass '{argument}' (registered: {known})")
    return cls


def option_name(field: dataclasses.Field) -> str:
    return field.name.replace("_", "-")


def _option_text(value: Any) -> str:
    """An option value as `parse_options` reads it back."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(map(_option_text, value))
    return str(value)


def _convert(argument: str, name: str, kind: Any, text: str) -> Any:
    """Parse one option value: bool, int, float, str, or a comma-separated tuple of those."""
    if typing.get_origin(kind) is tuple:
        (item, *_) = typing.get_args(kind)
        return tuple(_convert(argument, name, item, t.strip()) for t in text.split(",") if t.strip())
    try:
        if kind is bool:
            lowered = text.lower()
            if lowered not in ("true", "false", "1", "0"):
                raise ValueError(text)
            return lowered in ("true", "1")
        return kind(text)
    except ValueError:
        raise ValueError(f"{argument}: option '{name}' expects {_type_name(kind)}, got '{text}'") from None


def _split_options(text: str) -> list[str]:
    """Split ``a=1 b="x y" c={1,2}`` on spaces outside quotes and braces."""
    items, current, depth, quote = [], "", 0, False
    for ch in text:
        if ch == '"':
            quote = not quote
        elif not quote and ch in "{}":
            depth += 1 if ch == "{" else -1
        if ch.isspace() and not quote and depth == 0:
            items.append(current)
            current = ""
        else:
            current += ch
    return [i for i in items + [current] if i]


def parse_options(cls: type[ModulePass], text: str) -> dict[str, Any]:
    """Field values from an option string like ``fold-limit=16 cse=false`` (a bare name sets a
    boolean option to true). Raises ValueError naming the pass and the option."""
    hints = typing.get_type_hints(cls)
    fields = {option_name(f): f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for item in _split_options(text):
        name, eq, value = item.partition("=")
        if name not in fields:
            known = ", ".join(fields) or "none"
            raise ValueError(f"{cls.argument}: unknown option '{name}' (options: {known})")
        kind = hints[fields[name].name]
        if not eq and kind is not bool:
            raise ValueError(f"{cls.argument}: option '{name}' needs a value ({name}=...)")
        value = value.strip().removeprefix("{").removesuffix("}").strip('"') if eq else "true"
        values[fields[name].name] = _convert(cls.argument, name, kind, value)
    return values


def make_pass(argument: str, options: str = "") -> ModulePass:
    """An instance of the pass ``argument`` configured from an option string."""
    cls = get_pass(argument)
    return cls(**parse_options(cls, options))


def describe_options(cls: type[ModulePass]) -> list[tuple[str, str, Any, str]]:
    """(option name, type, default, help) for each option of a pass, for --help and docs."""
    hints = typing.get_type_hints(cls)
    return [(option_name(f), _type_name(hints[f.name]), f.default, f.metadata.get("help", ""))
            for f in dataclasses.fields(cls)]


def _type_name(kind: Any) -> str:
    return kind.__name__ if isinstance(kind, type) else str(kind)
