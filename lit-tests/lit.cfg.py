# lit configuration for mlax (`.venv/bin/lit -v lit-tests`, or `cmake --build build -t check-mlax`).
#
# Tools come from the Python environment lit runs in (sys.executable's venv): mlax-opt and
# mlax-run are its console scripts, mlir-opt ships in the `mlir` package, FileCheck and
# `not` in the `llvm` package. lit.site.cfg.py (written by CMake) may preset any of them.
# ruff: noqa: F821  (lit defines `config` and `lit_config` before running this file)

import os
import shutil
import sys
from pathlib import Path

import lit.formats
import llvm
import mlir

config.name = "mlax"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "lit.local.cfg"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = getattr(config, "mlax_test_exec_root", None) or config.test_source_root

repo = Path(config.test_source_root).parent
venv_bin = Path(sys.executable).parent
llvm_bin = Path(llvm.__path__[0]) / "bin"
mlir_bin = Path(mlir.__path__[0]) / "bin"
python = getattr(config, "python_executable", None) or sys.executable


def tool(name, module):
    """A console script of this environment, else `python -m` on its module."""
    preset = getattr(config, name.replace("-", "_"), None)
    if preset:
        return preset
    script = venv_bin / name
    return str(script) if script.exists() else f"{python} -m {module}"


config.environment["PATH"] = os.pathsep.join(
    [str(llvm_bin), str(venv_bin), config.environment.get("PATH", "")])
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"
# Keep one thread of work per tool: lit already runs tests in parallel.
config.environment["OMP_NUM_THREADS"] = "1"
# A pass that touches an op it erased (the Python bindings do not invalidate the other handles
# of an erased op: docs/passes.md, "Rewriting safely") reads freed memory, which crashed CI once
# in twenty runs under load. glibc makes that crash on every run: freed memory is filled with
# MALLOC_PERTURB_'s byte, and with the per-thread cache off every free is filled. Costs
# nothing measurable.
config.environment["MALLOC_PERTURB_"] = "165"
config.environment["GLIBC_TUNABLES"] = ":".join(
    t for t in (os.environ.get("GLIBC_TUNABLES"), "glibc.malloc.tcache_count=0") if t)

mlax_opt = tool("mlax-opt", "mlax.tools.mlax_opt")
config.substitutions += [
    # Print, then parse the printed form again: what comes out must read back in.
    ("%mlax-roundtrip", f"{mlax_opt} %s | {mlax_opt}"),
    ("%mlax-opt", mlax_opt),
    ("%mlax-run", tool("mlax-run", "mlax.tools.mlax_run")),
    ("%mlir-opt", getattr(config, "mlir_opt", None) or str(mlir_bin / "mlir-opt")),
    ("%mlir-translate", getattr(config, "mlir_translate", None) or str(mlir_bin / "mlir-translate")),
    ("%FileCheck", getattr(config, "filecheck", None) or shutil.which("FileCheck", path=str(llvm_bin))),
    ("%PYTHON", python),
    ("%irdl", str(repo / "dialect" / "mlax.irdl.mlir")),
]
