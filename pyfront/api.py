"""mlax.jit: trace once per signature, compile with a backend, cache, call.

The cache key is (static arguments, pytree structure, avals of the leaves, backend), as
in JAX: a new shape, dtype, weak type or static value retraces; anything else hits. As in JAX,
the traces belong to the function and the jit options, not to one ``jit`` object: ``jit(f)``
twice traces once (`_traces_for`). The ahead-of-time stages (``trace``, ``lower``,
``compile``) live in pyfront/aot.py.
"""

from __future__ import annotations

import functools
import inspect
import threading
import types
import weakref
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
from jax import ShapeDtypeStruct, tree_util

from mlax import prng, refs
from mlax.aot import (
    CacheEntry,
    Lowered,
    Traced,
    donate_inputs,
    executable_of,
    public_name,
    run_program,
    wrap_outputs,
)
from mlax.array import Array
from mlax.backends.registry import (
    Executable,
    clear_compile_cache,
    device_backend,
    get_backend,
)
from mlax.caching import LRUCache
from mlax.configuration import checks_enabled, config, disable_jit_state, invalid_kind, jit_call_options_used
from mlax.core import Aval, abstractify, concrete_mode, current_trace, is_array_like, observing
from mlax.errors import check_callable, index_tuple, name_tuple, user_error
from mlax.jit_sharding import (
    UNSPECIFIED,
    annotate,
    committed_sharding,
    input_placements,
    mesh_backend,
    output_placements,
)
from mlax.nested_jit import call_jitted
from mlax.sharding import Placement, as_named, context_mesh, placement
from mlax.staging import inlined
from mlax.tracing import (
    _describe_path,
    abstract_argument,
    avals_of,
    flatten_arguments,
    function_name,
    trace_function,
)

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _argnums(signature: inspect.Signature | None, value: Any, name: str) -> tuple[int, ...]:
    """``static_argnums``/``donate_argnums`` as ints, checked against the signature as JAX does
    when jit is built (any index is valid for a function taking ``*args``)."""
    nums = () if value is None else index_tuple(value, name, "mlax.jit")
    if signature is None or not nums:
        return nums
    params = signature.parameters.values()
    count = sum(p.kind in _POSITIONAL for p in params)
    if not any(p.kind is p.VAR_POSITIONAL for p in params) and (-min(nums) > count or max(nums) >= count):
        raise user_error(ValueError, f"Jitted function has {name}={nums}, but only accepts {count} "
                         "positional arguments.", f"{name} of mlax.jit")
    return nums


def _argnames(signature: inspect.Signature | None, value: Any,
              option: str = "static_argnames") -> tuple[str, ...]:
    """``static_argnames``/``donate_argnames`` as strs, each naming a keyword-passable
    parameter (JAX's check)."""
    names = () if value is None else name_tuple(value, option, "mlax.jit")
    if signature is None:
        return names
    params = signature.parameters.values()
    positional_only = set(names) & {p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.VAR_POSITIONAL)}
    keywords = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    unknown = set() if any(p.kind is p.VAR_KEYWORD for p in params) else set(names) - keywords
    for invalid, why in ((positional_only, "These are positional-only"),
                         (unknown, "Function does not take these args.")):
        if invalid:
            raise user_error(ValueError, f"Jitted function has invalid argnames {invalid} in "
                             f"static_argnames. {why}", "static_argnames of mlax.jit")
    return names


# How many (function, jit options) keep their traces for a later ``jit`` of the same function
# (jax bounds its cache of functions too); each keeps at most ``config.jit_cache_size`` traces.
_FUNCTIONS_KEPT = 4096
_executable = executable_of  # its name before pyfront/aot.py (tests/gpu read it from here)


class _Traces:
    """The trace caches of one function under one set of jit options, shared by every jit of
    them. The function is held weakly: the caches never keep it (or what it closes over) alive,
    and empty themselves when it dies, so that its traced modules (and the MLIR context of the
    thread that traced them) are freed then, not at the table's eviction."""

    def __init__(self, fun: Callable[..., Any] | None = None) -> None:
        self.fun_ref = weakref.ref(fun, lambda _: self.clear()) if fun is not None else None
        self.signatures: LRUCache[CacheEntry] = LRUCache(lambda: config.jit_cache_size)
        self.fast: LRUCache[CacheEntry] = LRUCache(lambda: config.jit_cache_size)  # plain-array calls

    def clear(self) -> None:
        self.signatures.clear()
        self.fast.clear()


_SHARED_TRACES: LRUCache[_Traces] = LRUCache(lambda: _FUNCTIONS_KEPT)


def _options_key(value: Any) -> Hashable:
    """A jit option (a sharding pytree prefix...) as a hashable key; TypeError if it has none."""
    leaves, treedef = tree_util.tree_flatten(value, is_leaf=lambda x: x is None)
    key = (tuple(leaves), treedef)
    hash(key)
    return key


def _traces_for(fun: Callable[..., Any], options: tuple[Any, ...]) -> _Traces:
    """The trace caches of ``fun`` under jit ``options``: those of an earlier jit of the same
    function and options, as jax's cache keyed on both; a function that cannot be weakly
    referenced, or options that cannot be hashed, get caches of their own."""
    try:
        key = (id(fun), tuple(_options_key(option) for option in options))
        weakref.ref(fun)
    except TypeError:
        return _Traces()
    traces = _SHARED_TRACES.get_or_create(key, lambda: _Traces(fun))
    if traces.fun_ref is None or traces.fun_ref() is not fun:  # a dead function's id, reused
        traces = _SHARED_TRACES.put(key, _Traces(fun))
    return traces


def _abstract_leaves(dynamic: Any, fun_name: str, arg_names: list[str]) -> tuple[list[Any], Any, list[str]]:
    """``lower``/``trace``'s arguments: arrays and scalars as a call takes them, and anything with
    a ``shape`` and ``dtype`` (``jax.ShapeDtypeStruct``) for its type alone; jax's TypeError for
    any other leaf."""
    advice = ("This typically means that a jit-wrapped function was called with a non-array argument, and "
              "this argument was not marked as static using the static_argnums or static_argnames "
              "parameters of jax.jit.")
    pairs, tree = prng.tree_flatten_with_path(dynamic)
    leaves, paths = [], []
    for key_path, leaf in pairs:
        path = _describe_path(key_path, arg_names)
        if not is_array_like(leaf):
            abstract_argument(leaf, path, fun_name, "jit", advice)  # jax's error for what is not an array
        leaves.append(leaf)
        paths.append(path)
    return leaves, tree, paths


def _abstract_avals(leaves: list[Any], paths: list[str], fun_name: str) -> tuple[Aval, ...]:
    return tuple(abstractify(leaf) if is_array_like(leaf) else abstract_argument(leaf, path, fun_name, "jit")
                 for leaf, path in zip(leaves, paths, strict=True))


def _struct_placements(placements: tuple[Placement | None, ...], leaves: list[Any], avals: tuple[Aval, ...],
                       paths: list[str]) -> tuple[Placement | None, ...]:
    """The placements of the arguments, with those that ``ShapeDtypeStruct(..., sharding=)``
    leaves give (as a committed array's sharding: in_shardings must agree)."""
    found = list(placements)
    for i, (leaf, aval, path) in enumerate(zip(leaves, avals, paths, strict=True)):
        if not isinstance(leaf, ShapeDtypeStruct) or leaf.sharding is None:
            continue
        argument = f"the sharding of argument {path} of jit(...).lower"
        named = as_named(leaf.sharding, "jit", argument)
        if named is None or named.mesh.devices.size <= 1:
            continue
        given = placement(named, aval.shape, f"One of pjit arguments with pytree key path {path}", argument)
        if found[i] is not None and found[i] != given:
            raise user_error(ValueError, "Sharding passed to jit does not match the sharding on the "
                             f"respective arg. Got jit sharding: {found[i].sharding},\narg sharding: "
                             f"{named} for arg type: {aval.dtype.name}[{','.join(map(str, aval.shape))}]",
                             argument)
        found[i] = given
    return tuple(found)


def _fast_key(args: tuple[Any, ...]) -> tuple[tuple[Any, ...] | None, list[Any]]:
    """A cheap cache key when every leaf of the arguments is an mlax.Array or a NumPy array
    (the common call: arrays, or pytrees of them such as a train step's parameters), and the
    leaves; a key of None sends the call down the general path."""
    leaves, treedef = tree_util.tree_flatten(args)
    key: list[Any] = [treedef]
    for arg in leaves:
        kind = type(arg)
        if kind is Array:
            sharded = committed_sharding(arg) if arg._device is not None else None
            key.append((arg.shape, arg.dtype, arg._weak_type, sharded))
        elif kind is np.ndarray:
            key.append((arg.shape, arg.dtype))
        else:
            return None, leaves
    return tuple(key), leaves


def _fast_buffers(executable: Executable, args: list[Any]) -> list[Any]:
    """The buffers of `_fast_key`'s arguments; NumPy inputs as read-only views (a backend
    may hand an input back as an output, which must not alias a writable user buffer).
    A backend that takes device buffers gets the Arrays' device buffers where they have them."""
    if getattr(executable, "takes_device_buffers", False):
        return [arg._buffer if type(arg) is Array else arg for arg in args]
    buffers = []
    for arg in args:
        if type(arg) is Array:
            buffers.append(arg._value)
        else:
            view = arg.view()
            view.flags.writeable = False
            buffers.append(view)
    return buffers


class JittedFunction:
    """The callable `mlax.jit` returns."""

    def __init__(self, fun: Callable[..., Any], static_argnums: Any = None,
                 static_argnames: Any = None, donate_argnums: Any = None,
                 backend: str | None = None, device: Any = None, donate_argnames: Any = None,
                 in_shardings: Any = UNSPECIFIED, out_shardings: Any = UNSPECIFIED) -> None:
        check_callable(fun, "fun of mlax.jit")
        if device is not None:
            if backend is not None:
                raise user_error(ValueError, "can't specify both a device and a backend for jit, got "
                                 f"device={device} and backend={backend}", "device of mlax.jit")
            if not hasattr(device, "platform") or not hasattr(device, "client"):
                raise user_error(TypeError, f"device must be an XLA device (an element of "
                                 f"jax.devices() or an Array's .device), got {device!r}",
                                 "device of mlax.jit")
            backend = device_backend(device)
        if backend is not None:
            try:
                get_backend(backend)
            except ValueError as error:
                raise user_error(RuntimeError, str(error), "backend of mlax.jit") from None
        self._fun = fun
        self._backend = backend
        self._in_shardings = in_shardings  # jax's pytree prefixes (pyfront/jit_sharding.py)
        self._out_shardings = out_shardings
        try:
            self._signature: inspect.Signature | None = inspect.signature(fun)
        except (TypeError, ValueError):
            self._signature = None
        params = list(self._signature.parameters.values()) if self._signature else []
        positional = [p.name for p in params if p.kind in _POSITIONAL]
        self._arg_names = positional + [f"args[{i}]" for i in range(64)]
        nums = set(_argnums(self._signature, static_argnums, "static_argnums"))
        names = set(_argnames(self._signature, static_argnames))
        # as jax, each is inferred from the other only where the other alone is given
        if static_argnames is None:
            names.update(positional[n] for n in nums if 0 <= n < len(positional))
        if static_argnums is None:
            nums.update(positional.index(name) for name in names if name in positional)
        donated = _argnums(self._signature, donate_argnums, "donate_argnums")
        donated_names = set(_argnames(self._signature, donate_argnames, "donate_argnames"))
        donated = tuple(sorted({*donated, *(positional.index(n) for n in donated_names if n in positional)}))
        if nums.intersection(donated):
            raise user_error(ValueError, f"static_argnums {sorted(nums)} and donate_argnums {list(donated)} "
                             "cannot intersect (static arguments include those of static_argnames)",
                             "donate_argnums of mlax.jit")
        self._donate_argnums = donated  # the XLA backend reuses their buffers; the others ignore it
        self._static_argnums = frozenset(nums)
        self._static_argnames = frozenset(names)
        traces = _traces_for(fun, (frozenset(nums), frozenset(names), donated, backend, in_shardings,
                                   out_shardings))
        self._cache, self._fast_cache = traces.signatures, traces.fast
        # shardings are fixed per jit and the leaves' committed shardings are in the fast key
        self._fast_ok = not (self._static_argnums or self._static_argnames or donated)
        self._stages_always = False  # set by jit for mlax's own jits: disable_jit leaves them
        # Inside a trace, a call of its traced body (pyfront/nested_jit.py) unless jit(inline=True),
        # mlax's own jits or shardings ask for the Python function inlined.
        self._calls_inside_traces = in_shardings is UNSPECIFIED and out_shardings is UNSPECIFIED
        with _JITTED_LOCK:
            _JITTED.add(self)
        functools.update_wrapper(self, fun, updated=())  # not fun.__dict__: a jitted fun has its own options

    @property
    def backend(self) -> str:
        return self._backend or config.backend

    @property
    def __signature__(self) -> inspect.Signature | None:
        """The wrapped function's, as jax's jitted functions give it: having ``__get__``, this
        object would otherwise look like a builtin to ``inspect.signature`` (chex's fake_pmap
        reads it)."""
        try:
            return inspect.signature(self._fun)
        except (TypeError, ValueError):
            return None

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """A jitted function defined in a class is a method: ``obj.f(x)`` calls it with
        ``obj`` first (which must then be a pytree of arrays, or static), as jax's."""
        return self if instance is None else types.MethodType(self, instance)

    def _partition(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        n = len(args)
        static_nums = {i if i >= 0 else i + n for i in self._static_argnums}
        for i in static_nums:
            if not 0 <= i < n and self._signature is not None and i < len(self._arg_names):
                name = self._arg_names[i]
                if name not in kwargs and name not in self._signature.parameters:
                    raise user_error(ValueError, f"static_argnums {i} is out of range for {n} positional "
                                     "arguments", "static_argnums of mlax.jit")
        static = tuple((i, args[i]) for i in sorted(static_nums) if 0 <= i < n)
        static += tuple((k, kwargs[k]) for k in sorted(kwargs) if k in self._static_argnames)
        for where, value in static:
            try:
                hash(value)
            except TypeError:
                raise user_error(
                    ValueError, f"Non-hashable static arguments are not supported: argument {where!r} of "
                    f"{function_name(self._fun)} is a {type(value).__name__}, which is not hashable.",
                    "static_argnums/static_argnames of mlax.jit") from None
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        dyn_names = [self._arg_names[i] for i in range(n) if i not in static_nums]

        def rebuild(dyn_leaves_args: tuple[Any, ...], dyn_leaves_kwargs: dict[str, Any]) -> Any:
            full = list(dyn_leaves_args)
            for i, value in static:
                if isinstance(i, int):
                    full.insert(i, value)
            merged = dict(dyn_leaves_kwargs)
            merged.update({k: v for k, v in static if isinstance(k, str)})
            return tuple(full), merged

        return static, (dyn_args, dyn_kwargs), dyn_names, rebuild

    def _entry(self, args: tuple[Any, ...], kwargs: dict[str, Any], cached: bool = True,
               abstract: bool = False) -> tuple[CacheEntry, list[Any]]:
        """The trace for these arguments (from the cache where ``cached``), and their leaves.
        ``abstract`` (lower, trace) also takes ShapeDtypeStructs for arguments."""
        static, dynamic, dyn_names, rebuild = self._partition(args, kwargs)
        name = function_name(self._fun)
        if abstract:
            leaves, in_tree, paths = _abstract_leaves(dynamic, name, dyn_names)
            in_avals = _abstract_avals(leaves, paths, name)
        else:
            leaves, in_tree, paths = flatten_arguments(dynamic, name, dyn_names)
            in_avals = avals_of(leaves)
        placements = input_placements(self._in_shardings, *dynamic, leaves, in_avals, paths)
        if abstract:
            placements = _struct_placements(placements, leaves, in_avals, paths)
        key = (static, in_tree, in_avals, self.backend, config.trace_context(), placements, context_mesh())

        def build_args(tracers: list[Any]) -> Any:
            dyn_args, dyn_kwargs = tree_util.tree_unflatten(in_tree, tracers)
            return rebuild(dyn_args, dyn_kwargs)

        def create() -> CacheEntry:
            traced = trace_function(self._fun, build_args, in_avals, paths)
            outs = output_placements(self._out_shardings, traced.out_tree, traced.out_avals, placements)
            mesh = annotate(traced.module, traced.entry, placements, outs, paths)
            backend = self.backend if mesh is None else mesh_backend(mesh, self._backend, self.backend)
            return CacheEntry(traced, self._donated_leaves(args, static), backend, in_tree, tuple(dyn_names),
                              tuple(paths), public_name(self._fun))

        return (self._cache.get_or_create(key, create) if cached else create()), leaves

    def call_once(self, *args: Any, **kwargs: Any) -> Any:
        """Trace, compile and run for these arguments only, the trace not cached: for mlax's
        transformations whose trace holds only for this call (pyfront/staging.py)."""
        if refs.any_alive():
            result = refs.call_jit(self, args, kwargs, once=True)
            if result is not refs.UNHANDLED:
                return self._checked(result, args, kwargs) if checks_enabled() else result
        entry, leaves = self._entry(args, kwargs, cached=False)
        result = run_program(entry.traced, executable_of(entry), leaves)
        return self._checked(result, args, kwargs) if checks_enabled() else result

    def _donated_leaves(self, args: tuple[Any, ...], static: tuple[Any, ...]) -> tuple[int, ...]:
        """The flat indices of the leaves of the donated positional arguments."""
        if not self._donate_argnums:
            return ()
        n = len(args)
        donate = {i if i >= 0 else i + n for i in self._donate_argnums}
        static_nums = {i for i, _ in static if isinstance(i, int)}
        flat: list[int] = []
        start = 0
        for i, arg in enumerate(args):
            if i in static_nums:
                continue
            count = len(tree_util.tree_leaves(arg))
            if i in donate:
                flat.extend(range(start, start + count))
            start += count
        return tuple(flat)

    def __repr__(self) -> str:
        return f"<PjitFunction of {self._fun!r}>"  # jax's text (chex tells jitted functions by it)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        trace = current_trace()
        if trace is not None:  # inside another trace: a call of a private function, or inlined
            if self._calls_inside_traces and concrete_mode() is None and not disable_jit_state.value \
                    and not refs.any_alive() and not observing():  # with refs, inlined: its reads and
                # writes are the caller's; under checkify's instrumentation, its ops are the caller's
                return call_jitted(self, trace, args, kwargs)
            return inlined(self._fun, self, args, kwargs)
        if jit_call_options_used.on:  # one read while no one has used disable_jit / debug_nans / infs
            if disable_jit_state.value and not self._stages_always:
                return self._fun(*args, **kwargs)  # mlax.disable_jit: the Python body, op by op
            if checks_enabled():
                return self._checked(self._call(args, kwargs), args, kwargs)
        return self._call(args, kwargs)

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if refs.any_alive():  # refs passed or closed over: threaded in and out (pyfront/refs.py)
            result = refs.call_jit(self, args, kwargs)
            if result is not refs.UNHANDLED:
                return result
        fast_key, fast_leaves = _fast_key(args) if self._fast_ok and not kwargs else (None, [])
        if fast_key is not None:
            fast_key += (self._backend or config.backend, config.trace_context(), context_mesh())
            entry = self._fast_cache.get(fast_key)
            executable = entry.executable() if entry is not None else None
            if executable is not None:
                return wrap_outputs(entry.traced, executable(_fast_buffers(executable, fast_leaves)))
        entry, leaves = self._entry(args, kwargs)
        result = run_program(entry.traced, executable_of(entry), leaves)
        donate_inputs(entry, leaves, result)
        in_avals = entry.traced.in_avals
        if fast_key is not None and len(leaves) == len(fast_leaves) and all(
                arg.dtype == aval.dtype for arg, aval in zip(fast_leaves, in_avals, strict=True)):
            self._fast_cache.get_or_create(fast_key, lambda: entry)  # canonical dtypes: buffers pass as is
        return result

    def _checked(self, result: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """debug_nans / debug_infs after a compiled call, as jax: a nan (inf) in the outputs re-runs
        the function op by op, whose eager ops name the one that made it; if none does, the error
        names the jitted function."""
        kind = invalid_kind(tree_util.tree_leaves(result))
        if kind is None:
            return result
        name = getattr(self._fun, "__name__", None) or function_name(self._fun)  # jax's: "<lambda>"
        if self._stages_always:  # one of mlax's transformations: it only runs compiled
            raise FloatingPointError(f"invalid value ({kind}) encountered in {name}")
        print("Invalid nan value encountered in the output of a jax.jit function. Calling the de-optimized "
              "version.")
        self._fun(*args, **kwargs)
        raise FloatingPointError(
            f"invalid value ({kind}) encountered in jit({name}). Because jax_config.debug_nans.value and/or "
            "config.jax_debug_infs is set, the de-optimized function (i.e., the function as if the `jit` "
            "decorator were removed) was called in an attempt to get a more precise error message. However, "
            "the de-optimized function did not produce invalid values during its execution. This behavior "
            "can result from `jit` optimizations causing the invalid value to be produced. It may also "
            "arise from having nan/inf literals as inputs or outputs, like "
            "`jax.jit(lambda ...: jax.numpy.nan)(...)`.")

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        """The traced program for these arguments (arrays, scalars, ``ShapeDtypeStruct``s, pytrees
        of them; static arguments as values), as jax's ``jit(f).trace``: shares the jit's cache."""
        if refs.any_alive() and current_trace() is None:  # refs passed or closed over (pyfront/refs.py)
            staged = refs.stage_jit(self, args, kwargs, "trace")
            if staged is not refs.UNHANDLED:
                return staged
        return Traced(self._entry(args, kwargs, abstract=True)[0], self._fun)

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        """``trace(*args, **kwargs).lower()``: the program ready to compile."""
        if refs.any_alive() and current_trace() is None:
            staged = refs.stage_jit(self, args, kwargs, "lower")
            if staged is not refs.UNHANDLED:
                return staged
        return Lowered(self._entry(args, kwargs, abstract=True)[0])

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """The outputs' ``ShapeDtypeStruct`` pytree for these arguments, as jax's
        ``jit(f).eval_shape``; inside a trace, as ``mlax.eval_shape`` (the arguments may be tracers)."""
        if current_trace() is not None:
            from mlax.shape_eval import eval_shape

            return eval_shape(self, *args, **kwargs)
        if refs.any_alive():  # the discharged program's outputs: the function's, then the refs' values
            staged = refs.stage_jit(self, args, kwargs, "trace")
            if staged is not refs.UNHANDLED:
                return staged.out_info[0]
        return self.trace(*args, **kwargs).out_info

    def _cache_size(self) -> int:
        return len(self._cache)

    def clear_cache(self) -> None:
        """Forget this function's traces (as jax's ``jitted.clear_cache()``): the next call retraces."""
        self._cache.clear()
        self._fast_cache.clear()


_JITTED: weakref.WeakSet[JittedFunction] = weakref.WeakSet()  # every live one, for clear_caches
_JITTED_LOCK = threading.Lock()


def clear_caches() -> None:
    """``jax.clear_caches``: forget every traced signature of every jitted function (mlax's own
    jits of transformations too) and every compiled program of every backend. Jitted functions
    keep working: their next call retraces and recompiles."""
    with _JITTED_LOCK:
        jitted = list(_JITTED)
    for function in jitted:
        function.clear_cache()
    clear_compile_cache()


def jit(fun: Callable[..., Any] | None = None, *, in_shardings: Any = UNSPECIFIED,
        out_shardings: Any = UNSPECIFIED, static_argnums: Any = None, static_argnames: Any = None,
        donate_argnums: Any = None, donate_argnames: Any = None, keep_unused: bool = False,
        device: Any = None, backend: str | None = None, inline: bool = False,
        compiler_options: dict[str, Any] | None = None) -> Any:
    """Compile ``fun``: traced once per signature into mlax IR, then run by ``backend``
    ("cpu", mlax's native one, by default; "gpu", mlax's native NVIDIA kernels; "interpreter";
    "xla", or a platform name such as "cuda" or "tpu", for XLA) or on one XLA ``device``.

    Usable as ``jit(f, ...)``, ``@jit`` or ``@jit(static_argnums=...)``, and on methods. The
    keywords are jax.jit's: ``keep_unused`` changes nothing observable (mlax keeps every
    argument); called inside a trace, the function becomes a call of its traced body, one body
    per distinct trace (pyfront/nested_jit.py), or is inlined with ``inline=True``. ``in_shardings`` /
    ``out_shardings`` partition the program over a mesh of devices (pyfront/jit_sharding.py);
    such a program runs on the XLA backend of those devices unless ``backend="interpreter"``
    (which simulates them). ``compiler_options`` are not supported yet and say so.
    """
    if compiler_options:
        raise user_error(NotImplementedError, "mlax.jit does not support compiler_options yet (XLA compiler "
                         "options are not implemented)", "compiler_options of mlax.jit")
    options = dict(static_argnums=static_argnums, static_argnames=static_argnames,
                   donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                   backend=backend, device=device, in_shardings=in_shardings, out_shardings=out_shardings)
    if fun is None:
        return functools.partial(jit, **options)
    jitted = PjitFunction(fun, **options)
    jitted._calls_inside_traces &= not inline
    return jitted


class PjitFunction(JittedFunction):
    """What ``mlax.jit`` returns, under jax's class name: libraries tell jitted functions by
    it (chex's assert_max_traces refuses to wrap one)."""


def staged_jit(fun: Callable[..., Any], **options: Any) -> JittedFunction:
    """A jit of mlax's own: a transformation staging its program through it needs a trace, so
    `disable_jit`, which disables the jits of user code, leaves it, and it is not inlined into
    a caller's trace."""
    jitted = JittedFunction(fun, **options)
    jitted._stages_always = True
    jitted._calls_inside_traces = False
    return jitted


def make_mlir(fun: Callable[..., Any], static_argnums: Any = None,
              static_argnames: Any = None, debug_info: bool = False) -> Callable[..., str]:
    """The counterpart of ``jax.make_jaxpr``: ``make_mlir(f)(*args)`` is f's mlax IR as text."""
    jitted = JittedFunction(fun, static_argnums, static_argnames)

    def text(*args: Any, **kwargs: Any) -> str:
        return jitted.lower(*args, **kwargs).as_text("mlax", debug_info=debug_info)

    return text
