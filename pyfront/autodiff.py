"""mlax.jvp, vjp, grad, value_and_grad, jacfwd, jacrev, hessian: differentiation as IR.

Inside a traced program, a transformation of ``fun`` traces ``fun`` into a private function
of the same module (values of the enclosing program it uses become extra arguments), declares
an `mlax.jvp` / `mlax.vjp` of it (dialect/transforms.py) and calls the declaration; the
`mlax-autodiff` pass writes the derivative when the program is compiled. Outside a trace the
same code runs under `jit`, so eager and jitted calls share one path (and derivatives of
derivatives are just more declarations).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import tree_util
from mlir import ir
from mlir.dialects import func

from mlax.core import Aval, Trace, Tracer, abstractify, current_trace
from mlax.dialect import dtypes as mlir_dtypes
from mlax.dialect import get_context
from mlax.dialect.transforms import declare_transform
from mlax.passes.symbols import unique_name
from mlax.source_info import current_location
from mlax.tracing import SubFunction, flatten_arguments, function_name, trace_subfunction


def _positional_names(fun: Callable[..., Any], count: int) -> list[str]:
    import inspect

    try:
        params = [p.name for p in inspect.signature(fun).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return params[:count] + [f"args[{i}]" for i in range(len(params), count)]


def _trace_callee(fun: Callable[..., Any], args: tuple[Any, ...],
                  trace: Trace) -> tuple[SubFunction, list[Any], Any]:
    leaves, in_tree, paths = flatten_arguments((args, {}), function_name(fun),
                                               _positional_names(fun, len(args)))
    avals = [abstractify(leaf) for leaf in leaves]

    def build_args(tracers: list[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return tree_util.tree_unflatten(in_tree, tracers)

    return trace_subfunction(fun, build_args, avals, paths, trace), leaves, in_tree


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


def _zeros(aval: Aval) -> Any:
    import mlax.numpy as mnp

    return mnp.zeros(aval.shape, aval.dtype)


def _traced(run: Callable[..., Any]) -> Callable[..., Any]:
    """``run(trace, *args)`` inside the current trace, or under a jit of its own outside one
    (one jit per transformed function, so eager calls are compiled and cached too)."""
    from mlax.api import jit

    jitted = jit(lambda *args: run(current_trace(), *args))

    @functools.wraps(run)
    def call(*args: Any) -> Any:
        trace = current_trace()
        return run(trace, *args) if trace is not None else jitted(*args)

    return call


def _check_float_inputs(fun: Callable[..., Any], args: tuple[Any, ...], nums: Sequence[int],
                        what: str) -> None:
    names = _positional_names(fun, len(args))
    for i in nums:
        if not 0 <= i < len(args):
            raise ValueError(f"{what}: argnums {i} is out of range for {len(args)} positional arguments "
                             f"of {function_name(fun)}")
        for leaf in tree_util.tree_leaves(args[i]):
            dtype = abstractify(leaf).dtype
            if not mlir_dtypes.is_float(np.dtype(dtype)):
                raise TypeError(
                    f"{what} requires real-valued inputs (a float dtype), but argument {names[i]} of "
                    f"{function_name(fun)} has dtype {np.dtype(dtype).name}. Integer and boolean inputs "
                    "have no derivative: leave them out of argnums.")


def _unsupported_options(holomorphic: bool, allow_int: bool) -> None:
    if holomorphic:
        raise NotImplementedError("holomorphic=True: mlax has no complex dtypes yet")
    if allow_int:
        raise NotImplementedError("allow_int=True is not supported yet: leave integer arguments out of "
                                  "argnums")


def value_and_grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """``fun``'s value and its gradient with respect to the ``argnums`` arguments (as jax)."""
    _unsupported_options(holomorphic, allow_int)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def run(trace: Trace, *args: Any) -> Any:
        _check_float_inputs(fun, args, nums, "grad")
        sub, leaves, _ = _trace_callee(fun, args, trace)
        if has_aux and (sub.out_tree.num_leaves == 0 or len(sub.out_tree.children()) != 2):
            raise TypeError(f"{function_name(fun)} with has_aux=True must return a pair (out, aux)")
        n_out = sub.out_tree.children()[0].num_leaves if has_aux else sub.out_tree.num_leaves
        if n_out != 1 or sub.out_avals[0].shape != ():
            shapes = [tuple(a.shape) for a in sub.out_avals[:n_out]]
            raise TypeError(f"Gradient only defined for scalar-output functions. Output of "
                            f"{function_name(fun)} had shape: {shapes[0] if len(shapes) == 1 else shapes}.")
        out_aval = sub.out_avals[0]
        if not mlir_dtypes.is_float(np.dtype(out_aval.dtype)):
            raise TypeError(f"grad requires a real-valued output, got {np.dtype(out_aval.dtype).name}")
        offsets = np.cumsum([0] + [len(tree_util.tree_leaves(a)) for a in args])
        positions = [p for i in nums for p in range(offsets[i], offsets[i + 1])]
        name, ftype = _declare(trace, "vjp", sub.name, argnums=tuple(positions))
        cotangents = [np.ones((), np.dtype(out_aval.dtype))] + [_zeros(a) for a in sub.out_avals[n_out:]]
        result_avals = [*sub.out_avals, *(abstractify(leaves[p]) for p in positions)]
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

    return _traced(run)


def grad(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """The gradient of a scalar-valued ``fun`` with respect to the ``argnums`` arguments."""
    both = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def gradient(*args: Any) -> Any:
        value, g = both(*args)
        return (g, value[1]) if has_aux else g

    return gradient


def jvp(fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """``(fun(*primals), d fun(primals) . tangents)``: forward mode, as jax.jvp."""
    primals, tangents = tuple(primals), tuple(tangents)
    if tree_util.tree_structure(primals) != tree_util.tree_structure(tangents):
        raise TypeError("jvp: primals and tangents must have the same tree structure, got "
                        f"{tree_util.tree_structure(primals)} and {tree_util.tree_structure(tangents)}")

    def run(trace: Trace, primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
        sub, leaves, _ = _trace_callee(fun, primals, trace)
        tangent_leaves = tree_util.tree_leaves(tangents)
        for p, t in zip(leaves, tangent_leaves, strict=True):
            pa, ta = abstractify(p), abstractify(t)
            if pa.shape != ta.shape:
                raise ValueError(f"jvp: a tangent has shape {ta.shape} for a primal of shape {pa.shape}")
        captured_zeros = [_zeros(abstractify(c)) for c in sub.captured]
        name, ftype = _declare(trace, "jvp", sub.name)
        avals = [*sub.out_avals, *sub.out_avals]
        results = _call(trace, name, ftype, [*leaves, *sub.captured, *tangent_leaves, *captured_zeros], avals,
                        f"jvp of {function_name(fun)}")
        n = len(sub.out_avals)
        return (tree_util.tree_unflatten(sub.out_tree, results[:n]),
                tree_util.tree_unflatten(sub.out_tree, results[n:]))

    return _traced(run)(primals, tangents)


def linearize(fun: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the JVP at ``primals``, as
    jax.linearize (each call of f_jvp runs forward mode again; no partial evaluation yet)."""
    out = _traced(lambda trace, *p: fun(*p))(*primals)

    def f_jvp(*tangents: Any) -> Any:
        return jvp(fun, primals, tangents)[1]

    return out, f_jvp


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(fun(*primals), vjp_fn)`` where ``vjp_fn(cotangent)`` gives the cotangents of the
    primals (a tuple, one per primal), as jax.vjp."""
    def forward(*p: Any) -> Any:
        return fun(*p)

    def pullback(trace: Trace, p: tuple[Any, ...], cotangent: Any) -> Any:
        sub, leaves, _ = _trace_callee(fun, p, trace)
        ct_leaves = tree_util.tree_leaves(cotangent)
        if has_aux:
            ct_leaves = ct_leaves + [_zeros(a) for a in sub.out_avals[len(ct_leaves):]]
        name, ftype = _declare(trace, "vjp", sub.name, argnums=tuple(range(len(leaves))))
        avals = [*sub.out_avals, *(abstractify(leaf) for leaf in leaves)]
        results = _call(trace, name, ftype, [*leaves, *sub.captured, *ct_leaves], avals,
                        f"vjp of {function_name(fun)}")
        return tree_util.tree_unflatten(tree_util.tree_structure(p), results[len(sub.out_avals):])

    out = _traced(lambda trace, *p: forward(*p))(*primals)
    pull = _traced(pullback)

    def vjp_fn(cotangent: Any) -> tuple[Any, ...]:
        return pull(primals, cotangent)

    if has_aux:
        value, aux = out
        return value, vjp_fn, aux
    return out, vjp_fn


def _stacked_basis(avals: Sequence[Aval], position: int) -> list[np.ndarray]:
    """Batched (leading axis: the elements of leaf ``position``) one-hot values for a list of
    leaves: the identity for that leaf, zeros for the others."""
    size = int(np.prod(avals[position].shape, dtype=np.int64))
    return [np.eye(size, dtype=np.dtype(a.dtype)).reshape((size, *a.shape)) if k == position
            else np.zeros((size, *a.shape), np.dtype(a.dtype)) for k, a in enumerate(avals)]


def _jacobian(fun: Callable[..., Any], argnums: int | Sequence[int], forward: bool) -> Callable[..., Any]:
    """jacfwd (vmap of jvp over the input basis) or jacrev (vmap of the vjp over the output
    basis), as jax: one batched program per input (or output) leaf, no loop over elements;
    pytrees in and out: the result has the output's structure, each leaf holding the input's
    structure (a tuple over argnums when argnums is a tuple)."""
    from mlax.batching import vmap

    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def jacobian(*args: Any) -> Any:
        _check_float_inputs(fun, args, nums, "jacfwd" if forward else "jacrev")
        chosen = tuple(args[i] for i in nums)
        in_leaves, in_tree = tree_util.tree_flatten(chosen)

        def partial(*leaves: Any) -> Any:
            full = list(args)
            for i, value in zip(nums, tree_util.tree_unflatten(in_tree, list(leaves)), strict=True):
                full[i] = value
            return fun(*full)

        in_avals = [abstractify(leaf) for leaf in in_leaves]
        if forward:
            out = partial(*in_leaves)
        else:
            out, pull = vjp(partial, *in_leaves)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_avals = [abstractify(leaf) for leaf in out_leaves]
        blocks: list[list[Any]] = [[None] * len(in_leaves) for _ in out_leaves]
        if forward:
            for j, in_aval in enumerate(in_avals):
                tangents = _stacked_basis(in_avals, j)
                columns = vmap(lambda *t: tree_util.tree_leaves(jvp(partial, in_leaves, t)[1]))(*tangents)
                for o, out_aval in enumerate(out_avals):  # (in elements, *out shape) -> out shape + in shape
                    column = columns[o].reshape((-1, *out_aval.shape))
                    order = (*range(1, len(out_aval.shape) + 1), 0)
                    blocks[o][j] = column.transpose(order).reshape((*out_aval.shape, *in_aval.shape))
        else:
            for o, out_aval in enumerate(out_avals):
                cotangents = tree_util.tree_unflatten(out_tree, _stacked_basis(out_avals, o))
                rows = vmap(lambda c: list(pull(c)))(cotangents)
                for j, in_aval in enumerate(in_avals):
                    blocks[o][j] = rows[j].reshape((*out_aval.shape, *in_aval.shape))
        per_output = []
        for row in blocks:
            structured = tree_util.tree_unflatten(in_tree, row)
            per_output.append(structured[0] if isinstance(argnums, int) else structured)
        return tree_util.tree_unflatten(out_tree, per_output)

    return jacobian


def jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by forward mode: vmap of jvp over the input basis."""
    return _jacobian(fun, argnums, forward=True)


def jacrev(fun: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by reverse mode: vmap of the vjp over the output basis."""
    return _jacobian(fun, argnums, forward=False)


def hessian(fun: Callable[..., Any], argnums: int = 0) -> Callable[..., Any]:
    """The Hessian of a scalar ``fun``: jacfwd of jacrev, as jax.hessian."""
    return jacfwd(jacrev(fun, argnums), argnums)
