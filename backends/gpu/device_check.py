"""mlax's native GPU backend on another machine's GPU: compile here, check and time there.

    python -m mlax.tools.device_check gpu prepare DIR [--small]  # here: needs mlax (and its MLIR)
    python DIR/gpu_device_check.py run DIR [OUT] [--repeats N]    # there: numpy, jax, the CUDA driver

The GPU machine has jax and the CUDA driver but not mlax's MLIR wheels, and at most 64 MiB
travels, so ``prepare`` writes for each program below its GPU artifact (``<name>.mlaxgpu``:
PTX kernels and a launch plan, backends/gpu/artifact.py), the results mlax's CPU backend
computes (``<name>.expected.npz``: whole arrays up to 1 MiB, a fixed random sample of 65536
elements of larger ones; bfloat16 as float32) and ``manifest.json`` (input shapes and dtypes,
tolerances, and the programs the GPU backend refuses, with its reason); it copies this script
and the loader (backends/gpu/loader.py) next to them (3.8 MiB in all at full size). Inputs are
drawn from a seed on both sides, so none travel. ``run`` loads each artifact with the loader
(the standard library and NumPy only), checks its results against the CPU backend's and
against the same program in jax on the same GPU, and times both (median of repeated calls on
device-resident inputs: the plan's launches plus a context synchronization for mlax, a jitted
call and ``block_until_ready`` for jax), printing a table of time ratios (mlax / jax).

Each program is written once against a namespace ``m`` (``m.numpy``, ``m.lax``, ``m.grad``)
that is mlax for ``prepare`` and jax for ``run``. ``prepare`` is handed the front end (a backend
imports no layer above it), which tools/device_check.py, the command line, does.
"""

from __future__ import annotations

import argparse
import importlib.util
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

SAMPLE = 65536  # elements kept of a result over WHOLE bytes
WHOLE = 1 << 20
BUDGET = 64 << 20  # what may travel to the GPU machine


Shapes = list[tuple[int, ...]]
_MLP = [(784, 512), (512,), (512, 10), (10,), (256, 784)]
_MLP_SMALL = [(24, 16), (16,), (16, 5), (5,), (8, 24)]
# name -> (program, input shapes, --small input shapes, dtype, rtol against the CPU, against jax).
# f32 dots run in TF32 on the GPU, in jax (its default precision) as in mlax (mlax-gpu-matmul),
# hence their tolerances against jax and against the CPU's f32 products.
PROGRAMS: dict[str, tuple[Callable[..., Any], Shapes, Shapes, str, float, float]] = {
    "elementwise": (programs.elementwise, [(4096, 4096)], [(37, 53)], "float32", 1e-5, 2e-5),
    "softmax": (programs.softmax, [(4096, 4096)], [(16, 100)], "float32", 1e-5, 2e-5),
    "matmul_f32": (programs.matmul, [(4096, 4096)] * 2, [(33, 20), (20, 17)], "float32", 5e-3, 2e-2),
    "matmul_bf16": (programs.matmul, [(4096, 4096)] * 2, [(33, 20), (20, 17)], "bfloat16", 2e-2, 2e-2),
    "mlp": (programs.mlp, _MLP, _MLP_SMALL, "float32", 5e-3, 2e-2),
    "mlp_step": (programs.mlp_step, [*_MLP, (256, 10)], [*_MLP_SMALL, (8, 5)], "float32", 5e-3, 2e-2),
    "scan": (programs.scan, [(16, 128), (50, 16, 128), (128, 128), (128, 128)],
             [(2, 8), (3, 2, 8), (8, 8), (8, 8)], "float32", 1e-4, 2e-2),
}


def _dtype(name: str) -> np.dtype:
    try:
        return np.dtype(name)
    except TypeError:
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))


def inputs(name: str, shapes: Shapes, dtype: str) -> list[np.ndarray]:
    """The program's inputs, the same on both machines (NumPy's generator, a seed per name)."""
    rng = np.random.default_rng(sorted(PROGRAMS).index(name))
    return [(rng.normal(size=s) / np.sqrt(s[-1])).astype(np.float32).astype(_dtype(dtype)) for s in shapes]


def _kept(results: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Whole results up to WHOLE bytes; of a larger one SAMPLE elements and their flat indices."""
    kept: dict[str, np.ndarray] = {}
    for i, result in enumerate(results):
        if result.dtype.kind == "V":  # bfloat16 (ml_dtypes): npz files keep only its bytes
            result = result.astype(np.float32)
        if result.nbytes <= WHOLE:
            kept[f"out{i}"] = result
        else:
            where = np.sort(np.random.default_rng(i).choice(result.size, SAMPLE, replace=False))
            kept[f"out{i}"], kept[f"idx{i}"] = result.reshape(-1)[where], where
    return kept


def prepare(folder: Path, front: ModuleType, small: bool = False) -> dict[str, Any]:
    """Write every program's artifact, expected results and the manifest into ``folder``;
    ``front`` is the front end (``mlax``) whose jit compiles the programs."""
    from mlax.backends.gpu import loader as gpu_loader
    from mlax.backends.gpu.artifact import export_gpu

    folder.mkdir(parents=True, exist_ok=True)
    m = SimpleNamespace(numpy=front.numpy, lax=front.lax, grad=front.grad)
    manifest: dict[str, Any] = {"small": small, "programs": {}}
    for name, (program, shapes, small_shapes, dtype, rtol_cpu, rtol_jax) in PROGRAMS.items():
        shapes = small_shapes if small else shapes
        entry: dict[str, Any] = {"inputs": [list(s) for s in shapes], "dtype": dtype,
                                 "rtol_cpu": rtol_cpu, "rtol_jax": rtol_jax}
        manifest["programs"][name] = entry
        args = inputs(name, shapes, dtype)
        f = lambda *a, program=program: program(m, *a)  # noqa: E731
        start = time.perf_counter()
        try:
            artifact = export_gpu(front.jit(f, backend="gpu").lower(*args))
        except NotImplementedError as error:  # listed as refused, not dropped
            entry["refused"] = str(error).splitlines()[-1]
            print(f"{name}: refused by the GPU backend: {entry['refused']}")
            continue
        entry["compile_s"] = round(time.perf_counter() - start, 3)
        artifact.write(folder / f"{name}.mlaxgpu")
        expected = programs.leaves(front.jit(f, backend="cpu")(*args))
        np.savez(folder / f"{name}.expected.npz", **_kept(expected))
        entry["outputs"] = [[list(r.shape), r.dtype.name] for r in expected]
        entry["kernels"] = sum(s["op"] == "launch" for s in gpu_loader.all_steps(artifact.plan["steps"]))
        print(f"{name}: {entry['kernels']} kernel launches, compiled in {entry['compile_s']} s")
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))
    shutil.copy(gpu_loader.__file__, folder / "gpu_loader.py")
    shutil.copy(__file__, folder / "gpu_device_check.py")
    shutil.copy(programs.__file__, folder / "device_programs.py")
    total = sum(p.stat().st_size for p in folder.iterdir())
    if total > BUDGET:
        raise RuntimeError(f"{folder} holds {total >> 20} MiB, more than the {BUDGET >> 20} MiB "
                           "that may travel")
    print(f"{folder}: {total / 2**20:.1f} MiB")
    return manifest


def _loader(folder: Path) -> ModuleType:
    """The loader copied into ``folder`` by prepare (no mlax import anywhere)."""
    spec = importlib.util.spec_from_file_location("gpu_loader", folder / "gpu_loader.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _error(got: np.ndarray, want: np.ndarray, rtol: float) -> str | None:
    scale = max(float(np.max(np.abs(want.astype(np.float64)))) if want.size else 0.0, 1.0)
    error = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if want.size else 0.0
    return f"max error {error:.3g} > {rtol} x {scale:.3g}" if error > rtol * scale else None


def _check(got: list[np.ndarray], expected: dict[str, np.ndarray], jax_results: list[np.ndarray],
           entry: dict[str, Any]) -> list[str]:
    """What differs: types against the manifest, values against the CPU's (sampled) results and
    against jax's."""
    if [[list(g.shape), g.dtype.name] for g in got] != entry["outputs"]:
        return [f"results {[f'{g.dtype}{list(g.shape)}' for g in got]}, expected {entry['outputs']}"]
    problems = []
    for i, (g, j) in enumerate(zip(got, jax_results, strict=True)):
        index = expected.get(f"idx{i}")
        sampled = g if index is None else g.reshape(-1)[index]
        for against, mine, want, rtol in (
                ("the CPU backend", sampled, expected[f"out{i}"], entry["rtol_cpu"]),
                ("jax", g, j, entry["rtol_jax"])):
            problem = _error(mine, want, rtol)
            if problem:
                problems.append(f"result {i} against {against}: {problem}")
    return problems


def _run_one(folder: Path, loader: ModuleType, name: str, entry: dict[str, Any],
             repeats: int) -> dict[str, Any]:
    """Load, check and time one prepared program against jax's version on the same device."""
    import jax

    program_fn, _, _, dtype, _, _ = PROGRAMS[name]
    args = inputs(name, [tuple(s) for s in entry["inputs"]], dtype)
    start = time.perf_counter()
    program = loader.GpuProgram(folder / f"{name}.mlaxgpu")
    load_s = time.perf_counter() - start
    try:
        program.upload(*args)

        def mlax_call() -> None:
            program.launch()
            program.synchronize()

        mlax_call()
        got = program.download()
        m = SimpleNamespace(numpy=jax.numpy, lax=jax.lax, grad=jax.grad)
        jitted = jax.jit(lambda *a: program_fn(m, *a))
        device_args = [jax.device_put(a) for a in args]
        results = jax.block_until_ready(jitted(*device_args))
        reference = [np.asarray(x) for x in jax.tree_util.tree_leaves(results)]
        expected_file = np.load(folder / f"{name}.expected.npz")
        problems = _check(got, {k: expected_file[k] for k in expected_file.files}, reference, entry)
        mlax_s = programs.median_seconds(mlax_call, repeats)
        jax_s = programs.median_seconds(lambda: jax.block_until_ready(jitted(*device_args)), repeats)
    finally:
        program.close()
    return {"ok": not problems, "problems": problems, "load_s": round(load_s, 4),
            "mlax_us": round(mlax_s * 1e6, 1), "jax_us": round(jax_s * 1e6, 1),
            "ratio": round(mlax_s / jax_s, 3)}


def run(folder: Path, out: Path | None = None, repeats: int = 20) -> dict[str, Any]:
    """Check and time every prepared program; list the refused ones."""
    import jax

    loader = _loader(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    device = jax.devices()[0]
    report: dict[str, Any] = {"device": str(device), "platform": device.platform, "jax": jax.__version__,
                              "small": manifest["small"], "programs": {}}
    print(f"{'program':12s} {'':8s} {'mlax us':>10s} {'jax us':>10s} {'ratio':>6s}")
    for name, entry in manifest["programs"].items():
        if "refused" in entry:
            row = {"ok": False, "refused": entry["refused"], "problems": []}
        else:
            try:
                row = _run_one(folder, loader, name, entry, repeats)
            except Exception as error:  # one program's failure must not hide the others' figures
                row = {"ok": False, "problems": [f"{type(error).__name__}: {error}"]}
        report["programs"][name] = row
        state = "REFUSED" if "refused" in row else "ok" if row["ok"] else "BAD"
        figures = (f"{row['mlax_us']:10.1f} {row['jax_us']:10.1f} {row['ratio']:6.2f}" if "ratio" in row
                   else f"{'':28s}")
        print(f"{name:12s} {state:8s} {figures}  {row.get('refused', '; '.join(row['problems']))}")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / "gpu_device_check.json").write_text(json.dumps(report, indent=2))
    return report


def main(argv: list[str] | None = None, front: ModuleType | None = None) -> int:
    """The command line; ``prepare`` needs ``front`` (tools/device_check.py passes mlax)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("prepare", "run"))
    parser.add_argument("folder", type=Path, help="where the artifacts are written / read")
    parser.add_argument("out", type=Path, nargs="?", help="run: where the JSON report goes")
    parser.add_argument("--small", action="store_true", help="prepare: small inputs (tests)")
    parser.add_argument("--repeats", type=int, default=20, help="run: timed calls per program")
    args = parser.parse_args(argv)
    if args.mode == "prepare":
        if front is None:
            parser.error("prepare compiles with mlax: python -m mlax.tools.device_check gpu prepare DIR")
        prepare(args.folder, front, args.small)
        return 0
    report = run(args.folder, args.out, args.repeats)
    return 0 if all(p["ok"] for p in report["programs"].values() if "refused" not in p) else 1


if __name__ == "__main__":
    sys.exit(main())
