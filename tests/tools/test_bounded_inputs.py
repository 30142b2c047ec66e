"""Hand-written IR that asks for unbounded work is refused (or handled) within a memory cap.

A mesh of 2**41 devices, constants, iotas and broadcasts of 2**40 elements, a scan that stacks
2**40 rows, an argument of 4 TiB: mlax-opt and mlax-run must answer each with a located
error (``file:line:col: error: ...``, exit status 1, no traceback) or a result, never by
growing until the machine runs out. Every case runs in ONE child process whose address space
is capped (``resource.setrlimit``), through the tools' ``main`` functions; the cap is part of
what is checked (backends/memory_limits.py counts it as memory the process cannot exceed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

CAP = 4 << 30  # bytes of address space: mlax, MLIR, jax and LLVM's JIT fit; 4 TiB does not
G = 1 << 40

HUGE_MESH = f"""\
func.func private @sm(tensor<8xf32>) -> tensor<8xf32> attributes {{mlax.shard_map = {{callee = @body, axis_names = ["x", "y"], axis_sizes = array<i64: {G}, 2>, in_specs = [[[]]], out_specs = [[[]]]}}}}
func.func private @body(%a: tensor<8xf32>) -> tensor<8xf32> {{
  return %a : tensor<8xf32>
}}
"""  # noqa: E501

HUGE_MODULE_MESH = f"""\
module attributes {{mlax.mesh = {{axis_names = ["x"], axis_sizes = array<i64: {G}>, device_ids = array<i64: 0, 1>}}}} {{
  func.func @f(%a: tensor<8xf32> {{mlax.sharding = [["x"]]}}) -> tensor<8xf32> {{
    return %a : tensor<8xf32>
  }}
}}
"""  # noqa: E501

HUGE_STABLEHLO = f"""\
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %0 = "stablehlo.constant"() {{value = dense<1.0> : tensor<{G}xf32>}} : () -> tensor<{G}xf32>
  %1 = "stablehlo.slice"(%0) {{start_indices = array<i64: 0>, limit_indices = array<i64: 4>, strides = array<i64: 1>}} : (tensor<{G}xf32>) -> tensor<4xf32>
  %z = "stablehlo.constant"() {{value = dense<0.0> : tensor<{G}xf32>}} : () -> tensor<{G}xf32>
  %m = "stablehlo.maximum"(%0, %z) : (tensor<{G}xf32>, tensor<{G}xf32>) -> tensor<{G}xf32>
  %2 = "stablehlo.add"(%1, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}}
"""  # noqa: E501

# Transformations and lowerings of ops on 2**40 elements: IR only, nothing materialized.
HUGE_PROGRAM = f"""\
func.func @f(%x: tensor<{G}xf32>) -> tensor<f32> {{
  %0 = "mlax.sin"(%x) : (tensor<{G}xf32>) -> tensor<{G}xf32>
  %c = "mlax.constant"() {{value = dense<2.0> : tensor<{G}xf32>}} : () -> tensor<{G}xf32>
  %1 = "mlax.mul"(%0, %c) : (tensor<{G}xf32>, tensor<{G}xf32>) -> tensor<{G}xf32>
  %i = "mlax.iota"() {{shape = array<i64: {G}>, dtype = f32, dimension = 0 : i64}} : () -> tensor<{G}xf32>
  %2 = "mlax.add"(%1, %i) : (tensor<{G}xf32>, tensor<{G}xf32>) -> tensor<{G}xf32>
  %3 = "mlax.reduce_sum"(%2) {{dimensions = array<i64: 0>}} : (tensor<{G}xf32>) -> tensor<f32>
  return %3 : tensor<f32>
}}
func.func private @f_vjp(tensor<{G}xf32>, tensor<f32>) -> (tensor<f32>, tensor<{G}xf32>) attributes {{mlax.vjp = {{callee = @f, argnums = array<i64: 0>}}}}
func.func @g(%x: tensor<{G}xf32>, %t: tensor<f32>) -> tensor<{G}xf32> {{
  %0:2 = func.call @f_vjp(%x, %t) : (tensor<{G}xf32>, tensor<f32>) -> (tensor<f32>, tensor<{G}xf32>)
  return %0#1 : tensor<{G}xf32>
}}
"""  # noqa: E501

CONSTANT = f"""\
func.func @f() -> tensor<f32> {{
  %0 = "mlax.constant"() {{value = dense<1.0> : tensor<{G}xf32>}} : () -> tensor<{G}xf32>
  %1 = "mlax.reduce_sum"(%0) {{dimensions = array<i64: 0>}} : (tensor<{G}xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}}
"""

BROADCAST = f"""\
func.func @f(%x: tensor<f32>) -> tensor<f32> {{
  %0 = "mlax.broadcast_in_dim"(%x) {{shape = array<i64: {G}>, broadcast_dimensions = array<i64>}} : (tensor<f32>) -> tensor<{G}xf32>
  %1 = "mlax.reduce_sum"(%0) {{dimensions = array<i64: 0>}} : (tensor<{G}xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}}
"""  # noqa: E501

SCAN = f"""\
func.func private @step(%c: tensor<f32>) -> (tensor<f32>, tensor<f32>) {{
  return %c, %c : tensor<f32>, tensor<f32>
}}
func.func private @step_scan(tensor<f32>) -> (tensor<f32>, tensor<{G}xf32>) attributes {{mlax.scan = {{body = @step, length = {G} : i64, reverse = false, num_carry = 1 : i64, num_consts = 0 : i64}}}}
func.func @f(%c: tensor<f32>) -> tensor<f32> {{
  %0:2 = func.call @step_scan(%c) : (tensor<f32>) -> (tensor<f32>, tensor<{G}xf32>)
  return %0#0 : tensor<f32>
}}
"""  # noqa: E501

ARGUMENT = f"""\
func.func @f(%x: tensor<{G}xf32>) -> tensor<{G}xf32> {{
  return %x : tensor<{G}xf32>
}}
"""

# The operand is small, its padding is not: the interpreter runs out of memory in the op.
WINDOW = f"""\
func.func @f(%x: tensor<4xf32>) -> tensor<5xf32> {{
  %0 = "mlax.reduce_window_sum"(%x) {{base_dilation = array<i64: 1>, padding = array<i64: {G}, 0>, window_dilation = array<i64: 1>, window_dimensions = array<i64: {G}>, window_strides = array<i64: 1>}} : (tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}}
"""  # noqa: E501

RUN = ["--entry", "f", "--random-inputs", "0"]
# name: (tool, text, arguments, expected status, what stderr (errors) or stdout (results) holds)
CASES = {
    "shard_map_mesh": ("opt", HUGE_MESH, ["--mlax-cleanup"], 1,
                       f":1:9: error: mlax.shard_map declaration @sm: invalid axis_names / axis_sizes: axis "
                       f"sizes [{G}, 2] make {2 * G} devices, more than mlax handles (1048576)"),
    "module_mesh": ("opt", HUGE_MODULE_MESH, ["--mlax-partition"], 1,
                    f":1:1: error: mlax-partition: invalid mesh: axis sizes [{G}] make {G} devices"),
    "import_splats": ("opt", HUGE_STABLEHLO, ["--mlax-import-stablehlo"], 0,
                      f'"mlax.constant"() {{value = dense<1.000000e+00> : tensor<{G}xf32>}}'),
    "stablehlo_scan": ("opt", SCAN, ["--mlax-lower-to-stablehlo"], 0, f"dense<{G}> : tensor<i64>"),
    "transform_huge": ("opt", HUGE_PROGRAM, [
        "--pass-pipeline=builtin.module(mlax-expand-transforms, mlax-cleanup, mlax-lower-to-linalg)"],
        0, "func.func @g"),
    "run_constant": ("run", CONSTANT, RUN, 1,
                     f":2:8: error: running @f failed: the result of mlax.constant is tensor<{G}xf32> "
                     "(4.0 TiB), more than this process can hold (4.0 GiB of memory)"),
    "run_constant_cpu": ("run", CONSTANT, [*RUN, "--backend", "cpu"], 1,
                         ":2:8: error: running @f failed: the result of mlax.constant"),
    "run_broadcast": ("run", BROADCAST, RUN, 1,
                      ":2:8: error: running @f failed: the result of mlax.broadcast_in_dim"),
    "run_broadcast_cpu": ("run", BROADCAST, [*RUN, "--backend", "cpu"], 1,
                          ":2:8: error: running @f failed: the result of mlax.broadcast_in_dim"),
    "run_scan_stack": ("run", SCAN, RUN, 1,
                       ":6:10: error: running @f failed: result 1 of the call of @step_scan"),
    # compiled code drops the stack nobody reads (and the scan of an unchanged carry)
    "run_scan_stack_cpu": ("run", SCAN, [*RUN, "--backend", "cpu"], 0, "result[0]: tensor<f32> = "),
    "run_argument": ("run", ARGUMENT, RUN, 1,
                     f":1:1: error: cannot make the arguments of @f: argument 0 of @f is tensor<{G}xf32>"),
    "run_window": ("run", WINDOW, RUN, 1,
                   ":2:8: error: running @f failed: out of memory running mlax.reduce_window_sum"),
}

DRIVER = """
import contextlib, io, json, resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
from mlax.tools import mlax_opt, mlax_run
cases = json.loads(Path(sys.argv[1]).read_text())
found = {{}}
for name, (tool, path, argv) in cases.items():
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = (mlax_opt if tool == "opt" else mlax_run).main([path, *argv])
    found[name] = [status, out.getvalue(), err.getvalue()]
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list]:
    folder = tmp_path_factory.mktemp("bounded")
    cases = {}
    for name, (tool, text, argv, _, _) in CASES.items():
        path = folder / f"{name}.mlir"
        path.write_text(text)
        cases[name] = [tool, str(path), argv]
    (folder / "cases.json").write_text(json.dumps(cases))
    driver = textwrap.dedent(DRIVER.format(cap=CAP))
    # one thread of work: every thread's stack counts against the cap
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", driver, str(folder / "cases.json")], capture_output=True,
                          text=True, timeout=300, cwd=folder, env=env)
    assert done.returncode == 0, f"the capped run failed (status {done.returncode}):\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", sorted(CASES))
def test_bounded(results: dict[str, list], name: str) -> None:
    _, _, _, status, expected = CASES[name]
    found_status, out, err = results[name]
    assert "Traceback" not in err and "internal error" not in err, err
    assert found_status == status, (out[-2000:], err)
    assert expected in (err if status else out), (out[-2000:], err)
    if status:  # located in the input file: file:line:col, then the source line
        assert err.splitlines()[0].startswith(f"{name}.mlir:") or f"/{name}.mlir:" in err.splitlines()[0], err
