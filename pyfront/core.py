"""The tracing core: abstract values, tracers, the trace stack and `bind`.

`bind(op, *operands, **attrs)` is the one door through which every primitive passes.
Inside a trace it emits the mlax op at the user's source line; outside it evaluates the
op eagerly with the dialect's NumPy reference semantics. Either way the dialect's
inference rule checks the operands first, so eager and traced code fail alike.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
from mlir import ir

from mlax import dtypes as front_dtypes
from mlax.array_methods import ArrayMethods
from mlax.dialect import build, get_context, get_op, infer
from mlax.dialect.tensor_spec import TensorSpec
from mlax.errors import ConcretizationTypeError, UnexpectedTracerError
from mlax.source_info import SourceInfo, current_location, user_frame_info, where


@dataclass(frozen=True)
class Aval:
    """The abstract value of an array: static shape, dtype and JAX's weak-type flag."""

    shape: tuple[int, ...]
    dtype: np.dtype
    weak_type: bool = False

    @property
    def spec(self) -> TensorSpec:
        return TensorSpec(self.shape, self.dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"{self.dtype.name}{list(self.shape)}{weak}"


class Trace:
    """One function being traced: the block ops go into and what the errors should name.

    A trace started inside another (a function differentiated inside a traced program) has
    that one as ``parent``; a tracer of an enclosing trace used here is *captured*: it becomes
    an extra argument of this function, and the caller passes the enclosing value (closure
    conversion, as JAX does). A trace belongs to the thread that started it: its block lives
    in that thread's MLIR context, and other threads never see it as current.
    """

    def __init__(self, function_name: str, block: ir.Block, parent: Trace | None = None) -> None:
        self.function_name = function_name
        self.block = block
        self.active = True
        self.parent = parent
        self.thread = threading.current_thread().name
        self.captures: dict[int, tuple[Tracer, ir.Value]] = {}

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
            raise UnexpectedTracerError(x, self)
        array = to_numpy(x)
        (value,) = self.emit("constant", [], {"value": array})
        return value


class _ThreadTraces(threading.local):
    """Each thread's stack of traces, innermost last: tracing in one thread never changes
    what mlax calls in another do (as JAX keeps its trace state per thread)."""

    def __init__(self) -> None:
        self.stack: list[Trace] = []


_TRACES = _ThreadTraces()


def current_trace() -> Trace | None:
    """The innermost trace of this thread, or None outside any trace."""
    stack = _TRACES.stack
    return stack[-1] if stack else None


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


class Tracer(ArrayMethods):
    """A value of a function being traced: an `ir.Value` plus its abstract value."""

    __slots__ = ("value", "aval", "trace", "origin")
    __array_priority__ = 1000

    def __init__(self, trace: Trace, value: ir.Value, aval: Aval, origin: str) -> None:
        self.trace = trace
        self.value = value
        self.aval = aval
        self.origin = origin

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    def _concrete(self, conversion: str) -> Any:
        raise ConcretizationTypeError(self, conversion)

    def __bool__(self) -> bool:
        return self._concrete("bool()")

    def __int__(self) -> int:
        return self._concrete("int()")

    def __float__(self) -> float:
        return self._concrete("float()")

    def __complex__(self) -> complex:
        return self._concrete("complex()")

    def __index__(self) -> int:
        return self._concrete("an index (__index__)")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._concrete("a NumPy array (np.asarray)")

    def item(self, *args: Any) -> Any:
        return self._concrete(".item()")

    def tolist(self) -> Any:
        return self._concrete(".tolist()")

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Traced<{self.aval}> ({self.origin})"


def is_array_like(x: Any) -> bool:
    """mlax arrays and tracers, NumPy arrays and scalars, Python scalars, and jax.Arrays (code
    moving from JAX often still holds some: they are read as NumPy arrays)."""
    import jax

    from mlax.array import Array

    return isinstance(x, (Tracer, Array, np.ndarray, np.generic, jax.Array) + front_dtypes.PYTHON_SCALARS)


def to_numpy(x: Any) -> np.ndarray:
    """A concrete operand as a NumPy array in its canonical dtype."""
    from mlax.array import Array

    if type(x) is Array:  # not isinstance: tracers are instances of Array too
        return x._value
    if isinstance(x, Tracer):
        raise ConcretizationTypeError(x, "a concrete value")
    if front_dtypes.is_python_scalar(x):
        return np.asarray(x, dtype=front_dtypes.python_scalar_dtype(x))
    array = np.asarray(x)
    canonical = front_dtypes.canonicalize(array.dtype)
    if array.dtype != canonical:
        return array.astype(canonical)
    view = array.view()  # a read-only view: results never alias a writable user buffer
    view.flags.writeable = False
    return view


def abstractify(x: Any) -> Aval:
    if isinstance(x, Tracer):
        return x.aval
    from mlax.array import Array

    if isinstance(x, Array):
        return x.aval
    if front_dtypes.is_python_scalar(x):
        return Aval((), front_dtypes.python_scalar_dtype(x), not isinstance(x, bool))
    array = to_numpy(x)
    return Aval(array.shape, array.dtype, False)


def _find_trace(operands: tuple[Any, ...]) -> Trace | None:
    """The trace an op goes into: its tracers' trace; for an op with no operands (iota), the
    current one, so it is emitted rather than folded into a constant."""
    trace = current_trace()
    for x in operands:
        if isinstance(x, Tracer):
            if trace is None or not x.trace.active or not trace.encloses(x.trace):
                raise UnexpectedTracerError(x, trace)
            return trace
    return trace if not operands else None


def _weak_result(rule: str, avals: list[Aval]) -> bool:
    if rule == "all":
        return bool(avals) and all(a.weak_type for a in avals)
    if rule == "first":
        return bool(avals) and avals[0].weak_type
    if rule == "rest":
        return len(avals) > 1 and all(a.weak_type for a in avals[1:])
    return False


def bind(op_name: str, *operands: Any, **attrs: Any) -> Any:
    """Apply primitive ``op_name``: emit it into the current trace, or evaluate it eagerly."""
    from mlax.array import Array

    op = get_op(op_name)
    avals = [abstractify(x) for x in operands]
    try:
        out_specs = infer(op_name, [a.spec for a in avals], attrs)
    except (TypeError, ValueError) as err:
        raise type(err)(f"{err}{where()}") from None
    weak = _weak_result(op.weak_type, avals)
    out_avals = [Aval(s.shape, s.dtype, weak) for s in out_specs]
    trace = _find_trace(operands)
    if trace is None:
        with np.errstate(all="ignore"):
            results = op.reference(*(to_numpy(x) for x in operands), **attrs)
        if not isinstance(results, tuple):
            results = (results,)
        outs = [Array._wrap(np.asarray(r).astype(a.dtype, copy=False).reshape(a.shape), a.weak_type)
                for r, a in zip(results, out_avals, strict=True)]
    else:
        values = trace.emit(op_name, [trace.value_of(x) for x in operands], attrs)
        info = user_frame_info()
        origin = f"result of mlax.{op_name}" + (f" at {info}" if info else "")
        outs = [Tracer(trace, v, a, origin) for v, a in zip(values, out_avals, strict=True)]
    single = len(op.results) == 1 and not op.results[0].variadic
    return outs[0] if single else tuple(outs)


__all__ = ["Aval", "SourceInfo", "Trace", "Tracer", "abstractify", "bind", "current_trace",
           "is_array_like", "to_numpy", "trace_scope"]


def with_weak_type(x: Any, weak: bool) -> Any:
    """The same value with JAX's weak-type flag set to ``weak`` (no op is emitted)."""
    from mlax.array import Array

    if isinstance(x, Tracer):
        if x.aval.weak_type == weak:
            return x
        aval = Aval(x.aval.shape, x.aval.dtype, weak)
        return Tracer(x.trace, x.value, aval, x.origin)
    array = x if isinstance(x, Array) else Array._wrap(to_numpy(x))
    if array.weak_type == weak:
        return array
    return Array._wrap(array._value, weak)
