"""mlax.lax custom_root and custom_linear_solve: solvers differentiated implicitly, never
through their iterations (as jax.lax).

custom_root is a custom_jvp, as in jax: at the solution x* of f(x) = 0 the tangent is
-(df/dx)^-1 (df/dparams . dparams), solved with the user's ``tangent_solve`` on the
linearization of f; reverse mode transposes that, so ``tangent_solve`` must be linear in
its right-hand side (as jax requires). custom_linear_solve is a custom_vjp: the cotangent of
``b`` is ``transpose_solve`` applied to the transposed matvec, and the parameters of
``matvec`` get minus the matvec's cotangent at the solution. It is reverse mode only (jax's
primitive also has a forward-mode rule; mlax's jvp of it raises, naming custom_vjp).
Values ``f``, ``matvec`` and ``solve`` close over become explicit arguments by
closure_convert, so their derivatives flow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jax import tree_util

from mlax.autodiff import jvp
from mlax.closure import closure_convert
from mlax.custom_derivatives import custom_jvp, custom_vjp
from mlax.lax.common import operand as as_operand
from mlax.lax.creation import full_like
from mlax.lax.elementwise import neg
from mlax.source_info import where

Solver = Callable[[Callable[[Any], Any], Any], Any]


def _operands(tree: Any) -> Any:
    return tree_util.tree_map(as_operand, tree)


def _check_structure(fname: str, what: str, got: Any, want: Any) -> None:
    got_tree, want_tree = tree_util.tree_structure(got), tree_util.tree_structure(want)
    if got_tree != want_tree:
        raise TypeError(f"{fname}: {what} must have the same tree structure as its input, got {got_tree} and "
                        f"{want_tree}{where()}")


def _split_aux(fname: str, out: Any, has_aux: bool) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"{fname}: with has_aux=True, solve must return a pair (solution, aux){where()}")
    return out[0], out[1]


def _neg(tree: Any) -> Any:
    return tree_util.tree_map(neg, tree)


def custom_root(f: Callable[[Any], Any], initial_guess: Any, solve: Solver, tangent_solve: Solver,
                has_aux: bool = False) -> Any:
    """``solve(f, initial_guess)``, a root of ``f``, with derivatives by the implicit function
    theorem: ``tangent_solve(g, y)`` must solve the linear ``g(x) = y``."""
    guess = _operands(initial_guess)
    f_flat, f_consts = closure_convert(f, guess)
    solve_flat, solve_consts = closure_convert(lambda g: solve(f, g), guess)

    def linearize_and_solve(x: Any, rhs: Any, consts: tuple[Any, ...]) -> Any:
        return tangent_solve(lambda v: jvp(lambda u: f_flat(u, *consts), (x,), (v,))[1], rhs)

    @custom_jvp
    def root(f_params: tuple[Any, ...], solve_params: tuple[Any, ...], start: Any) -> Any:
        return solve_flat(start, *solve_params)

    @root.defjvp
    def root_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        f_params, solve_params, start = primals
        out = root(f_params, solve_params, start)
        solution, aux = _split_aux("mlax.lax.custom_root", out, has_aux)
        _, rhs = jvp(lambda params: f_flat(solution, *params), (f_params,), (tangents[0],))
        solution_dot = _neg(linearize_and_solve(solution, rhs, f_params))
        if not has_aux:
            return out, solution_dot
        return out, (solution_dot, tree_util.tree_map(lambda leaf: full_like(leaf, 0), aux))

    out = root(tuple(f_consts), tuple(solve_consts), guess)
    _check_structure("mlax.lax.custom_root", "solve's solution", _split_aux("mlax.lax.custom_root", out,
                                                                           has_aux)[0], guess)
    return out


def custom_linear_solve(matvec: Callable[[Any], Any], b: Any, solve: Solver,
                        transpose_solve: Solver | None = None, symmetric: bool = False,
                        has_aux: bool = False) -> Any:
    """``solve(matvec, b)``, the x with ``matvec(x) = b`` for the linear ``matvec``, with
    derivatives through the linear system rather than the solver (reverse mode)."""
    from mlax.autodiff import vjp  # served by mlax.vjp_object, which loads jit (mlax.api)

    b = _operands(b)
    if symmetric:
        transpose_solve = solve
    matvec_flat, matvec_consts = closure_convert(matvec, b)
    solve_flat, solve_consts = closure_convert(lambda rhs: solve(matvec, rhs), b)
    n_matvec = len(matvec_consts)

    @custom_vjp
    def linear_solve(params: tuple[Any, ...], rhs: Any) -> Any:
        return solve_flat(rhs, *params[n_matvec:])

    def forward(params: tuple[Any, ...], rhs: Any) -> tuple[Any, Any]:
        out = linear_solve(params, rhs)
        return out, (params, _split_aux("mlax.lax.custom_linear_solve", out, has_aux)[0])

    def backward(residuals: tuple[Any, Any], cotangent: Any) -> tuple[Any, Any]:
        params, x = residuals
        if transpose_solve is None:
            raise TypeError("mlax.lax.custom_linear_solve: transpose_solve is required for reverse-mode "
                            "differentiation (or pass symmetric=True)")
        x_bar = cotangent[0] if has_aux else cotangent
        mv = lambda v: matvec_flat(v, *params[:n_matvec])  # noqa: E731
        _, transposed = vjp(mv, x)  # mv is linear: its pullback anywhere is its transpose
        vecmat = lambda w: transposed(w)[0]  # noqa: E731
        b_bar = _split_aux("mlax.lax.custom_linear_solve", transpose_solve(vecmat, x_bar), has_aux)[0]
        _, pullback = vjp(lambda *p: matvec_flat(x, *p), *params[:n_matvec])
        matvec_bar = pullback(_neg(b_bar))
        return (tuple(matvec_bar) + (None,) * (len(params) - n_matvec), b_bar)

    linear_solve.defvjp(forward, backward)
    out = linear_solve(tuple(matvec_consts) + tuple(solve_consts), b)
    _check_structure("mlax.lax.custom_linear_solve", "solve's solution",
                     _split_aux("mlax.lax.custom_linear_solve", out, has_aux)[0], b)
    return out


__all__ = ["custom_linear_solve", "custom_root"]
