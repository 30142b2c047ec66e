"""Draw one program call of an mlax kernel trace as an SVG timeline (the picture in
docs/profiling.md).

    python -m mlax.tools.trace_picture TRACE.json OUT.svg [--call N] [--width PX]

TRACE.json is what ``mlax.profiler`` writes (``mlax-kernels-*.trace.json``, or
``KernelProfile.chrome_trace()``); ``--call`` picks the program call to draw (default: the last).
Each kernel is a box on the row of its nesting depth (the call, then the kernels and loops it
runs, then what those loops run), its width its time, its color its kind.
"""

from __future__ import annotations

import argparse
import json
from html import escape
from pathlib import Path

_COLORS = {"sgemm": "#4e79a7", "dgemm": "#4e79a7", "elementwise": "#f28e2b", "reduction": "#e15759",
           "copy": "#76b7b2", "loop": "#bab0ac", "while loop": "#bab0ac", "cond": "#d4ccc8",
           "fill": "#59a14f"}
_ROW, _AXIS, _MARGIN = 26, 30, 10


def _within(event: dict, outer: dict) -> bool:
    return outer["ts"] <= event["ts"] and event["ts"] + event["dur"] <= outer["ts"] + outer["dur"] + 1e-9


def picture(trace: dict, call_index: int = -1, width: int = 1100) -> str:
    """The SVG text of one program call of ``trace`` and the kernels inside it."""
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    calls = [e for e in events if e.get("cat") == "program"]
    call = calls[call_index]
    inside = sorted((e for e in events if e.get("cat") != "program" and e["tid"] == call["tid"]
                     and _within(e, call)), key=lambda e: (e["ts"], -e["dur"]))
    open_spans: list[dict] = []
    rows: list[tuple[int, dict]] = [(0, call)]
    for event in inside:
        open_spans = [s for s in open_spans if _within(event, s)]
        rows.append((len(open_spans) + 1, event))
        if event.get("cat") == "span":
            open_spans.append(event)
    depth = max(d for d, _ in rows) + 1
    scale = (width - 2 * _MARGIN) / max(call["dur"], 1e-9)
    height = depth * _ROW + 2 * _AXIS + 2 * _MARGIN
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="11">',
             f'<rect width="{width}" height="{height}" fill="white"/>']
    for level, event in rows:
        x = _MARGIN + (event["ts"] - call["ts"]) * scale
        w = max(event["dur"] * scale, 0.5)
        y = _MARGIN + level * _ROW
        color = "#9c755f" if level == 0 else _COLORS.get(event["name"], "#af7aa1")
        source = event.get("args", {}).get("source", "")
        writes = event.get("args", {}).get("writes", "")
        title = escape(f'{event["name"]} {writes} {event["dur"]:.1f} us {source}')
        tooltip = f"<title>{title}</title>" if w >= 3 else ""  # (keeps the file small)
        parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{_ROW - 4}" fill="{color}" '
                     f'stroke="white" stroke-width="0.3">{tooltip}</rect>')
        if w > 7 * len(event["name"]):
            parts.append(f'<text x="{x + 3:.2f}" y="{y + 15}" fill="white">{escape(event["name"])}</text>')
    axis_y = _MARGIN + depth * _ROW + 12
    step = _tick(call["dur"])
    tick = 0.0
    while tick <= call["dur"]:
        x = _MARGIN + tick * scale
        parts.append(f'<line x1="{x:.2f}" y1="{axis_y - 8}" x2="{x:.2f}" y2="{axis_y - 3}" stroke="black"/>')
        parts.append(f'<text x="{x:.2f}" y="{axis_y + 8}" text-anchor="middle">{tick / 1000:g} ms</text>')
        tick += step
    kinds = sorted({event["name"] for level, event in rows if level})
    x = _MARGIN
    for kind in kinds:
        parts.append(f'<rect x="{x}" y="{axis_y + 16}" width="10" height="10" '
                     f'fill="{_COLORS.get(kind, "#af7aa1")}"/>')
        parts.append(f'<text x="{x + 14}" y="{axis_y + 25}">{escape(kind)}</text>')
        x += 24 + 7 * len(kind)
    parts.append(f'<text x="{width - _MARGIN}" y="{axis_y + 25}" text-anchor="end">'
                 f'{escape(call["name"])}: {call["dur"] / 1000:.2f} ms</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def _tick(duration_us: float) -> float:
    """A round tick spacing giving 5-10 ticks over ``duration_us``."""
    scale = 1.0
    while True:
        for step in (scale, 2 * scale, 5 * scale):
            if duration_us / step <= 10:
                return step
        scale *= 10


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace")
    parser.add_argument("out")
    parser.add_argument("--call", type=int, default=-1, help="which program call (default: the last)")
    parser.add_argument("--width", type=int, default=1100)
    args = parser.parse_args(argv)
    Path(args.out).write_text(picture(json.loads(Path(args.trace).read_text()), args.call, args.width))


if __name__ == "__main__":
    main()
