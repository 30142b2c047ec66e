"""The native GPU backend on a machine without a GPU: every stage of `mlax-gpu-pipeline` lowers,
the PTX holds one entry per kernel, what the backend cannot run fails at the user's line, and
running says there is no driver. Tests that run kernels skip unless a CUDA driver is present."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import jax
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.backends.gpu import executable as gpu
from mlax.backends.gpu.pipeline import GpuPipeline
from tests.backends.gpu.conftest import needs_gpu
from tests.oracle import assert_same, random_array

HERE = Path(__file__).name


def _mlp(x, w1, w2):
    hidden = mlax.nn.relu(x @ w1 + 0.5)
    return mlax.nn.log_softmax(hidden @ w2, axis=-1)


def _loss(w1, x, w2):
    return (_mlp(x, w1, w2) ** 2).mean()


# name -> (function, argument shapes); float32 arguments of random values.
PROGRAMS: dict[str, tuple[Callable, tuple[tuple[int, ...], ...]]] = {
    "elementwise": (lambda x, y: mnp.tanh(x * y + 1.5) - mnp.exp(-x) * mnp.sqrt(mnp.abs(y)),
                    ((37, 53), (37, 53))),
    "row_reductions": (lambda x: (x.sum(axis=1), x.max(axis=1), x.min(axis=0)), ((37, 53),)),
    "softmax": (lambda x: mlax.nn.softmax(x, axis=-1), ((16, 100),)),
    "matmul": (lambda a, b: a @ b, ((33, 20), (20, 17))),
    "mlp_forward": (_mlp, ((16, 32), (32, 64), (64, 10))),
    "mlp_grad": (mlax.grad(_loss), ((32, 64), (16, 32), (64, 10))),
    "cumsum_sort": (lambda x: (mnp.cumsum(x, axis=1), mnp.sort(x, axis=0)), ((9, 13),)),
    "transpose_broadcast": (lambda x, b: mnp.transpose(x, (1, 0)) * b[:, None], ((7, 300), (300,))),
    "compare_select": (lambda x, y: (x < y, mnp.where(x > 0, x, y)), ((5, 40), (5, 40))),
}


def _arguments(rng: np.random.Generator, shapes: tuple[tuple[int, ...], ...]) -> list[np.ndarray]:
    return [random_array(rng, shape, np.float32) for shape in shapes]


def _kernels(text: str) -> list[str]:
    """The PTX of each gpu.binary of a ``binary`` stage."""
    return [m.group(1).replace("\\0A", "\n").replace("\\09", "\t")
            for m in re.finditer(r'assembly = "((?:[^"\\]|\\.)*)"', text)]


def _host(text: str) -> str:
    """The host part of a ``gpu`` stage (the text before its first gpu.module)."""
    return text.split("gpu.module @", 1)[0]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_stage_lowers(name: str, rng: np.random.Generator) -> None:
    f, shapes = PROGRAMS[name]
    lowered = mlax.jit(f, backend="gpu").lower(*_arguments(rng, shapes))
    assert lowered.STAGES == ("mlax", *GpuPipeline().stage_names)
    assert "linalg." in lowered.as_text("linalg")
    buffers = lowered.as_text("buffers", debug_info=False)
    assert "memref<" in buffers and "mlax_sgemm" not in buffers and "omp." not in buffers
    kernels = lowered.as_text("gpu", debug_info=False)
    count = kernels.count("gpu.module @")
    assert count >= 1 and _host(kernels).count("gpu.launch_func") == count
    assert not re.search(r"scf\.(parallel|for)|memref\.(load|store)|linalg\.", _host(kernels))
    assert "nvvm.read.ptx.sreg.tid.x" in lowered.as_text("nvvm", debug_info=False)
    ptx = _kernels(lowered.as_text("binary", debug_info=False))
    assert len(ptx) == count
    for text in ptx:
        assert ".target sm_90" in text and ".visible .entry" in text and ".extern" not in text
    assert any("ld.global" in text for text in ptx)


def test_elementwise_chain_is_one_coalesced_kernel(rng: np.random.Generator) -> None:
    f, shapes = PROGRAMS["elementwise"]
    text = mlax.jit(f, backend="gpu").lower(*_arguments(rng, shapes)).as_text("gpu", debug_info=False)
    assert text.count("gpu.module @") == 1
    # 53 contiguous columns on threadIdx.x (32 per block, 2 blocks), 37 rows on y (8 per block).
    assert "blocks in (%c2, %c5, %c1) threads in (%c32, %c8, %c1)" in text
    ptx = _kernels(mlax.jit(f, backend="gpu").lower(*_arguments(rng, shapes)).as_text("binary"))
    assert ptx[0].count("ld.global") == 2 and ptx[0].count("st.global") == 1


def test_stage_options_of_the_pipeline() -> None:
    from mlax.backends.gpu.pipeline import GpuPipeline
    from mlax.passes.registry import make_pass

    text = make_pass("mlax-gpu-pipeline", "to=nvvm chip=sm_80 features=+ptx70 block=64,4").elements_text()
    assert "parallel-loop-tile-sizes=64,4" in text and "chip=sm_80 features=+ptx70" in text
    assert "gpu-module-to-binary" not in text
    assert text.startswith(dict(GpuPipeline().stages)["linalg"])  # the CPU pipeline's linalg stage
    for bad, message in (("to=ptx", "option 'to' must be one of"), ("format=sass", "option 'format'"),
                         ("block=1,2,3,4", "1 to 3 positive sizes")):
        with pytest.raises(ValueError, match=message):
            make_pass("mlax-gpu-pipeline", bad).elements_text()


@pytest.mark.parametrize("name, f, message", [
    ("solve", lambda x: mnp.linalg.solve(x, x[:, :2]), "cannot call the library function @mlax_sgetrf"),
    ("eigh", lambda x: mnp.linalg.eigh(x + x.T)[0], r"cannot call the library function @mlax_ssyevd"),
    ("callback", lambda x: mlax.pure_callback(np.sin, x, x),
     "cannot call the library function @mlax_host_callback"),
    ("rem", lambda x: x % 1.5, "arith.remf .a floating-point remainder. needs CUDA's libdevice"),
])
def test_unsupported_ops_fail_at_the_users_line(name: str, f: Callable, message: str,
                                                rng: np.random.Generator) -> None:
    x = random_array(rng, (4, 4), np.float32)
    with pytest.raises(NotImplementedError, match=message) as info:
        mlax.jit(f, backend="gpu").lower(x).as_text("binary")
    text = str(info.value)
    assert re.search(rf"{HERE}:\d+:\d+: error: ", text), text
    assert 'use backend="cpu" or backend="xla"' in text


def test_grids_over_cudas_limits_are_refused() -> None:
    """600000 rows / 8 rows per block = 75000 blocks along y (CUDA allows 65535)."""
    tall = np.zeros((600_000, 2), np.float32)
    with pytest.raises(NotImplementedError, match="75000 blocks along y is over CUDA's limit of 65535"):
        mlax.jit(lambda x: x * 2, backend="gpu").lower(tall).as_text("gpu")
    assert "blocks in (%c1, %c62500, %c1)" in mlax.jit(lambda x: x * 2, backend="gpu").lower(
        tall[:500_000]).as_text("gpu")


def test_dump_dir_gets_every_pass(rng: np.random.Generator, tmp_path: Path) -> None:
    f, shapes = PROGRAMS["softmax"]
    mlax.config.update("dump_dir", str(tmp_path))
    try:
        mlax.jit(f, backend="gpu").lower(*_arguments(rng, shapes)).as_text("binary")
    finally:
        mlax.config.update("dump_dir", None)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names[0] == "lambda.00.input.mlir"
    assert any("gpu-kernel-outlining" in n for n in names)
    assert any("mlax-check-gpu-mapped" in n for n in names)
    assert names[-1].endswith("gpu-module-to-binary.mlir")
    assert ".target sm_90" in (tmp_path / names[-1]).read_text()


def test_gpu_names_the_native_backend() -> None:
    from mlax.backends.registry import available_backends, get_backend

    assert get_backend("gpu").name == "gpu" and "gpu" in available_backends()
    stages = r"available stages: \['mlax', 'linalg', 'buffers', 'gpu', 'nvvm', 'binary'\]"
    with pytest.raises(ValueError, match=stages):
        mlax.jit(lambda x: x + 1, backend="gpu").lower(np.ones(3, np.float32)).as_text("llvm")


@pytest.mark.skipif(gpu.cuda_driver() is not None, reason="a CUDA driver is present on this machine")
def test_running_without_a_driver_says_so(rng: np.random.Generator) -> None:
    x = random_array(rng, (5,), np.float32)
    f = mlax.jit(lambda x: x * 2, backend="gpu")
    with pytest.raises(RuntimeError, match=re.escape(gpu.NO_DRIVER)):
        f(x)
    with pytest.raises(RuntimeError, match=re.escape(gpu.NO_DRIVER)):
        f.lower(x).compile()


@needs_gpu
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_agree_with_the_cpu_backend(name: str, rng: np.random.Generator) -> None:
    f, shapes = PROGRAMS[name]
    arguments = _arguments(rng, shapes)
    expected = mlax.jit(f, backend="cpu")(*arguments)
    # f32 dots run on TF32 tensor cores (jax's GPU default): errors of ~1e-3 of the outputs' scale.
    scale = max(float(np.max(np.abs(leaf))) for leaf in jax.tree_util.tree_leaves(expected))
    tf32 = name.startswith(("matmul", "mlp"))
    assert_same(mlax.jit(f, backend="gpu")(*arguments), expected,
                rtol=1e-2 if tf32 else 2e-5, atol=1e-2 * scale if tf32 else 1e-6)


_RUN_WITH_FAKE_DRIVER = """
import numpy as np, mlax, mlax.numpy as mnp
x = np.arange(12, dtype=np.float32).reshape(3, 4)
np.testing.assert_array_equal(mlax.jit(lambda x: x, backend="gpu")(x), x)
tanh, sums = mlax.jit(lambda x: (mnp.tanh(x) * 2, x.sum(axis=1)), backend="gpu")(x)
assert (tanh.shape, tanh.dtype, sums.shape) == ((3, 4), np.float32, (3,))
print("ran")
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler to build the stand-in CUDA driver")
def test_run_path_with_a_stand_in_driver(tmp_path: Path) -> None:
    """The run path as far as a machine without a GPU goes: tests/backends/gpu/fake_libcuda.c stands in for
    libcuda.so.1 (host memory as device memory; modules and launches only recorded). Compiling
    loads each kernel's PTX, a call launches every kernel with its grid, and buffers travel to
    the "device" and back (an identity is a device copy). tests/backends/gpu/test_runtime.py has more."""
    library = tmp_path / "libcuda.so.1"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), "-Wl,-soname,libcuda.so.1",
                    str(Path(__file__).with_name("fake_libcuda.c"))], check=True)
    log = tmp_path / "cuda.log"
    env = {**os.environ, "LD_LIBRARY_PATH": str(tmp_path), "FAKE_CUDA_LOG": str(log)}
    result = subprocess.run([sys.executable, "-c", _RUN_WITH_FAKE_DRIVER], env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0 and result.stdout.strip() == "ran", result.stderr
    lines = log.read_text().splitlines()
    # tanh, then the row sum with its fill (4 lanes per row, 8 rows per block: mlax-gpu-row-kernels).
    assert sum(line.startswith("load ") for line in lines) == 2
    assert lines[-1] == "launch jit_lambda_kernel grid 1 1 1 block 4 8 1"
