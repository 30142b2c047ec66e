"""jax's lax primitive objects on mlax values: one table, name -> mlax.lax function.

Libraries walk jaxprs and rebind their equations (distrax's ``Lambda`` inverts a function by
interpreting its jaxpr; equinox's finalisation re-evaluates one), keying tables by jax's
primitive objects (``jax.lax.tanh_p``) and calling ``prim.bind(*operands, **eqn.params)``. So
the objects must be one and the same wherever a library meets them: after
`mlax.install_as_jax`, ``jax.lax.<name>_p`` and ``jax.extend.core.primitives.<name>_p`` are the
objects of this module (pyfront/jax_modules.py), and `mlax.make_jaxpr`'s equations carry them
(pyfront/jaxpr.py, which reads its params as jax names them). ``bind`` takes jax's operands
and params and calls the mlax.lax function that computes what jax's primitive computes, so it
works eagerly and on every mlax tracer (jit, grad, vmap: the function is traced as any other).
On jax's own tracers (jax lowering a library's rule), ``bind`` is the real jax primitive's.

Left out (the real jax objects pass through, as libraries' dictionary keys): control flow and
calls (``cond``, ``while``, ``scan``, ``jit``, ``custom_jvp_call``...: jax's params are jaxprs
of jax's conventions; mlax's own equations of them bind through pyfront/jaxpr_calls.py),
``reduce``/``reduce_window`` (a jaxpr computation), collectives (the named axes of an enclosing
map), ``sharding_constraint``, ``device_put``, ``copy``, random bits and keys, tokens, jax's
internal markers (``eq_to``, ``dce_sink``...), autodiff internals (``select_and_scatter_add``,
``custom_lin``...), and the decompositions of ``jax.lax.linalg``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from jax import lax as jax_lax
from jax.core import Tracer as JaxTracer
from jax.extend import core as jax_core
from jax.extend.core import primitives as jax_primitives

import mlax.numpy as mnp
from mlax import lax
from mlax.jax_private import pp_eqn_rules

Rule = Callable[..., Any]  # (*operands, **jax's params) -> result(s)


def _same(function: str) -> Rule:
    """mlax.lax's function of jax's signature: the operands positionally, the params as its
    keywords (of the same names)."""
    return lambda *operands, **params: getattr(lax, function)(*operands, **params)


def _accurate(function: str) -> Rule:
    """A unary op with jax's ``accuracy`` param: mlax computes at the default accuracy only."""
    def rule(x: Any, *, accuracy: Any = None) -> Any:
        if accuracy is not None:
            raise NotImplementedError(f"mlax computes {function} at its default accuracy; "
                                      f"accuracy={accuracy!r} is not supported")
        return getattr(lax, function)(x)

    return rule


def _variadic(function: str) -> Rule:
    """jax's primitive takes the operands one by one where mlax.lax's function takes a list."""
    return lambda *operands, **params: getattr(lax, function)(list(operands), **params)


def _clamped(operand: Any, starts: Sequence[Any], sizes: Sequence[int]) -> list[Any]:
    """Start indices clamped into the operand, as jax's primitive takes them (jax.lax's
    function wraps negative ones before binding, and so does mlax.lax's)."""
    return [mnp.clip(i, 0, d - s) for i, d, s in zip(starts, np.shape(operand), sizes, strict=True)]


def _dynamic_slice(operand: Any, *starts: Any, slice_sizes: Sequence[int]) -> Any:
    return lax.dynamic_slice(operand, _clamped(operand, starts, slice_sizes), slice_sizes)


def _dynamic_update_slice(operand: Any, update: Any, *starts: Any) -> Any:
    return lax.dynamic_update_slice(operand, update, _clamped(operand, starts, np.shape(update)))


def _sharded(function: str) -> Rule:
    """jax's ``sharding`` param is the mlax function's ``out_sharding``."""
    return lambda *operands, sharding=None, **params: getattr(lax, function)(*operands, **params,
                                                                              out_sharding=sharding)


def _scatter(function: str) -> Rule:
    """A scatter: the update computation jax records as a jaxpr is the primitive's own."""
    def rule(operand: Any, indices: Any, updates: Any, *, update_jaxpr: Any = None, update_consts: Any = (),
             **params: Any) -> Any:
        del update_jaxpr, update_consts
        return getattr(lax, function)(operand, indices, updates, **params)

    return rule


def _mul(x: Any, y: Any, *, out_dtype: Any = None) -> Any:
    """jax's product of a wider result type: the operands converted to it first (exact: the
    product of two narrower values is representable in it)."""
    if out_dtype is not None:
        x, y = lax.convert_element_type(x, out_dtype), lax.convert_element_type(y, out_dtype)
    return lax.mul(x, y)


def _convert_element_type(x: Any, *, new_dtype: Any, weak_type: bool = False, sharding: Any = None) -> Any:
    if sharding is not None:
        raise NotImplementedError("mlax's convert_element_type keeps its operand's sharding; "
                                  f"sharding={sharding!r} is not supported")
    return lax.convert_element_type(x, new_dtype, weak_type=weak_type)


def _iota(*, dtype: Any, shape: Sequence[int], dimension: int, sharding: Any = None) -> Any:
    return lax.broadcasted_iota(dtype, shape, dimension, out_sharding=sharding)


def _arg_reduction(function: str) -> Rule:
    """argmax/argmin over jax's one-axis tuple ``axes``."""
    def rule(x: Any, *, axes: Sequence[int], index_dtype: Any) -> Any:
        (axis,) = axes
        return getattr(lax, function)(x, axis, index_dtype)

    return rule


def _conj(x: Any, *, input_dtype: Any = None) -> Any:
    del input_dtype  # the operand's own dtype, recorded for jax's transpose rule
    return lax.conj(x)


def _top_k(x: Any, *, k: int, axis: int = -1) -> Any:
    """top_k along ``axis`` (mlax.lax.top_k takes the last)."""
    last = np.ndim(x) - 1
    axis = axis % (last + 1)
    if axis == last:
        return lax.top_k(x, k)
    order = [*range(axis), *range(axis + 1, last + 1), axis]
    back = list(np.argsort(order))
    return tuple(lax.transpose(r, back) for r in lax.top_k(lax.transpose(x, order), k))


def _tuple(rule: Rule) -> Rule:
    """A primitive of several results returns them as a sequence (jax's: a list)."""
    return lambda *operands, **params: list(rule(*operands, **params))


# jax's elementwise ops without params: mlax.lax's function of the same name but where given.
_PLAIN = {
    **{name: name for name in """
        neg abs sign floor ceil is_finite population_count clz erf erfc erf_inv square
        asin acos atan sinh cosh asinh acosh atanh lgamma digamma igamma igammac igamma_grad_a
        polygamma zeta bessel_i0e bessel_i1e real imag complex
        add sub div rem pow max min atan2 nextafter mulhi
        shift_left shift_right_logical shift_right_arithmetic
        eq ne lt le gt ge select_n clamp stop_gradient""".split()},
    "not": "bitwise_not", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
}
_ACCURATE = "exp exp2 log log1p expm1 tanh logistic sin cos tan sqrt rsqrt cbrt".split()

# The params jax's equations carry that mlax's ops have no attribute for, at the value jax
# records when the user gives none (make_jaxpr shows them; the rules above accept them).
DEFAULTS: dict[str, dict[str, Any]] = {
    **{name: {"accuracy": None} for name in _ACCURATE},
    "mul": {"out_dtype": None},
    "broadcast_in_dim": {"sharding": None},
    "convert_element_type": {"sharding": None},
    "iota": {"sharding": None},
    "reshape": {"dimensions": None, "sharding": None},
    "dot_general": {"out_sharding": None},
    "conv_general_dilated": {"preferred_element_type": None, "out_sharding": None},
    "gather": {"unique_indices": False, "indices_are_sorted": False, "fill_value": None},
    # (jax records the update computation as a jaxpr its lowering reads; the primitive implies it)
    **{name: {"indices_are_sorted": False, "unique_indices": False, "update_jaxpr": None, "update_consts": ()}
       for name in ("scatter", "scatter-add", "scatter-mul", "scatter-min", "scatter-max")},
}
# ops whose params are the keywords of mlax.lax's function of the same name
_SAME = """integer_pow round transpose slice pad rev squeeze tile bitcast_convert_type reduce_precision
    reduce_max reduce_min reduce_prod reduce_and reduce_or reduce_xor
    cumsum cumprod cummax cummin cumlogsumexp dot_general gather conv_general_dilated fft
    reduce_window_sum reduce_window_max reduce_window_min reduce_sum""".split()

# jax's primitive (its name in jax.lax, less ``_p``) -> (rule, several results)
TABLE: dict[str, tuple[Rule, bool]] = {
    **{name: (_same(function), False) for name, function in _PLAIN.items()},
    **{name: (_accurate(name), False) for name in _ACCURATE},
    **{name: (_same(name), False) for name in _SAME},
    "mul": (_mul, False),
    "convert_element_type": (_convert_element_type, False),
    "broadcast_in_dim": (_sharded("broadcast_in_dim"), False),
    "reshape": (_sharded("reshape"), False),
    "iota": (_iota, False),
    "argmax": (_arg_reduction("argmax"), False),
    "argmin": (_arg_reduction("argmin"), False),
    "conj": (_conj, False),
    "concatenate": (_variadic("concatenate"), False),
    "dynamic_slice": (_dynamic_slice, False),
    "dynamic_update_slice": (_dynamic_update_slice, False),
    "sort": (_tuple(_variadic("sort")), True),
    "optimization_barrier": (_tuple(_variadic("optimization_barrier")), True),
    "split": (_tuple(_same("split")), True),
    "top_k": (_tuple(_top_k), True),
    **{name: (_scatter(name), False) for name in ("scatter", "scatter_add", "scatter_sub", "scatter_mul",
                                                  "scatter_min", "scatter_max")},
}


class RulePrimitive(jax_core.Primitive):
    """A primitive of make_jaxpr's equations whose ``bind`` (and ``impl``) on mlax values is
    ``rule``: mlax functions, traced as any others under mlax's transformations."""

    def __init__(self, name: str, rule: Rule, multiple_results: bool) -> None:
        super().__init__(name)
        self.rule = rule
        self.multiple_results = multiple_results

    def bind(self, *args: Any, **params: Any) -> Any:
        return self.rule(*args, **params)

    def impl(self, *args: Any, **params: Any) -> Any:
        return self.rule(*args, **params)


class LaxPrimitive(RulePrimitive):
    """One of jax's lax primitives, bound through mlax.lax (the module docstring)."""

    def __init__(self, real: jax_core.Primitive, rule: Rule, multiple_results: bool) -> None:
        super().__init__(real.name, rule, multiple_results)
        self.real = real

    def bind(self, *args: Any, **params: Any) -> Any:
        if any(isinstance(a, JaxTracer) for a in args):  # jax's own tracing: jax's primitive
            return self.real.bind(*args, **params)
        return self.rule(*args, **params)


def _real(name: str) -> jax_core.Primitive:
    return getattr(jax_lax, f"{name}_p", None) or getattr(jax_primitives, f"{name}_p")


def _build() -> dict[str, LaxPrimitive]:
    """The objects, each printed by jax's rule for its own (jax leaves out default params)."""
    built = {}
    for name, (rule, multiple) in TABLE.items():
        real = _real(name)
        built[name] = LaxPrimitive(real, rule, multiple)
        if real in pp_eqn_rules:
            pp_eqn_rules[built[name]] = pp_eqn_rules[real]
    return built


_PRIMITIVES = _build()
# by jax's primitive name (``scatter-add``), as make_jaxpr's equations name them
BY_NAME: dict[str, LaxPrimitive] = {p.name: p for p in _PRIMITIVES.values()}
globals().update({f"{name}_p": p for name, p in _PRIMITIVES.items()})
__all__ = sorted(f"{name}_p" for name in _PRIMITIVES)  # noqa: PLE0605
