"""Seeded fuzz inputs for mlax-opt: the lit tests' inputs, mutated, each with a pipeline.

Case ``i`` depends only on ``i`` (its own ``random.Random``), so any failure reproduces
from its index alone, and disjoint ranges of cases can run in separate processes. The
seeds are the ``// -----`` chunks of lit-tests/**/*.mlir with their RUN/CHECK comments
removed (expected-* comments stay, for --verify-diagnostics); a case applies one to three
mutations that keep the input close to valid IR, so it gets past the parser and into the
verifier and the passes, where the interesting failures are.
"""

from __future__ import annotations

import random
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

LIT_TESTS = Path(__file__).resolve().parents[2] / "lit-tests"

# Pipelines every seed may be run through (the seed's own RUN lines are offered too).
PIPELINES: tuple[tuple[str, ...], ...] = (
    (),
    ("--mlax-autodiff",),
    ("--mlax-batch",),
    ("--mlax-expand-transforms",),
    ("--mlax-cleanup",),
    ("--mlax-lower-to-linalg",),
    ("--mlax-lower-control-flow",),
    ("--pass-pipeline=builtin.module(mlax-expand-transforms, mlax-cleanup)",),
    ("--pass-pipeline=builtin.module(mlax-autodiff, mlax-lower-control-flow, mlax-inline, "
     "mlax-lower-to-linalg)",),
    ("--pass-pipeline=builtin.module(mlax-cpu-pipeline{to=buffers})",),
    ("--pass-pipeline=builtin.module(mlax-cpu-pipeline)",),
)

# Replacements that reach edge cases: int64's limits and just past them, zero, negatives.
NUMBERS = ("0", "1", "-1", "2", "3", "7", "-7", "2147483648", "4294967296", "9223372036854775807",
           "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
           "18446744073709551616", "100000000000000000000000000000", "1.0e39", "1.0e400", "0.5",
           "0x7FF0000000000000", "0xFFFFFFFFFFFFFFFFFF")
DIMS = ("0", "1", "2", "5", "65536", "4294967296", "3037000500", "9223372036854775807",
        "9223372036854775808", "99999999999999999999", "?")
ELEMENT_TYPES = ("f32", "f64", "f16", "bf16", "i1", "i8", "i16", "i32", "i64", "ui8", "ui32", "ui64",
                 "si32", "si8", "ui1", "i0", "i3", "i128", "index", "f80", "f128", "tf32",
                 "f8E4M3FN", "complex<f32>", "none", "vector<4xf32>")
NON_UTF8 = (b"\xff", b"\x80", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf", b"\xfe\xff")

_TOKEN = re.compile(rb"\s+|[A-Za-z_][\w.$-]*|@[\w.$-]+|%[\w.$#-]+|-?\d[\w.+-]*|\"(?:[^\"\\]|\\.)*\"|.",
                    re.DOTALL)
_NUMBER = re.compile(rb"(?<![\w.%@#])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.])")
_DIM = re.compile(rb"(?<=[<x])(\d+|\?)(?=x)")
_ELEMENT = re.compile(rb"(?<=[<x])(?:f16|bf16|f32|f64|i1|i8|i16|i32|i64|ui8|ui32|index)(?=>)")
_SYMBOL = re.compile(rb"@[\w.$-]+")
_FUNCTION = re.compile(rb"^\s*func\.func\b[^\n]*@([\w.$-]+)", re.MULTILINE)
_RUN_OPT = re.compile(r"%mlax-opt\s+([^|]*)")


@dataclass(frozen=True)
class Seed:
    name: str  # lit file (relative to lit-tests) and chunk number
    text: str
    pipelines: tuple[tuple[str, ...], ...]  # from the file's RUN lines


@dataclass(frozen=True)
class Case:
    index: int
    seed: str
    mutations: tuple[str, ...]
    data: bytes
    argv: tuple[str, ...]  # mlax-opt flags (the input file goes first)

    def __str__(self) -> str:
        flags = shlex.join(self.argv)
        return f"case {self.index}: {self.seed}, {'; '.join(self.mutations)}, mlax-opt {flags}"


def _run_pipelines(text: str) -> tuple[tuple[str, ...], ...]:
    """The mlax-opt flags of a file's RUN lines (file and output names dropped)."""
    found = []
    for line in text.splitlines():
        if "RUN:" not in line:
            continue
        for match in _RUN_OPT.finditer(line):
            try:
                words = shlex.split(match.group(1))
            except ValueError:
                continue
            flags = tuple(w for w in words if w.startswith("--") and not w.startswith("--mlir-print-ir"))
            found.append(flags)
    return tuple(dict.fromkeys(found))


def _strip_lit_comments(text: str) -> str:
    """Drop whole-line comments except expected-* ones (keeping line count: blank lines)."""
    lines = [line if not line.lstrip().startswith("//") or "expected-" in line or line.startswith("// -----")
             else "" for line in text.splitlines()]
    return "\n".join(lines) + "\n"


@cache
def seeds() -> tuple[Seed, ...]:
    """Every chunk of every lit test, in a fixed order."""
    found = []
    for path in sorted(LIT_TESTS.rglob("*.mlir")):
        text = path.read_text()
        pipelines = _run_pipelines(text)
        for number, chunk in enumerate(re.split(r"(?m)^// -----.*\n", _strip_lit_comments(text))):
            if chunk.strip():
                found.append(Seed(f"{path.relative_to(LIT_TESTS)}#{number}", chunk, pipelines))
    return tuple(found)


@cache
def _seeds_by_file() -> tuple[tuple[Seed, ...], ...]:
    by_file: dict[str, list[Seed]] = {}
    for seed in seeds():
        by_file.setdefault(seed.name.split("#")[0], []).append(seed)
    return tuple(tuple(chunks) for chunks in by_file.values())


Mutation = Callable[[random.Random, bytes], tuple[bytes, str]]


def _replace_match(rng: random.Random, data: bytes, pattern: re.Pattern[bytes], choices: tuple[str, ...],
                   what: str) -> tuple[bytes, str]:
    matches = list(pattern.finditer(data))
    if not matches:
        return _flip_byte(rng, data)
    match = rng.choice(matches)
    new = rng.choice(choices)
    return data[:match.start()] + new.encode() + data[match.end():], \
        f"{what} {match.group().decode(errors='replace')} -> {new} at byte {match.start()}"


def _flip_byte(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """One byte replaced: mostly by printable ASCII (so the text still lexes), else by any."""
    value = rng.randrange(0x20, 0x7F) if rng.random() < 0.875 else rng.randrange(256)
    if not data:
        return bytes([value]), "one random byte"
    at = rng.randrange(len(data))
    return data[:at] + bytes([value]) + data[at + 1:], f"byte {at} -> 0x{value:02x}"


def _insert_non_utf8(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    at, bad = rng.randrange(len(data) + 1), rng.choice(NON_UTF8)
    return data[:at] + bad + data[at:], f"insert {bad!r} at byte {at}"


def _tokens(data: bytes) -> list[re.Match[bytes]]:
    return [m for m in _TOKEN.finditer(data) if not m.group().isspace()]


def _delete_token(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    tokens = _tokens(data)
    if not tokens:
        return _flip_byte(rng, data)
    token = rng.choice(tokens)
    return data[:token.start()] + data[token.end():], \
        f"delete token {token.group()!r} at byte {token.start()}"


def _duplicate_token(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    tokens = _tokens(data)
    if not tokens:
        return _flip_byte(rng, data)
    token = rng.choice(tokens)
    return data[:token.end()] + b" " + token.group() + data[token.end():], \
        f"duplicate token {token.group()!r} at byte {token.start()}"


def _swap_number(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    return _replace_match(rng, data, _NUMBER, NUMBERS, "number")


def _swap_dim(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    return _replace_match(rng, data, _DIM, DIMS, "dimension")


def _swap_element_type(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    return _replace_match(rng, data, _ELEMENT, ELEMENT_TYPES, "element type")


def _replace_all(rng: random.Random, data: bytes, pattern: re.Pattern[bytes], choices: tuple[str, ...],
                 what: str) -> tuple[bytes, str]:
    """Every match of ``pattern`` equal to a random one replaced by the same choice: a change
    that keeps the types of a function consistent, so it passes the verifier and reaches
    the passes (si32 everywhere, an empty dimension everywhere)."""
    found = sorted({m.group() for m in pattern.finditer(data)})
    if not found:
        return _flip_byte(rng, data)
    old, new = rng.choice(found), rng.choice(choices).encode()
    return re.sub(rb"(?<=[<x])" + re.escape(old) + rb"(?=[x>])", new, data), \
        f"every {what} {old.decode()} -> {new.decode()}"


def _swap_every_dim(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    return _replace_all(rng, data, _DIM, DIMS, "dimension")


def _swap_every_element_type(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    return _replace_all(rng, data, _ELEMENT, ELEMENT_TYPES, "element type")


def _rename_symbol(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    return _replace_match(rng, data, _SYMBOL, ("@nowhere", "@main", "@f"), "symbol")


def _function_span(data: bytes, match: re.Match[bytes]) -> tuple[int, int]:
    """Where a func.func's first line ends, and where the function ends (its body runs to the
    next line holding only '}'; a declaration is its line)."""
    line_end = data.find(b"\n", match.end())
    line_end = len(data) if line_end == -1 else line_end
    if not data[match.start():line_end].rstrip().endswith(b"{"):
        return line_end, line_end
    close = re.compile(rb"^\s*}\s*$", re.MULTILINE).search(data, line_end)
    return line_end, close.end() if close else len(data)


def _delete_function(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """Remove one func.func."""
    functions = list(_FUNCTION.finditer(data))
    if not functions:
        return _delete_line(rng, data)
    match = rng.choice(functions)
    end = _function_span(data, match)[1]
    return data[:match.start()] + data[end:], f"delete function @{match.group(1).decode()}"


def _strip_body(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """One function with a body made an external declaration (its callers now call nothing
    the passes can see into)."""
    functions = [m for m in _FUNCTION.finditer(data) if len(set(_function_span(data, m))) == 2]
    if not functions:
        return _delete_function(rng, data)
    match = rng.choice(functions)
    line_end, end = _function_span(data, match)
    header = data[match.start():line_end].rstrip()[:-1].rstrip()
    header = re.sub(rb"func\.func\s+(?:(?:public|private)\s+)?", b"func.func private ", header, count=1)
    return data[:match.start()] + header + data[end:], f"strip the body of @{match.group(1).decode()}"


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _delete_line(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    lines = _lines(data)
    at = rng.randrange(len(lines))
    return b"\n".join(lines[:at] + lines[at + 1:]), f"delete line {at + 1}"


def _duplicate_line(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    lines = _lines(data)
    at = rng.randrange(len(lines))
    return b"\n".join(lines[:at + 1] + lines[at:]), f"duplicate line {at + 1}"


def _splice_line(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """A line of another seed (an op of another test, a declaration) put in at random."""
    donor = rng.choice(seeds())
    line = rng.choice(donor.text.splitlines() or [""]).encode()
    lines = _lines(data)
    at = rng.randrange(len(lines) + 1)
    return b"\n".join(lines[:at] + [line] + lines[at:]), f"line from {donor.name} at line {at + 1}"


def _truncate(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    at = rng.randrange(len(data) + 1)
    return data[:at], f"truncate at byte {at}"


# Mutation -> weight: mostly the ones that keep the text parseable.
MUTATIONS: dict[Mutation, int] = {
    _swap_number: 5, _swap_dim: 3, _swap_element_type: 3, _swap_every_dim: 5, _swap_every_element_type: 5,
    _rename_symbol: 3, _delete_function: 3, _strip_body: 3,
    _delete_token: 2, _duplicate_token: 1, _delete_line: 2, _duplicate_line: 2, _splice_line: 2,
    _flip_byte: 2, _insert_non_utf8: 1, _truncate: 1,
}


def case(index: int, base_seed: int = 0) -> Case:
    """Fuzz case number ``index`` (the same for the same ``index`` and ``base_seed``)."""
    rng = random.Random(f"mlax-opt-fuzz:{base_seed}:{index}")
    seed = rng.choice(rng.choice(_seeds_by_file()))  # a file first: invalid.mlir's many chunks count once
    data, notes = seed.text.encode(), []
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        mutation = rng.choices(list(MUTATIONS), weights=list(MUTATIONS.values()))[0]
        data, note = mutation(rng, data)
        notes.append(note)
    options = seed.pipelines + PIPELINES if rng.random() < 0.5 or not seed.pipelines else seed.pipelines
    argv = rng.choice(options)
    if "--verify-diagnostics" not in argv and rng.random() < 0.1:
        argv = (*argv, "--verify-diagnostics")
    return Case(index, seed.name, tuple(notes), data, argv)
