"""mlax.config: explicit options, read here and nowhere deeper, and jax's config context managers.

Two kinds of option, by where their rule lives:

- Options whose rules mlax takes from jax ARE jax's own (read and written through):
  ``jax_enable_x64`` (``x64``) and ``jax_numpy_dtype_promotion`` -- mlax promotes dtypes with
  jax's lattice, which reads them, so the two can never disagree -- and ``jax_platforms``,
  ``jax_num_cpu_devices``, ``jax_cpu_collectives_implementation``, ``jax_use_shardy_partitioner``
  (the XLA backend's devices and partitioner are jax's). ``mlax.enable_x64`` and
  ``mlax.numpy_dtype_promotion`` are jax's context managers themselves.
- Options about mlax's own execution are mlax's (`State`, thread-local as jax's config states):
  ``jax_disable_jit``, ``jax_debug_nans``, ``jax_debug_infs``, ``jax_default_matmul_precision``,
  ``jax_numpy_rank_promotion``. They never change what the real jax does in the same process
  (mlax's XLA backend itself calls ``jax.jit``). Their environment variables (``JAX_DEBUG_NANS``,
  ...) are read once, at import, as jax reads them.

mlax's own settings: ``backend`` (default jit backend), ``dump_dir``, the cache bounds, and the
CPU backend's persistent compilation cache (``compilation_cache_dir``, also under jax's name
``jax_compilation_cache_dir``; runtime/disk_cache.py).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import jax
import numpy as np

T = TypeVar("T")
_NO_DEFAULT: Any = object()

_ALIASES = {"jax_enable_x64": "x64", "enable_x64": "x64", "mlax_enable_x64": "x64",
            "jax_platform_name": "backend",
            # jax's names of the persistent cache's options (mlax's cache is the CPU backend's own)
            "jax_compilation_cache_dir": "compilation_cache_dir",
            "jax_compilation_cache_max_size": "compilation_cache_max_size"}
# jax's options mlax reads through jax.config (see the module docstring). The device options
# are jax's backend's (mlax's devices are jax's): the number of host devices (before first use,
# else jax's RuntimeError), the CPU collectives of several processes, the partitioner.
_FORWARDED = ("jax_numpy_dtype_promotion", "jax_platforms", "jax_num_cpu_devices",
              "jax_cpu_collectives_implementation", "jax_use_shardy_partitioner")
_MATMUL_PRECISIONS = (
    "default", "high", "highest", "bfloat16", "tensorfloat32", "float32", "ANY_F8_ANY_F8_F32",
    "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16",
    "F16_F16_F32", "BF16_BF16_BF16", "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6",
    "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64",
)


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


def _cache_dir(name: str, value: Any) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str | os.PathLike):
        raise ValueError(f"mlax config option {name!r} must be a path or None, got {value!r}")
    return os.fspath(value)


def _cache_max_size(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < -1:
        raise ValueError(f"mlax config option {name!r} must be an int: a size in bytes, 0 (no cache) or "
                         f"-1 (no limit), got {value!r}")
    return value


def _env_bool(name: str, default: bool) -> bool:
    """jax's reading of a boolean environment variable (``JAX_DEBUG_NANS=1``)."""
    value = os.environ.get(name, str(default)).lower()
    if value in ("y", "yes", "t", "true", "on", "1"):
        return True
    if value in ("n", "no", "f", "false", "off", "0"):
        return False
    raise ValueError(f"invalid truth value {value!r} for environment {name!r}")


class State(Generic[T]):
    """One option as jax's config states are: a process-wide value (``config.update``) that
    ``with state(value):`` overrides in the calling thread only, restoring it on exit (on an
    exception too); ``state.value`` reads it. Also usable as a decorator: ``@state(value)``."""

    def __init__(self, name: str, default: T, parser: Callable[[Any], T], help: str,
                 marks: _Mark | None = None) -> None:
        self.name = name
        self.__name__ = name.removeprefix("jax_")
        self.__doc__ = f"Context manager for `{name}` config option.\n\n{help}"
        self._parser = parser
        self._marks = marks
        self._local = _Override()
        self._set(default)

    @property
    def value(self) -> T:
        value = self._local.value
        return self._global if value is _NO_DEFAULT else value

    def _set(self, value: Any) -> None:
        self._global = self._parser(value)
        self._mark(self._global)

    def _mark(self, value: Any) -> None:
        if value and self._marks is not None:
            self._marks.on = True

    def __call__(self, new_val: Any = _NO_DEFAULT) -> _StateContext:
        return _StateContext(self, new_val)

    def __bool__(self) -> bool:
        raise TypeError(f"bool() not supported for instances of type '{type(self).__name__}' "
                        f"(did you mean to use '{type(self).__name__}.value' instead?)")

    def __repr__(self) -> str:
        return f"<mlax config state {self.name}={self.value!r}>"


class _Mark:
    """Set once any of its States is turned on, in any thread, and never cleared: jit's call
    reads one attribute to skip the per-thread reads of options no one has used."""

    on = False


jit_call_options_used = _Mark()  # disable_jit, debug_nans, debug_infs


class _Override(threading.local):
    """One thread's override of a State; the class attribute (none) makes reading it cheap
    in threads that never set one (jit reads two States on every call)."""

    value: Any = _NO_DEFAULT


class _StateContext:
    """``with state(value):`` -- the thread's previous override (or none) comes back on exit."""

    def __init__(self, state: State[Any], new_val: Any) -> None:
        if new_val is _NO_DEFAULT:
            if state._parser is not _parse_bool:
                raise TypeError(f"Context manager for {state.__name__} config option requires an argument "
                                "representing the new value for the config option.")
            new_val = True
        self.state = state
        self.new_val = state._parser(new_val)
        self._saved: list[Any] = []

    def __enter__(self) -> None:
        self._saved.append(self.state._local.value)
        self.state._local.value = self.new_val
        self.state._mark(self.new_val)

    def __exit__(self, *exc: Any) -> None:
        self.state._local.value = self._saved.pop()

    def __call__(self, func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with _StateContext(self.state, self.new_val):
                return func(*args, **kwargs)
        return wrapper


def _parse_bool(value: Any) -> bool:
    return bool(value)


def _enum_parser(values: Sequence[str], optional: bool = False) -> Callable[[Any], Any]:
    """jax's check of an enum option's value (None allowed when ``optional``)."""
    def parse(value: Any) -> Any:
        if optional and value is None:
            return None
        if type(value) is not str or value not in values:
            allowed = "None or in " if optional else "in "
            raise ValueError(f"new enum value must be {allowed}{list(values)}, got {value} of type "
                             f"{type(value)}.")
        return value
    return parse


def _parse_rank_promotion(value: Any) -> str:
    value = _enum_parser(("allow", "warn", "raise"))(value)
    if value != "allow":
        raise NotImplementedError(f"jax_numpy_rank_promotion={value!r} is not implemented in mlax: mlax "
                                  "always broadcasts arrays of different ranks, as jax's default 'allow'")
    return value


def _bool_state(name: str, help: str) -> State[bool]:
    return State(name, _env_bool(name.upper(), False), _parse_bool, help, jit_call_options_used)


disable_jit_state = _bool_state("jax_disable_jit", "Disable JIT compilation and just call original Python.")
debug_nans = _bool_state(
    "jax_debug_nans", "Add nan checks to every operation. When a nan is detected on the output of a jit-"
    "compiled computation, call into the un-compiled version in an attempt to more precisely identify the "
    "operation which produced the nan.")
debug_infs = _bool_state(
    "jax_debug_infs", "Add inf checks to every operation. When an inf is detected on the output of a jit-"
    "compiled computation, call into the un-compiled version in an attempt to more precisely identify the "
    "operation which produced the inf.")
default_matmul_precision = State(
    "jax_default_matmul_precision", os.environ.get("JAX_DEFAULT_MATMUL_PRECISION"),
    _enum_parser(_MATMUL_PRECISIONS, optional=True),
    "Control the default matmul and conv precision for 32bit inputs: the precision of every dot_general "
    "and convolution traced with precision=None (the CPU backend computes exactly whatever it says, as "
    "XLA:CPU; dot algorithm names are refused).")
numpy_rank_promotion = State(
    "jax_numpy_rank_promotion", os.environ.get("JAX_NUMPY_RANK_PROMOTION", "allow"), _parse_rank_promotion,
    'Control NumPy-style automatic rank promotion broadcasting ("allow", "warn", or "raise"). mlax '
    'implements "allow" only.')
compile_time_eval_state = State("mlax_compile_time_eval", False, _parse_bool,
                                "Evaluate ops with concrete operands, even those with none, at trace time.")
_STATES: dict[str, State[Any]] = {s.name: s for s in (disable_jit_state, debug_nans, debug_infs,
                                                      default_matmul_precision, numpy_rank_promotion)}

enable_x64 = jax.enable_x64
numpy_dtype_promotion = jax.numpy_dtype_promotion


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Inside, functions decorated with `mlax.jit` run their Python body op by op on concrete
    values (prints and Python control flow see the numbers), as ``jax.disable_jit``. mlax's
    transformations (grad, vmap, control flow) are IR passes and still trace what they
    transform; only jits of user code (and of libraries) are disabled."""
    with disable_jit_state(disable):
        yield


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Inside a trace, ops whose operands are all concrete -- also those with no operands
    (iota: ``jnp.arange``) -- are evaluated at trace time and give concrete arrays, usable in
    Python control flow; ops on traced values are still traced (as ``jax.ensure_compile_time_eval``)."""
    with compile_time_eval_state(True):
        yield


def checks_enabled() -> bool:
    """Whether debug_nans or debug_infs asks for checks of computed values in this thread."""
    return debug_nans.value or debug_infs.value


def invalid_kind(arrays: Sequence[Any]) -> str | None:
    """``"nan"`` or ``"inf"`` if a floating-point array of ``arrays`` has one that debug_nans /
    debug_infs forbids (nan checked first, as jax), else None."""
    floats = [np.asarray(a) for a in arrays if np.issubdtype(getattr(a, "dtype", np.int32), np.inexact)]
    if debug_nans.value and any(np.isnan(a).any() for a in floats):
        return "nan"
    if debug_infs.value and any(np.isinf(a).any() for a in floats):
        return "inf"
    return None


def check_values(name: str, arrays: Sequence[Any]) -> None:
    """jax's eager check: ``FloatingPointError: invalid value (nan) encountered in log``."""
    kind = invalid_kind(arrays)
    if kind is not None:
        raise FloatingPointError(f"invalid value ({kind}) encountered in {name}")


class UnknownOptionError(AttributeError, ValueError):
    """An option neither mlax nor jax's names know: an AttributeError as jax raises (and a
    ValueError, as mlax raised before it took jax's names)."""


_CONTEXT_READ = ("For flags with a corresponding contextmanager, read their value via e.g. `config.{0}` "
                 "rather than `config.FLAGS.{0}`.")


class Config:
    """Options: ``x64`` (bool, jax's ``jax_enable_x64``), ``backend`` (default jit backend),
    ``dump_dir``, the cache bounds (LRU sizes, as JAX bounds its caches: ``jit_cache_size`` traced
    signatures kept per jitted function, ``MLAX_JIT_CACHE_SIZE``; ``compile_cache_size`` compiled
    programs kept by each backend in the whole process, ``MLAX_COMPILE_CACHE_SIZE``), the CPU
    backend's persistent compilation cache (``compilation_cache_dir``, a directory or None,
    ``MLAX_COMPILATION_CACHE_DIR``; ``compilation_cache_max_size``, bytes, 0 for no cache and -1
    for no limit, ``MLAX_COMPILATION_CACHE_MAX_SIZE``, 1 GiB by default; also under jax's names
    ``jax_compilation_cache_dir`` and ``jax_compilation_cache_max_size``), and jax's names of the
    options above (``config.jax_debug_nans``, ``config.update("jax_disable_jit", True)``)."""

    def __init__(self) -> None:
        self._values: dict[str, Any] = {
            "backend": os.environ.get("MLAX_BACKEND", "cpu"),
            "dump_dir": os.environ.get("MLAX_DUMP_DIR") or None,
            "jit_cache_size": _env_int("MLAX_JIT_CACHE_SIZE", 512),
            "compile_cache_size": _env_int("MLAX_COMPILE_CACHE_SIZE", 256),
            "compilation_cache_dir": os.environ.get("MLAX_COMPILATION_CACHE_DIR") or None,
            "compilation_cache_max_size": _cache_max_size(
                "MLAX_COMPILATION_CACHE_MAX_SIZE", _env_int("MLAX_COMPILATION_CACHE_MAX_SIZE", 1 << 30)),
        }
        if os.environ.get("MLAX_ENABLE_X64", "0").lower() not in ("0", "", "false"):
            jax.config.update("jax_enable_x64", True)

    def _unknown(self, name: str) -> UnknownOptionError:
        known = sorted([*self._values, "x64", "jax_enable_x64", *_STATES, *_FORWARDED])
        return UnknownOptionError(f"Unrecognized config option: {name} (unknown mlax config option; "
                                  f"known: {known})")

    def update(self, name: str, value: Any) -> None:
        key = _ALIASES.get(name, name)
        if key == "x64":
            jax.config.update("jax_enable_x64", bool(value))
        elif key in _STATES:
            _STATES[key]._set(value)
        elif key in _FORWARDED:
            jax.config.update(key, value)
        elif key not in self._values:
            raise self._unknown(name)
        elif key.endswith("_cache_size") and (not isinstance(value, int) or value < 1):
            raise ValueError(f"mlax config option {name!r} must be a positive int, got {value!r}")
        elif key == "compilation_cache_dir":
            self._values[key] = _cache_dir(name, value)
        elif key == "compilation_cache_max_size":
            self._values[key] = _cache_max_size(name, value)
        else:
            self._values[key] = value

    def read(self, name: str) -> Any:
        """An option's value, as ``jax.config.read``: options with a context manager are read as
        attributes instead (``config.jax_debug_nans``), as jax insists."""
        key = _ALIASES.get(name, name)
        if key in _STATES or key in _FORWARDED:
            raise AttributeError(_CONTEXT_READ.format(name))
        if key != "x64" and key not in self._values:
            raise self._unknown(name)
        return getattr(self, key)

    def __getattr__(self, name: str) -> Any:
        key = _ALIASES.get(name, name)
        if key == "x64":
            return self.x64_enabled
        state = _STATES.get(key)
        if state is not None:
            return state.value
        if key in _FORWARDED:
            return getattr(jax.config, key)
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(f"'Config' object has no attribute {name!r}") from None

    @property
    def x64_enabled(self) -> bool:
        return bool(jax.config.jax_enable_x64)

    def trace_context(self) -> tuple[Any, ...]:
        """The options a trace depends on, part of every jit cache key (as jax keys its jit
        cache): a function traced under one dtype mode is retraced under another."""
        return (enable_x64.value, numpy_dtype_promotion.value)


config = Config()
