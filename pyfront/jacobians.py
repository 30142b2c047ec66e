"""mlax.jacfwd, jacrev (jacobian) and hessian, as jax's: vmap of jvp over the input basis, or of
the vjp over the output basis; one batched program per input (or output) leaf. Built on
mlax.autodiff, mlax.vjp_object and mlax.batching, above all three.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import tree_util

from mlax.autodiff import _check_float_inputs, _check_float_output, _positions, jvp
from mlax.avals import Aval
from mlax.batching import vmap
from mlax.core import abstractify
from mlax.errors import check_callable, user_error
from mlax.numpy import asarray
from mlax.vjp_object import vjp


def _stacked_basis(avals: Sequence[Aval], position: int) -> list[np.ndarray]:
    """Batched (leading axis: the elements of leaf ``position``) one-hot values for a list of
    leaves: the identity for that leaf, zeros for the others."""
    size = int(np.prod(avals[position].shape, dtype=np.int64))
    return [np.eye(size, dtype=np.dtype(a.dtype)).reshape((size, *a.shape)) if k == position
            else np.zeros((size, *a.shape), np.dtype(a.dtype)) for k, a in enumerate(avals)]


def _jacobian(fun: Callable[..., Any], argnums: int | Sequence[int], forward: bool,
              holomorphic: bool = False, has_aux: bool = False) -> Callable[..., Any]:
    """jacfwd (vmap of jvp over the input basis) or jacrev (vmap of the vjp over the output
    basis), as jax: one batched program per input (or output) leaf, no loop over elements;
    pytrees in and out: the result has the output's structure, each leaf holding the input's
    structure (a tuple over argnums when argnums is a tuple). With ``has_aux``, ``fun`` returns
    ``(output, aux)`` and the result is ``(jacobian, aux)``, aux as the primal call gives it."""
    api = "jacfwd" if forward else "jacrev"
    check_callable(fun, f"fun of mlax.{api}")

    @functools.wraps(fun)
    def jacobian(*args: Any) -> Any:
        nums = _positions(argnums, args, f"mlax.{api}")
        _check_float_inputs(fun, args, nums, api, holomorphic)
        chosen = tuple(args[i] for i in nums)
        in_leaves, in_tree = tree_util.tree_flatten(chosen)
        # as jax's, fun sees arrays where it is handed Python scalars (``x.sum()`` works)
        in_leaves = [asarray(leaf) if isinstance(leaf, (bool, int, float, complex)) else leaf
                     for leaf in in_leaves]

        def call(*leaves: Any) -> Any:
            full = list(args)
            for i, value in zip(nums, tree_util.tree_unflatten(in_tree, list(leaves)), strict=True):
                full[i] = value
            return fun(*full)

        def partial(*leaves: Any) -> Any:
            return _split_aux(call(*leaves), api)[0] if has_aux else call(*leaves)

        in_avals = [abstractify(leaf) for leaf in in_leaves]
        aux = None
        if forward:
            out = call(*in_leaves)
            if has_aux:
                out, aux = _split_aux(out, api)
        elif has_aux:
            out, pull, aux = vjp(lambda *leaves: _split_aux(call(*leaves), api), *in_leaves, has_aux=True)
        else:
            out, pull = vjp(partial, *in_leaves)
        out_leaves, out_tree = tree_util.tree_flatten(out)
        out_avals = [abstractify(leaf) for leaf in out_leaves]
        if not forward or holomorphic:
            for aval in out_avals:
                _check_float_output(aval, fun, api, holomorphic)
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
        result = tree_util.tree_unflatten(out_tree, per_output)
        return (result, aux) if has_aux else result

    return jacobian


def _split_aux(out: Any, api: str) -> tuple[Any, Any]:
    if not (isinstance(out, tuple) and len(out) == 2):
        raise user_error(TypeError, f"mlax.{api} with has_aux=True: the function must return a pair "
                         f"(output, aux), got {type(out).__name__}",
                         f"the output of the function of mlax.{api}")
    return out


def jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by forward mode: vmap of jvp over the input basis (complex inputs and
    outputs with ``holomorphic=True``; ``has_aux``: ``fun`` returns ``(output, aux)``, as jax)."""
    return _jacobian(fun, argnums, forward=True, holomorphic=holomorphic, has_aux=has_aux)


def jacrev(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by reverse mode: vmap of the vjp over the output basis (complex
    inputs allowed; complex outputs with ``holomorphic=True``; ``has_aux`` as jax)."""
    return _jacobian(fun, argnums, forward=False, holomorphic=holomorphic, has_aux=has_aux)


jacobian = jacrev  # jax's alias


def hessian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable[..., Any]:
    """The Hessian of a scalar ``fun``: jacfwd of jacrev, as jax.hessian (``has_aux`` too)."""
    check_callable(fun, "fun of mlax.hessian")
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums, has_aux=has_aux,
                  holomorphic=holomorphic)
