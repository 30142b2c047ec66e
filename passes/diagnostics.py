"""Diagnostics: capture what MLIR (and mlax's Python checks) report, print it like mlir-opt.

Everything that can go wrong with a module is reported through the MLIR context's
diagnostic engine, at an IR location: parser and verifier errors, transformation
declaration problems (`Location.emit_error`), pass failures. `capture` collects them as
plain `Diagnostic` records, which outlive the MLIR callback and print as
``file:line:col: error: message`` followed by the source line and a caret.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from mlir import ir


@dataclass(frozen=True)
class FileLoc:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def file_loc(loc: ir.Location) -> FileLoc | None:
    """The file position a location points at, looking through names, call sites and fusions."""
    if loc.is_a_file():
        return FileLoc(loc.filename, loc.start_line, loc.start_col)
    if loc.is_a_name():
        return file_loc(loc.child_loc)
    if loc.is_a_callsite():
        return file_loc(loc.callee) or file_loc(loc.caller)
    if loc.is_a_fused():
        for inner in loc.locations:
            found = file_loc(inner)
            if found is not None:
                return found
    return None


@dataclass(frozen=True)
class Diagnostic:
    severity: str  # "error", "warning", "note" or "remark"
    message: str
    loc: FileLoc | None
    notes: tuple[Diagnostic, ...] = ()

    @staticmethod
    def from_mlir(diag: ir.Diagnostic) -> Diagnostic:
        return Diagnostic(
            severity=diag.severity.name.lower(),
            message=diag.message,
            loc=file_loc(diag.location),
            notes=tuple(Diagnostic.from_mlir(n) for n in diag.notes),
        )

    def format(self, sources: dict[str, str] | None = None) -> str:
        """``file:line:col: severity: message``, the source line and a caret (when the text of
        the file is in ``sources``), then the notes the same way."""
        where = f"{self.loc}: " if self.loc else ""
        lines = [f"{where}{self.severity}: {self.message}"]
        text = (sources or {}).get(self.loc.file) if self.loc else None
        if text is not None:
            source_lines = text.splitlines()
            if 0 < self.loc.line <= len(source_lines):
                lines += [source_lines[self.loc.line - 1], " " * max(self.loc.col - 1, 0) + "^"]
        lines += [note.format(sources) for note in self.notes]
        return "\n".join(lines)


def format_all(diagnostics: list[Diagnostic], sources: dict[str, str] | None = None) -> str:
    return "\n".join(d.format(sources) for d in diagnostics)


@contextmanager
def capture(context: ir.Context) -> Iterator[list[Diagnostic]]:
    """Collect every diagnostic ``context`` emits inside the block (errors included, which the
    bindings would otherwise fold into an MLIRError) into the yielded list."""
    found: list[Diagnostic] = []

    def handler(diag: ir.Diagnostic) -> bool:
        found.append(Diagnostic.from_mlir(diag))
        return True

    saved = context.emit_error_diagnostics
    context.emit_error_diagnostics = True
    handle = context.attach_diagnostic_handler(handler)
    try:
        yield found
    finally:
        handle.detach()
        context.emit_error_diagnostics = saved


def errors(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return [d for d in diagnostics if d.severity == "error"]
