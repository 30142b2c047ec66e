"""The reference interpreter: runs any mlax function on NumPy inputs.

`InterpreterBackend` declares it, as the other backends are declared (backends/declaration.py):
its pipeline, `mlax-interpreter-pipeline`, has one stage, "expanded": transformations given
their bodies and shard_maps simulated on one device; every other op runs as it is.

Each function is compiled once into a flat list of steps (rule, operand slots, attributes)
so repeated calls do not re-read the IR. The rules are the dialect's NumPy reference
semantics (OpDef.reference), keyed by op name; `func.call` recurses into the callee.

A function with a value no NumPy array here can hold (larger than this process's memory, or
of more dimensions than NumPy allows) is refused as it is compiled, at the op that makes the
first such value (backends/memory_limits.py); running out of memory while a step runs is
reported at that step's op (`ProgramTooLargeError`, with the op's location).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from mlir import ir

from mlax.backends.declaration import Executable
from mlax.backends.dumping import lower
from mlax.backends.memory_limits import (
    ProgramTooLargeError,
    check_numpy_rank,
    check_op_fits,
    memory_limit,
    values_of,
)
from mlax.backends.native.host_callbacks import interpreter_rule
from mlax.dialect import get_op, read_attributes
from mlax.dialect.callbacks import CALLBACK_KIND
from mlax.dialect.control_flow import CONTROL_FLOW_KINDS, REFERENCES
from mlax.dialect.registry import OPS
from mlax.dialect.tensor_spec import TensorSpec
from mlax.dialect.transforms import read_transform, transform_declarations
from mlax.passes.cleanup import DEAD_CODE_ONLY
from mlax.passes.registry import PassPipeline, last_stage, register_pass


class InterpreterError(RuntimeError):
    """An op the interpreter cannot run, named with its location."""


@dataclass
class _Step:
    run: Callable[..., Any]
    operands: list[int]
    results: list[int]
    specs: list[TensorSpec]
    op: ir.Operation


def _lookup_function(module: ir.Module | ir.Operation, name: str) -> ir.Operation:
    body = module.body if isinstance(module, ir.Module) else module.regions[0].blocks[0]
    for op in body.operations:
        if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
            return op.operation
    raise InterpreterError(f"no function @{name} in the module")


class FunctionProgram:
    """One func.func lowered to interpreter steps."""

    def __init__(self, func_op: ir.Operation, interpreter: Interpreter) -> None:
        self.name = ir.StringAttr(func_op.attributes["sym_name"]).value
        if not func_op.regions[0].blocks:
            raise InterpreterError(_undefined_function_message(func_op, self.name))
        block = func_op.regions[0].blocks[0]
        limit = memory_limit()
        _check_values(func_op, limit)
        slots: dict[ir.Value, int] = {}

        def slot(value: ir.Value) -> int:
            if value not in slots:
                slots[value] = len(slots)
            return slots[value]

        self.arg_slots = [slot(a) for a in block.arguments]
        self.steps: list[_Step] = []
        self.return_slots: list[int] = []
        for operation in block.operations:
            op = operation.operation
            operands = [slot(v) for v in op.operands]
            results = [slot(r) for r in op.results]
            specs = [TensorSpec.from_mlir(r.type) for r in op.results]
            if op.name == "func.return":
                self.return_slots = operands
            else:
                _check_values(op, limit)
                self.steps.append(_Step(interpreter.rule_for(op), operands, results, specs, op))
        self.num_slots = len(slots)

    def __call__(self, args: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(args) != len(self.arg_slots):
            raise InterpreterError(
                f"@{self.name} takes {len(self.arg_slots)} arguments, got {len(args)}")
        env: list[Any] = [None] * self.num_slots
        for s, a in zip(self.arg_slots, args, strict=True):
            env[s] = a
        with np.errstate(all="ignore"):
            for step in self.steps:
                try:
                    outs = step.run(*(env[i] for i in step.operands))
                except ProgramTooLargeError:
                    raise
                except MemoryError as error:
                    raise ProgramTooLargeError(f"out of memory running {step.op.name}: {error}",
                                               step.op.location) from None
                if not isinstance(outs, (tuple, list)):
                    outs = (outs,)
                for s, out, spec in zip(step.results, outs, step.specs, strict=True):
                    env[s] = np.asarray(out).astype(spec.dtype, copy=False).reshape(spec.shape)
        return [env[s] for s in self.return_slots]


def _check_values(op: ir.Operation, limit: int) -> None:
    """The values ``op`` makes fit in memory, as NumPy arrays (located errors if not)."""
    check_op_fits(op, limit)
    for what, t in values_of(op):
        check_numpy_rank(t, what, op.location, "the interpreter")


def _undefined_function_message(func_op: ir.Operation, name: str) -> str:
    transform = read_transform(func_op)
    if transform is not None:
        return (f"@{name} is an unresolved mlax.{transform.kind} transformation declaration; "
                "run the pass that resolves it (e.g. mlax-expand-transforms) first")
    return f"@{name} is an external function without a body; the interpreter cannot run it"


class Interpreter:
    """Runs the functions of one module; programs are built lazily and memoized."""

    def __init__(self, module: ir.Module | ir.Operation) -> None:
        self.module = module
        self._programs: dict[str, FunctionProgram] = {}

    def program(self, name: str) -> FunctionProgram:
        if name not in self._programs:
            self._programs[name] = FunctionProgram(_lookup_function(self.module, name), self)
        return self._programs[name]

    def rule_for(self, op: ir.Operation) -> Callable[..., Any]:
        name = op.name
        if name == "func.call":
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            declaration = read_transform(_lookup_function(self.module, callee))
            if declaration is not None and declaration.kind == CALLBACK_KIND:
                return interpreter_rule(declaration, op)
            if declaration is not None and declaration.kind in CONTROL_FLOW_KINDS:
                runner, fields = REFERENCES[declaration.kind], declaration.fields
                specs = [TensorSpec.from_mlir(r.type) for r in op.results]
                return lambda *args: runner(fields, self.call, list(args), specs)
            return lambda *args: self.program(callee)(list(args))
        if name.startswith("mlax.") and name.removeprefix("mlax.") in OPS:
            reference = get_op(name).reference
            attrs = read_attributes(op)
            return lambda *args: reference(*args, **attrs)
        raise InterpreterError(f"the interpreter cannot run '{name}' at {op.location}")

    def call(self, name: str, args: list[np.ndarray]) -> list[np.ndarray]:
        return self.program(name)(args)

    def run(self, name: str, args: Sequence[Any]) -> list[np.ndarray]:
        return self.program(name)([np.asarray(a) for a in args])


def run_function(module: ir.Module, name: str, args: Sequence[Any]) -> list[np.ndarray]:
    """Run function ``@name`` of ``module`` on NumPy ``args``; returns its results."""
    return Interpreter(module).run(name, args)


INTERPRETER_STAGES: tuple[tuple[str, str], ...] = (
    ("expanded", f"mlax-expand-transforms, {DEAD_CODE_ONLY}, mlax-simulate-devices"),
)


@register_pass
@dataclass(frozen=True)
class InterpreterPipeline(PassPipeline):
    """The interpreter's lowering: transformations resolved, shard_maps simulated."""

    argument = "mlax-interpreter-pipeline"
    summary = "resolve transformations and simulate shard_maps for the interpreter"
    STAGES = INTERPRETER_STAGES

    to: str = last_stage(INTERPRETER_STAGES)


@dataclass(frozen=True)
class InterpreterBackend:
    """The dialect's NumPy reference semantics: slow, exact, always available."""

    name: str = "interpreter"
    options: ClassVar[InterpreterPipeline] = InterpreterPipeline()

    @property
    def stages(self) -> tuple[str, ...]:
        return self.options.stage_names

    def compile(self, module: ir.Module, entry: str, donated: tuple[int, ...] = ()) -> Executable:
        if any(True for _ in transform_declarations(module)):  # derivatives get their bodies first
            with module.context:
                module = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
                lower(module, self.options.textual(), entry)
        return Interpreter(module).program(entry)

    def stage_text(self, module: ir.Module, entry: str, stage: str, debug_info: bool,
                   donated: tuple[int, ...] = ()) -> str:
        with module.context:
            lower(module, dataclasses.replace(self.options, to=stage).textual(), entry)
        return module.operation.get_asm(enable_debug_info=debug_info)
