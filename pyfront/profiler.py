"""mlax.profiler: jax's profiler, which sees mlax's work as well as XLA's, and the native CPU
programs' kernels.

The profiler is the process's (jaxlib's TraceMe and its profiler session), not a tracing
transformation: an annotation is a context manager that records a host-side event only while
a trace is being collected (``start_trace``/``trace``) and costs a flag check otherwise. So
these are jax's own objects: the time of mlax's calls (tracing, compiling, running natively)
falls inside the annotations around them in TensorBoard or Perfetto, as jax's does.
``device_memory_profile`` reports the memory of XLA's devices: mlax's native CPU buffers are
host memory and not in it.

The native CPU backend's own kernels are what jax's profiler cannot see: while a trace runs
(``start_trace``/``trace``, or `kernel_profile`, or the whole process with ``MLAX_PROFILE=dir``)
each CPU program runs a variant of itself compiled with every kernel timed
(`mlax-profile-kernels`), and stopping writes ``mlax-kernels-*.trace.json`` (Perfetto,
chrome://tracing) and ``mlax-kernels-*.txt`` (where the time went, kernel by kernel, with the
user's source lines) into the log directory, beside jax's own trace. docs/profiling.md.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

from jax import profiler as _jax_profiler

from mlax.backends.cpu.kernel_events import recording
from mlax.kernel_report import KernelProfile

ProfileData = _jax_profiler.ProfileData
ProfileEvent = _jax_profiler.ProfileEvent
ProfileOptions = _jax_profiler.ProfileOptions
ProfilePlane = _jax_profiler.ProfilePlane
StepTraceAnnotation = _jax_profiler.StepTraceAnnotation
TraceAnnotation = _jax_profiler.TraceAnnotation
annotate_function = _jax_profiler.annotate_function
device_memory_profile = _jax_profiler.device_memory_profile
register_subprocess = _jax_profiler.register_subprocess
save_device_memory_profile = _jax_profiler.save_device_memory_profile
start_server = _jax_profiler.start_server
stop_server = _jax_profiler.stop_server

_TRACE_DIRS: list[str | os.PathLike] = []  # the open start_trace's log directory
_TRACE_LOCK = threading.Lock()


@contextlib.contextmanager
def kernel_profile() -> Iterator[KernelProfile]:
    """Record the native CPU kernels run inside: the `KernelProfile` it yields is filled on
    exit (``.table()``, ``.chrome_trace()``, ``.save(dir)``)."""
    profile = KernelProfile()
    recording.start()
    try:
        yield profile
    finally:
        profile.calls = recording.stop()


def start_trace(log_dir: str | os.PathLike, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False, profiler_options: Any = None) -> None:
    """jax's ``start_trace``, recording the native CPU kernels too."""
    with _TRACE_LOCK:
        _jax_profiler.start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
        _TRACE_DIRS.append(log_dir)
        recording.start()


def stop_trace() -> None:
    """jax's ``stop_trace``; the native kernels recorded go beside jax's trace in its log_dir."""
    with _TRACE_LOCK:
        _jax_profiler.stop_trace()
        calls = recording.stop()
        log_dir = _TRACE_DIRS.pop()
    if calls:
        KernelProfile(calls).save(log_dir)


@contextlib.contextmanager
def trace(log_dir: str | os.PathLike, create_perfetto_link: bool = False, create_perfetto_trace: bool = False,
          profiler_options: Any = None) -> Iterator[None]:
    """jax's ``trace`` context manager, recording the native CPU kernels too."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


def profile_process(log_dir: str | os.PathLike) -> None:
    """Record the native CPU kernels of the whole process, saved into ``log_dir`` at exit
    (``MLAX_PROFILE=log_dir``)."""
    recording.start()
    atexit.register(lambda: KernelProfile(recording.stop()).save(log_dir))

__all__ = ["KernelProfile", "ProfileData", "ProfileEvent", "ProfileOptions", "ProfilePlane",
           "StepTraceAnnotation", "TraceAnnotation", "annotate_function", "device_memory_profile",
           "kernel_profile", "profile_process", "register_subprocess", "save_device_memory_profile",
           "start_server", "start_trace", "stop_server", "stop_trace", "trace"]
