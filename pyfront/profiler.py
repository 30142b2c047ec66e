"""mlax.profiler: jax's profiler, which sees mlax's work as well as XLA's.

The profiler is the process's (jaxlib's TraceMe and its profiler session), not a tracing
transformation: an annotation is a context manager that records a host-side event only while
a trace is being collected (``start_trace``/``trace``) and costs a flag check otherwise. So
these are jax's own objects: the time of mlax's calls (tracing, compiling, running natively)
falls inside the annotations around them in TensorBoard or Perfetto, as jax's does.
``device_memory_profile`` reports the memory of XLA's devices: mlax's native CPU buffers are
host memory and not in it.
"""

from __future__ import annotations

from jax import profiler as _jax_profiler

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
start_trace = _jax_profiler.start_trace
stop_server = _jax_profiler.stop_server
stop_trace = _jax_profiler.stop_trace
trace = _jax_profiler.trace

__all__ = ["ProfileData", "ProfileEvent", "ProfileOptions", "ProfilePlane", "StepTraceAnnotation",
           "TraceAnnotation", "annotate_function", "device_memory_profile", "register_subprocess",
           "save_device_memory_profile", "start_server", "start_trace", "stop_server", "stop_trace", "trace"]
