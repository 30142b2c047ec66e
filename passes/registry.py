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
from typing import Any, ClassVar

from mlir import ir


class PassFailure(Exception):
    """A pass cannot do its job on this input; emitted as an error at ``location``. ``kind`` is
    the exception type jax raises for the same input (a derivative jax does not define is a
    NotImplementedError, an operand type a rule refuses a TypeError): the pipeline's error is
    also of that type, so a user's ``except`` written for jax catches mlax's error."""

    def __init__(self, message: str, location: ir.Location | None = None,
                 kind: type[Exception] = ValueError) -> None:
        super().__init__(message)
        self.location = location
        self.kind = kind


class ModulePass:
    """Base class of mlax passes (subclasses are dataclasses; fields are options)."""

    argument: ClassVar[str]
    summary: ClassVar[str]

    def run(self, module: ir.Operation) -> None:
        raise NotImplementedError


class PassPipeline(ModulePass):
    """A named pipeline: registered like a pass, expanded in place wherever it is named.

    Subclasses list their `stages` as (stage name, pipeline text) pairs; `elements_text`
    gives the text of the stages to run (all of them, or up to one named by an option), so
    ``--mlir-print-ir-after-all`` and failures name the real passes.
    """

    stages: ClassVar[tuple[tuple[str, str], ...]]

    def elements_text(self) -> str:
        raise NotImplementedError

    def run(self, module: ir.Operation) -> None:
        from mlax.passes.pipeline import run_pipeline

        run_pipeline(module, self.elements_text())


def option(default: Any, help: str) -> Any:
    """A pass option: a dataclass field with a default and a one-line help text."""
    return dataclasses.field(default=default, metadata={"help": help})


PASSES: dict[str, type[ModulePass]] = {}
_loaded = False

# Pass argument -> the module of mlax.passes that registers it (tests/passes/test_registry.py
# checks it against what importing every module registers).
PASS_MODULES: dict[str, str] = {
    "mlax-approximate-math": "approximate_math",
    "mlax-autodiff": "autodiff",
    "mlax-batch": "batching",
    "mlax-buffer-abi": "buffer_abi",
    "mlax-check-gpu-mapped": "check_gpu_mapped",
    "mlax-cleanup": "cleanup",
    "mlax-cpu-pipeline": "cpu_pipeline",
    "mlax-distinct-results": "distinct_results",
    "mlax-early-dealloc": "early_dealloc",
    "mlax-exact-libm-calls": "exact_libm_calls",
    "mlax-expand-bf16": "expand_bf16",
    "mlax-expand-transforms": "expand_transforms",
    "mlax-gpu-coalesce": "gpu_coalesce",
    "mlax-gpu-device-buffers": "gpu_device_buffers",
    "mlax-gpu-host-reads": "gpu_host_reads",
    "mlax-gpu-kernel-names": "gpu_kernel_names",
    "mlax-gpu-matmul": "gpu_matmul",
    "mlax-gpu-native-math": "gpu_native_math",
    "mlax-gpu-noalias": "gpu_noalias",
    "mlax-gpu-pipeline": "gpu_pipeline",
    "mlax-gpu-reductions-inner": "gpu_reductions_inner",
    "mlax-gpu-row-kernels": "gpu_row_kernels",
    "mlax-gpu-serial-kernels": "gpu_serial_kernels",
    "mlax-gpu-sink-views": "gpu_host_reads",
    "mlax-gpu-vectorize": "gpu_vectorize",
    "mlax-import-stablehlo": "import_stablehlo",
    "mlax-inline": "inline",
    "mlax-linalg-to-blas": "linalg_to_blas",
    "mlax-lower-callbacks": "lower_callbacks",
    "mlax-lower-control-flow": "lower_control_flow",
    "mlax-lower-to-linalg": "lower_to_linalg",
    "mlax-lower-to-stablehlo": "lower_to_stablehlo",
    "mlax-parallel-loops": "parallel_loops",
    "mlax-partition": "partition",
    "mlax-prefer-vector-width": "prefer_vector_width",
    "mlax-schedule-for-memory": "schedule_for_memory",
    "mlax-simulate-devices": "simulate_devices",
    "mlax-split-reductions": "split_reductions",
    "mlax-stablehlo-pipeline": "lower_to_stablehlo",
    "mlax-widen-bool-buffers": "widen_bool_buffers",
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
    if home is not None and cls.__module__ != f"mlax.passes.{home}":  # its own pass, not yet imported
        raise ValueError(f"pass argument {argument} registered twice (mlax.passes.{home}, "
                         f"{cls.__module__}.{cls.__name__})")
    PASSES[argument] = cls
    return cls


def registered_passes() -> dict[str, type[ModulePass]]:
    """All passes by argument, after importing every module of the mlax.passes package."""
    global _loaded
    if not _loaded:
        import mlax.passes

        for info in pkgutil.iter_modules(mlax.passes.__path__):
            if not info.name.startswith("_"):
                importlib.import_module(f"mlax.passes.{info.name}")
        _loaded = True
    return PASSES


def find_pass(argument: str) -> type[ModulePass] | None:
    """The pass ``argument`` (importing its module only, when `PASS_MODULES` names it), or None
    if no pass has that name (upstream passes: ``canonicalize``)."""
    cls = PASSES.get(argument)
    if cls is None and argument in PASS_MODULES:
        importlib.import_module(f"mlax.passes.{PASS_MODULES[argument]}")
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
