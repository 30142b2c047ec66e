"""tools/trace_picture.py draws one program call of a kernel trace: a box per kernel, nested
under the loop that runs it, with a legend of the kinds."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

import mlax
import mlax.numpy as mnp
from mlax.tools.trace_picture import picture


def test_a_box_per_kernel_and_loops_above_their_bodies() -> None:
    def program(h, xs):
        return mlax.lax.scan(lambda h, x: (mnp.tanh(h @ h + x), mnp.sum(h)), h, xs)

    step = mlax.jit(program)
    h, xs = np.eye(4, dtype=np.float32), np.ones((3, 4, 4), np.float32)
    step(h, xs)
    with mlax.profiler.kernel_profile() as profile:
        step(h, xs)
    trace = profile.chrome_trace()
    svg = ET.fromstring(picture(trace))
    namespace = "{http://www.w3.org/2000/svg}"
    boxes = [r for r in svg.iter(f"{namespace}rect") if r.get("height") == "22"]
    (call,) = profile.calls
    assert len(boxes) == 1 + len(call.events)  # the call, then each event
    loop_rows = {float(b.get("y")) for b in boxes if b.get("fill") == "#bab0ac"}
    gemm_rows = {float(b.get("y")) for b in boxes if b.get("fill") == "#4e79a7"}
    assert loop_rows and gemm_rows and min(gemm_rows) > min(loop_rows)
    legend = {t.text for t in svg.iter(f"{namespace}text")}
    assert {"loop", "sgemm"} <= legend
