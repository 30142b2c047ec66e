"""mlax.closure_convert: a function's closed-over traced values made explicit arguments.

As jax.closure_convert: ``fun`` is traced on the example arguments' types; the traced values
of enclosing traces it uses (mlax's *captured* values, the same closure conversion every
transformation does) that could carry a derivative (float dtypes) are hoisted: returned as
``consts`` and taken by the converted function after ``fun``'s own arguments. Concrete
arrays it closes over stay constants of its body, so outside a trace ``consts`` is empty.
The converted function is a call of the traced function, so it is used where that function
lives: in the trace that converted it or one started inside it (a custom_vjp's rules).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from jax import tree_util
from mlir import ir

from mlax.autodiff import _call, _trace_callee
from mlax.core import abstractify, current_trace
from mlax.dialect import dtypes as mlir_dtypes
from mlax.dialect import get_context
from mlax.errors import check_callable, user_error
from mlax.tracing import function_name


def closure_convert(fun: Callable[..., Any], *example_args: Any) -> tuple[Callable[..., Any], list[Any]]:
    """``(converted, consts)``: ``converted(*args, *consts)`` computes ``fun(*args)``."""
    check_callable(fun, "fun of mlax.closure_convert")
    in_tree = tree_util.tree_structure(example_args)
    in_avals = [abstractify(leaf) for leaf in tree_util.tree_leaves(example_args)]
    name = function_name(fun)
    trace = current_trace()

    def check(args: tuple[Any, ...], same_types: bool = True) -> list[Any]:
        leaves, tree = tree_util.tree_flatten(args)
        if tree != in_tree:
            raise user_error(TypeError, "The inputs to the closure produced by closure_convert must have "
                             "the same Pytree structure as the example arguments passed when closure_convert "
                             f"was called. Expected {in_tree}, but got {tree}",
                             f"the arguments of the converted {name}")
        avals = [abstractify(leaf) for leaf in leaves]
        if same_types and any(a.shape != b.shape or a.dtype != b.dtype
                              for a, b in zip(avals, in_avals, strict=True)):
            raise user_error(TypeError, f"the converted {name} takes arguments of types "
                             f"{[str(a) for a in in_avals]} (those of the example arguments), got "
                             f"{[str(a) for a in avals]}", f"the arguments of the converted {name}")
        return leaves

    if trace is None:  # nothing to hoist: concrete values it closes over are constants
        from mlax.api import staged_jit

        compiled = staged_jit(fun)

        def converted_eager(*args: Any) -> Any:
            check(args, same_types=False)  # a jit of its own traces any types
            return compiled(*args)

        return converted_eager, []
    sub, _, _ = _trace_callee(fun, example_args, trace)
    hoisted = [mlir_dtypes.is_float(np.dtype(c.aval.dtype)) for c in sub.captured]
    consts = [c for c, h in zip(sub.captured, hoisted, strict=True) if h]
    kept = [c for c, h in zip(sub.captured, hoisted, strict=True) if not h]

    def converted(*args_consts: Any) -> Any:
        here = current_trace()
        count = len(args_consts) - len(consts)
        if count < 0:
            raise user_error(TypeError, f"the converted {name} takes its {len(consts)} consts after its "
                             f"arguments, got {len(args_consts)} values",
                             f"the arguments of the converted {name}")
        leaves = check(tuple(args_consts[:count]))
        given, rest = iter(args_consts[count:]), iter(kept)
        captured = [next(given) if h else next(rest) for h in hoisted]
        if here is None or sub.name not in ir.SymbolTable(here.block.owner.parent):
            raise user_error(TypeError, f"the function closure_convert made of {name} can only be called "
                             "inside the traced function that converted it (or a transformation of a "
                             "function inside it)", f"the converted {name}")
        with get_context():
            function_type = ir.FunctionType.get([abstractify(x).spec.to_mlir() for x in [*leaves, *captured]],
                                                [a.spec.to_mlir() for a in sub.out_avals])
        results = _call(here, sub.name, function_type, [*leaves, *captured], sub.out_avals,
                        f"result of the converted {name}")
        return tree_util.tree_unflatten(sub.out_tree, results)

    converted.__name__ = name
    return converted, consts
