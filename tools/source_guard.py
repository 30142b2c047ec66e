"""Text the bundled MLIR would abort on, caught before it is parsed.

The MLIR in our wheels is an assertions build: some inputs that a release build would
reject with an error, or silently wrap, stop the whole process instead. The known ones are
visible in the text, so they are checked there and reported as located diagnostics
(file:line:col) before the parser sees them:

- integers past int64: custom op parsers (``linalg.reduce ... dimensions = [2**63]``) build
  a null attribute from them. Only literals MLIR range-checks itself may exceed int64:
  typed ones (``18446744073709551615 : ui64``) and the elements of ``dense<...>``.
- shapes whose dimensions multiply past int64: element counts (``dense<1.0> :
  tensor<2**62x2xf32>`` in the parser) and the strides of buffers (the CPU pipeline)
  overflow and assert.
- a malformed list after linalg's ``dimensions =`` / ``permutation =`` (a float, a type,
  a missing bracket): the custom parser builds a null attribute from any of them.
- ``linalg.batch_matmul`` / ``batch_reduce_matmul`` on index or complex elements: the
  builder of their body (run by the parser) reaches an ``llvm_unreachable``.
- dense arrays of other element types than i1, i8, i16, i32, i64, f32, f64: the parser
  aborts on ``array<index>`` (it asks index for a bit width), and the Python bindings
  cannot read the others (``array<f16: ...>``), so every pass would fail on them.

Comments and string literals are blanked first, so nothing in them is checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mlax.passes.diagnostics import Diagnostic, FileLoc

INT64_MAX = 2**63 - 1

_COMMENT_OR_STRING = re.compile(r'//[^\n]*|"(?:[^"\\\n]|\\.)*"?')
# An integer literal on its own: not part of a name (%x1, @f2, i32, ^bb3), a float (1.5,
# 1e9) or a dimension list (4x8xf32: that is the shapes' check).
_INTEGER = re.compile(r"(?<![\w$.%@#^!-])(-?)(0x[0-9A-Fa-f]+|\d+)(?![\w.])")
_TYPED = re.compile(r"\s*:(?!:)")
_ELEMENTS = re.compile(r"\b(?:dense|sparse|dense_resource)<")
_SHAPE = re.compile(r"\b(?:tensor|memref|vector)<\s*((?:(?:\d+|\?|\[\d+\])\s*x\s*)+)")
_DIM = re.compile(r"\d+")
_ANGLE = re.compile(r"[<>]")
# linalg.reduce / broadcast / transpose: ``outs(...) dimensions = [0, 1]``.
_LINALG_LIST = re.compile(r"\)\s*(dimensions|permutation)\s*=")
_LIST_ITEM = r"-?(?:0x[0-9A-Fa-f]+|\d+)"
_INTEGER_LIST = re.compile(rf"\s*\[\s*(?:{_LIST_ITEM}(?:\s*,\s*{_LIST_ITEM})*)?\s*\]")
# The op's line: its operand types follow on it (the op cannot be checked once parsed).
_BATCH_MATMUL = re.compile(r"\blinalg\.(?:batch_matmul|batch_reduce_matmul)\b[^\n]*")
_NON_NUMERIC = re.compile(r"(?:[<x])(index|complex<[^<>]*>)>")
# ``array<i64: 1, 2>`` (an attribute) opens with its element type; ``array<4 x i64>`` (the
# LLVM dialect's array type, spelled without ``!llvm.`` inside its struct types) with its
# length, and is not a dense array.
_DENSE_ARRAY = re.compile(r"(?<![\w.!])array<\s*(?!\d)([^\s:>,]*)")
_ARRAY_ELEMENTS = ("i1", "i8", "i16", "i32", "i64", "f32", "f64")


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group())


def _closing(text: str, start: int) -> int:
    """The index just past the '>' that closes the '<' before ``start``."""
    depth = 1
    for bracket in _ANGLE.finditer(text, start):
        depth += 1 if bracket.group() == "<" else -1
        if depth == 0:
            return bracket.end()
    return len(text)


def _loc(text: str, offset: int, filename: str) -> FileLoc:
    line_start = text.rfind("\n", 0, offset) + 1
    column = len(text[line_start:offset].encode()) + 1  # MLIR counts columns in bytes
    return FileLoc(filename, text.count("\n", 0, offset) + 1, column)


def _big_integers(text: str) -> Iterator[tuple[int, str]]:
    """(offset, message) for each integer literal past int64 that MLIR does not range-check."""
    elements: list[tuple[int, int]] | None = None  # the spans of dense<...>, found when needed
    for match in _INTEGER.finditer(text):
        sign, digits = match.groups()
        value = int(digits, 16) if digits.startswith("0x") else int(digits)
        if value <= INT64_MAX + (sign == "-") or _TYPED.match(text, match.end()):
            continue
        if elements is None:
            elements = [(m.end(), _closing(text, m.end())) for m in _ELEMENTS.finditer(text)]
        if any(a <= match.start() < b for a, b in elements):
            continue
        yield match.start(), (f"integer {match.group()} does not fit in 64 bits (signed); only a typed "
                              "literal (N : ui64) or the elements of a dense<...> may exceed it")


def _overflowing_shapes(text: str) -> Iterator[tuple[int, str]]:
    """(offset, message) for each dimension past int64, and each shape whose dimensions
    multiply past it (its element count or a stride); a type is reported where it first
    appears, not at every use."""
    seen: set[str] = set()
    for match in _SHAPE.finditer(text):
        dims = re.sub(r"\s", "", match.group(1))
        if dims in seen:
            continue
        seen.add(dims)
        product = 1
        for dim in _DIM.finditer(match.group(1)):
            value = int(dim.group())
            if value > INT64_MAX:
                yield match.start(1) + dim.start(), f"dimension {value} does not fit in 64 bits (signed)"
                break
            product *= value or 1  # a 0 makes the count 0, but strides still multiply the others
        else:
            if product > INT64_MAX:
                end = text.find(">", match.end())
                spelled = text[match.start():end + 1 if end != -1 else match.end()]
                yield match.start(), (f"the nonzero dimensions of {spelled} multiply to {product}, past "
                                      "int64 (its element count and strides must fit in 64 bits)")


def _linalg_lists(text: str) -> Iterator[tuple[int, str]]:
    for match in _LINALG_LIST.finditer(text):
        if not _INTEGER_LIST.match(text, match.end()):
            yield match.start(1), f"{match.group(1)} must be a list of integers ([0, 1])"


def _batch_matmuls(text: str) -> Iterator[tuple[int, str]]:
    for match in _BATCH_MATMUL.finditer(text):
        element = _NON_NUMERIC.search(match.group())
        if element is not None:
            yield match.start(), (f"{match.group().split()[0]} of {element.group(1)} elements is not "
                                  "supported (MLIR cannot build its body)")


def _dense_arrays(text: str) -> Iterator[tuple[int, str]]:
    for match in _DENSE_ARRAY.finditer(text):
        if match.group(1) not in _ARRAY_ELEMENTS:
            yield match.start(), (f"a dense array holds {', '.join(_ARRAY_ELEMENTS)}, not "
                                  f"'{match.group(1)}' (array<i64: ...>)")


def guard_source(text: str, filename: str) -> list[Diagnostic]:
    """Errors for what in ``text`` would abort MLIR's parser or passes (empty: safe to parse)."""
    masked = _COMMENT_OR_STRING.sub(_blank, text)
    found = sorted([*_big_integers(masked), *_overflowing_shapes(masked), *_linalg_lists(masked),
                    *_batch_matmuls(masked), *_dense_arrays(masked)])
    return [Diagnostic("error", message, _loc(text, offset, filename)) for offset, message in found]
