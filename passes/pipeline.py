"""Textual pass pipelines that mix mlax passes with upstream MLIR passes.

``builtin.module(mlax-cleanup{fold-limit=16}, canonicalize, func.func(cse))`` is parsed
here into elements. Python passes cannot be named inside an upstream pipeline string, so
each top-level element becomes one *stage*: an mlax pass is added to its own
`PassManager` as a Python pass (`PassManager.add(callable, argument=...)`), anything else
goes through `PassManager.add(text)`. One PassManager per stage means a failure names
the exact element that failed, and the module is re-verified between stages (IRDL,
transformation declarations, mlax type inference) so a broken pass is caught where it
ran. mlax passes are module passes: they cannot be nested under another anchor.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir, passmanager

from mlax.dialect.sharding import ShardingError
from mlax.passes.diagnostics import Diagnostic, capture, errors, format_all
from mlax.passes.registry import (
    ModulePass,
    PassFailure,
    PassPipeline,
    find_pass,
    make_pass,
    registered_passes,
)
from mlax.passes.verify import verify_module

ANCHOR = "builtin.module"


class PipelineError(ValueError):
    """A pipeline that cannot be parsed, or a stage that failed; carries the diagnostics."""

    def __init__(self, message: str, diagnostics: list[Diagnostic] | None = None) -> None:
        self.message = message
        self.diagnostics = list(diagnostics or [])
        super().__init__("\n".join(filter(None, [message, format_all(self.diagnostics)])))


@functools.cache
def _error_of_kind(kind: type[Exception]) -> type[PipelineError]:
    """PipelineError that is also a ``kind`` (NotImplementedError, TypeError...)."""
    if issubclass(PipelineError, kind):
        return PipelineError
    return type(f"Pipeline{kind.__name__}", (PipelineError, kind), {"__module__": __name__})


@dataclass(frozen=True)
class Element:
    """One pipeline element: ``name``, ``name{options}`` or ``anchor(elements...)``."""

    name: str
    options: str = ""
    nested: tuple[Element, ...] | None = None

    def __str__(self) -> str:
        if self.nested is not None:
            return f"{self.name}({', '.join(map(str, self.nested))})"
        return f"{self.name}{{{self.options}}}" if self.options else self.name

    @property
    def is_mlax(self) -> bool:
        return self.nested is None and find_pass(self.name) is not None


_NAME = re.compile(r"[A-Za-z0-9_.\-]+")


class _Parser:
    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def fail(self, message: str) -> PipelineError:
        return PipelineError(f"pass pipeline: {message} at column {self.pos + 1} of '{self.text}'")

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def elements(self, closing: str) -> tuple[Element, ...]:
        items: list[Element] = []
        if self.peek() == closing:
            return ()
        while True:
            items.append(self.element())
            if self.peek() != ",":
                return tuple(items)
            self.pos += 1

    def element(self) -> Element:
        self.skip_space()
        match = _NAME.match(self.text, self.pos)
        if match is None:
            raise self.fail("expected a pass name")
        self.pos = match.end()
        if self.peek() == "{":
            return Element(match.group(), options=self.braced())
        if self.peek() == "(":
            self.pos += 1
            nested = self.elements(")")
            if self.peek() != ")":
                raise self.fail("expected ')'")
            self.pos += 1
            return Element(match.group(), nested=nested)
        return Element(match.group())

    def braced(self) -> str:
        """The text between balanced braces (quotes may hold braces)."""
        start, depth, quote = self.pos, 0, False
        for i in range(self.pos, len(self.text)):
            ch = self.text[i]
            if ch == '"':
                quote = not quote
            elif not quote and ch in "{}":
                depth += 1 if ch == "{" else -1
                if depth == 0:
                    self.pos = i + 1
                    return self.text[start + 1:i].strip()
        raise self.fail("unbalanced '{'")


def parse_pipeline(text: str) -> tuple[Element, ...]:
    """The top-level elements of ``builtin.module(a, b{x=1}, func.func(c))`` (the anchor may be
    left out: ``a, b``). Raises PipelineError naming the position of a syntax error."""
    parser = _Parser(text)
    elements = parser.elements("")
    if parser.peek():
        raise parser.fail(f"unexpected '{parser.peek()}'")
    if len(elements) == 1 and elements[0].name == ANCHOR and elements[0].nested is not None:
        elements = elements[0].nested
    for element in elements:
        _reject_nested_mlax(element)
    return tuple(expanded for element in elements for expanded in _expand(element))


def _expand(element: Element) -> tuple[Element, ...]:
    """A named pipeline (a `PassPipeline`) becomes the elements it stands for."""
    cls = find_pass(element.name) if element.nested is None else None
    if cls is None or not issubclass(cls, PassPipeline):
        return (element,)
    try:
        text = make_pass(element.name, element.options).elements_text()
    except ValueError as error:
        raise PipelineError(f"pass pipeline: {error}") from None
    return parse_pipeline(text)


def _reject_nested_mlax(element: Element) -> None:
    for child in element.nested or ():
        if find_pass(child.name) is not None:
            raise PipelineError(f"pass pipeline: {child.name} is a module pass; it cannot be nested "
                                f"under '{element.name}' (put it at the top level of {ANCHOR}(...))")
        _reject_nested_mlax(child)


def fuse_upstream(elements: tuple[Element, ...]) -> tuple[Element, ...]:
    """Each run of consecutive upstream elements as one element (one PassManager runs it):
    fewer PassManagers to build and run when per-pass stages are not needed."""
    fused: list[Element] = []
    run: list[Element] = []
    for element in (*elements, None):
        if element is not None and not element.is_mlax:
            run.append(element)
            continue
        if run:
            fused.append(run[0] if len(run) == 1 else Element(", ".join(map(str, run))))
            run = []
        if element is not None:
            fused.append(element)
    return tuple(fused)


def _upstream_message(error: ValueError) -> str:
    """The useful line of an upstream pipeline-parser error."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    for line in lines:
        if "error: " in line:
            return line.split("error: ", 1)[1]
    return "; ".join(lines)


def _as_callable(instance: ModulePass) -> Callable[[ir.Operation, object], None]:
    """The callback PassManager.add expects, turning PassFailure into an MLIR error."""

    def run(op: ir.Operation, pass_: passmanager.ExternalPass) -> None:
        try:
            instance.run(op)
        except PassFailure as failure:
            if str(failure):
                (failure.location or op.location).emit_error(str(failure))
            _local.failure_kind = failure.kind
            _local.failure_raised = failure.raised
            pass_.signal_pass_failure()

    return run


@dataclass
class Stage:
    element: Element
    manager: passmanager.PassManager
    sees_mlax_ops: bool = False  # an mlax pass that can meet mlax ops: mlax's verifier checks it


def build_stages(elements: tuple[Element, ...], context: ir.Context, *, verify_each: bool = True,
                 print_ir_after_all: bool = False, print_debuginfo: bool = False) -> list[Stage]:
    """One configured PassManager per top-level element; bad names and options fail here,
    before anything runs."""
    stages = []
    for element in elements:
        manager = passmanager.PassManager(ANCHOR, context=context)
        sees_mlax_ops = False
        if element.is_mlax:
            try:
                instance = make_pass(element.name, element.options)
            except ValueError as error:
                raise PipelineError(f"pass pipeline: {error}") from None
            sees_mlax_ops = instance.sees_mlax_ops
            manager.add(_as_callable(instance), name=type(instance).__name__, argument=element.name)
        elif element.name.startswith("mlax-") and element.nested is None:
            known = ", ".join(sorted(registered_passes()))
            raise PipelineError(f"pass pipeline: unknown mlax pass '{element.name}' (registered: {known})")
        else:
            try:
                manager.add(str(element))
            except ValueError as error:
                message = _upstream_message(error)
                raise PipelineError(f"pass pipeline: bad element '{element}': {message}") from None
        manager.enable_verifier(verify_each)
        if print_ir_after_all:
            context.enable_multithreading(False)  # MLIR prints IR only from a single thread
            manager.enable_ir_printing(print_after_all=True, print_module_scope=True,
                                       enable_debug_info=print_debuginfo)
        stages.append(Stage(element, manager, sees_mlax_ops))
    return stages


_local = threading.local()


def reusable_stages(context: ir.Context, pipeline: str) -> list[Stage]:
    """The stages of ``pipeline`` (consecutive upstream passes fused into one PassManager),
    built once per context and text: building them costs as much as running them on a small
    program. They are kept per thread, as MLIR contexts are (mlax.dialect.context), so a
    thread's context and its passes go when the thread ends."""
    built: dict[tuple[ir.Context, str], list[Stage]] = _local.__dict__.setdefault("stages", {})
    key = (context, pipeline)
    if key not in built:
        built[key] = build_stages(fuse_upstream(parse_pipeline(pipeline)), context)
    return built[key]


def run_stage(stage: Stage, module: ir.Operation, *, verify_each: bool = True) -> None:
    """Run one stage on ``module``; PipelineError names the element if it fails."""
    module = module.operation
    _local.failure_kind, _local.failure_raised = ValueError, None
    with capture(module.context) as found:
        try:
            stage.manager.run(module)
        except ir.MLIRError:
            raised = _local.failure_raised
            if raised is not None:
                raised.add_note(f"(in pass '{stage.element}')\n{format_all(found)}")
                raise raised from None
            raise _error_of_kind(_local.failure_kind)(f"pass '{stage.element}' failed", found) from None
        except Exception as error:  # a bug in a Python pass, not bad input: name it, keep the cause
            raise PipelineError(f"pass '{stage.element}' failed with an internal error: "
                                f"{type(error).__name__}: {error}", found) from error
    if verify_each and stage.sees_mlax_ops:
        problems = errors(verify_module(module, sharding=True))
        if problems:  # a ShardingError too where only the shardings are wrong (a user's spec, say)
            kind = ShardingError if not errors(verify_module(module)) else ValueError
            raise _error_of_kind(kind)(f"the IR produced by pass '{stage.element}' does not verify", problems)


def run_pipeline(module: ir.Module | ir.Operation, pipeline: str | tuple[Element, ...], *,
                 verify_each: bool = True, print_ir_after_all: bool = False,
                 print_debuginfo: bool = False) -> None:
    """Parse (if text) and apply ``pipeline`` to ``module`` in place, stage by stage."""
    elements = parse_pipeline(pipeline) if isinstance(pipeline, str) else pipeline
    module = module.operation
    for stage in build_stages(elements, module.context, verify_each=verify_each,
                              print_ir_after_all=print_ir_after_all, print_debuginfo=print_debuginfo):
        run_stage(stage, module, verify_each=verify_each)
