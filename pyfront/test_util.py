"""mlax.test_util: check_grads, check_jvp, check_vjp, as jax.test_util.

mlax's derivatives against central finite differences, in one random direction per check
(jax's tolerances, seed and recursion over orders). jax's check_jvp / check_vjp are plain
NumPy on whatever jvp/vjp they are handed, so they are used as they are, given mlax's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from jax.test_util import check_jvp, check_vjp

from mlax.autodiff import jvp, linearize, vjp

__all__ = ["check_grads", "check_jvp", "check_vjp"]

_EPS = 1e-4  # jax's default step


def _jvp_from_lin(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    out, f_lin = linearize(f, *primals)
    return out, f_lin(*tangents)


def check_grads(f: Callable[..., Any], args: Sequence[Any], order: int,
                modes: Sequence[str] = ("fwd", "rev"), atol: Any = None, rtol: Any = None,
                eps: float | None = None) -> None:
    """Check ``f``'s derivatives at ``args`` up to ``order`` in the ``modes`` ("fwd", "rev",
    "lin") against finite differences; AssertionError on a mismatch."""
    args = tuple(args)
    eps = eps or _EPS
    check_forward = functools.partial(check_jvp, atol=atol, rtol=rtol, eps=eps)
    check_reverse = functools.partial(check_vjp, atol=atol, rtol=rtol, eps=eps)

    def check(f: Callable[..., Any], args: tuple[Any, ...], order: int, err_msg: str = "") -> None:
        if "fwd" in modes:
            msg = f"JVP of {err_msg}" if err_msg else "JVP"
            check_forward(f, functools.partial(jvp, f), args, err_msg=msg)
            if order > 1:
                check(functools.partial(jvp, f), (args, args), order - 1, msg)
        if "rev" in modes:
            msg = f"VJP of {err_msg}" if err_msg else "VJP"
            check_reverse(f, functools.partial(vjp, f), args, err_msg=msg)
            if order > 1:
                def f_vjp(*args: Any) -> Any:
                    out, pull = vjp(f, *args)
                    return pull(out)

                check(f_vjp, args, order - 1, msg)
        if "lin" in modes:
            msg = f"LIN of {err_msg}" if err_msg else "LIN"
            check_forward(f, functools.partial(_jvp_from_lin, f), args, err_msg=msg)
            if order > 1:
                check(functools.partial(_jvp_from_lin, f), (args, args), order - 1, msg)

    check(f, args, order)
