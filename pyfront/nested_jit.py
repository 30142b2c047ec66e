"""A jit called inside a trace becomes a call of a private function, as jax's nested ``jit``.

The function is traced into the enclosing module once per call site, but a trace whose body
is identical to one already there (the same jitted function on the same shapes, the usual
case of a layer applied 16 times) is dropped for a call of the existing one. The program keeps
one body per distinct callee: mlax's transformations then derive each callee once
(passes/autodiff/memo.py, passes/batching/memo.py), and the StableHLO the XLA backend gets
keeps the calls. The CPU road inlines calls before lowering (`mlax-inline`).

``jit(..., inline=True)``, in/out shardings, concrete mode (a trace that knows values) and
mlax's own internal jits keep inlining the Python function, as before.
"""

from __future__ import annotations

from typing import Any

from jax import tree_util
from mlir import ir

from mlax.autodiff import _call
from mlax.core import Trace, abstractify
from mlax.dialect import get_context
from mlax.dialect.transforms import JIT_NAME_ATTR
from mlax.tracing import flatten_arguments, function_name, trace_subfunction


def call_jitted(jitted: Any, trace: Trace, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``jitted(*args, **kwargs)`` inside ``trace``: a func.call of its traced body."""
    _, dynamic, dyn_names, rebuild = jitted._partition(args, kwargs)
    name = function_name(jitted._fun)
    leaves, in_tree, paths = flatten_arguments(dynamic, name, dyn_names)
    avals = [abstractify(leaf) for leaf in leaves]

    def build_args(tracers: list[Any]) -> Any:
        dyn_args, dyn_kwargs = tree_util.tree_unflatten(in_tree, tracers)
        return rebuild(dyn_args, dyn_kwargs)

    sub = trace_subfunction(jitted._fun, build_args, avals, paths, trace)
    module = trace.block.owner.parent
    with get_context():
        table = ir.SymbolTable(module)
        function = table[sub.name]
        function.attributes[JIT_NAME_ATTR] = ir.StringAttr.get(name)
        symbol = _identical_function(module, function, sub.name) or sub.name
        if symbol != sub.name:
            function.erase()
        function_type = ir.FunctionType(ir.TypeAttr(table[symbol].attributes["function_type"]).value)
    results = _call(trace, symbol, function_type, [*leaves, *sub.captured], sub.out_avals,
                    f"result of jitted {name}")
    return tree_util.tree_unflatten(sub.out_tree, results)


def _body_text(function: ir.Operation, name: str) -> str:
    """The function's text with its own symbol left out: equal texts are the same function."""
    text = function.get_asm(use_local_scope=True, print_generic_op_form=True)
    return text.replace(f'sym_name = "{name}"', "sym_name", 1)


def _identical_function(module: ir.Operation, function: ir.Operation, name: str) -> str | None:
    """The symbol of an earlier nested-jit function of ``module`` whose text equals ``function``'s."""
    jit_name = function.attributes[JIT_NAME_ATTR]
    text = None
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name != "func.func" or JIT_NAME_ATTR not in op.attributes or op == function:
            continue
        if op.attributes[JIT_NAME_ATTR] != jit_name:
            continue
        other = ir.StringAttr(op.attributes["sym_name"]).value
        text = _body_text(function, name) if text is None else text
        if _body_text(op, other) == text:
            return other
    return None
