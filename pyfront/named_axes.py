"""Named axes in scope while tracing: jax's axis environment, for mlax.lax's collectives.

A collective names the axes it communicates over (``psum(x, "i")``); those names are bound
by what is being traced around it: the body of ``vmap(axis_name="i")`` (kind ``"vmap"``)
or of a ``shard_map`` (kind ``"shard_map"``: every mesh axis). Tracing pushes a frame of
``{name: size}`` for the body and pops it after, so the collective can check its names and
compute sizes (all_gather's result shape, ``axis_size``) while it is traced, as jax's
``core.get_axis_env()`` lets it. Frames are per thread (a trace belongs to one thread).
An inner frame shadows an outer one of the same name, as nested vmaps do in jax.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass

AxisName = str | tuple[str, ...] | list[str]
KINDS = ("vmap", "shard_map")


@dataclass(frozen=True)
class Frame:
    """Axes bound by one traced body, and what bound them."""

    sizes: dict[str, int]
    kind: str


class _Frames(threading.local):
    def __init__(self) -> None:
        self.stack: list[Frame] = []


_FRAMES = _Frames()


@contextlib.contextmanager
def bind(sizes: dict[str, int], kind: str) -> Iterator[None]:
    """Bind ``sizes`` (name -> size) while tracing a vmap (``kind="vmap"``) or shard_map body."""
    if kind not in KINDS:
        raise ValueError(f"named axes are bound by one of {KINDS}, not {kind!r}")
    _FRAMES.stack.append(Frame(dict(sizes), kind))
    try:
        yield
    finally:
        _FRAMES.stack.pop()


def names_of(axis_name: AxisName) -> tuple[str, ...]:
    """jax's axis_name argument (a name, or a tuple/list of names) as a tuple."""
    return tuple(axis_name) if isinstance(axis_name, tuple | list) else (axis_name,)


def frame_of(name: str) -> Frame:
    """The innermost frame binding ``name``; NameError (jax's message) if none does."""
    for frame in reversed(_FRAMES.stack):
        if name in frame.sizes:
            return frame
    raise NameError(f"unbound axis name: {name}")


def axis_size(names: AxisName) -> int:
    """The product of the sizes of ``names`` (a name or several)."""
    return math.prod(frame_of(name).sizes[name] for name in names_of(names))
