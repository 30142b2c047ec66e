"""`mlax.pure_callback`, `mlax.experimental.io_callback`, `mlax.effects_barrier`, and the staging
every host callback shares (mlax.debug builds on it).

Inside a trace a callback is registered with the runtime (mlax.backends.native.host_callbacks) and
the program gets a call of an `mlax.callback` declaration naming its id (dialect/callbacks.py);
each backend turns that call into a call of the Python function on the host
(docs/callbacks.md). Outside a trace the function just runs now. As in jax, the function gets
its array arguments as concrete `mlax.Array`s, rebuilt into the pytree it was given (leaves
that are not arrays pass through unchanged); a pure callback's results are checked against
``result_shape_dtypes`` (count, shapes, dtypes) and a mismatch is a RuntimeError with jax's
wording, as is an exception the function raises (the user's exception is its ``__cause__``).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from jax import tree_util
from mlir import ir
from mlir.dialects import func

from mlax import dtypes as front_dtypes
from mlax.array import Array
from mlax.backends.native.host_callbacks import HostCallback, register
from mlax.core import Aval, Tracer, current_trace, is_array_like, to_numpy
from mlax.dialect import get_context
from mlax.dialect.callbacks import VMAP_METHODS, callback_declarations, callee_of, declare_callback
from mlax.dialect.tensor_spec import TensorSpec
from mlax.errors import user_error
from mlax.passes.autodiff.callbacks import NO_JVP
from mlax.passes.symbols import unique_name
from mlax.source_info import current_location
from mlax.staging import with_known
from mlax.tracing import function_name


class CallArguments:
    """A call's ``(args, kwargs)`` split as jax splits them: array leaves are the callback's
    operands, any other leaf is static and passed through as it is."""

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        leaves, self.tree = tree_util.tree_flatten((args, kwargs))
        self.static = {i: x for i, x in enumerate(leaves) if not is_array_like(x)}
        self.operands = [x for i, x in enumerate(leaves) if i not in self.static]
        self.count = len(leaves)

    def rebuild(self, arrays: Sequence[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The ``(args, kwargs)`` with ``arrays`` in place of the operands."""
        given = iter(arrays)
        leaves = [self.static[i] if i in self.static else next(given) for i in range(self.count)]
        return tree_util.tree_unflatten(self.tree, leaves)


def _result_specs(result_shape_dtypes: Any, api: str = "mlax.pure_callback") -> tuple[list[TensorSpec], Any]:
    """The flat result specs and their structure; jax's errors for bad leaves."""
    leaves, tree = tree_util.tree_flatten(result_shape_dtypes)
    specs = []
    for leaf in leaves:
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise user_error(
                TypeError,
                f"result_shape_dtypes leaves must have shape and dtype "
                f"attributes (jax.ShapeDtypeStruct), got {leaf!r}",
                f"result_shape_dtypes of {api}",
            )
        dtype = np.dtype(leaf.dtype)
        if front_dtypes.canonicalize(dtype) != dtype:
            raise user_error(
                ValueError,
                "result_shape_dtypes cannot specify 64-bit types when `jax_enable_x64` is disabled",
                f"result_shape_dtypes of {api}",
            )
        specs.append(TensorSpec(tuple(leaf.shape), dtype))
    return specs, tree


def host_function(
    callback: Callable[..., Any], arguments: CallArguments, returns: bool
) -> Callable[[list[np.ndarray]], list[Any]]:
    """The flat function the runtime calls: NumPy operands in (fresh buffers, so they become
    Arrays without a copy), the result leaves out (none when not ``returns``)."""

    def run(operands: list[np.ndarray]) -> list[Any]:
        args, kwargs = arguments.rebuild([Array._wrap(o) for o in operands])
        out = callback(*args, **kwargs)
        return tree_util.tree_leaves(out) if returns else []

    return run


class _Silenced(threading.local):
    """Whether debug callbacks traced now are left out (`debug_effects_silenced`)."""

    def __init__(self) -> None:
        self.on = False


_SILENCED = _Silenced()


@contextlib.contextmanager
def debug_effects_silenced(on: bool = True) -> Iterator[None]:
    """Trace with debug callbacks left out (``on``) or kept: a vjp's pullback traces the
    function again, whose effects jax runs once, in the forward pass (a custom_vjp's bwd, which
    runs in the pullback, keeps its own: it is traced with ``on=False``)."""
    saved, _SILENCED.on = _SILENCED.on, on
    try:
        yield
    finally:
        _SILENCED.on = saved


def debug_effects_are_silenced() -> bool:
    return _SILENCED.on


def stage_callback(
    callback: Callable[..., Any],
    arguments: CallArguments,
    results: Sequence[TensorSpec],
    *,
    kind: str,
    api: str,
    ordered: bool = False,
    vmap_method: str | None = None,
) -> list[Any]:
    """Call ``callback`` on ``arguments``: now, outside a trace (returning Arrays), or from
    the traced program (returning its tracers)."""
    name = function_name(callback)
    returns = kind != "debug"
    trace = current_trace()
    if kind == "debug" and trace is not None and _SILENCED.on:
        return []
    host = HostCallback(host_function(callback, arguments, returns), name, api)
    if trace is None:
        outs = host([np.array(to_numpy(x)) for x in arguments.operands], results if returns else None)
        return [Array._wrap(np.array(o, copy=True)) for o in outs]
    callback_id = register(host)
    module = trace.block.owner.parent
    values = [trace.value_of(x) for x in arguments.operands]
    with get_context(), current_location():
        declaration = declare_callback(
            module,
            unique_name(module, f"{name}_callback"),
            [v.type for v in values],
            [s.to_mlir() for s in results],
            id=callback_id,
            kind=kind,
            ordered=ordered,
            callback_name=name,
            vmap_method=vmap_method,
            loc=current_location(),
        )
        with ir.InsertionPoint(trace.block):
            call = func.CallOp(
                [s.to_mlir() for s in results],
                ir.StringAttr(declaration.attributes["sym_name"]).value,
                values,
            )
    return [
        Tracer(trace, v, Aval(s.shape, s.dtype), f"result {i} of {api} {name}")
        for i, (v, s) in enumerate(zip(call.results, results, strict=True))
    ]


def check_callable(callback: Any, api: str) -> None:
    if not callable(callback):
        raise user_error(
            TypeError,
            f"first argument to {api} must be callable, but got an object of type {type(callback)}",
            f"callback of {api}",
        )


def pure_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    vmap_method: str | None = None,
    **kwargs: Any,
) -> Any:
    """Call a pure Python function on the host from a traced program (jax.pure_callback).

    The function gets Arrays and returns a pytree matching ``result_shape_dtypes``. Being
    pure, a call whose results are unused may be dropped. Under vmap, ``vmap_method`` says how
    it is batched ("sequential": once per element; "expand_dims" / "broadcast_all": once, with
    unbatched operands given a leading axis of 1 / of the batch size; "legacy_vectorized":
    once, unbatched operands as they are); without one, vmap is an error. It has no
    derivative: differentiate it with custom_jvp / custom_vjp. ``sharding`` is accepted and
    ignored (the callback runs on the host once per call)."""
    del sharding
    api = "mlax.pure_callback"
    check_callable(callback, api)
    if vmap_method is not None and vmap_method not in VMAP_METHODS:
        allowed = [*VMAP_METHODS, None]
        raise user_error(
            ValueError,
            f"vmap_method must be on of the allowed methods {allowed}, but got: {vmap_method}",
            f"vmap_method of {api}",
        )
    specs, out_tree = _result_specs(result_shape_dtypes)
    arguments = CallArguments(args, kwargs)
    outs = stage_callback(callback, arguments, specs, kind="pure", api=api, vmap_method=vmap_method)
    out = tree_util.tree_unflatten(out_tree, outs)
    if current_trace() is None:
        return out

    def eager(*operands: Any) -> Any:
        again, again_kwargs = arguments.rebuild(operands)
        return pure_callback(callback, result_shape_dtypes, *again, vmap_method=vmap_method, **again_kwargs)

    # grad and co. outside jit (concrete mode): being pure, the callback gives the value when asked for
    return with_known(out, tuple(arguments.operands), {}, eager)


def io_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args: Any,
    sharding: Any = None,
    ordered: bool = False,
    **kwargs: Any,
) -> Any:
    """Call an impure Python function on the host (jax.experimental.io_callback).

    As pure_callback, but the call is an effect: it is never dropped, even when its results are
    unused, nor merged with another; with ``ordered=True`` the calls of one program happen in
    program order (unordered ones may happen in any order). It has no derivative (a nonzero
    tangent on an operand is jax's "IO callbacks do not support JVP."); under vmap an unordered
    one is called once per batch element, in sequence (jax's lax.map), and an ordered one is
    jax's error "Cannot `vmap` ordered IO callback.". ``sharding`` is accepted and ignored."""
    del sharding
    api = "mlax.experimental.io_callback"
    check_callable(callback, api)
    specs, out_tree = _result_specs(result_shape_dtypes, api)
    arguments = CallArguments(args, kwargs)
    outs = stage_callback(callback, arguments, specs, kind="io", api=api, ordered=bool(ordered))
    return tree_util.tree_unflatten(out_tree, outs)


def effects_barrier() -> None:
    """Wait until the side effects of the programs already called have happened (jax's
    effects_barrier). mlax runs a program with host callbacks to its end before the call returns
    (so that a callback's error is raised by that call), so there is nothing left to wait for."""


def callback_jvp_error(module: ir.Operation, function: str, differentiated: Sequence[int]) -> str | None:
    """jax's error for a pure or io callback in ``function`` (of ``module``) whose operands depend
    on its ``differentiated`` arguments, None if there is none. jax meets that error while it
    differentiates, before it checks what grad's output is: grad's own checks ask here first."""
    declared = callback_declarations(module)
    body = ir.SymbolTable(module)[function].regions[0].blocks[0]
    wanted = set(differentiated)
    for op in body.operations:
        op = op.operation
        if op.name != "func.call" or callee_of(op) not in declared:
            continue
        kind = declared[callee_of(op)][1].fields["kind"]
        if kind in NO_JVP and any(_depends_on(value, body, wanted) for value in op.operands):
            return NO_JVP[kind]
    return None


def _depends_on(value: ir.Value, body: ir.Block, arguments: set[int]) -> bool:
    """Whether ``value`` is computed (in ``body``, through its ops) from one of its ``arguments``."""
    stack, seen = [value], set()
    while stack:
        v = stack.pop()
        if isinstance(v, ir.BlockArgument):
            if v.owner == body and v.arg_number in arguments:
                return True
            continue
        if v in seen:
            continue
        seen.add(v)
        stack.extend(v.owner.operands)
    return False

