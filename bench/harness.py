"""What bench/run.py, bench/train.py and the library benches share: timing, the machine line, the loaded mode
(one busy process pinned to one core) and the peak-memory probe.

Kept in one place so that both suites time, load and describe the machine the same way.
"""

from __future__ import annotations

import ctypes
import gc
import importlib.util
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def block(x: Any) -> Any:
    """Waits for every array in ``x`` (a pytree of mlax or jax arrays) and returns it."""
    import jax

    return jax.block_until_ready(x)


def time_call(f: Callable[..., Any], args: tuple[Any, ...]) -> float:
    """Seconds for one call of ``f(*args)`` until its results are ready; the results are dropped."""
    start = time.perf_counter()
    block(f(*args))
    return time.perf_counter() - start


def median_time(f: Callable[..., Any], args: tuple[Any, ...], repeats: int) -> float:
    """Median of ``repeats`` timed calls (the caller warms ``f`` up first)."""
    return statistics.median(time_call(f, args) for _ in range(repeats))


def format_seconds(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"


def library_row(name: str, systems: dict[str, Callable[..., Any]], args: tuple[Any, ...], repeats: int,
                check: Callable[[Any, Any], None]) -> str:
    """One line of a library bench (bench/linalg.py, bench/fft.py): each system's median time
    after ``check(its result, jax's)``, then mlax/jax, mlax/numpy and mlax xla/jax."""
    expected = systems["jax"](*args)
    times = {}
    for system, fn in systems.items():
        check(fn(*args), expected)
        times[system] = median_time(fn, args, repeats)
    cells = ", ".join(f"{system} {format_seconds(t)}" for system, t in times.items())
    return (f"{name}: {cells}; mlax/jax {times['mlax'] / times['jax']:.2f}, "
            f"mlax/numpy {times['mlax'] / times['numpy']:.2f}, "
            f"mlax xla/jax {times['mlax xla'] / times['jax']:.2f}")


def cpu_model() -> str:
    """The CPU's model name and widest vector extension, from /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo") as info:
            lines = info.read().splitlines()
    except OSError:
        return platform.processor() or platform.machine()
    model = next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), "?")
    flags = next((line.split(":", 1)[1].split() for line in lines if line.startswith("flags")), [])
    vectors = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "no AVX2"
    return f"{model} ({vectors})"


def machine_line() -> str:
    import jax

    return f"machine: {cpu_model()}, {os.cpu_count()} cores; jax {jax.__version__}"


def load_example(name: str) -> Any:
    """examples/<name>.py as a module (the benches reuse the examples' models, not copies)."""
    if str(_EXAMPLES) not in sys.path:  # the examples import their shared `training` module
        sys.path.insert(0, str(_EXAMPLES))
    spec = importlib.util.spec_from_file_location(name, _EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- loaded mode -------------------------------------------------------------------------------

_PR_SET_PDEATHSIG = 1
# the spinner: asks the kernel for SIGKILL (9) when its parent dies, then spins
_SPIN = f"import ctypes; ctypes.CDLL(None).prctl({_PR_SET_PDEATHSIG}, 9)\nwhile True: pass"


def die_with_parent() -> None:
    """Makes the kernel kill this process when its parent dies (a bench's worker subprocess must
    not outlive a killed bench on a shared machine)."""
    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


@contextmanager
def load(enabled: bool) -> Iterator[str]:
    """With ``enabled``, one pure spin loop pinned to the last core runs for the duration of the
    block (the benchmarked processes are not pinned): a machine where another job holds a core.
    Yields the line describing the mode. The spinner is killed on exit, exception or Ctrl-C, and
    by the kernel should this process die first (PR_SET_PDEATHSIG)."""
    already = f"1-minute load average {os.getloadavg()[0]:.2f} at start"  # other users of the machine
    if not enabled:
        yield f"mode: quiet (no load started by the bench; {already})"
        return
    core = max(os.sched_getaffinity(0))
    spinner = subprocess.Popen([sys.executable, "-c", _SPIN])
    try:
        os.sched_setaffinity(spinner.pid, {core})
        yield f"mode: loaded (one spinning process pinned to core {core}; {already})"
    finally:
        spinner.kill()
        spinner.wait()


# -- peak memory -------------------------------------------------------------------------------


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))


def start_peak() -> int:
    """Gives freed heap back to the kernel (gc, malloc_trim), resets this process's high-water
    mark (VmHWM, by writing 5 to /proc/self/clear_refs) and returns the resident size in bytes:
    the baseline that ``peak_since`` measures from."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: freed pages may stay resident in the baseline
        pass
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")
    return _status_kb("VmRSS") * 1024


def peak_since(baseline: int) -> int:
    """Bytes by which the high-water resident size rose above ``baseline`` since ``start_peak``."""
    return _status_kb("VmHWM") * 1024 - baseline
