"""mlax.custom_jvp: a function with a user-written JVP rule, as jax.custom_jvp.

Called inside a trace, the function and its rule are traced into private functions of the
module and joined by an `mlax.custom_jvp_call` declaration, which the program calls;
`mlax-autodiff` differentiates through it with the rule (and otherwise makes it a call of the
function). Called outside a trace, the function simply runs. The rule must be linear in the
tangents for reverse mode (as in JAX, where custom_jvp rules are transposed too).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from jax import tree_util
from mlir import ir

from mlax.autodiff import _call, _trace_callee
from mlax.core import current_trace
from mlax.dialect import get_context
from mlax.dialect.transforms import declare_transform
from mlax.errors import check_callable, user_error
from mlax.passes.symbols import unique_name
from mlax.source_info import current_location
from mlax.tracing import function_name


class custom_jvp:  # noqa: N801 (JAX's name)
    """Decorator: ``f = custom_jvp(f)``, then ``@f.defjvp`` on ``rule(primals, tangents) ->
    (primal_out, tangent_out)``. ``nondiff_argnums`` arguments are passed to the rule first
    and are not differentiated (they must not be traced values)."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        check_callable(fun, "fun of mlax.custom_jvp")
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None
        self._tracing_rule = False
        functools.update_wrapper(self, fun)

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        self.jvp = jvp
        return jvp

    def __call__(self, *args: Any) -> Any:
        if self.jvp is None:
            raise user_error(AttributeError, f"No JVP defined for custom_jvp function "
                             f"{function_name(self.fun)} using defjvp.", "the rule of mlax.custom_jvp")
        trace = current_trace()
        if trace is None or self._tracing_rule:  # inside its own rule f is its plain function
            return self.fun(*args)
        static = tuple(args[i] for i in self.nondiff_argnums)
        dynamic = tuple(a for i, a in enumerate(args) if i not in self.nondiff_argnums)

        def primal(*dyn: Any) -> Any:
            full = list(dyn)
            for i, value in sorted(zip(self.nondiff_argnums, static, strict=True)):
                full.insert(i, value)
            return self.fun(*full)

        primal.__name__ = function_name(self.fun)
        sub, leaves, in_tree = _trace_callee(primal, dynamic, trace)
        n = len(leaves)

        def rule(*flat: Any) -> Any:
            primals = tree_util.tree_unflatten(in_tree, list(flat[:n]))[0]
            tangents = tree_util.tree_unflatten(in_tree, list(flat[n:]))[0]
            pair = self.jvp(*static, primals, tangents)
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise user_error(TypeError, "Custom JVP rule must produce a pair (list or tuple of length "
                                 "two) representing primal and tangent outputs, but got "
                                 f"{type(pair).__name__}",
                                 f"the rule of custom_jvp function {function_name(self.fun)}")
            return [*tree_util.tree_leaves(pair[0]), *tree_util.tree_leaves(pair[1])]

        rule.__name__ = f"{function_name(self.fun)}_rule"
        self._tracing_rule = True
        try:
            rule_sub, _, _ = _trace_callee(rule, tuple(leaves) * 2, trace)
        finally:
            self._tracing_rule = False
        _check_rule_outputs(sub.out_avals, rule_sub.out_avals, function_name(self.fun))
        if sub.captured or rule_sub.captured:
            raise user_error(TypeError, f"custom_jvp function {function_name(self.fun)} (or its rule) uses a "
                             "value of the enclosing traced function; pass it as an argument instead")
        module = trace.block.owner.parent
        with get_context(), current_location():
            name = unique_name(module, f"{sub.name}_custom_jvp")
            declared = declare_transform(module, "custom_jvp_call", name, callee=sub.name, jvp=rule_sub.name)
        results = _call(trace, name, ir.FunctionType(declared.type), leaves, sub.out_avals,
                        f"result of custom_jvp {function_name(self.fun)}")
        return tree_util.tree_unflatten(sub.out_tree, results)


class custom_vjp:  # noqa: N801 (JAX's name)
    """Decorator: ``f = custom_vjp(f)``, then ``f.defvjp(fwd, bwd)`` with ``fwd(*args) ->
    (out, residuals)`` and ``bwd(residuals, cotangent) -> tuple of cotangents, one per
    argument`` (None for a zero one). ``nondiff_argnums`` arguments are passed to fwd and bwd
    first and are not differentiated. Reverse mode only, as in JAX."""

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()) -> None:
        check_callable(fun, "fun of mlax.custom_vjp")
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self._tracing_rules = False
        functools.update_wrapper(self, fun)

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        self.fwd, self.bwd = fwd, bwd

    def __call__(self, *args: Any) -> Any:
        if self.fwd is None or self.bwd is None:
            raise user_error(AttributeError, f"No VJP defined for custom_vjp function "
                             f"{function_name(self.fun)} using defvjp.", "the rules of mlax.custom_vjp")
        trace = current_trace()
        if trace is None or self._tracing_rules:
            return self.fun(*args)
        static = tuple(args[i] for i in self.nondiff_argnums)
        dynamic = tuple(a for i, a in enumerate(args) if i not in self.nondiff_argnums)

        def with_static(*dyn: Any) -> list[Any]:
            full = list(dyn)
            for i, value in sorted(zip(self.nondiff_argnums, static, strict=True)):
                full.insert(i, value)
            return full

        def primal(*dyn: Any) -> Any:
            return self.fun(*with_static(*dyn))

        primal.__name__ = function_name(self.fun)
        sub, leaves, in_tree = _trace_callee(primal, dynamic, trace)
        n_out = len(sub.out_avals)
        residual_tree: list[Any] = []

        def fwd(*flat: Any) -> list[Any]:
            dyn = tree_util.tree_unflatten(in_tree, list(flat))[0]
            out, residuals = self.fwd(*with_static(*dyn))
            residual_leaves, tree = tree_util.tree_flatten(residuals)
            residual_tree.append(tree)
            return [*tree_util.tree_leaves(out), *residual_leaves]

        def bwd(*flat: Any) -> list[Any]:
            count = residual_tree[0].num_leaves
            residuals = tree_util.tree_unflatten(residual_tree[0], list(flat[:count]))
            cotangent = tree_util.tree_unflatten(sub.out_tree, list(flat[count:]))
            cts = self.bwd(*static, residuals, cotangent)
            if not isinstance(cts, tuple) or len(cts) != len(dynamic):
                got = f"a tuple of length {len(cts)}" if isinstance(cts, tuple) else type(cts).__name__
                raise user_error(TypeError, "Custom VJP bwd rule must produce a tuple of length equal to the "
                                 f"number of arguments to the primal function ({len(dynamic)}), got {got}",
                                 f"bwd of custom_vjp function {function_name(self.fun)}")
            out = []
            for arg, ct in zip(dynamic, cts, strict=True):
                leaves = tree_util.tree_leaves(arg)
                given = tree_util.tree_leaves(ct) if ct is not None else [None] * len(leaves)
                out += [_cotangent_like(leaf, c, function_name(self.fun))
                        for leaf, c in zip(leaves, given, strict=True)]
            return out

        fwd.__name__, bwd.__name__ = f"{sub.name}_fwd", f"{sub.name}_bwd"
        self._tracing_rules = True
        try:
            fwd_sub, _, _ = _trace_callee(fwd, tuple(leaves), trace)
            residual_avals = fwd_sub.out_avals[n_out:]
            bwd_sub, _, _ = _trace_callee(bwd, (*[_placeholder(a) for a in residual_avals],
                                                *[_placeholder(a) for a in sub.out_avals]), trace)
        finally:
            self._tracing_rules = False
        if sub.captured or fwd_sub.captured or bwd_sub.captured:
            raise user_error(TypeError, f"custom_vjp function {function_name(self.fun)} (or fwd/bwd) uses a "
                             "value of the enclosing traced function; pass it as an argument instead")
        module = trace.block.owner.parent
        with get_context(), current_location():
            name = unique_name(module, f"{sub.name}_custom_vjp")
            declared = declare_transform(module, "custom_vjp_call", name, callee=sub.name, fwd=fwd_sub.name,
                                         bwd=bwd_sub.name)
        results = _call(trace, name, ir.FunctionType(declared.type), leaves, sub.out_avals,
                        f"result of custom_vjp {function_name(self.fun)}")
        return tree_util.tree_unflatten(sub.out_tree, results)


def _cotangent_like(leaf: Any, cotangent: Any, name: str) -> Any:
    """A custom_vjp bwd's cotangent for the primal input ``leaf`` (zeros for None), checked and
    converted to the input's dtype."""
    import mlax.numpy as mnp

    like = mnp.asarray(leaf)
    if cotangent is None:
        return mnp.zeros(like.shape, like.dtype)
    if mnp.shape(cotangent) != like.shape:
        raise user_error(ValueError, "Custom VJP bwd rule must produce an output with the same shapes as the "
                         f"args tuple of the primal function, but it produced shape {mnp.shape(cotangent)} "
                         f"for an input of shape {like.shape}", f"bwd of custom_vjp function {name}")
    return mnp.asarray(cotangent, like.dtype)


def _check_rule_outputs(out_avals: Sequence[Any], rule_avals: Sequence[Any], name: str) -> None:
    """JAX's check of a custom_jvp rule: primal outputs like the function's, and tangents of
    the same shapes and dtypes."""
    def text(avals: Sequence[Any]) -> str:
        return "(" + ", ".join(f"{a.dtype.name}{list(a.shape)}" for a in avals) + ")"

    expected = [*out_avals, *out_avals]
    if len(rule_avals) != len(expected) or any(
            a.shape != b.shape or a.dtype != b.dtype for a, b in zip(expected, rule_avals, strict=True)):
        raise user_error(TypeError, "Custom JVP rule must produce primal and tangent outputs with "
                         f"corresponding shapes and dtypes. Expected {text(out_avals)} for each, but got "
                         f"{text(rule_avals[:len(out_avals)])} and {text(rule_avals[len(out_avals):])}.",
                         f"the rule of custom_jvp function {name}")


def _placeholder(aval: Any) -> Any:
    """A concrete stand-in of an abstract value, only to give a traced function its argument types."""
    import numpy as np

    from mlax.array import Array

    return Array._wrap(np.zeros(aval.shape, aval.dtype), aval.weak_type)


def checkpoint(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``jax.checkpoint`` (``remat``): marks ``fun`` with an `mlax.checkpoint` declaration.

    The values are exactly ``fun``'s; `mlax-autodiff` differentiates through it like any call.
    It does not yet trade memory for recomputation (derivative programs are flattened and
    every primal value is kept), which only matters for memory, never for the numbers."""

    @functools.wraps(fun)
    def wrapped(*args: Any) -> Any:
        trace = current_trace()
        if trace is None:
            return fun(*args)
        sub, leaves, _ = _trace_callee(fun, args, trace)
        module = trace.block.owner.parent
        with get_context(), current_location():
            name = unique_name(module, f"{sub.name}_checkpoint")
            declared = declare_transform(module, "checkpoint", name, callee=sub.name)
        results = _call(trace, name, ir.FunctionType(declared.type), [*leaves, *sub.captured], sub.out_avals,
                        f"result of checkpoint {function_name(fun)}")
        return tree_util.tree_unflatten(sub.out_tree, results)

    return wrapped


remat = checkpoint
