"""mlax's StableHLO on another machine's accelerator: compile here, check and time there.

    python -m mlax.tools.device_check xla prepare DIR  # here: needs mlax (and its MLIR)
    python DIR/xla_device_check.py run DIR [OUT]       # there: needs only numpy and jax
                                                       # (--repeats N timed calls, default 50)

The machine with the GPU has jax but not mlax's MLIR wheels, so ``prepare`` lowers each
program below with mlax's XLA road (``jit(f, backend="xla").lower(...).as_text("stablehlo")``)
and writes it as a StableHLO portable artifact (versioned bytecode that later XLA releases
read), with the results mlax's native CPU backend computes. ``run`` compiles each artifact
with the default jax device's PJRT client, checks its results against those and against the
same program written with jax on the same device, and times both (median of repeated calls
on device-resident inputs). Inputs are drawn from a seed on both sides, so none travel;
``prepare`` copies this script and backends/device_programs.py next to the artifacts.

Each program is written once against a namespace ``m`` (``m.numpy``, ``m.lax``, ``m.grad``)
that is mlax for ``prepare`` and jax for ``run``. ``prepare`` is handed the front end (a backend
imports no layer above it), which tools/device_check.py, the command line, does.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np

try:
    from mlax.backends import device_programs as programs
except ImportError:  # run where mlax is not installed: a copy next to device_programs.py, or in backends/
    sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1])]
    import device_programs as programs  # type: ignore[no-redef]


def _sort(m: Any, x: Any) -> Any:
    return m.numpy.sort(x)


def _conv(m: Any, x: Any, k: Any) -> Any:
    return m.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _matmul_highest(m: Any, a: Any, b: Any) -> Any:
    return m.numpy.matmul(a, b, precision=m.lax.Precision.HIGHEST)


def _conv_highest(m: Any, x: Any, k: Any) -> Any:
    return m.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                      precision="highest")


def _f32(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: rng.normal(size=shape).astype(np.float32) / np.sqrt(shape[-1])


def _ones(*shape: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: np.ones(shape, np.float32)


def _causal(length: int) -> Callable[[np.random.Generator], np.ndarray]:
    return lambda rng: np.tril(np.ones((length, length), bool))


# name -> (program, input makers, rtol against the CPU results, rtol against jax on the device)
PROGRAMS: dict[str, tuple[Callable[..., Any], list[Callable[[np.random.Generator], np.ndarray]],
                          float, float]] = {
    "elementwise": (programs.elementwise, [_f32(1024, 1024)], 1e-5, 1e-6),
    "softmax": (programs.softmax, [_f32(512, 1024)], 1e-5, 1e-6),
    # f32 dots may run in TF32 on the GPU (XLA's default), hence the tolerances against the CPU
    "matmul": (programs.matmul, [_f32(1024, 1024), _f32(1024, 1024)], 2e-2, 1e-5),
    "mlp": (programs.mlp, [_f32(784, 512), _f32(512), _f32(512, 10), _f32(10), _f32(256, 784)], 2e-2, 1e-5),
    "mlp_step": (programs.mlp_step, [_f32(784, 512), _f32(512), _f32(512, 10), _f32(10), _f32(256, 784),
                             _f32(256, 10)], 2e-2, 1e-5),
    "scan": (programs.scan, [_f32(16, 128), _f32(50, 16, 128), _f32(128, 128), _f32(128, 128)], 2e-2, 1e-5),
    "sort": (_sort, [_f32(262144)], 0.0, 0.0),
    "conv": (_conv, [_f32(8, 32, 32, 16), _f32(3, 3, 16, 32)], 2e-2, 1e-5),
    # precision=HIGHEST: true f32 products on every device (jax's meaning), so close to the CPU
    "matmul_highest": (_matmul_highest, [_f32(512, 512), _f32(512, 512)], 1e-4, 1e-6),
    "conv_highest": (_conv_highest, [_f32(8, 32, 32, 16), _f32(3, 3, 16, 32)], 1e-4, 1e-6),
    # a decoder block's SGD step (batch 4, sequence 1024, width 512, 8 heads): bf16 dots on the TPU
    "transformer_step": (programs.transformer_step, [_ones(512), _f32(512, 1536), _f32(512, 512), _ones(512),
                                            _f32(512, 2048), _f32(2048, 512), _f32(4, 1024, 512),
                                            _f32(4, 1024, 512), _causal(1024)], 5e-2, 1e-3),
}


def inputs(name: str) -> list[np.ndarray]:
    rng = np.random.default_rng(sorted(PROGRAMS).index(name))
    return [make(rng) for make in PROGRAMS[name][1]]


def prepare(folder: Path, front: ModuleType) -> None:
    """Write ``<name>.stablehlo`` (portable artifact) and ``<name>.expected.npz`` per program,
    and copy the scripts ``run`` needs; ``front`` is the front end (``mlax``) whose jit lowers
    the programs."""
    from mlax.backends.xla import pjrt

    folder.mkdir(parents=True, exist_ok=True)
    m = SimpleNamespace(numpy=front.numpy, lax=front.lax, nn=front.nn, grad=front.grad)
    for name, (program, _, _, _) in PROGRAMS.items():
        args = inputs(name)
        f = lambda *a, program=program: program(m, *a)  # noqa: E731
        text = front.jit(f, backend="xla").lower(*args).as_text("stablehlo", debug_info=False)
        (folder / f"{name}.stablehlo").write_bytes(pjrt.portable_artifact(text))
        expected = programs.leaves(front.jit(f, backend="cpu")(*args))
        np.savez(folder / f"{name}.expected.npz", *expected)
        print(f"{name}: {len(text)} characters of StableHLO, {len(expected)} result(s)")
    shutil.copy(__file__, folder / "xla_device_check.py")
    shutil.copy(programs.__file__, folder / "device_programs.py")


def _compile_artifact(artifact: bytes, device: Any) -> Any:
    """The artifact compiled by ``device``'s PJRT client (jaxlib's API, private to jax: older
    releases call it ``compile``)."""
    from jax._src.lib import xla_client

    client = device.client
    compile_and_load = getattr(client, "compile_and_load", None) or client.compile
    return compile_and_load(artifact, xla_client.DeviceList((device,)), xla_client.CompileOptions())


def _block(results: Any) -> Any:
    for leaf in results if isinstance(results, list) else _leaves_jax(results):
        leaf.block_until_ready()
    return results


def _leaves_jax(tree: Any) -> list[Any]:
    import jax

    return jax.tree_util.tree_leaves(tree)


def _check(got: list[np.ndarray], want: list[np.ndarray], rtol: float) -> str | None:
    if len(got) != len(want):
        return f"{len(got)} results, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"result {i}: {g.dtype}{list(g.shape)} != {w.dtype}{list(w.shape)}"
        scale = float(np.max(np.abs(w))) if w.size else 0.0
        error = float(np.max(np.abs(g.astype(np.float64) - w))) if w.size else 0.0
        if error > rtol * max(scale, 1.0):
            return f"result {i}: max error {error:.3g} > {rtol} x {max(scale, 1.0):.3g}"
    return None


def _run_one(folder: Path, name: str, program: Callable[..., Any], m: Any, device: Any,
             rtol_cpu: float, rtol_jax: float, repeats: int) -> dict[str, Any]:
    """Compile, check and time one prepared program against jax's version on ``device``."""
    import jax

    args = [jax.device_put(a, device) for a in inputs(name)]
    start = time.perf_counter()
    executable = _compile_artifact((folder / f"{name}.stablehlo").read_bytes(), device)
    compile_s = time.perf_counter() - start
    mlax_call = lambda: _block(executable.execute(args))  # noqa: E731
    got = [np.asarray(x) for x in mlax_call()]
    jitted = jax.jit(lambda *a: program(m, *a))
    start = time.perf_counter()
    reference = [np.asarray(x) for x in _leaves_jax(_block(jitted(*args)))]
    jax_first_s = time.perf_counter() - start
    expected_file = np.load(folder / f"{name}.expected.npz")
    expected = [expected_file[f"arr_{i}"] for i in range(len(expected_file.files))]
    problems = [p for p in (_check(got, expected, rtol_cpu), _check(got, reference, rtol_jax)) if p]
    mlax_s = programs.median_seconds(mlax_call, repeats)
    jax_s = programs.median_seconds(lambda: _block(jitted(*args)), repeats)
    return {"ok": not problems, "problems": problems, "compile_s": round(compile_s, 4),
            "jax_first_call_s": round(jax_first_s, 4), "mlax_us": round(mlax_s * 1e6, 1),
            "jax_us": round(jax_s * 1e6, 1), "ratio": round(mlax_s / jax_s, 3)}


def run(folder: Path, out: Path | None = None, repeats: int = 50) -> dict[str, Any]:
    """Compile, check and time every prepared program on the default jax device."""
    import jax

    device = jax.devices()[0]
    m = SimpleNamespace(numpy=jax.numpy, lax=jax.lax, nn=jax.nn, grad=jax.grad)
    report: dict[str, Any] = {"device": str(device), "platform": device.platform,
                              "jax": jax.__version__, "programs": {}}
    for name, (program, _, rtol_cpu, rtol_jax) in PROGRAMS.items():
        try:
            row = _run_one(folder, name, program, m, device, rtol_cpu, rtol_jax, repeats)
        except Exception as error:  # one program's failure must not hide the others' figures
            row = {"ok": False, "problems": [f"{type(error).__name__}: {error}"]}
        report["programs"][name] = row
        figures = (f"mlax {row['mlax_us']:9.1f} us  jax {row['jax_us']:9.1f} us  ratio {row['ratio']:5.2f}"
                   if "ratio" in row else "")
        print(f"{name:12s} {'ok ' if row['ok'] else 'BAD'} {figures}  {'; '.join(row['problems'])}")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "xla_device_check.json").write_text(json.dumps(report, indent=2))
    return report


def main(argv: list[str] | None = None, front: ModuleType | None = None) -> int:
    """The command line; ``prepare`` needs ``front`` (tools/device_check.py passes mlax)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("prepare", "run"))
    parser.add_argument("folder", type=Path, help="where the artifacts are written / read")
    parser.add_argument("out", type=Path, nargs="?", help="run: where the JSON report goes")
    parser.add_argument("--repeats", type=int, default=50, help="run: timed calls per program")
    args = parser.parse_args(argv)
    if args.mode == "prepare":
        if front is None:
            parser.error("prepare compiles with mlax: python -m mlax.tools.device_check xla prepare DIR")
        prepare(args.folder, front)
        return 0
    report = run(args.folder, args.out, args.repeats)
    return 0 if all(p["ok"] for p in report["programs"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
