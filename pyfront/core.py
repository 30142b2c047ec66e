"""The tracing core: tracers, traces and `bind` (abstract values are `mlax.avals.Aval`, the
trace stack is `mlax.trace_stack`'s).

`bind(op, *operands, **attrs)` is the one door through which every primitive passes.
Inside a trace it emits the mlax op at the user's source line; outside it evaluates the
op eagerly with the dialect's NumPy reference semantics. Either way the dialect's
inference rule checks the operands first, so eager and traced code fail alike.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from mlir import ir

from mlax import dtypes as front_dtypes
from mlax import tracer_text
from mlax.array import Array
from mlax.array_methods import ArrayMethods
from mlax.avals import Aval
from mlax.configuration import check_values, checks_enabled, compile_time_eval_state
from mlax.dialect import build, get_context, get_op, infer
from mlax.errors import UnexpectedTracerError, concretization_error, user_error
from mlax.prng import PRNGKeyArray
from mlax.sharding import CONTEXT as _MESH_CONTEXT
from mlax.sharding_types import result_avals as _typed_results
from mlax.source_info import SourceInfo, current_location, user_frame_info, where
from mlax.trace_stack import TRACES as _TRACES
from mlax.trace_stack import concrete_mode, current_trace


class Trace:
    """One function being traced: the block ops go into and what the errors should name.

    A trace started inside another (a function differentiated inside a traced program) has
    that one as ``parent``; a tracer of an enclosing trace used here is *captured*: it becomes
    an extra argument of this function, and the caller passes the enclosing value (closure
    conversion, as JAX does). A trace belongs to the thread that started it: its block lives
    in that thread's MLIR context, and other threads never see it as current.

    What it traces for (``"jit"``, ``"grad"``, ``"vmap"``...), where the function is defined
    and its arguments' names are what jax's tracer reprs and errors show
    (`mlax.tracer_text`); ``batch`` is a vmap's axis size and its arguments' mapped axes
    (-1: not mapped).
    """

    def __init__(self, function_name: str, block: ir.Block, parent: Trace | None = None,
                 traced_for: str = "jit", source: str = "", arg_names: tuple[str, ...] = (),
                 batch: tuple[int, tuple[int, ...]] | None = None) -> None:
        self.function_name = function_name
        self.block = block
        self.active = True
        self.parent = parent
        self.traced_for = traced_for
        self.source = source
        self.arg_names = arg_names
        self.batch = batch
        self.thread = threading.current_thread().name
        self.captures: dict[int, tuple[Tracer, ir.Value]] = {}

    @property
    def main(self) -> Trace:
        """What jax's (deprecated) ``Trace.main`` names: the trace itself, one object per trace
        (equinox's filter_jvp keeps the outputs whose ``_trace.main`` is its own trace's)."""
        return self

    def encloses(self, other: Trace) -> bool:
        """Whether ``other`` is this trace or one it was started inside."""
        trace: Trace | None = self
        while trace is not None:
            if trace is other:
                return True
            trace = trace.parent
        return False

    def _capture(self, x: Tracer) -> ir.Value:
        if id(x) not in self.captures:
            with get_context():
                argument = self.block.add_argument(x.value.type, ir.Location.name(f"captured {x.origin}"))
            self.captures[id(x)] = (x, argument)
            for log in _TRACES.capture_logs:
                log.append(x)
        return self.captures[id(x)][1]

    def emit(self, op_name: str, operands: list[ir.Value], attrs: dict[str, Any]) -> list[ir.Value]:
        with get_context(), ir.InsertionPoint(self.block):
            return build(op_name, operands, attrs, loc=current_location())

    def value_of(self, x: Any) -> ir.Value:
        """The IR value of an operand, emitting a constant for concrete ones."""
        if isinstance(x, Tracer):
            if x.trace is self:
                return x.value
            if x.trace.active and self.parent is not None and self.parent.encloses(x.trace):
                return self._capture(x)
            substitute = _TRACES.substitutes.get(x.value) if _TRACES.substitutes else None
            if substitute is None:
                raise UnexpectedTracerError(x, self)
            x = substitute
        return self._constant(to_numpy(x))

    def _constant(self, array: np.ndarray) -> ir.Value:
        """``array`` as a constant. A broadcast (zero strides: an eager broadcast_in_dim, a splat
        read back) stays one: a splat constant for one value, else the constant of the slice it
        repeats and a broadcast_in_dim, so no full-size array is ever built."""
        repeated = [d for d in range(array.ndim) if array.strides[d] == 0 and array.shape[d] > 1]
        if not repeated or all(d in repeated or n == 1 for d, n in enumerate(array.shape)):
            (value,) = self.emit("constant", [], {"value": array})
            return value
        kept = tuple(d for d in range(array.ndim) if d not in repeated)
        repeated_slice = array[tuple(0 if d in repeated else slice(None) for d in range(array.ndim))]
        (source,) = self.emit("constant", [], {"value": repeated_slice})
        attrs = {"shape": array.shape, "broadcast_dimensions": kept}
        (value,) = self.emit("broadcast_in_dim", [source], attrs)
        return value


# Called with (op name, operands, results, attributes, trace) after each op emitted into a trace.
BindObserver = Callable[[str, tuple[Any, ...], list[Any], dict[str, Any], "Trace"], None]


class observed_binds:
    """Context manager that has ``observer`` see every op traced in this thread (None: none),
    as checkify's automatic checks instrument the ops jax binds; the previous one comes back
    on exit. The observer emits its own ops with the observation off (``observed_binds(None)``)."""

    def __init__(self, observer: BindObserver | None) -> None:
        self.observer = observer

    def __enter__(self) -> None:
        self.saved, _TRACES.observer = _TRACES.observer, self.observer

    def __exit__(self, *exc: Any) -> None:
        _TRACES.observer = self.saved


def observing() -> bool:
    """Whether an observer sees the ops traced in this thread (nested jits then inline, so
    that it sees their ops too)."""
    return _TRACES.observer is not None


class trace_scope:
    """Context manager that makes ``trace`` the current trace of this thread."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    def __enter__(self) -> Trace:
        _TRACES.stack.append(self.trace)
        return self.trace

    def __exit__(self, *exc: Any) -> None:
        _TRACES.stack.pop()
        self.trace.active = False


class Known:
    """What concrete mode knows of a traced value: JAX's concrete primal of a JVP tracer.

    Transformations called outside any trace (grad and co., pyfront/staging.py) trace
    abstractly first; where the user's Python needs a value (``if x > 0``, ``int(n)``) they
    trace again in concrete mode, where tracers carry a Known. Its value is computed on first
    request from its inputs (ops by the dialect's reference semantics, nested transformations
    run outside the trace), so concrete mode costs nothing where no Python asks. While the
    first, abstract trace runs, a *deferred* Known only says that the retrace would know the
    value. ``differentiated``: the value depends on a differentiated input, so float() and
    NumPy conversion refuse it (they would drop its derivative), as JAX's do.
    """

    __slots__ = ("_array", "_inputs", "_compute", "differentiated")

    def __init__(self, array: np.ndarray | None = None, differentiated: bool = False,
                 inputs: tuple[Known, ...] = (), compute: Any = None) -> None:
        if array is not None:
            array = array.view()
            array.flags.writeable = False
        self._array = array
        self._inputs = inputs
        self._compute = compute
        self.differentiated = differentiated

    @property
    def deferred(self) -> bool:
        return self._array is None and self._compute is None

    def marked(self, differentiated: bool) -> Known:
        """This value, also marked differentiated when ``differentiated``."""
        if not differentiated or self.differentiated:
            return self
        if self._array is not None or self.deferred:
            return Known(self._array, True)
        return Known(None, True, (self,), lambda value: value)

    def value(self) -> np.ndarray:
        """The value, computing what it depends on first (iteratively: chains can be long)."""
        pending = [self]
        while pending:
            known = pending[-1]
            if known._array is not None:
                pending.pop()
                continue
            if known.deferred:
                raise RuntimeError("internal error: a deferred value was asked for in concrete mode")
            missing = [k for k in known._inputs if k._array is None]
            if missing:
                pending.extend(missing)
                continue
            result = known._compute(*(k._array for k in known._inputs))  # an array, or a node's list
            if isinstance(result, np.ndarray):
                result = result.view()
                result.flags.writeable = False
            known._array, known._inputs, known._compute = result, (), None
            pending.pop()
        return self._array  # type: ignore[return-value]


class mode_scope:
    """Context manager that sets this thread's concrete mode (None inside a nested jit: its
    values are abstract, as in JAX, even where the enclosing trace knows them)."""

    def __init__(self, mode: str | None) -> None:
        self.mode = mode

    def __enter__(self) -> None:
        self.saved, _TRACES.mode = _TRACES.mode, self.mode

    def __exit__(self, *exc: Any) -> None:
        _TRACES.mode = self.saved


class opaque:
    """Context manager for a jit inlined into a concrete-mode trace: as in JAX, where a nested
    jit traces abstractly, Python sees no value there (ConcretizationTypeError, not retried),
    while the values of what it computes are still known op by op, for use after it."""

    def __enter__(self) -> None:
        self.saved, _TRACES.opaque = _TRACES.opaque, True

    def __exit__(self, *exc: Any) -> None:
        _TRACES.opaque = self.saved


class suspended:
    """Context manager under which this thread is outside any trace (to compute a concrete
    value by running a nested transformation eagerly in the middle of a trace). The tracers of
    the suspended traces whose IR values ``substitutes`` maps to arrays (what a construct closed
    over) stand for those values there: ops on them compute, a program traced there gets them
    as constants, Python may read them."""

    def __init__(self, substitutes: dict[ir.Value, np.ndarray] | None = None) -> None:
        self.substitutes = substitutes or {}

    def __enter__(self) -> None:
        state = _TRACES
        self.saved = state.stack, state.mode, state.substitutes, state.opaque, state.capture_logs
        state.stack, state.mode, state.opaque, state.capture_logs = [], None, False, []
        state.substitutes = {**state.substitutes, **self.substitutes} if self.substitutes else {}

    def __exit__(self, *exc: Any) -> None:
        state = _TRACES
        state.stack, state.mode, state.substitutes, state.opaque, state.capture_logs = self.saved


def substituting() -> bool:
    """Whether values stand for tracers here (`suspended`): a program traced now may hold them
    as constants, so it must not be cached for its signature."""
    return bool(_TRACES.substitutes)


class captures_logged:
    """Context manager that lists the tracers traces started inside it capture from enclosing
    ones (the values a construct closes over: its known values depend on them too)."""

    def __enter__(self) -> list[Tracer]:
        self.log: list[Tracer] = []
        _TRACES.capture_logs.append(self.log)
        return self.log

    def __exit__(self, *exc: Any) -> None:
        logs = _TRACES.capture_logs
        del logs[next(i for i in reversed(range(len(logs))) if logs[i] is self.log)]


def known_of(x: Any, differentiated: bool = False) -> Known | None:
    """What concrete mode knows of an operand (None outside concrete mode, or for a tracer
    whose value is unknown); ``differentiated`` marks it as a differentiated input (float
    dtypes only: integers have no derivative)."""
    mode = _TRACES.mode
    if mode is None:
        return None
    differentiated = differentiated and front_dtypes.issubdtype(abstractify(x).dtype, np.inexact)
    if isinstance(x, Tracer):
        return None if x.known is None else x.known.marked(differentiated)
    if mode == "deferred":
        return Known(differentiated=differentiated)
    return Known(to_numpy(x), differentiated)


class Tracer(ArrayMethods):
    """A value of a function being traced: an `ir.Value` plus its abstract value, and in
    concrete mode what is known of its value (`Known`)."""

    __slots__ = ("value", "aval", "trace", "origin", "known", "__weakref__")  # weakly referable, as jax's
    # (tensorflow_probability's bijector caches hold their inputs and outputs by weak references)
    __array_priority__ = 1000

    def __init__(self, trace: Trace, value: ir.Value, aval: Aval, origin: str,
                 known: Known | None = None) -> None:
        self.trace = trace
        self.value = value
        self.aval = aval
        self.origin = origin
        self.known = known

    @property
    def _trace(self) -> Trace:
        """The trace, under jax's attribute name (libraries that tell tracers apart read it)."""
        return self.trace

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    def _concrete(self, conversion: str, keeps_derivative: bool = True, context: str = "") -> np.ndarray:
        """The value Python asks for by ``conversion`` (see `errors.concretization_error`, which
        adds ``context``), where concrete mode knows it; else jax's error for that conversion. A
        conversion that would drop a derivative (float(), NumPy) refuses differentiated values.
        The error says (privately) whether a concrete retrace would know the value."""
        known, mode = self.known, _TRACES.mode
        if _TRACES.substitutes and self.value in _TRACES.substitutes:
            return _TRACES.substitutes[self.value]
        refused = known is not None and known.differentiated and not keeps_derivative
        if _TRACES.opaque:
            known = None
        if known is not None and mode == "concrete" and not refused:
            try:
                return known.value()
            except UnexpectedTracerError:  # a nested transformation closes over traced values
                pass
        error = concretization_error(self, conversion, context)
        error._mlax_retry = known is not None and mode == "deferred" and not refused  # type: ignore[attr-defined]
        if refused:
            what = "A NumPy conversion" if conversion == "array" else f"{conversion}()"
            error.add_note(f"{what} of a value that depends on a differentiated input would drop its "
                           "derivative, so it is refused under differentiation (as in JAX): use "
                           "x.astype(...) to change its dtype, or mlax.lax.stop_gradient(x) first.")
        raise error

    def __bool__(self) -> bool:
        return bool(self._concrete("bool"))

    def __int__(self) -> int:
        return int(self._concrete("int"))

    def __float__(self) -> float:
        return float(self._concrete("float", keeps_derivative=False))

    def __complex__(self) -> complex:
        return complex(self._concrete("complex", keeps_derivative=False))

    def __index__(self) -> int:
        return operator.index(self._concrete("index"))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = self._concrete("array", keeps_derivative=False)
        return value if dtype is None else value.astype(dtype)

    def item(self, *args: Any) -> Any:
        return self._concrete("item").item(*args)

    def tolist(self) -> Any:
        return self._concrete("tolist", keeps_derivative=False).tolist()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return tracer_text.describe(self)

    def _error_repr(self) -> str:  # jax's protocol: jax's error classes build their text with it
        return tracer_text.error_repr(self)

    def _origin_msg(self) -> str:
        return tracer_text.origin_message(self)


def held_tracer(x: Any) -> Tracer | None:
    """The tracer ``x`` is or holds (a key array's traced data), None for a concrete value:
    what a transformation must give back as its output rather than as the object it was."""
    if isinstance(x, Tracer):
        return x
    data = getattr(x, "_base_array", None)  # PRNGKeyArray (mlax.prng)
    return data if isinstance(data, Tracer) else None


def _array_types() -> tuple[type, ...]:
    import jax

    return (Tracer, Array, np.ndarray, np.generic, jax.Array, PRNGKeyArray, *front_dtypes.PYTHON_SCALARS)


_ARRAY_TYPES = _array_types()


def is_array_like(x: Any) -> bool:
    """mlax arrays and tracers, NumPy arrays and scalars, Python scalars, and jax.Arrays (code
    moving from JAX often still holds some: they are read as NumPy arrays); PRNG key arrays too
    (transformations take them as their data, and numeric ops refuse them)."""
    return isinstance(x, _ARRAY_TYPES)


def as_jax_array(x: Any) -> Any:
    """``x``, or the array an object that is no array gives by ``__jax_array__`` (flax.nnx's
    Variables), as jax's ops and jnp functions take them."""
    if not isinstance(x, _ARRAY_TYPES) and hasattr(type(x), "__jax_array__"):
        return x.__jax_array__()
    return x


def to_numpy(x: Any) -> np.ndarray:
    """A concrete operand as a NumPy array in its canonical dtype."""
    if type(x) is Array:  # not isinstance: tracers are instances of Array too
        return x._value
    if isinstance(x, Tracer):  # its value where concrete mode knows it (jax's concrete_or_error)
        return x._concrete("value")
    if front_dtypes.is_python_scalar(x):
        return np.asarray(x, dtype=front_dtypes.python_scalar_dtype(x))
    array = np.asarray(x)
    try:
        canonical = front_dtypes.canonicalize(array.dtype)
    except TypeError as err:  # a jax or NumPy array of a dtype mlax does not compute with
        raise TypeError(f"{err}{where()}") from None
    if array.dtype != canonical:
        return array.astype(canonical)
    view = array.view()  # a read-only view: results never alias a writable user buffer
    view.flags.writeable = False
    return view


def abstractify(x: Any) -> Aval:
    if isinstance(x, Tracer):
        return x.aval
    if type(x) is PRNGKeyArray:  # programs see a key array as its uint32 data
        return abstractify(x._base_array)
    if isinstance(x, Array):
        return x.aval
    if front_dtypes.is_python_scalar(x):
        return Aval((), front_dtypes.python_scalar_dtype(x), not isinstance(x, bool))
    if hasattr(type(x), "__jax_array__") and not isinstance(x, _ARRAY_TYPES):
        return abstractify(x.__jax_array__())
    array = to_numpy(x)
    return Aval(array.shape, array.dtype, False)


# Ops that stay evaluated under a trace when no operand is a tracer: the conversions and
# broadcasts the numpy layer applies to Python scalars and NumPy constants (jax does those with
# NumPy and shows literals), which would otherwise fill every program with ops on constants.
_FOLDED_IN_TRACES = frozenset({"convert", "broadcast_in_dim", "reshape"})


def _find_trace(op_name: str, operands: tuple[Any, ...]) -> Trace | None:
    """The trace an op goes into: its tracers' trace; when none of its operands is a tracer,
    the current one, as jax stages every op under a trace, constants' too (``make_jaxpr`` shows
    ``log 2.0``; ``jnp.array(x.shape).prod()`` is a tracer), except the ops in
    `_FOLDED_IN_TRACES` and under ``ensure_compile_time_eval``; None outside traces (eager)."""
    trace = current_trace()
    substituted = False
    for x in operands:
        if isinstance(x, Tracer):
            if _TRACES.substitutes and x.value in _TRACES.substitutes:
                substituted = True  # a value a construct closed over, while its known value is computed
                continue
            if trace is None or not x.trace.active or not trace.encloses(x.trace):
                raise UnexpectedTracerError(x, trace)
            return trace
    if substituted or op_name in _FOLDED_IN_TRACES or compile_time_eval_state.value:
        return None
    return trace


def _weak_result(rule: str, avals: list[Aval]) -> bool:
    if rule == "all":
        return bool(avals) and all(a.weak_type for a in avals)
    if rule == "first":
        return bool(avals) and avals[0].weak_type
    if rule == "rest":
        return len(avals) > 1 and all(a.weak_type for a in avals[1:])
    return False


def _evaluate(op: Any, out_avals: list[Aval], arrays: Any, attrs: dict[str, Any]) -> list[np.ndarray]:
    """The op by the dialect's NumPy reference semantics, results in their inferred types."""
    with np.errstate(all="ignore"):
        results = op.reference(*arrays, **attrs)
    if not isinstance(results, tuple):
        results = (results,)
    return [np.asarray(r).astype(a.dtype, copy=False).reshape(a.shape)
            for r, a in zip(results, out_avals, strict=True)]


def _known_results(op: Any, operands: tuple[Any, ...], out_avals: list[Aval],
                   attrs: dict[str, Any]) -> list[Known | None]:
    """What concrete mode knows of an op's results: computed when first asked for, from what it
    knows of every operand (nothing if it misses one); differentiated where a float result
    depends on a differentiated operand through an op with a derivative (JAX's nonzero tangents)."""
    mode = _TRACES.mode
    inputs = [known_of(x) for x in operands] if mode is not None else [None]
    if any(k is None for k in inputs):
        return [None] * len(out_avals)
    flows = not op.zero_derivative and any(k.differentiated for k in inputs)  # type: ignore[union-attr]
    marks = [flows and front_dtypes.issubdtype(a.dtype, np.inexact) for a in out_avals]
    if mode == "deferred":
        return [Known(differentiated=d) for d in marks]
    node = Known(inputs=tuple(inputs), compute=lambda *arrays: _evaluate(op, out_avals, arrays, attrs))
    return [Known(None, d, (node,), operator.itemgetter(i)) for i, d in enumerate(marks)]


# The most dimensions a NumPy array may have: eager results are NumPy arrays.
NUMPY_MAX_RANK = 64


def _check_numpy_rank(op_name: str, avals: list[Aval]) -> None:
    for aval in avals:
        if len(aval.shape) > NUMPY_MAX_RANK:
            raise user_error(ValueError, f"mlax.{op_name} would make an array of rank {len(aval.shape)}, "
                             f"but mlax computes outside jit on NumPy arrays, which have at most "
                             f"{NUMPY_MAX_RANK} dimensions (under jit(..., backend='xla') values may have "
                             "any rank)")


def bind(op_name: str, *operands: Any, **attrs: Any) -> Any:
    """Apply primitive ``op_name``: emit it into the current trace, or evaluate it eagerly."""
    op = get_op(op_name)
    avals = [abstractify(x) for x in operands]
    try:
        out_specs = infer(op_name, [a.spec for a in avals], attrs)
    except (TypeError, ValueError) as err:
        raise type(err)(f"{err}{where()}") from None
    weak = _weak_result(op.weak_type, avals)
    out_avals = [Aval(s.shape, s.dtype, weak) for s in out_specs]
    typed = _MESH_CONTEXT.abstract is not None or any(a.sharding is not None for a in avals)
    if typed:  # sharding in types: jax's rule for the op (mlax.sharding_types)
        out_avals = _typed_results(op_name, avals, out_avals, attrs)
    trace = _find_trace(op_name, operands)
    if trace is None:
        _check_numpy_rank(op_name, out_avals)
        results = _evaluate(op, out_avals, [to_numpy(x) for x in operands], attrs)
        outs = [Array._wrap(r, a.weak_type) for r, a in zip(results, out_avals, strict=True)]
        if typed:  # placed on the devices of the operands' mesh, as jax's eager ops are
            from mlax.explicit_sharding import place_eager

            outs = place_eager(op_name, operands, avals, outs, out_avals, attrs)
        if checks_enabled():  # mlax.debug_nans / debug_infs name the eager op that made a nan / inf
            check_values(op_name, results)
    else:
        values = trace.emit(op_name, [trace.value_of(x) for x in operands], attrs)
        info = user_frame_info()
        origin = f"result of mlax.{op_name}" + (f" at {info}" if info else "")
        knowns = _known_results(op, operands, out_avals, attrs)
        outs = [Tracer(trace, v, a, origin, k) for v, a, k in zip(values, out_avals, knowns, strict=True)]
        if _TRACES.observer is not None:
            _TRACES.observer(op_name, operands, outs, attrs, trace)
    single = len(op.results) == 1 and not op.results[0].variadic
    return outs[0] if single else tuple(outs)


def zeros(aval: Aval) -> Any:
    """Zeros of ``aval``'s shape and dtype, as jnp.zeros makes them, for the modules mlax.numpy
    is built on (autodiff, custom derivative rules)."""
    return bind("broadcast_in_dim", np.zeros((), aval.dtype), shape=aval.shape, broadcast_dimensions=())


__all__ = ["Aval", "Known", "SourceInfo", "Trace", "Tracer", "abstractify", "bind", "captures_logged",
           "concrete_mode", "current_trace", "is_array_like", "known_of", "mode_scope", "observed_binds",
           "observing", "opaque", "substituting", "suspended", "to_numpy", "trace_scope", "zeros"]


def with_weak_type(x: Any, weak: bool) -> Any:
    """The same value with JAX's weak-type flag set to ``weak`` (no op is emitted)."""
    if isinstance(x, Tracer):
        if x.aval.weak_type == weak:
            return x
        aval = Aval(x.aval.shape, x.aval.dtype, weak)
        return Tracer(x.trace, x.value, aval, x.origin, x.known)
    array = x if isinstance(x, Array) else Array._wrap(to_numpy(x))
    if array.weak_type == weak:
        return array
    return Array._wrap(array._value, weak)
