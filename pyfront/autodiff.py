"""mlax.jvp, grad, value_and_grad: differentiation as IR (vjp and linearize, whose functions
are pytrees, are in mlax.vjp_object and re-exported here; jacfwd, jacrev and hessian, built on
them and vmap, in mlax.jacobians).

Inside a traced program, a transformation of ``fun`` traces ``fun`` into a private function
of the same module (values of the enclosing program it uses become extra arguments), declares
an `mlax.jvp` / `mlax.vjp` of it (dialect/transforms.py) and calls the declaration; the
`mlax-autodiff` pass writes the derivative when the program is compiled. Outside a trace the
same code runs under `jit`, so eager and jitted calls share one path (and derivatives of
derivatives are just more declarations); pyfront/staging.py retraces such a call with concrete
values where the user's Python needs them, as jax's eager grad sees them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import dtypes as jax_dtypes
from jax import tree_util
from mlir import ir
from mlir.dialects import func

from mlax import dtypes as front_dtypes
from mlax.callbacks import callback_jvp_error
from mlax.core import (
    Aval,
    Known,
    Trace,
    Tracer,
    abstractify,
    current_trace,
    held_tracer,
    is_array_like,
    known_of,
    zeros,
)
from mlax.cotangent_types import cotangent_aval
from mlax.dialect import dtypes as mlir_dtypes
from mlax.dialect import get_context
from mlax.dialect.transforms import declare_transform
from mlax.errors import check_callable, index_tuple, user_error
from mlax.passes.symbols import unique_name
from mlax.source_info import current_location
from mlax.staging import Staged, as_static, aux_static, restore_static, static_arguments, wraps
from mlax.tracing import (
    SubFunction,
    _leaf_type_error,
    checkify_bodies,
    flatten_arguments,
    function_name,
    trace_subfunction,
)

_FLOAT0 = np.dtype(jax_dtypes.float0)


def _positional_names(fun: Callable[..., Any], count: int) -> list[str]:
    import inspect

    try:
        params = [p.name for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return params[:count] + [f"args[{i}]" for i in range(len(params), count)]


def _leaf_offsets(in_tree: Any) -> list[int]:
    """Where each positional argument's leaves start among the leaves of ``(args, {})``'s
    ``in_tree`` (static objects have none), and the end."""
    counts = [child.num_leaves for child in in_tree.children()[0].children()]
    return [int(k) for k in np.cumsum([0, *counts])]


def _trace_callee(fun: Callable[..., Any], args: tuple[Any, ...], trace: Trace,
                  differentiated: Sequence[int] | None = None,
                  traced_for: str = "jit", knowns: Sequence[Known | None] | None = None
                  ) -> tuple[SubFunction, list[Any], Any]:
    """Trace ``fun`` on ``args`` into a private function of ``trace``'s module. Non-array
    objects outside the ``differentiated`` positions reach ``fun`` as they are (static). With
    ``differentiated`` (the positions the transformation differentiates), concrete mode gives
    the function's arguments their values (pyfront/core.py `Known`); without, they stay abstract
    unless ``knowns`` (one per leaf of ``args``) says what concrete mode knows of each.
    ``traced_for`` names the transformation, as jax's tracer reprs and errors do."""
    marked = () if differentiated is None else tuple(differentiated)
    placed, _ = static_arguments(args, {}, marked)
    leaves, in_tree, paths = flatten_arguments((placed, {}), function_name(fun),
                                               _positional_names(fun, len(args)))
    avals = [abstractify(leaf) for leaf in leaves]
    starts = _leaf_offsets(in_tree)
    flags = [False] * len(leaves)
    for i in marked:
        flags[starts[i]:starts[i + 1]] = [True] * (starts[i + 1] - starts[i])
    if knowns is None:
        knowns = [None if differentiated is None else known_of(leaf, flag)
                  for leaf, flag in zip(leaves, flags, strict=True)]

    def build_args(tracers: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        for tracer, known in zip(tracers, knowns, strict=True):
            tracer.known = known
        return restore_static(tree_util.tree_unflatten(in_tree, tracers))

    return trace_subfunction(fun, build_args, avals, paths, trace, traced_for), leaves, in_tree


def _declare(trace: Trace, kind: str, callee: str, **fields: Any) -> tuple[str, ir.FunctionType]:
    module = trace.block.owner.parent
    with get_context(), current_location():
        name = unique_name(module, f"{callee}_{kind}")
        op = declare_transform(module, kind, name, callee=callee, **fields)
    return name, ir.FunctionType(op.type)


def _call(trace: Trace, symbol: str, function_type: ir.FunctionType, operands: Sequence[Any],
          avals: Sequence[Aval], origin: str) -> list[Tracer]:
    values = [trace.value_of(x) for x in operands]
    with get_context(), ir.InsertionPoint(trace.block), current_location():
        call = func.CallOp(list(function_type.results), symbol, values)
    return [Tracer(trace, v, a, origin) for v, a in zip(call.results, avals, strict=True)]


def _traced(run: Callable[..., Any], fun: Callable[..., Any] | None = None,
            differentiated: bool = False, static_outputs: bool = False) -> Callable[..., Any]:
    """``run(trace, *args)`` inside the current trace, or as a program of its own outside one
    (pyfront/staging.py: compiled and cached per signature, retraced concretely where Python
    needs values). With ``fun``, the arguments are ``fun``'s: errors name its parameters;
    ``static_outputs``: the results may hold an aux output's objects (staging.aux_static)."""
    return Staged(run, fun, differentiated, static_outputs)


def _positions(argnums: Any, args: tuple[Any, ...], api: str) -> tuple[int, ...]:
    """``argnums`` as positions in ``args`` (negative ones count from the end), checked as JAX."""
    nums = index_tuple(argnums, "argnums", api)
    if not nums:
        raise user_error(ValueError, "argnums=() selects no argument to differentiate", f"argnums of {api}")
    for i in nums:
        if not -len(args) <= i < len(args):
            raise user_error(ValueError, "Positional argument indices, e.g. for `argnums`, must have value "
                             "greater than or equal to -len(args) and less than len(args), but got value "
                             f"{i} for len(args) == {len(args)}.", f"argnums of {api}")
    return tuple(i % len(args) for i in nums)


def _input_problem(dtype: np.dtype, what: str, holomorphic: bool, argument: str) -> str | None:
    """JAX's objection to differentiating with respect to an input of ``dtype``, or None: with
    holomorphic=True inputs are complex; otherwise floats, and complex numbers too in reverse
    mode (grad, jacrev)."""
    if holomorphic:
        if not mlir_dtypes.is_complex(dtype):
            return (f"{what} with holomorphic=True requires inputs with complex dtype, but argument "
                    f"{argument} has dtype {dtype.name}.")
        return None
    if mlir_dtypes.is_complex(dtype) and what == "jacfwd":
        return ("jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), but "
                f"argument {argument} has dtype {dtype.name}. For holomorphic differentiation, pass "
                "holomorphic=True. For differentiation of non-holomorphic functions involving complex "
                "inputs, use mlax.jvp directly.")
    if not mlir_dtypes.is_inexact(dtype):
        return (f"{what} requires real- or complex-valued inputs (a float or complex dtype), but argument "
                f"{argument} has dtype {dtype.name}. Integer and boolean inputs have no derivative: leave "
                "them out of argnums.")
    return None


def _check_float_inputs(fun: Callable[..., Any], args: tuple[Any, ...], nums: Sequence[int],
                        what: str, holomorphic: bool = False) -> None:
    names = _positional_names(fun, len(args))
    for i in nums:
        for path, leaf in tree_util.tree_flatten_with_path(args[i])[0]:
            if not is_array_like(leaf):  # objects may only be in arguments not differentiated
                raise _leaf_type_error(f"{names[i]}{tree_util.keystr(path)}", leaf, function_name(fun))
            argument = f"{names[i]}{tree_util.keystr(path)} of {function_name(fun)}"
            problem = _input_problem(np.dtype(abstractify(leaf).dtype), what, holomorphic, argument)
            if problem is not None:
                raise user_error(TypeError, problem, argument)


def _check_float_output(aval: Aval, fun: Callable[..., Any], what: str, holomorphic: bool = False) -> None:
    dtype = np.dtype(aval.dtype)
    if holomorphic:
        problem = (None if mlir_dtypes.is_complex(dtype) else
                   f"{what} with holomorphic=True requires outputs with complex dtype, but got {dtype.name}.")
    elif mlir_dtypes.is_complex(dtype):
        problem = (f"{what} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
                   f"but got {dtype.name}. For holomorphic differentiation, pass holomorphic=True. For "
                   "differentiation of non-holomorphic functions involving complex outputs, use mlax.vjp "
                   "directly.")
    elif not mlir_dtypes.is_float(dtype):
        problem = (f"{what} requires real-valued outputs (a float dtype), but got {dtype.name}. For "
                   "differentiation of functions with integer outputs, use mlax.vjp directly.")
    else:
        problem = None
    if problem is not None:
        raise user_error(TypeError, problem, f"the output of {function_name(fun)}")


def _unsupported_options(allow_int: bool) -> None:
    if allow_int:
        raise user_error(NotImplementedError, "allow_int=True is not supported yet: leave integer arguments "
                         "out of argnums", "allow_int")


def value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """``fun``'s value and its gradient with respect to the ``argnums`` arguments (as jax)."""
    return _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, "mlax.value_and_grad")


def _closed_over_rest(fun: Callable[..., Any], args: tuple[Any, ...], nums: Sequence[int], single: bool,
                      transform: Callable[[Callable[..., Any], Any], Any], trace: Trace) -> Any:
    """``transform`` of ``fun`` as a function of its ``nums`` arguments alone, the others bound
    as they are (jax's argnums_partial: a Python bool stays a bool), run in ``trace``."""
    kept = sorted(set(nums))
    fixed = {i: restore_static(a) for i, a in enumerate(args) if i not in kept}

    def closed(*dynamic: Any) -> Any:
        given = iter(dynamic)
        return fun(*(fixed[i] if i in fixed else next(given) for i in range(len(args))))

    closed = wraps(fun)(closed)
    if hasattr(closed, "__wrapped__"):
        del closed.__wrapped__  # its parameters are the kept arguments, not fun's
    renumbered = kept.index(nums[0]) if single else tuple(kept.index(i) for i in nums)
    return transform(closed, renumbered)._run(trace, *(args[i] for i in kept))


def _value_and_grad(fun: Callable[..., Any], argnums: Any, has_aux: bool, holomorphic: bool,
                    allow_int: bool, api: str) -> Callable[..., Any]:
    check_callable(fun, f"fun of {api}")
    _unsupported_options(allow_int)

    def run(trace: Trace, *args: Any, **kwargs: Any) -> Any:
        from mlax import refs

        if kwargs:  # as jax: keyword arguments reach fun, never differentiated
            bound = wraps(fun)(functools.partial(fun, **kwargs))
            inner = _value_and_grad(bound, argnums, has_aux, holomorphic, allow_int, api)
            return inner._run(trace, *args)  # type: ignore[attr-defined]
        if refs.any_alive() and not refs.threaded(fun):  # refs it writes: auxiliary outputs (refs.py)
            return refs.grad_refs(_value_and_grad, fun, argnums, has_aux, holomorphic, allow_int, api, args)
        most = max(index_tuple(argnums, "argnums", api), default=0)
        if most >= len(args):
            raise user_error(TypeError, f"differentiating with respect to argnums={argnums} requires at "
                             f"least {most + 1} positional arguments to be passed by the caller, but got "
                             f"only {len(args)} positional arguments.", f"argnums of {api}")
        nums = _positions(argnums, args, api)
        _check_float_inputs(fun, args, nums, "grad", holomorphic)
        if len(set(nums)) < len(args):  # as jax, the other arguments reach fun as they are (closed over)
            return _closed_over_rest(fun, args, nums, isinstance(argnums, int),
                                     lambda f, n: _value_and_grad(f, n, has_aux, holomorphic, allow_int, api),
                                     trace)
        errors = None if getattr(fun, "carries_errors", False) else checkify_bodies(trace)
        if errors:  # in a checkified function: the forward pass's errors as auxiliary outputs
            inner = _value_and_grad(errors.with_aux(fun, has_aux), argnums, True, holomorphic, allow_int, api)
            (value, aux), gradient = inner._run(trace, *args)  # type: ignore[attr-defined]
            errors.finish(aux[1] if has_aux else aux)
            return ((value, aux[0]) if has_aux else value), gradient
        sub, leaves, in_tree = _trace_callee(aux_static(fun) if has_aux else fun, args, trace, nums, "grad")
        output = f"the output of {function_name(fun)}"
        if has_aux and (sub.out_tree.num_leaves == 0 or len(sub.out_tree.children()) != 2):
            raise user_error(TypeError, "expected function with aux output to return a two-element tuple, "
                             f"but it returned {sub.out_tree}", output)
        n_out = sub.out_tree.children()[0].num_leaves if has_aux else sub.out_tree.num_leaves
        if n_out != 1 or sub.out_avals[0].shape != ():
            offsets = _leaf_offsets(in_tree)
            error = callback_jvp_error(trace.block.owner.parent, sub.name,
                                       [p for i in nums for p in range(offsets[i], offsets[i + 1])])
            if error is not None:  # jax differentiates first: a callback's error comes first
                raise user_error(ValueError, error, f"the callbacks of {function_name(fun)}")
            shapes = [tuple(a.shape) for a in sub.out_avals[:n_out]]
            raise user_error(TypeError, "Gradient only defined for scalar-output functions. Output had "
                             f"shape: {shapes[0] if len(shapes) == 1 else shapes}.", output)
        out_aval = sub.out_avals[0]
        _check_float_output(out_aval, fun, "grad", holomorphic)
        offsets = _leaf_offsets(in_tree)
        positions = [p for i in nums for p in range(offsets[i], offsets[i + 1])]
        name, ftype = _declare(trace, "vjp", sub.name, argnums=tuple(positions))
        cotangents = [np.ones((), np.dtype(out_aval.dtype))] + [zeros(a) for a in sub.out_avals[n_out:]]
        real_output = not mlir_dtypes.is_complex(np.dtype(out_aval.dtype))
        result_avals = [*sub.out_avals, *(cotangent_aval(trace, sub.name, p, leaves[p], holomorphic,
                                                         real_output) for p in positions)]
        results = _call(trace, name, ftype, [*leaves, *sub.captured, *cotangents], result_avals,
                        f"gradient of {function_name(fun)}")
        outs, grads = results[:len(sub.out_avals)], results[len(sub.out_avals):]
        value = tree_util.tree_unflatten(sub.out_tree, outs)
        per_arg, k = [], 0
        for i in nums:
            count = offsets[i + 1] - offsets[i]
            per_arg.append(tree_util.tree_unflatten(tree_util.tree_structure(args[i]), grads[k:k + count]))
            k += count
        gradient = per_arg[0] if isinstance(argnums, int) else tuple(per_arg)
        return value, gradient

    staged = _traced(run, fun, static_outputs=has_aux)

    @wraps(fun)
    def value_and_grad_fun(*args: Any, **kwargs: Any) -> Any:
        if current_trace() is None:  # a program of its own: its Python scalars would be traced
            args = _python_scalars_static(args, argnums, api)
        return staged(*args, **kwargs)

    value_and_grad_fun._run = staged._run  # type: ignore[attr-defined]
    return value_and_grad_fun


def _python_scalars_static(args: tuple[Any, ...], argnums: Any, api: str) -> tuple[Any, ...]:
    """``args`` with the Python scalars outside ``argnums`` as static objects: jax's grad
    passes those arguments as they are (a bool for Python control flow)."""
    try:
        nums = set(_positions(argnums, args, api))
    except (TypeError, ValueError):
        return args  # run reports the bad argnums
    scalar = front_dtypes.is_python_scalar
    flags = [[i not in nums and scalar(leaf) for leaf in tree_util.tree_leaves(a)]
             for i, a in enumerate(args)]
    return tuple(as_static(a, f) if any(f) else a for a, f in zip(args, flags, strict=True))


def grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """The gradient of a scalar-valued ``fun`` with respect to the ``argnums`` arguments."""
    both = _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, "mlax.grad")

    @functools.wraps(fun)
    def gradient(*args: Any, **kwargs: Any) -> Any:
        value, g = both(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return gradient


def _type_text(aval: Aval) -> str:
    """An aval as JAX prints it in type errors: ``float32[2,3]``."""
    return f"{np.dtype(aval.dtype).name}[{','.join(map(str, aval.shape))}]"


def _checked_tangents(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, ...]:
    """JAX's checks of jvp's tangents: leaf by leaf the primal's shape, and its dtype (float0
    for an integer or boolean primal, which mlax carries as zeros of the primal's dtype)."""
    primal_tree, tangent_tree = tree_util.tree_structure(primals), tree_util.tree_structure(tangents)
    if primal_tree != tangent_tree:
        raise user_error(TypeError, "primal and tangent arguments to mlax.jvp must have the same tree "
                         f"structure; primals have tree structure {primal_tree} whereas tangents have tree "
                         f"structure {tangent_tree}.", "tangents of mlax.jvp")
    given = tree_util.tree_leaves(tangents)
    float0 = [getattr(t, "dtype", None) == _FLOAT0 for t in given]
    stand_ins = tuple(np.zeros(np.shape(t), np.bool_) if zero else t
                      for t, zero in zip(given, float0, strict=True))
    leaves, _, paths = flatten_arguments(((primals, stand_ins), {}), "mlax.jvp", ["primals", "tangents"])
    n = len(given)
    checked = []
    for p, t, zero, path in zip(leaves[:n], leaves[n:], float0, paths[n:], strict=True):
        pa, ta = abstractify(p), abstractify(t)
        expected = pa.dtype if mlir_dtypes.is_inexact(np.dtype(pa.dtype)) else _FLOAT0
        got = _FLOAT0 if zero else ta.dtype
        if got != expected:
            raise user_error(TypeError, "primal and tangent arguments to mlax.jvp do not match; dtypes "
                             "must be equal, or in case of int/bool primal dtype the tangent dtype must be "
                             f"float0. Got primal dtype {pa.dtype} and so expected tangent dtype {expected}, "
                             f"but got tangent dtype {got} instead.", f"{path} of mlax.jvp")
        if pa.shape != ta.shape:
            raise user_error(ValueError, "jvp called with different primal and tangent shapes; got primal "
                             f"shape {pa.shape} and tangent shape as {ta.shape}", f"{path} of mlax.jvp")
        checked.append(np.zeros(pa.shape, pa.dtype) if zero else t)
    return tree_util.tree_unflatten(tangent_tree, checked)


def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple[Any, ...]:
    """``(fun(*primals), d fun(primals) . tangents)``: forward mode, as jax.jvp (``(out, tangent,
    aux)`` with ``has_aux``). As in jax, an output ``fun`` did not trace (a Python float, a
    constant array) comes back as it was, its tangent zero (equinox's filter_jvp relies on it)."""
    check_callable(fun, "fun of mlax.jvp")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise user_error(TypeError, "primal and tangent arguments to mlax.jvp must be tuples or lists; found "
                         f"{type(primals).__name__} and {type(tangents).__name__}.", "primals of mlax.jvp")
    primals = tuple(primals)
    tangents = _checked_tangents(primals, tuple(tangents))

    def run(trace: Trace, primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
        returned: list[Any] = []

        def recorded(*args: Any) -> Any:
            returned.append(out := fun(*args))
            return out

        callee = wraps(fun)(recorded)
        sub, leaves, _ = _trace_callee(aux_static(callee) if has_aux else callee, primals, trace,
                                       range(len(primals)), "jvp")
        out_tree = sub.out_tree
        if has_aux:
            if len(out_tree.children()) != 2:
                raise user_error(TypeError, "expected function with aux output to return a two-element "
                                 f"tuple, but it returned {out_tree}", f"the output of {function_name(fun)}")
            out_tree, aux_tree = out_tree.children()
        tangent_leaves = tree_util.tree_leaves(tangents)
        captured_zeros = [zeros(abstractify(c)) for c in sub.captured]
        name, ftype = _declare(trace, "jvp", sub.name)
        avals = [*sub.out_avals, *sub.out_avals]
        results = _call(trace, name, ftype, [*leaves, *sub.captured, *tangent_leaves, *captured_zeros], avals,
                        f"jvp of {function_name(fun)}")
        n, n_out = len(sub.out_avals), out_tree.num_leaves
        raw = tree_util.tree_leaves(returned[-1][0] if has_aux else returned[-1])
        outs = results[:n_out]
        if len(raw) == n_out:
            flags = [held_tracer(leaf) is None for leaf in raw]
            outs = as_static([r if f else o for r, o, f in zip(raw, outs, flags, strict=True)], flags)
        primal_out = tree_util.tree_unflatten(out_tree, outs)
        tangent_out = tree_util.tree_unflatten(out_tree, results[n:n + n_out])
        if has_aux:
            return primal_out, tangent_out, tree_util.tree_unflatten(aux_tree, results[n_out:n])
        return primal_out, tangent_out

    return _traced(run, static_outputs=True)(primals, tangents)


def __getattr__(name: str) -> Any:
    """vjp, linearize and fwd_and_bwd live in mlax.vjp_object (their functions are pytrees),
    which builds on this module: imported on first use."""
    if name in ("vjp", "linearize", "fwd_and_bwd"):
        import mlax.vjp_object

        return getattr(mlax.vjp_object, name)
    raise AttributeError(f"module 'mlax.autodiff' has no attribute {name!r}")
