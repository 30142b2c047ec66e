"""mlax-opt: the mlir-opt of mlax. Reads MLIR, verifies it, runs a pass pipeline, prints it.

    mlax-opt [file|-] [-o out] [--pass-pipeline='builtin.module(mlax-cleanup, cse)']
             [--mlax-cleanup[=OPTIONS] ...] [--split-input-file] [--verify-diagnostics]
             [--mlir-print-ir-after-all] [--mlir-print-debuginfo] [--mlir-print-op-generic]
             [--allow-unregistered-dialect]

Pipelines with a pass that reads or writes StableHLO (mlax-import-stablehlo,
mlax-lower-to-stablehlo, mlax-stablehlo-pipeline) allow unregistered dialects by themselves.

Input that is not UTF-8, or that the bundled MLIR would abort on (tools/source_guard.py),
is refused with a located error before it is parsed; parsed input is verified three ways
(passes/verify.py) before any pass runs. Problems are MLIR diagnostics on stderr
(``file:line:col: error: ...`` with the source line) and exit status 1; bad input never
produces a Python traceback (tests/tools/test_fuzz_mlax_opt.py). `--verify-diagnostics` checks the
diagnostics against ``// expected-error {{...}}`` comments (``@+N``/``@-N`` for other
lines; also expected-warning, -note, -remark), like upstream.
"""

from __future__ import annotations

import argparse
import re
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from mlir import ir

from mlax.dialect import make_context
from mlax.passes.diagnostics import Diagnostic, FileLoc, capture, errors, format_all
from mlax.passes.pipeline import Element, PipelineError, build_stages, parse_pipeline, run_stage
from mlax.passes.registry import PassPipeline, describe_options, registered_passes
from mlax.passes.verify import verify_module
from mlax.tools.source_guard import guard_source

SPLIT_MARKER = re.compile(r"^// -----")
_SINGLE_TOP_LEVEL = "source must contain a single top-level operation"


class ToolError(Exception):
    """A usage problem (unreadable file, bad pipeline): one message, exit status 1."""


class DiagnosedError(ToolError):
    """A problem at a place in the input: the message is formatted diagnostics, printed as is."""


@dataclass
class Chunk:
    """A piece of the input (all of it, or one part of --split-input-file) and its first line."""

    text: str
    first_line: int


def split_input(text: str, split: bool) -> list[Chunk]:
    if not split:
        return [Chunk(text, 1)]
    chunks, lines, start = [], [], 1
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if SPLIT_MARKER.match(line):
            chunks.append(Chunk("".join(lines), start))
            lines, start = [], number + 1
        else:
            lines.append(line)
    return chunks + [Chunk("".join(lines), start)]


def _wrap_in_module(text: str) -> str:
    """``module { text }``, opened on line 1 so that line numbers stay those of the file.
    Columns on line 1 shift by 8; that line is a comment or blank in lit tests and in later
    --split-input-file chunks (which are padded with blank lines)."""
    return "module {" + text + "\n}"


def parse_source(chunk: Chunk, filename: str, context: ir.Context) -> tuple[ir.Operation | None,
                                                                           list[Diagnostic]]:
    """Parse a chunk into a ``builtin.module`` (several top-level ops are wrapped in one, as
    mlir-opt does); locations carry ``filename`` and the line numbers of the whole file. Text
    the bundled MLIR would abort on is refused first (tools/source_guard.py)."""
    padded = "\n" * (chunk.first_line - 1) + chunk.text
    guarded = guard_source(padded, filename)
    if guarded:  # the parser would abort on it
        return None, guarded
    with capture(context) as found:
        try:
            op = ir.Operation.parse(padded, source_name=filename, context=context).operation
        except ir.MLIRError:
            op = None
    if op is not None and op.name == "builtin.module":
        return op, found
    if op is not None:  # one other op: move it into a module, keeping its locations exact
        module = ir.Operation.parse("module {}", source_name=filename, context=context).operation
        module.regions[0].blocks[0].append(op)
        return module, found
    if not any(_SINGLE_TOP_LEVEL in d.message for d in found):
        return None, found
    with capture(context) as found:
        try:
            return ir.Operation.parse(_wrap_in_module(padded), source_name=filename,
                                      context=context).operation, found
        except ir.MLIRError:
            return None, found


# --- --verify-diagnostics ---------------------------------------------------------------

_EXPECTED = re.compile(r"expected-(error|warning|note|remark)(?:@([+-]?\d+))?\s*\{\{(.*?)\}\}")
# The bindings always attach the failing op to verifier errors; mlir-opt turns that off
# under --verify-diagnostics, so these notes are not checked.
_OP_NOTE = "see current operation:"


@dataclass
class Expectation:
    severity: str
    line: int
    text: str
    where: FileLoc
    matched: bool = False


def expectations(chunk: Chunk, filename: str) -> list[Expectation]:
    found = []
    for offset, line in enumerate(chunk.text.splitlines()):
        number = chunk.first_line + offset
        for match in _EXPECTED.finditer(line):
            severity, designator, text = match.groups()
            target = number
            if designator:
                target = number + int(designator) if designator[0] in "+-" else int(designator)
            found.append(Expectation(severity, target, text, FileLoc(filename, number, match.start() + 1)))
    return found


def _flatten(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    flat = []
    for d in diagnostics:
        if not d.message.startswith(_OP_NOTE):
            flat.append(d)
            flat += _flatten(list(d.notes))
    return flat


def check_expectations(diagnostics: list[Diagnostic], expected: list[Expectation]) -> list[Diagnostic]:
    """Errors for diagnostics nobody expected and expectations nothing produced."""
    problems = []
    for d in _flatten(diagnostics):
        match = next((e for e in expected if not e.matched and e.severity == d.severity and d.loc
                      and e.line == d.loc.line and e.text in d.message), None)
        if match is None:
            problems.append(Diagnostic("error", f"unexpected {d.severity}: {d.message}", d.loc))
        else:
            match.matched = True
    problems += [Diagnostic("error", f'expected {e.severity} "{e.text}" was not produced', e.where)
                 for e in expected if not e.matched]
    return problems


# --- the driver -------------------------------------------------------------------------


@dataclass
class Options:
    elements: tuple[Element, ...]
    verify_diagnostics: bool
    print_ir_after_all: bool
    debuginfo: bool
    generic: bool


def process_chunk(chunk: Chunk, filename: str, context: ir.Context,
                  options: Options) -> tuple[str | None, list[Diagnostic], str | None]:
    """(printed module or None, diagnostics, failure summary or None) for one chunk."""
    module, diagnostics = parse_source(chunk, filename, context)
    if module is None:
        return None, diagnostics, None
    diagnostics += verify_module(module)
    if errors(diagnostics):
        return None, diagnostics, None
    try:
        for stage in build_stages(options.elements, context, print_ir_after_all=options.print_ir_after_all,
                                  print_debuginfo=options.debuginfo):
            run_stage(stage, module)
    except PipelineError as error:
        return None, diagnostics + error.diagnostics, error.message
    text = module.get_asm(enable_debug_info=options.debuginfo, print_generic_op_form=options.generic)
    return text, diagnostics, None


# Passes that read or write StableHLO, which is unregistered in mlax's contexts: a pipeline
# naming one (or a named pipeline that contains one) allows unregistered dialects by itself.
STABLEHLO_PASSES = ("mlax-import-stablehlo", "mlax-lower-to-stablehlo", "mlax-stablehlo-pipeline")


def needs_unregistered(elements: tuple[Element, ...]) -> bool:
    return any(e.name in STABLEHLO_PASSES or needs_unregistered(e.nested or ()) for e in elements)


def run(text: str, filename: str, options: Options, split: bool, allow_unregistered: bool,
        ) -> tuple[str, str, int]:
    """Process the whole input: (stdout text, stderr text, exit status)."""
    sources = {filename: text}
    allow_unregistered = allow_unregistered or needs_unregistered(options.elements)
    outputs, messages, status = [], [], 0
    for chunk in split_input(text, split):
        context = make_context()
        context.allow_unregistered_dialects = allow_unregistered
        with context:
            printed, diagnostics, failure = process_chunk(chunk, filename, context, options)
            if options.verify_diagnostics:
                diagnostics = check_expectations(diagnostics, expectations(chunk, filename))
                failure = None
        if diagnostics:
            messages.append(format_all(diagnostics, sources))
        if failure:
            messages.append(f"{filename}: error: {failure}")
        if errors(diagnostics) or failure:
            status = 1
        if printed is not None:
            outputs.append(printed)
    return "// -----\n".join(outputs), "".join(m + "\n" for m in messages), status


class ToolArgumentParser(argparse.ArgumentParser):
    """argparse that exits with status 1 on a bad command line, as the MLIR tools do."""

    def error(self, message: str) -> NoReturn:
        self.exit(1, f"{self.prog}: error: {message}\n")


def _pass_flag_help(argument: str) -> str:
    cls = registered_passes()[argument]
    options = "; ".join(f"{name}={str(default).lower() if kind == 'bool' else default} ({kind})"
                        for name, kind, default, _ in describe_options(cls))
    stages = f" (stages: {', '.join(cls().stage_names)})" if issubclass(cls, PassPipeline) else ""
    return f"{cls.summary}{stages}" + (f". Options: {options}" if options else "")


def build_parser() -> argparse.ArgumentParser:
    parser = ToolArgumentParser(prog="mlax-opt", description="Verify mlax IR, run passes over it, print it.",
                     epilog="Pass flags take options: --mlax-cleanup='fold-limit=16 cse=false'.")
    parser.add_argument("input", nargs="?", default="-", help="input file ('-' for stdin)")
    parser.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
    parser.add_argument("--pass-pipeline",
                        help="a textual pipeline, e.g. 'builtin.module(mlax-cleanup, cse)'")
    for argument in sorted(registered_passes()):  # listed for --help; main() takes them out first
        parser.add_argument(f"--{argument}", action="store_true", help=_pass_flag_help(argument))
    parser.add_argument("--split-input-file", action="store_true",
                        help="process each '// -----'-separated chunk on its own")
    parser.add_argument("--verify-diagnostics", action="store_true",
                        help="check diagnostics against expected-* comments")
    parser.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR after each pass")
    parser.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations")
    parser.add_argument("--mlir-print-op-generic", action="store_true", help="print every op in generic form")
    parser.add_argument("--allow-unregistered-dialect", action="store_true",
                        help="accept ops of dialects that are not loaded")
    parser.add_argument("--mlax-traceback", action="store_true",
                        help="on an internal error (a bug), show the Python traceback")
    return parser


def read_input(path: str) -> str:
    """The text of ``path`` ('-': stdin); DiagnosedError at the first byte that is not UTF-8."""
    if path == "-":
        return decode_input(sys.stdin.buffer.read(), "<stdin>")
    try:
        return decode_input(Path(path).read_bytes(), path)
    except OSError as error:
        raise ToolError(f"could not open input file '{path}': {error.strerror}") from None


def decode_input(data: bytes, filename: str) -> str:
    """``data`` as UTF-8 text; DiagnosedError at the first bad byte (file:line:col, columns in
    bytes as MLIR counts them), since the MLIR parser only ever sees text."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        col = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        diagnostic = Diagnostic("error", f"invalid UTF-8 byte 0x{data[error.start]:02x} ({error.reason}); "
                                "the input must be UTF-8 text", FileLoc(filename, line, col))
        text = data.decode("utf-8", errors="replace")
        raise DiagnosedError(diagnostic.format({filename: text})) from None


def _write(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        return
    try:
        Path(path).write_text(text)
    except OSError as error:
        raise ToolError(f"could not write output file '{path}': {error.strerror}") from None


def split_pass_flags(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """Take ``--mlax-x`` / ``--mlax-x=OPTIONS`` out of ``argv`` in command-line order, as
    pipeline elements (argparse would lose the order, or eat the input file as OPTIONS)."""
    passes, rest = [], []
    for token in argv:
        name, eq, opts = token[2:].partition("=")
        if token.startswith("--") and name in registered_passes():
            passes.append(f"{name}{{{opts}}}" if eq and opts else name)
        else:
            rest.append(token)
    return passes, rest


def _pipeline(pass_pipeline: str | None, passes: list[str]) -> tuple[Element, ...]:
    if pass_pipeline and passes:
        raise ToolError("use either --pass-pipeline or per-pass flags, not both")
    try:
        elements = parse_pipeline(pass_pipeline or ", ".join(passes))
        build_stages(elements, make_context())  # unknown passes and bad options fail before any input
    except PipelineError as error:
        raise ToolError(error.message) from None
    return elements


def main(argv: Sequence[str] | None = None) -> int:
    passes, rest = split_pass_flags(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(rest)
    try:
        options = Options(_pipeline(args.pass_pipeline, passes), args.verify_diagnostics,
                          args.mlir_print_ir_after_all, args.mlir_print_debuginfo, args.mlir_print_op_generic)
        filename = "<stdin>" if args.input == "-" else args.input
        out, err, status = run(read_input(args.input), filename, options, args.split_input_file,
                               args.allow_unregistered_dialect)
        sys.stderr.write(err)
        _write(args.output, out)
        return status
    except DiagnosedError as error:
        print(error, file=sys.stderr)
        return 1
    except ToolError as error:
        print(f"mlax-opt: error: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # a bug in mlax: say so in one line unless asked for more
        if args.mlax_traceback:
            traceback.print_exc()
        print(f"mlax-opt: internal error: {type(error).__name__}: {error} (rerun with --mlax-traceback "
              f"for the Python traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
