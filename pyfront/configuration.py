"""mlax.config: explicit options, read here and nowhere deeper, and jax's config context managers.

Every option jax 0.10.2 defines is accepted under jax's name, with jax's check of its value
and jax's error for a name jax does not know. Each is in one of four groups, by where its rule
lives:

- Options whose rules mlax takes from jax ARE jax's own (read and written through):
  ``jax_enable_x64`` (``x64``) and ``jax_numpy_dtype_promotion`` -- mlax promotes dtypes with
  jax's lattice, which reads them, so the two can never disagree -- and the options of jax's
  runtime, which mlax's devices and XLA backend are (platforms, devices, distributed set-up,
  logging, the XLA compiler's knobs), and the options whose context managers ``jax.X`` are
  passed through (log_compiles, transfer_guard, ...). ``mlax.enable_x64`` and
  ``mlax.numpy_dtype_promotion`` are jax's context managers themselves.
- Options about mlax's own execution are mlax's (`State`, thread-local as jax's config states):
  ``jax_disable_jit``, ``jax_debug_nans``, ``jax_debug_infs``, ``jax_default_matmul_precision``,
  ``jax_numpy_rank_promotion`` ("allow", "warn" or "raise", checked by mlax.numpy's broadcasting
  with jax's warning and error), ``jax_enable_custom_prng`` (PRNGKey, split and fold_in give typed
  keys), ``jax_default_prng_impl`` (the implementation of keys made without impl= and of raw
  keys: pyfront/random_impls.py). They never change what the real jax does in the same process
  (mlax's XLA backend itself calls ``jax.jit``). Their environment variables (``JAX_DEBUG_NANS``,
  ...) are read once, at import, as jax reads them.
- Options that change what jax computes in a way mlax does not (yet): ``_UNHONOURED`` below.
  Any value jax accepts is accepted and read back; a value other than the one mlax computes as
  warns (`UnhonouredOptionWarning`), once per option and value; so does entering the context
  manager with one (``mlax.debug_key_reuse(True)``: mlax does not check key reuse).
- The rest concern jax's own tracer, lowering and tooling (jaxprs, Pallas, export, shard_map's
  checks, ...): accepted, checked as jax checks them and read back; mlax has nothing they
  would change.

``parse_flags_with_absl`` and ``config_with_absl`` define absl flags for all of them, as jax's.

mlax's own settings: ``backend`` (default jit backend), ``dump_dir``, the cache bounds, and the
CPU backend's persistent compilation cache (``compilation_cache_dir``, also under jax's name
``jax_compilation_cache_dir``; ``jax_enable_compilation_cache`` False turns it off;
backends/cpu/disk_cache.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import os
import sys
import threading
import warnings
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
# else jax's RuntimeError), the CPU collectives of several processes, the partitioner; then the
# rest of jax's runtime (platforms, devices, distributed set-up, logging, XLA's compiler), and
# the options whose context managers `jax.X` are passed through (mlax.jax_modules).
_FORWARDED = frozenset("""
    jax_numpy_dtype_promotion jax_platforms jax_num_cpu_devices jax_cpu_collectives_implementation
    jax_use_shardy_partitioner
    jax_backend_target jax_xla_backend jax_cuda_visible_devices jax_rocm_visible_devices
    jax_oneapi_visible_devices jax_mock_gpu_topology mock_num_gpu_processes jax_pjrt_client_create_options
    jax_cpu_enable_async_dispatch jax_sort_devices_by_process_index jax_check_proxy_envs
    jax_cpu_get_global_topology_timeout_minutes jax_cpu_get_local_topology_timeout_minutes
    jax_cross_host_transfer_socket_address jax_cross_host_transfer_timeout_seconds
    jax_cross_host_transfer_transfer_size jax_cross_host_transport_addresses
    jax_force_dcn_cross_host_transfers
    jax_distributed_debug jax_enable_recoverability jax_enable_preemption_service
    jax_share_binary_between_hosts jax_share_binary_between_hosts_timeout_ms jax_thread_guard
    jax_logging_level jax_debug_log_modules jax_compiler_detailed_logging_min_ops
    jax_optimization_level jax_memory_fitting_level jax_exec_time_optimization_effort
    jax_memory_fitting_effort jax_compiler_enable_remat_pass jax_disable_most_optimizations
    jax_xla_profile_version jax_persistent_cache_enable_xla_caches
    jax_log_compiles jax_explain_cache_misses jax_check_tracer_leaks jax_enable_checks jax_default_device
    jax_transfer_guard jax_transfer_guard_device_to_device jax_transfer_guard_device_to_host
    jax_transfer_guard_host_to_device
""".split())
# jax's options that change what jax computes where mlax computes as under one value (jax's
# default unless said): name -> (that value, what mlax does instead). Others are accepted, with
# an UnhonouredOptionWarning.
_UNHONOURED: dict[str, tuple[Any, str]] = {
    "jax_threefry_partitionable": (True, "mlax.random computes jax's partitionable threefry bits"),
    "jax_random_seed_offset": (0, "mlax.random seeds keys with the seed as given"),
    "jax_legacy_prng_key": ("allow", "mlax.random accepts raw uint32 keys silently"),
    "jax_high_dynamic_range_gumbel": (False, "mlax.random.gumbel draws one sample per value"),
    "jax_debug_key_reuse": (False, "mlax does not check PRNG key reuse"),
    "jax_explicit_x64_dtypes": ("warn", "mlax canonicalizes explicit 64-bit dtypes as jax's default"),
    "jax_allow_f16_reductions": (True, "mlax reduces float16 and bfloat16 arrays"),
    "jax_check_static_indices": (False, "mlax does not bounds-check static indices"),
    "jax_error_checking_behavior_divide": ("ignore", "mlax does not raise on division by zero"),
    "jax_error_checking_behavior_nan": ("ignore", "mlax does not raise on NaNs (see jax_debug_nans)"),
    "jax_error_checking_behavior_oob": ("ignore", "mlax does not raise on out-of-bounds accesses"),
    "jax_no_tracing": (False, "mlax traces as usual"),
    "jax_no_execution": (False, "mlax executes as usual"),
}
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
        if self.state.name in _UNHONOURED:  # jax.debug_key_reuse(True): as config.update's warning
            _warn_unhonoured(self.state.name, self.new_val)
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
    "jax_numpy_rank_promotion", os.environ.get("JAX_NUMPY_RANK_PROMOTION", "allow"),
    _enum_parser(("allow", "warn", "raise")),
    'Control NumPy-style automatic rank promotion broadcasting ("allow", "warn", or "raise"): checked '
    "where mlax.numpy broadcasts the arguments of an elementwise function or operator called from "
    "outside mlax (mlax.numpy.util.check_rank_promotion), with jax's warning and ValueError.")
enable_custom_prng = _bool_state(
    "jax_enable_custom_prng", "Enables an internal upgrade that allows one to define custom pseudo-random "
    "number generator implementations: in mlax, PRNGKey, split and fold_in give typed key arrays (as "
    "jax.random.key does) where they would give raw uint32 keys.")
default_prng_impl = State(
    "jax_default_prng_impl", os.environ.get("JAX_DEFAULT_PRNG_IMPL", "threefry2x32"),
    _enum_parser(("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32")),  # jax's
    "Select the default PRNG implementation, used when one is not explicitly provided at seeding "
    "time: of mlax.random.key / PRNGKey without impl=, and of raw uint32 keys (rbg keys are made, split "
    "and folded, their random bits, from XLA's RngBitGenerator, are not computed; threefry4x32 and "
    "philox are refused: pyfront/random_impls.py).")
compile_time_eval_state = State("mlax_compile_time_eval", False, _parse_bool,
                                "Evaluate ops with concrete operands, even those with none, at trace time.")
_STATES: dict[str, State[Any]] = {s.name: s for s in (disable_jit_state, debug_nans, debug_infs,
                                                      default_matmul_precision, numpy_rank_promotion,
                                                      enable_custom_prng, default_prng_impl)}

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
    """An option neither mlax nor jax knows, with jax's message: an AttributeError as jax raises
    (and a ValueError, as mlax raised before it took jax's names)."""


class UnhonouredOptionWarning(UserWarning):
    """A jax option set to a value that changes what jax computes in a way mlax does not
    (``_UNHONOURED``): the value is kept and read back, mlax computes as before."""


@dataclasses.dataclass(frozen=True)
class JaxOption:
    """One of jax's options as jax defines it: whether it is a context-manager state (read as an
    attribute only, never through ``config.read``), jax's check of a new value (None for plain
    absl flags, which jax does not check on update), its value when mlax was imported (jax read
    its environment variable), and the absl flag ``config_with_absl`` defines for it."""

    name: str
    is_state: bool
    parser: Callable[[Any], Any] | None
    default: Any
    flag_type: Any
    flag_args: Sequence[Any]
    flag_kwargs: dict[str, Any]


def jax_options() -> dict[str, JaxOption]:
    """Every option of jax's config, read from jax's private ``Config._value_holders``, ``meta``
    and ``_contextmanager_flags`` -- the one place mlax reads them
    (tests/frontend/test_config_surface.py pins what is read)."""
    real = jax.config
    options = {}
    for name, holder in real._value_holders.items():
        flag_type, args, kwargs = real.meta[name]
        options[name] = JaxOption(name, name in real._contextmanager_flags, getattr(holder, "_parser", None),
                                  holder.value, flag_type, args, kwargs)
    return options


_JAX_OPTIONS = jax_options()
# Names of jax's options that are mlax settings under another name.
_ALIASED = frozenset(name for name in _JAX_OPTIONS if name in _ALIASES)


def _kept_state(option: JaxOption) -> State[Any]:
    state: State[Any] = State.__new__(State)
    state.name, state.__name__ = option.name, option.name.removeprefix("jax_")
    state.__doc__ = f"Context manager for `{option.name}` config option."
    state._parser = option.parser or (lambda value: value)
    state._marks = None
    state._local = _Override()
    state._global = option.default  # as jax holds it (jax checked it)
    return state


# The options mlax keeps without reading them (their values are read back): the unhonoured ones
# and jax's tracer's, lowering's and tooling's (see the module docstring).
_KEPT: dict[str, State[Any]] = {
    name: _kept_state(option) for name, option in _JAX_OPTIONS.items()
    if name not in _STATES and name not in _FORWARDED and name not in _ALIASED
}
_warned: set[tuple[str, str]] = set()
# jax's context manager of an option mlax keeps: False (jax's default, what mlax does) is taken
# silently; True warns that mlax does not check key reuse (flax's tests turn the check off so)
debug_key_reuse = _KEPT["jax_debug_key_reuse"]


def _warn_unhonoured(name: str, value: Any) -> None:
    honoured, what = _UNHONOURED[name]
    parse = _KEPT[name]._parser
    if value == parse(honoured) or (name, repr(value)) in _warned:
        return
    _warned.add((name, repr(value)))
    warnings.warn(f"mlax accepts {name}={value!r} but computes as under {honoured!r}: {what}.",
                  UnhonouredOptionWarning, stacklevel=3)


_CONTEXT_READ = ("For flags with a corresponding contextmanager, read their value via e.g. `config.{0}` "
                 "rather than `config.FLAGS.{0}`.")
_already_configured_with_absl = False


class Config:
    """jax's config, as mlax's ``jax.config`` (see the module docstring for what each of jax's
    options does in mlax), plus mlax's options: ``x64`` (bool, jax's ``jax_enable_x64``),
    ``backend`` (default jit backend), ``dump_dir``, the cache bounds (LRU sizes, as JAX bounds
    its caches: ``jit_cache_size`` traced signatures kept per jitted function,
    ``MLAX_JIT_CACHE_SIZE``; ``compile_cache_size`` compiled programs kept by each backend in the
    whole process, ``MLAX_COMPILE_CACHE_SIZE``), the CPU backend's persistent compilation cache
    (``compilation_cache_dir``, a directory or None, ``MLAX_COMPILATION_CACHE_DIR``;
    ``compilation_cache_max_size``, bytes, 0 for no cache and -1 for no limit,
    ``MLAX_COMPILATION_CACHE_MAX_SIZE``, 1 GiB by default; also under jax's names
    ``jax_compilation_cache_dir`` and ``jax_compilation_cache_max_size``)."""

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
        self.use_absl = False
        if os.environ.get("MLAX_ENABLE_X64", "0").lower() not in ("0", "", "false"):
            jax.config.update("jax_enable_x64", True)

    @staticmethod
    def _unknown(name: str) -> UnknownOptionError:
        return UnknownOptionError(f"Unrecognized config option: {name}")

    def update(self, name: str, value: Any) -> None:
        """Set an option, as ``jax.config.update``: jax's check of the value, jax's
        ``AttributeError`` for a name neither jax nor mlax knows."""
        key = _ALIASES.get(name, name)
        if key == "x64":
            jax.config.update("jax_enable_x64", bool(value))
        elif key in _STATES:
            _STATES[key]._set(value)
        elif key in _FORWARDED:
            jax.config.update(key, value)
        elif key in _KEPT:
            state = _KEPT[key]
            state._set(value)
            if key in _UNHONOURED:
                _warn_unhonoured(key, state._global)
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
        option = _JAX_OPTIONS.get(name)
        if option is not None and option.is_state:
            raise AttributeError(_CONTEXT_READ.format(name))
        return self._read(name)

    def _read(self, name: str) -> Any:
        key = _ALIASES.get(name, name)
        if key in _FORWARDED:
            return jax.config._read(key)
        if key in _KEPT:
            return _KEPT[key].value
        if key == "x64" or key in _STATES or key in self._values:
            return getattr(self, key)
        raise self._unknown(name)

    @property
    def values(self) -> dict[str, Any]:
        """Every option's value by name: jax's options under their names, then mlax's."""
        return {**{name: self._read(name) for name in _JAX_OPTIONS},
                **{name: getattr(self, name) for name in self._values}}

    @property
    def meta(self) -> dict[str, tuple[Any, Sequence[Any], dict[str, Any]]]:
        """jax's absl flag definition of each option: (type, args, kwargs)."""
        return {name: (option.flag_type, option.flag_args, option.flag_kwargs)
                for name, option in _JAX_OPTIONS.items()}

    def __getattr__(self, name: str) -> Any:
        option = _JAX_OPTIONS.get(name)
        if option is not None and not option.is_state and name not in _ALIASES:
            # jax's plain flags are read with config.read only, as in jax
            raise AttributeError(f"'Config' object has no attribute {name!r}")
        key = _ALIASES.get(name, name)
        if key == "x64":
            return self.x64_enabled
        state = _STATES.get(key, _KEPT.get(key))
        if state is not None:
            return state.value
        if key in _FORWARDED:
            return jax.config._read(key)
        if key == "compilation_cache_dir" and not _KEPT["jax_enable_compilation_cache"].value:
            return None  # jax_enable_compilation_cache=False: no persistent cache
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(f"'Config' object has no attribute {name!r}") from None

    @property
    def x64_enabled(self) -> bool:
        return bool(jax.config.jax_enable_x64)

    def trace_context(self) -> tuple[Any, ...]:
        """The options a trace depends on, part of every jit cache key (as jax keys its jit
        cache): a function traced under one dtype mode, rank promotion mode or default matmul
        precision is retraced under another."""
        return (enable_x64.value, numpy_dtype_promotion.value, numpy_rank_promotion.value,
                default_matmul_precision.value, enable_custom_prng.value, default_prng_impl.value)

    # -------------------------------------------------------------- absl flags, as jax's

    def config_with_absl(self) -> None:
        """Define an absl flag for each of jax's options (``--jax_debug_nans`` ...), as jax's
        ``config_with_absl``; after ``absl.app.run`` parses them, the flags given set the options."""
        from absl import app
        from absl import flags as absl_flags

        self.use_absl = True
        self.absl_flags = absl_flags
        define = {bool: absl_flags.DEFINE_bool, int: absl_flags.DEFINE_integer,
                  float: absl_flags.DEFINE_float, str: absl_flags.DEFINE_string,
                  "enum": absl_flags.DEFINE_enum, "enum_class": absl_flags.DEFINE_enum_class}
        for name, option in _JAX_OPTIONS.items():
            if name in absl_flags.FLAGS:
                continue  # defined already (by an earlier call, or by the real jax's)
            define[option.flag_type](name, self._read(name), *option.flag_args, **option.flag_kwargs)
        app.call_after_init(lambda: self.complete_absl_config(absl_flags))

    def complete_absl_config(self, absl_flags: Any) -> None:
        """Set the options whose absl flags were given on the command line."""
        for name in _JAX_OPTIONS:
            try:
                flag = absl_flags.FLAGS[name]
            except KeyError:
                continue
            if flag.present:
                self.update(name, flag.value)

    def parse_flags_with_absl(self) -> None:
        """Parse the command line's ``--jax...`` arguments (those before a ``--``) into the
        options, once, as jax's ``parse_flags_with_absl``."""
        global _already_configured_with_absl
        if _already_configured_with_absl:
            return
        import absl.flags

        before_dashes = itertools.takewhile(lambda a: a != "--", sys.argv)
        jax_argv = ["", *(a for a in before_dashes if a.startswith("--jax"))]
        self.config_with_absl()
        absl.flags.FLAGS(jax_argv, known_only=True)
        self.complete_absl_config(absl.flags)
        _already_configured_with_absl = True


config = Config()
