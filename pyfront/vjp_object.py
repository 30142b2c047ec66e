"""mlax.vjp, linearize and fwd_and_bwd: their functions are pytrees, as jax's.

jax 0.10.2 returns from ``jax.vjp`` a `VJP` object (a pytree whose leaves are the residuals,
so it can be passed to and returned from a jitted function, or mapped with tree_map) and from
``jax.linearize`` a ``jax.tree_util.Partial``. mlax does the same, with one difference of
content: mlax keeps no residuals (the vjp and jvp declarations are resolved by `mlax-autodiff`
when the program is compiled), so the leaves are the primal inputs and calling the function
runs the forward pass again inside the derivative program. The static part of the pytree (its
treedef's data) names the user's function by identity, so a jitted function taking a VJP is
traced once per function and signature, not once per vjp call.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import tree_util

from mlax.api import staged_jit
from mlax.autodiff import (
    _FLOAT0,
    _call,
    _declare,
    _leaf_offsets,
    _positional_names,
    _positions,
    _trace_callee,
    _traced,
    _type_text,
    jvp,
)
from mlax.callbacks import debug_effects_silenced
from mlax.core import Aval, Trace, abstractify, current_trace, zeros
from mlax.cotangent_types import cotangent_aval
from mlax.dialect import dtypes as mlir_dtypes
from mlax.errors import check_callable, index_tuple, user_error
from mlax.staging import aux_static
from mlax.tracing import flatten_arguments, function_name


class _Meta:
    """The static part of a `VJP` (its treedef's data): hashable, equal for the same function
    (by identity), argnums and output structure, so jit's cache keys on it."""

    __slots__ = ("fun", "origin", "closure", "argnums", "has_aux", "in_tree", "out_tree", "out_avals")

    def __init__(self, fun: Callable[..., Any], argnums: tuple[int, ...], has_aux: bool, in_tree: Any,
                 out_tree: Any, out_avals: tuple[Aval, ...],
                 origin: Callable[..., Any] | None = None, closure: tuple[int, ...] = ()) -> None:
        self.fun, self.argnums, self.has_aux = fun, argnums, has_aux
        self.origin = fun if origin is None else origin  # the user's function, for identity
        self.closure = closure  # the identities of the values the snapshot holds (_snapshot)
        self.in_tree, self.out_tree, self.out_avals = in_tree, out_tree, out_avals

    def _key(self) -> tuple[Any, ...]:
        return (self.argnums, self.has_aux, self.in_tree, self.out_tree, self.out_avals, self.closure)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Meta) and self.origin is other.origin and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((id(self.origin), self._key()))


def _closure_ids(fun: Callable[..., Any]) -> tuple[int, ...]:
    """The identities of the values ``fun`` closes over: two snapshots of one function are the
    same function (for jit's cache) only when they hold the same objects."""
    cells = getattr(fun, "__closure__", None) or ()
    ids = []
    for cell in cells:
        try:
            ids.append(id(cell.cell_contents))
        except ValueError:  # an empty cell
            ids.append(0)
    return tuple(ids)


def _snapshot(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``fun`` with the variables it closes over bound to their values now. jax runs the forward
    pass when vjp is called and keeps residuals; mlax runs it again when the VJP is called, so a
    closed-over variable the caller rebinds in between (jax's gradient-checkpointing guide rebinds
    ``in_tree``) must keep the value it had at the vjp call. Values are not copied (as jax's
    residuals, a mutated object is seen mutated); empty cells stay shared."""
    cells = getattr(fun, "__closure__", None)
    if not isinstance(fun, types.FunctionType) or not cells:
        return fun
    fresh = []
    for cell in cells:
        try:
            fresh.append(types.CellType(cell.cell_contents))
        except ValueError:
            fresh.append(cell)
    copy = types.FunctionType(fun.__code__, fun.__globals__, fun.__name__, fun.__defaults__, tuple(fresh))
    copy.__kwdefaults__, copy.__dict__ = fun.__kwdefaults__, dict(fun.__dict__)
    copy.__qualname__, copy.__module__, copy.__doc__ = fun.__qualname__, fun.__module__, fun.__doc__
    copy.__wrapped__ = fun  # type: ignore[attr-defined]
    return copy


class VJP:
    """The function ``jax.vjp`` returns: ``f_vjp(cotangent)`` gives the cotangents of the
    differentiated arguments (a tuple, one per argument). A pytree (leaves: the primal inputs),
    so it may cross a jit boundary either way."""

    __slots__ = ("meta", "primals")

    def __init__(self, meta: _Meta, primals: tuple[Any, ...]) -> None:
        self.meta, self.primals = meta, tuple(primals)

    @property
    def fun(self) -> Callable[..., Any]:
        return self.meta.fun

    @property
    def in_tree(self) -> Any:
        return self.meta.in_tree

    @property
    def out_tree(self) -> Any:
        return self.meta.out_tree

    @property
    def args_res(self) -> list[Any]:
        """The residuals taken from the arguments (here all of them; jax's own name)."""
        return tree_util.tree_leaves(self.primals)

    @property
    def opaque_residuals(self) -> list[Any]:
        """Residuals computed by the forward pass: none, mlax recomputes them."""
        return []

    def __call__(self, out_ct: Any, *extra: Any) -> tuple[Any, ...]:
        meta = self.meta
        if extra:
            raise user_error(TypeError, "The function returned by mlax.vjp applied to "
                             f"{function_name(meta.fun)} was called with {len(extra) + 1} arguments, but "
                             "functions returned by mlax.vjp must be called with a single argument "
                             "corresponding to the single value returned by the function being "
                             "differentiated (even if that is a tuple).",
                             "the arguments of the function vjp returned")
        _check_cotangent(out_ct, meta)
        return _pullback(meta.fun, meta.argnums, meta.has_aux)(self.primals, out_ct)

    def __repr__(self) -> str:
        return f"VJP(fun={function_name(self.meta.fun)}, in_tree={self.in_tree}, out_tree={self.out_tree})"


tree_util.register_pytree_node(VJP, lambda v: (v.primals, v.meta), lambda meta, primals: VJP(meta, primals))


def _check_cotangent(cotangent: Any, meta: _Meta) -> None:
    """JAX's checks of the argument of the function vjp returns: the structure of the output,
    and leaf by leaf its shape and dtype."""
    name = function_name(meta.fun)
    if tree_util.tree_structure(cotangent) != meta.out_tree:
        raise user_error(ValueError, "unexpected tree structure of the argument to the VJP function: it "
                         f"must match the structure {meta.out_tree} of the output of {name}, but got "
                         f"{tree_util.tree_structure(cotangent)}.", "the argument of the function vjp "
                         "returned")
    leaves, _, paths = flatten_arguments(((cotangent,), {}), "the VJP function", ["cotangent"])
    for leaf, path, want in zip(leaves, paths, meta.out_avals, strict=True):
        got = abstractify(leaf)
        if got.shape != want.shape or got.dtype != want.dtype:
            raise user_error(ValueError, "unexpected type (e.g. shape/dtype) for argument to VJP function: "
                             f"got {_type_text(got)}, but expected {_type_text(want)} because the "
                             f"corresponding output of the differentiated function {name} had type "
                             f"{_type_text(want)}", f"{path} of the function vjp returned")


def _forward(fun: Callable[..., Any], has_aux: bool = False) -> Callable[..., Any]:
    """``fun`` run as the forward pass: its float inputs count as differentiated (float() of them
    is refused in concrete mode, as jax refuses it); with ``has_aux``, ``fun`` is aux_static's
    (the aux output's objects come back as they are)."""
    return _traced(lambda trace, *p: fun(*p), fun, differentiated=True, static_outputs=has_aux)


def _pullback(fun: Callable[..., Any], argnums: tuple[int, ...], has_aux: bool) -> Callable[..., Any]:
    """``pull(primals, cotangent)``: the cotangents of the ``argnums`` arguments, one per
    argument, from an `mlax.vjp` declaration of ``fun``."""

    def pullback(trace: Trace, p: tuple[Any, ...], cotangent: Any) -> tuple[Any, ...]:
        with debug_effects_silenced():  # the forward pass ran them already
            sub, leaves, in_tree = _trace_callee(fun, p, trace, argnums, "vjp")
        ct_leaves = tree_util.tree_leaves(cotangent)
        if has_aux:
            ct_leaves = ct_leaves + [zeros(a) for a in sub.out_avals[len(ct_leaves):]]
        offsets = _leaf_offsets(in_tree)
        positions = [k for i in argnums for k in range(offsets[i], offsets[i + 1])]
        name, ftype = _declare(trace, "vjp", sub.name, argnums=tuple(positions))
        avals = [*sub.out_avals, *(cotangent_aval(trace, sub.name, k, leaves[k]) for k in positions)]
        results = _call(trace, name, ftype, [*leaves, *sub.captured, *ct_leaves], avals,
                        f"vjp of {function_name(fun)}")
        cotangents, per_arg = results[len(sub.out_avals):], []
        for i in argnums:
            count = offsets[i + 1] - offsets[i]
            per_arg.append(tree_util.tree_unflatten(tree_util.tree_structure(p[i]), cotangents[:count]))
            cotangents = cotangents[count:]
        return tuple(per_arg)

    return _traced(pullback)


def _vjp(fun: Callable[..., Any], primals: tuple[Any, ...], argnums: tuple[int, ...], has_aux: bool,
         api: str) -> tuple[Any, ...]:
    """``(out, VJP)`` or ``(out, VJP, aux)``: the forward pass now, the pullback when called."""
    flatten_arguments((primals, {}), function_name(fun), _positional_names(fun, len(primals)))  # arrays only
    origin = fun
    fun = snapshot = _snapshot(fun) if current_trace() is None else fun
    if has_aux:
        fun = aux_static(fun)
    out = _forward(fun, has_aux)(*primals)
    if has_aux and not (isinstance(out, tuple) and len(out) == 2):
        raise user_error(TypeError, "expected function with aux output to return a two-element tuple, but "
                         f"got {type(out).__name__}", f"the output of {function_name(fun)} ({api})")
    value = out[0] if has_aux else out
    out_leaves, out_tree = tree_util.tree_flatten(value)
    meta = _Meta(fun, argnums, has_aux, tree_util.tree_structure(primals), out_tree,
                 tuple(abstractify(leaf) for leaf in out_leaves), origin, _closure_ids(snapshot))
    f_vjp = VJP(meta, primals)
    return (value, f_vjp, out[1]) if has_aux else (out, f_vjp)


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(fun(*primals), f_vjp)`` where ``f_vjp(cotangent)`` gives the cotangents of the
    primals (a tuple, one per primal), as jax.vjp; ``f_vjp`` is a pytree (`VJP`)."""
    check_callable(fun, "fun of mlax.vjp")
    return _vjp(fun, primals, tuple(range(len(primals))), has_aux, "mlax.vjp")


class _Linearized:
    """The function inside linearize's Partial: ``(primals, *tangents) -> JVP``, checked as
    jax checks it; hashable by the function's identity (jit keys on it)."""

    def __init__(self, fun: Callable[..., Any], has_aux: bool, in_tree: Any,
                 in_avals: tuple[Aval, ...]) -> None:
        self.fun, self.has_aux, self.in_tree, self.in_avals = fun, has_aux, in_tree, in_avals

    def _key(self) -> tuple[Any, ...]:
        return (self.has_aux, self.in_tree, self.in_avals)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Linearized) and self.fun is other.fun and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((id(self.fun), self._key()))

    def __call__(self, primals: tuple[Any, ...], *tangents: Any) -> Any:
        tangent_leaves, tangent_tree = tree_util.tree_flatten(tangents)
        if tangent_tree != self.in_tree:
            raise user_error(TypeError, f"expected {self.in_tree}, got {tangent_tree}",
                             "the tangents given to the function linearize returned")
        for primal, leaf in zip(self.in_avals, tangent_leaves, strict=True):
            got = abstractify(leaf)
            got_dtype = _FLOAT0 if getattr(leaf, "dtype", None) == _FLOAT0 else np.dtype(got.dtype)
            inexact = mlir_dtypes.is_inexact(np.dtype(primal.dtype))
            expected = Aval(primal.shape, np.dtype(primal.dtype) if inexact else _FLOAT0)
            if got.shape != expected.shape or got_dtype != expected.dtype:
                raise user_error(ValueError, "linearized function called on tangent values inconsistent with "
                                 "the original primal values:\nGot tangent aval "
                                 f"{_type_text(Aval(got.shape, got_dtype))} for primal aval "
                                 f"{_type_text(primal)} but expected {_type_text(expected)}.",
                                 "the tangents given to the function linearize returned")
        fun = self.fun
        target = (lambda *p: fun(*p)[0]) if self.has_aux else fun
        return jvp(target, primals, tangents)[1]


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(fun(*primals), f_jvp)`` (``(out, f_jvp, aux)`` with ``has_aux``), where
    ``f_jvp(*tangents)`` is the JVP at ``primals``, as jax.linearize; ``f_jvp`` is a
    ``jax.tree_util.Partial`` whose leaves are the primals (each call runs forward mode
    again: mlax does no partial evaluation)."""
    check_callable(fun, "fun of mlax.linearize")
    out = _forward(aux_static(fun) if has_aux else fun, has_aux)(*primals)
    if has_aux and not (isinstance(out, tuple) and len(out) == 2):
        raise user_error(TypeError, "expected function with aux output to return a two-element tuple, but "
                         f"got {type(out).__name__}", f"the output of {function_name(fun)} (mlax.linearize)")
    leaves, in_tree = tree_util.tree_flatten(primals)
    f_jvp = tree_util.Partial(_Linearized(fun, has_aux, in_tree, tuple(abstractify(x) for x in leaves)),
                              tuple(primals))
    return (out[0], f_jvp, out[1]) if has_aux else (out, f_jvp)


def fwd_and_bwd(fun: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """jax.fwd_and_bwd: ``fwd(*args) -> (out, f_vjp)`` (``(out, f_vjp, aux)`` with
    ``has_aux``) and ``bwd(f_vjp, cotangent)`` -> the cotangents of the ``argnums`` arguments
    (one, for an int ``argnums``), both jitted unless ``jitted=False``. As jax, keyword arguments
    of ``fwd`` do not reach ``fun``. The backward program reruns the forward pass (no residuals)."""
    check_callable(fun, "fun of mlax.fwd_and_bwd")
    index_tuple(argnums, "argnums", "mlax.fwd_and_bwd")

    def fwd(*args: Any, **kwargs: Any) -> tuple[Any, ...]:
        del kwargs  # jax's fwd drops them too
        return _vjp(fun, args, _positions(argnums, args, "mlax.fwd_and_bwd"), has_aux, "mlax.fwd_and_bwd")

    def bwd(f_vjp: VJP, outgrad: Any) -> Any:
        g = f_vjp(outgrad)
        return g[0] if isinstance(argnums, int) else g

    if jitted:
        return staged_jit(fwd), staged_jit(bwd)
    return fwd, bwd
