"""mlax's StableHLO on another machine's accelerator: compile here, check and time there.

    python -m mlax.tools.device_check xla prepare DIR  # here: needs mlax (and its MLIR)
    python DIR/xla_device_check.py run DIR [OUT]       # there: needs only numpy and jax
                                                       # (--repeats N timed calls, default 50)

The machine with the accelerator has jax but not mlax's MLIR wheels, so ``prepare`` lowers
each program below with mlax's XLA road (``jit(f, backend="xla").lower(...).as_text("stablehlo")``)
and writes its text and signature, with the results mlax's native CPU backend computes.
``run`` compiles and calls each program the way mlax's XLA backend does (through
``backends/xla/pjrt.py``, which needs only jax: the program wrapped as a ``jax.export``
module and called through jax's C++ dispatch), checks its results against those and against
the same program written with jax on the same device, and times both: compiles, one call
waited for, and calls issued back to back. Inputs are drawn from a seed on both sides, so
none travel; ``prepare`` copies this script, backends/device_programs.py and
backends/xla/pjrt.py next to the programs.

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


def _pjrt() -> Any:
    """mlax's interface to jax's PJRT client (it needs only jax): imported from mlax where it is
    installed, else the copy ``prepare`` put beside this script."""
    try:
        from mlax.backends.xla import pjrt
    except ImportError:
        import importlib.util

        path = Path(__file__).resolve().with_name("pjrt.py")
        spec = importlib.util.spec_from_file_location("mlax_pjrt", path)
        pjrt = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = pjrt  # its dataclasses look their module up there
        spec.loader.exec_module(pjrt)
    return pjrt


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
    return lambda rng: (rng.normal(size=shape) / np.sqrt(shape[-1])).astype(np.float32)


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
    # four such blocks (sequence 512) run by lax.scan over the stacked layers
    "transformer_scan_step": (programs.transformer_scan_step,
                              [_ones(4, 512), _f32(4, 512, 1536), _f32(4, 512, 512), _ones(4, 512),
                               _f32(4, 512, 2048), _f32(4, 2048, 512), _f32(4, 512, 512), _f32(4, 512, 512),
                               _causal(512)], 5e-2, 1e-3),
}


def inputs(name: str) -> list[np.ndarray]:
    rng = np.random.default_rng(sorted(PROGRAMS).index(name))
    return [make(rng) for make in PROGRAMS[name][1]]


def prepare(folder: Path, front: ModuleType) -> None:
    """Write ``<name>.mlir`` (the StableHLO text), ``<name>.json`` (its arguments' and results'
    shapes and dtypes) and ``<name>.expected.npz`` per program (the CPU's results, each a fixed
    sample of at most ``_SAMPLE`` elements: the folder travels, and must fit the device
    machine's 64 MiB; every element is still compared with jax's result on the device), and
    copy the scripts ``run`` needs; ``front`` is the front end (``mlax``) whose jit lowers the
    programs."""

    folder.mkdir(parents=True, exist_ok=True)
    m = SimpleNamespace(numpy=front.numpy, lax=front.lax, nn=front.nn, grad=front.grad)
    for name, (program, _, _, _) in PROGRAMS.items():
        args = inputs(name)
        f = lambda *a, program=program: program(m, *a)  # noqa: E731
        text = front.jit(f, backend="xla").lower(*args).as_text("stablehlo", debug_info=False)
        (folder / f"{name}.mlir").write_text(text)
        expected = programs.leaves(front.jit(f, backend="cpu")(*args))
        signature = {"in": [[list(a.shape), str(a.dtype)] for a in args],
                     "out": [[list(r.shape), str(r.dtype)] for r in expected]}
        (folder / f"{name}.json").write_text(json.dumps(signature))
        np.savez(folder / f"{name}.expected.npz", *map(_sample, expected))
        print(f"{name}: {len(text)} characters of StableHLO, {len(expected)} result(s)")
    shutil.copy(__file__, folder / "xla_device_check.py")
    shutil.copy(programs.__file__, folder / "device_programs.py")
    shutil.copy(Path(__file__).with_name("pjrt.py"), folder / "pjrt.py")


_SAMPLE = 1 << 16


def _sample(result: np.ndarray) -> np.ndarray:
    """``result`` itself if small, else ``_SAMPLE`` of its elements evenly spread (flat)."""
    if result.size <= _SAMPLE:
        return result
    return result.reshape(-1)[np.linspace(0, result.size - 1, _SAMPLE).astype(np.int64)]


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
    """Compile, check and time one prepared program against jax's version on ``device``.

    Both compile times are medians of three compiles of fresh objects, mlax's and jax's
    alternating, each after an untimed `jax.clear_caches`, following one untimed round: on a
    TPU the first compiles of a program cost up to 2-3x the later ones (1.0 s against 2.1-2.9 s
    for the conv) on whichever side goes first, which must not land on one side. A step is timed
    two ways: *latency*, one call waited for (what a loop that reads each result pays), and
    *throughput*, up to ``_PIPELINED`` calls issued back to back and waited for once (what a
    training loop pays, and the one that measures the device's work). Few ``repeats`` (a test
    on the CPU) time less: one compile each, ``repeats`` calls back to back, once."""
    import jax

    pjrt = _pjrt()
    args = [jax.device_put(a, device) for a in inputs(name)]
    text = (folder / f"{name}.mlir").read_text()
    signature = json.loads((folder / f"{name}.json").read_text())
    avals = {side: [(tuple(shape), np.dtype(dtype)) for shape, dtype in signature[side]]
             for side in ("in", "out")}

    def mlax_compile() -> Any:  # what backends/xla/executable.py does
        return pjrt.compile_jitted(pjrt.jitted_program(text, avals["in"], avals["out"], device), avals["in"])

    def jax_compile() -> Any:
        return jax.jit(lambda *a: program(m, *a)).lower(*args).compile()

    samples = 3 if repeats >= 10 else 1
    batch = min(_PIPELINED, repeats)
    compiles: list[tuple[float, Any]] = []
    jax_compiles: list[tuple[float, Any]] = []
    for sample in range(samples + (samples > 1)):  # alternating, after every cache is cleared
        for make, times in ((mlax_compile, compiles), (jax_compile, jax_compiles)):
            jax.clear_caches()
            timed = _timed(make)
            if sample or samples == 1:  # the first round warms what clear_caches keeps
                times.append(timed)
    executable = compiles[-1][1]
    mlax_call = lambda: executable(*args)  # noqa: E731
    got = [np.asarray(x) for x in _block(mlax_call())]
    jitted = jax_compiles[-1][1]
    reference = [np.asarray(x) for x in _leaves_jax(_block(jitted(*args)))]
    expected_file = np.load(folder / f"{name}.expected.npz")
    expected = [expected_file[f"arr_{i}"] for i in range(len(expected_file.files))]
    checks = (_check(list(map(_sample, got)), expected, rtol_cpu), _check(got, reference, rtol_jax))
    problems = [p for p in checks if p]
    jax_call = lambda: jitted(*args)  # noqa: E731
    latency = [programs.median_seconds(lambda c=c: _block(c()), repeats) for c in (mlax_call, jax_call)]
    rounds = max(repeats // 10, samples)
    throughput = [programs.median_seconds(lambda c=c: _pipelined(c, batch), rounds) / batch
                  for c in (mlax_call, jax_call)]
    compile_s = [float(np.median([t for t, _ in c])) for c in (compiles, jax_compiles)]
    return {"ok": not problems, "problems": problems,
            "compile_s": round(compile_s[0], 4), "jax_compile_s": round(compile_s[1], 4),
            "compile_ratio": round(compile_s[0] / compile_s[1], 3),
            "compile_samples_s": [[round(t, 4) for t, _ in c] for c in (compiles, jax_compiles)],
            "mlax_us": round(throughput[0] * 1e6, 1), "jax_us": round(throughput[1] * 1e6, 1),
            "ratio": round(throughput[0] / throughput[1], 3),
            "mlax_latency_us": round(latency[0] * 1e6, 1), "jax_latency_us": round(latency[1] * 1e6, 1),
            "latency_ratio": round(latency[0] / latency[1], 3)}


_PIPELINED = 20  # calls issued back to back per throughput sample


def _timed(make: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    made = make()
    return time.perf_counter() - start, made


def _pipelined(call: Callable[[], Any], count: int) -> None:
    """``count`` calls without waiting between them, then wait for the last."""
    results = [call() for _ in range(count)]
    _block(results[-1])


def run(folder: Path, out: Path | None = None, repeats: int = 50) -> dict[str, Any]:
    """Compile, check and time every program prepared in ``folder`` on the default jax device."""
    import jax

    prepared = [name for name in PROGRAMS if (folder / f"{name}.mlir").exists()]
    if not prepared:
        raise FileNotFoundError(f"no prepared program in {folder} (run `prepare` first)")

    device = jax.devices()[0]
    m = SimpleNamespace(numpy=jax.numpy, lax=jax.lax, nn=jax.nn, grad=jax.grad)
    report: dict[str, Any] = {"device": str(device), "platform": device.platform,
                              "jax": jax.__version__, "programs": {}}
    for name in prepared:
        program, _, rtol_cpu, rtol_jax = PROGRAMS[name]
        try:
            row = _run_one(folder, name, program, m, device, rtol_cpu, rtol_jax, repeats)
        except Exception as error:  # one program's failure must not hide the others' figures
            row = {"ok": False, "problems": [f"{type(error).__name__}: {error}"]}
        report["programs"][name] = row
        figures = (f"step mlax {row['mlax_us']:9.1f} us  jax {row['jax_us']:9.1f} us  "
                   f"ratio {row['ratio']:5.2f}  (one call waited for: {row['latency_ratio']:5.2f})  "
                   f"compile {row['compile_s']:6.2f} s / {row['jax_compile_s']:6.2f} s "
                   f"= {row['compile_ratio']:4.2f}"
                   if "ratio" in row else "")
        print(f"{name:22s} {'ok ' if row['ok'] else 'BAD'} {figures}  {'; '.join(row['problems'])}")
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
