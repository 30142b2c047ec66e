"""Where in the user's code an op comes from: the first stack frame outside mlax."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import FrameType

from mlir import ir

from mlax.name_stack import scoped

_MLAX_DIRS = tuple(
    os.path.dirname(os.path.abspath(p)) + os.sep
    for p in (__file__,)
) + tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), d) + os.sep
    for d in ("dialect", "passes", "runtime", "tools")
)
_SKIP_FRAGMENTS = (os.sep + "jax" + os.sep, os.sep + "contextlib.py", os.sep + "functools.py")


@dataclass(frozen=True)
class SourceInfo:
    filename: str
    line: int
    column: int
    function: str

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column} (in {self.function})"

    def to_location(self) -> ir.Location:
        """``loc("function"("file":line:col))`` in the current context, the function's name
        under the enclosing named scopes (mlax.named_scope)."""
        file_loc = ir.Location.file(self.filename, self.line, self.column)
        return ir.Location.name(scoped(self.function), childLoc=file_loc)


def _is_internal(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path.startswith(_MLAX_DIRS) or any(f in path for f in _SKIP_FRAGMENTS)


def _column(frame: FrameType) -> int:
    try:
        positions = list(frame.f_code.co_positions())
        col = positions[frame.f_lasti // 2][2]
    except (IndexError, AttributeError):
        col = None
    return (col or 0) + 1


_OVERRIDE = threading.local()


@contextlib.contextmanager
def user_frame_override(info: SourceInfo) -> Iterator[None]:
    """Make `user_frame_info` return ``info`` in this thread: mlax.from_stablehlo replays a
    program written elsewhere, so its ops and errors name that program's lines."""
    previous = getattr(_OVERRIDE, "info", None)
    _OVERRIDE.info = info
    try:
        yield
    finally:
        _OVERRIDE.info = previous


def user_frame_info() -> SourceInfo | None:
    """Source info of the innermost frame that belongs to user code."""
    override = getattr(_OVERRIDE, "info", None)
    if override is not None:
        return override
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    code = frame.f_code
    return SourceInfo(code.co_filename, frame.f_lineno, _column(frame),
                      getattr(code, "co_qualname", code.co_name))


def current_location() -> ir.Location:
    info = user_frame_info()
    return info.to_location() if info is not None else ir.Location.unknown()


def where() -> str:
    """A short " at file:line:col (in fn)" suffix for error messages."""
    info = user_frame_info()
    return f"\n  at {info}" if info is not None else ""
