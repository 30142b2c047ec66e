"""jax's lax primitive objects on mlax values (pyfront/lax_primitives.py), against the real jax:
``prim.bind(*operands, **jax's params)`` computes what jax's primitive computes (eagerly, under
jit, vmap and grad), make_jaxpr's equations carry the same objects with jax's params, and
install_as_jax's ``jax.lax.<name>_p`` is that object."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.extend.core as jex
import numpy as np
import pytest

import mlax
from mlax import jax_modules, lax_primitives

RNG = np.random.default_rng(35)
F32, I32 = np.float32, np.int32


def _normal(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape).astype(F32)


def _positive(*shape: int) -> np.ndarray:
    return RNG.uniform(0.2, 3.0, size=shape).astype(F32)


def _unit(*shape: int) -> np.ndarray:
    return RNG.uniform(-0.9, 0.9, size=shape).astype(F32)


def _ints(*shape: int) -> np.ndarray:
    return RNG.integers(-50, 50, size=shape).astype(I32)


@dataclass
class Case:
    """``name``'s primitive bound on ``operands()`` with jax's ``params``; ``grad``: its sum is
    differentiated in the first operand (a float, on a smooth domain)."""

    name: str
    operands: Callable[[], tuple[Any, ...]]
    params: dict[str, Any]
    grad: bool = False
    vmap: bool = True  # operands all batched along a new leading axis


def _unary(name: str, values: Callable[..., np.ndarray] = _normal, **params: Any) -> Case:
    return Case(name, lambda: (values(3, 4),), params, grad=values is not _ints)


def _binary(name: str, values: Callable[..., np.ndarray] = _normal, grad: bool = True) -> Case:
    params = {"out_dtype": None} if name == "mul" else {}  # as jax's equations have it
    return Case(name, lambda: (values(3, 4), values(3, 4)), params, grad=grad)


def _scatter_params(name: str) -> dict[str, Any]:
    """The params of jax's equation of scatter ``name`` (its update_jaxpr, which jax's
    primitive reads)."""
    f = getattr(jax.lax, name)
    closed = jax.make_jaxpr(lambda x, i, u: f(x, i, u, _SCATTER_NUMBERS, mode="drop"))(
        _normal(5, 4), np.array([[3], [0], [3]], I32), _normal(3, 4))
    return dict(closed.eqns[-1].params)


_SCATTER_NUMBERS = jax.lax.ScatterDimensionNumbers((1,), (0,), (0,))


_ACCURACY = {"accuracy": None}
CASES = [
    *(_unary(n, **_ACCURACY)
      for n in ("exp", "exp2", "expm1", "tanh", "logistic", "sin", "cos", "tan", "cbrt")),
    *(_unary(n, _positive, **_ACCURACY) for n in ("log", "log1p", "sqrt", "rsqrt")),
    *(_unary(n) for n in ("neg", "abs", "sign", "floor", "ceil", "erf", "erfc", "atan", "sinh", "cosh",
                          "asinh", "square", "stop_gradient")),
    *(_unary(n, _unit) for n in ("asin", "acos", "atanh", "erf_inv")),
    _unary("acosh", lambda *s: _positive(*s) + 1),
    _unary("lgamma", _positive), _unary("digamma", _positive),
    Case("is_finite", lambda: (np.array([1.0, np.inf, -np.inf, np.nan, 0.5], F32),), {}),
    *(_unary(n, _ints) for n in ("not", "population_count", "clz")),
    *(_binary(n) for n in ("add", "sub", "mul", "div", "max", "min", "atan2")),
    _binary("rem", grad=False), _binary("nextafter", grad=False),
    Case("pow", lambda: (_positive(3, 4), _normal(3, 4)), {}, grad=True),
    *(_binary(n, grad=False) for n in ("eq", "ne", "lt", "le", "gt", "ge")),
    *(_binary(n, _ints, grad=False) for n in ("and", "or", "xor")),
    Case("shift_left", lambda: (_ints(5), np.array([0, 1, 2, 3, 31], I32)), {}),
    Case("shift_right_arithmetic", lambda: (_ints(5), np.array([0, 1, 2, 3, 31], I32)), {}),
    Case("shift_right_logical", lambda: (_ints(5), np.array([0, 1, 2, 3, 31], I32)), {}),
    Case("mul", lambda: (_ints(4).astype(np.int8), _ints(4).astype(np.int8)), {"out_dtype": np.dtype(I32)}),
    Case("integer_pow", lambda: (_normal(3, 4),), {"y": 3}, grad=True),
    Case("integer_pow", lambda: (_positive(3, 4),), {"y": -2}, grad=True),
    Case("round", lambda: (np.array([0.5, 1.5, -2.5, 2.4], F32),),
         {"rounding_method": jax.lax.RoundingMethod.TO_NEAREST_EVEN}),
    Case("select_n", lambda: (_normal(3, 4) > 0, _normal(3, 4), _normal(3, 4)), {}),
    Case("clamp", lambda: (np.float32(-0.5), _normal(3, 4), np.float32(0.5)), {}, vmap=False),
    Case("convert_element_type", lambda: (_normal(3, 4) * 10,),
         {"new_dtype": np.dtype(I32), "weak_type": False, "sharding": None}),
    Case("convert_element_type", lambda: (_normal(3, 4),),
         {"new_dtype": np.dtype(F32), "weak_type": True, "sharding": None}, grad=True),
    Case("bitcast_convert_type", lambda: (_normal(3, 4),), {"new_dtype": np.dtype(I32)}),
    Case("reduce_precision", lambda: (_normal(3, 4),), {"exponent_bits": 5, "mantissa_bits": 10}),
    Case("broadcast_in_dim", lambda: (_normal(3, 4),),
         {"shape": (2, 3, 4), "broadcast_dimensions": (1, 2), "sharding": None}, grad=True),
    Case("reshape", lambda: (_normal(3, 4),), {"new_sizes": (2, 6), "dimensions": None, "sharding": None},
         grad=True),
    Case("transpose", lambda: (_normal(3, 4),), {"permutation": (1, 0)}, grad=True),
    Case("slice", lambda: (_normal(5, 6),),
         {"start_indices": (1, 0), "limit_indices": (4, 6), "strides": (2, 3)}, grad=True),
    Case("pad", lambda: (_normal(3, 4), np.float32(0.5)), {"padding_config": ((1, 2, 0), (0, -1, 1))},
         grad=True, vmap=False),
    Case("rev", lambda: (_normal(3, 4),), {"dimensions": (0, 1)}, grad=True),
    Case("squeeze", lambda: (_normal(3, 1, 4),), {"dimensions": (1,)}, grad=True),
    Case("concatenate", lambda: (_normal(3, 4), _normal(2, 4)), {"dimension": 0}, grad=True, vmap=False),
    Case("iota", lambda: (), {"dtype": np.dtype(I32), "shape": (3, 4), "dimension": 1, "sharding": None},
         vmap=False),
    Case("dynamic_slice", lambda: (_normal(5, 6), np.int32(1), np.int32(4)), {"slice_sizes": (2, 3)},
         grad=True, vmap=False),
    Case("dynamic_update_slice", lambda: (_normal(5, 6), _normal(2, 3), np.int32(3), np.int32(-1)), {},
         grad=True, vmap=False),
    *(Case(f"reduce_{k}", lambda: (_normal(3, 4),), {"axes": (1,)}, grad=k != "prod")
      for k in ("max", "min", "prod")),
    Case("reduce_sum", lambda: (_normal(3, 4),), {"axes": (0, 1), "out_sharding": None}, grad=True),
    *(Case(f"reduce_{k}", lambda: (_normal(3, 4) > 0,), {"axes": (0,)}) for k in ("and", "or", "xor")),
    Case("argmax", lambda: (_normal(3, 4),), {"axes": (1,), "index_dtype": np.dtype(I32)}),
    Case("argmin", lambda: (_normal(3, 4),), {"axes": (0,), "index_dtype": np.dtype(I32)}),
    *(Case(f"cum{k}", lambda: (_normal(3, 4),), {"axis": 1, "reverse": True}, grad=k in ("sum", "logsumexp"))
      for k in ("sum", "prod", "max", "min", "logsumexp")),
    Case("dot_general", lambda: (_normal(2, 3, 4), _normal(2, 4, 5)),
         {"dimension_numbers": (((2,), (1,)), ((0,), (0,))), "precision": None,
          "preferred_element_type": None, "out_sharding": None}, grad=True),
    Case("sort", lambda: (_normal(3, 4), _normal(3, 4)), {"dimension": 1, "is_stable": True, "num_keys": 1}),
    Case("top_k", lambda: (_normal(3, 5),), {"k": 2, "axis": 1}),
    Case("top_k", lambda: (_normal(5, 3),), {"k": 2, "axis": 0}),
    Case("split", lambda: (_normal(3, 5),), {"sizes": (2, 3), "axis": 1}),
    Case("tile", lambda: (_normal(2, 3),), {"reps": (2, 1)}),
    Case("gather", lambda: (_normal(5, 4), np.array([[3], [0], [4]], I32)),
         {"dimension_numbers": jax.lax.GatherDimensionNumbers((1,), (0,), (0,)), "slice_sizes": (1, 4),
          "unique_indices": False, "indices_are_sorted": False,
          "mode": jax.lax.GatherScatterMode.PROMISE_IN_BOUNDS, "fill_value": None}, grad=True, vmap=False),
    *(Case(name, lambda: (_normal(5, 4), np.array([[3], [0], [3]], I32), _normal(3, 4)),
           _scatter_params(name), vmap=False)
      for name in ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max")),
    Case("conv_general_dilated", lambda: (_normal(2, 3, 6, 5), _normal(4, 3, 3, 2)),
         {"window_strides": (1, 2), "padding": ((1, 1), (0, 1)), "lhs_dilation": (1, 1),
          "rhs_dilation": (2, 1),
          "dimension_numbers": jax.lax.ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3)),
          "feature_group_count": 1, "batch_group_count": 1, "precision": None, "preferred_element_type": None,
          "out_sharding": None}, grad=True, vmap=False),
    Case("fft", lambda: (_normal(3, 8).astype(np.complex64),), {"fft_type": jax.lax.FftType.FFT,
                                                                 "fft_lengths": (8,)}),
    Case("reduce_window_max", lambda: (_normal(4, 5),),
         {"window_dimensions": (2, 3), "window_strides": (2, 1), "padding": ((0, 0), (1, 1)),
          "base_dilation": (1, 1), "window_dilation": (1, 1)}, vmap=False),
    Case("reduce_window_sum", lambda: (_normal(4, 5),),
         {"window_dimensions": (2, 2), "window_strides": (1, 2), "padding": ((0, 1), (1, 0)),
          "base_dilation": (1, 1), "window_dilation": (1, 1)}, grad=True, vmap=False),
]


def _id(case: Case) -> str:
    shown = (f"{k}={v}" for k, v in case.params.items() if k in ("y", "axis", "weak_type", "out_dtype"))
    return "-".join((case.name, *shown))


def _check(ours: Any, theirs: Any) -> None:
    ours, theirs = jax.tree.leaves(ours), jax.tree.leaves(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)


def _pair(case: Case) -> tuple[jex.Primitive, jex.Primitive]:
    return getattr(lax_primitives, f"{case.name}_p"), getattr(jax.lax, f"{case.name}_p")


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_bind_computes_what_jax_computes(case: Case) -> None:
    ours, theirs = _pair(case)
    assert ours.name == theirs.name and ours.multiple_results == theirs.multiple_results
    args = case.operands()
    expected = theirs.bind(*args, **case.params)
    _check(ours.bind(*args, **case.params), expected)
    _check(mlax.jit(lambda *xs: ours.bind(*xs, **case.params))(*args), expected)
    _check(ours.impl(*args, **case.params), expected)


@pytest.mark.parametrize("case", [c for c in CASES if c.vmap and c.operands()], ids=_id)
def test_bind_under_vmap(case: Case) -> None:
    ours, theirs = _pair(case)
    batched = [np.stack([a, *(case.operands()[i] for _ in range(2))]) for i, a in enumerate(case.operands())]
    _check(mlax.vmap(lambda *xs: ours.bind(*xs, **case.params))(*batched),
           jax.vmap(lambda *xs: theirs.bind(*xs, **case.params))(*batched))


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=_id)
def test_bind_under_grad(case: Case) -> None:
    ours, theirs = _pair(case)
    first, *rest = case.operands()

    def loss(prim: jex.Primitive, m: Any) -> Callable[[Any], Any]:
        return lambda x: m.numpy.sum(m.numpy.asarray(prim.bind(x, *rest, **case.params), F32))

    _check(mlax.grad(loss(ours, mlax))(first), jax.grad(loss(theirs, jax))(first))
    _check(mlax.jit(mlax.grad(loss(ours, mlax)))(first), jax.grad(loss(theirs, jax))(first))


def _functions(m: Any) -> list[tuple[Callable[..., Any], tuple[Any, ...]]]:
    """Programs of the table's ops, with random arguments."""
    lax, jnp = m.lax, m.numpy
    return [
        (lambda x: 10 * jnp.tanh(0.1 * x) + jnp.exp(-x), (_normal(3, 4),)),
        (lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)).reshape(4, 6).T, (_normal(3, 4),)),
        (lambda x, y: (x @ y).sum(axis=1).astype(I32), (_normal(2, 3), _normal(3, 4))),
        (lambda x: (lax.pad(x, 0.5, ((1, 0, 1), (0, 2, 0))), lax.round(x), lax.cumsum(x, 1)),
         (_normal(3, 4),)),
        (lambda x: (x[jnp.array([2, 0])], x.at[jnp.array([1, 1])].add(1.0), lax.top_k(x, 2)),
         (_normal(3, 4),)),
        (lambda x: (jnp.argmax(x, 1), x.max(0), lax.integer_pow(x, 3), lax.rev(x, (1,))), (_normal(3, 4),)),
        (lambda x: (lax.slice(x, (0, 1), (3, 4), (2, 1)), lax.dynamic_slice(x, (1, 1), (2, 2))),
         (_normal(3, 4),)),
        (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", rhs_dilation=(1, 2)),
         (_normal(1, 2, 5, 6), _normal(3, 2, 2, 2))),
        (lambda x: (jnp.fft.fft(x), lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID")),
         (_normal(3, 4),)),
    ]


def _evaluate(closed: jex.ClosedJaxpr, *args: Any) -> list[Any]:
    """A jaxpr evaluated equation by equation, each by ``eqn.primitive.bind(*operands,
    **eqn.params)``, as distrax's and equinox's interpreters evaluate jaxprs."""
    env: dict[Any, Any] = dict(zip(closed.jaxpr.constvars, closed.consts, strict=True))
    env.update(zip(closed.jaxpr.invars, args, strict=True))

    def read(atom: Any) -> Any:
        return atom.val if isinstance(atom, jex.Literal) else env[atom]

    for eqn in closed.jaxpr.eqns:
        out = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
        env.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out], strict=True))
    return [read(v) for v in closed.jaxpr.outvars]


@pytest.mark.parametrize("index", range(len(_functions(jax))))
def test_make_jaxpr_equations_rebind(index: int) -> None:
    """Every equation of mlax's jaxpr is the table's primitive, with the params jax's equation of
    that primitive has, and rebinding them all computes the function (eagerly and under jit)."""
    fun, args = _functions(mlax)[index]
    jax_fun, _ = _functions(jax)[index]
    closed = mlax.make_jaxpr(fun)(*args)
    theirs = {e.primitive.name: e.params for e in jax.make_jaxpr(jax_fun)(*args).eqns}
    for eqn in closed.jaxpr.eqns:
        assert eqn.primitive is lax_primitives.BY_NAME[eqn.primitive.name]
        if eqn.primitive.name in theirs and eqn.primitive.name not in ("dot_general", "gather"):
            assert set(eqn.params) == set(theirs[eqn.primitive.name]), eqn.primitive.name
    expected = jax.tree.leaves(jax.jit(jax_fun)(*args))
    _check(_evaluate(closed, *args), expected)
    _check(mlax.jit(lambda *xs: _evaluate(closed, *xs))(*args), expected)


def test_params_print_as_jax_prints_them() -> None:
    """jax's printing rules are the table's too: default params are left out as jax leaves them."""
    f = lambda m: lambda x: m.lax.broadcast_in_dim(m.numpy.exp(x), (2, 3), (1,)).astype(I32)  # noqa: E731
    ours, theirs = str(mlax.make_jaxpr(f(mlax))(_normal(3))), str(jax.make_jaxpr(f(jax))(_normal(3)))
    assert ours == theirs


def test_install_as_jax_resolves_the_table_objects() -> None:
    for name in ("tanh", "add", "integer_pow", "broadcast_in_dim", "convert_element_type", "dot_general",
                 "reduce_sum", "scatter_add"):
        ours = getattr(lax_primitives, f"{name}_p")
        assert jax_modules.resolve("jax.lax", f"{name}_p", {}) is ours
        assert jax_modules.resolve("jax.extend.core.primitives", f"{name}_p", {}) is ours
    # control flow and collectives are jax's own objects, passed through
    assert jax_modules.resolve("jax.lax", "while_p", {}) is jax.lax.while_p
    assert jax_modules.resolve("jax.extend.core.primitives", "jit_p", {}) is jex.primitives.jit_p


def test_bind_on_jax_tracers_is_jax_s() -> None:
    """jax lowering a library's rule may bind the table's objects on its own tracers."""
    x = _normal(3)
    out = jax.jit(lambda v: lax_primitives.tanh_p.bind(v, accuracy=None))(x)
    assert np.allclose(out, np.tanh(x), rtol=1e-6)


def test_unsupported_params_raise() -> None:
    with pytest.raises(NotImplementedError, match="accuracy"):
        lax_primitives.exp_p.bind(_normal(3), accuracy=jax.lax.Tolerance(rtol=1e-3))
    with pytest.raises(TypeError):
        lax_primitives.add_p.bind(_normal(3), _ints(3))  # jax's: operands of one dtype


def _scaled_sin() -> Any:
    """sin with a JVP rule of thrice the derivative (so a rule lost in rebinding shows)."""
    f = mlax.custom_jvp(lambda x: mlax.numpy.sin(x))
    f.defjvp(lambda p, t: (mlax.numpy.sin(p[0]), 3 * mlax.numpy.cos(p[0]) * t[0]))
    return f


def _scaled_cos() -> Any:
    """cos with a VJP rule of twice the derivative."""
    f = mlax.custom_vjp(lambda x: mlax.numpy.cos(x))
    f.defvjp(lambda x: (mlax.numpy.cos(x), mlax.numpy.sin(x)), lambda s, g: (-2 * s * g,))
    return f


_CALLS: list[tuple[str, Callable[[Any], Any]]] = [
    ("cond", lambda x: mlax.lax.cond(x.sum() > 0, mlax.numpy.sin, mlax.numpy.cos, x)),
    ("while", lambda x: mlax.lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))[1]),
    ("scan", lambda x: mlax.lax.scan(lambda c, y: (c * y + 1.0, c - y), x[0], x)),
    ("custom_jvp_call", lambda x: _scaled_sin()(x)),
    ("custom_vjp_call", lambda x: _scaled_cos()(x)),
    ("checkpoint", lambda x: mlax.checkpoint(lambda y: mlax.numpy.sin(y) * y)(x)),
    ("jvp", lambda x: mlax.jvp(mlax.numpy.tanh, (x,), (x * 2,))),
    ("vmap", lambda x: mlax.vmap(lambda r, s: (r * s).sum(), in_axes=(0, None))(x, 1.5)),
    ("jit", lambda x: mlax.jit(lambda y: mlax.numpy.exp(y) - y)(x)),
]


@pytest.mark.parametrize("name, fun", _CALLS, ids=[n for n, _ in _CALLS])
def test_equations_applying_functions_rebind(name: str, fun: Callable[[Any], Any]) -> None:
    """Equations of declarations and calls bind on their params' jaxprs, as the construct they
    name: values eagerly and under jit, derivatives by their custom rules."""
    x = _normal(3, 4)
    closed = mlax.make_jaxpr(fun)(x)
    assert name in [e.primitive.name for e in closed.jaxpr.eqns]
    assert all(type(e.primitive).__name__ in ("LaxPrimitive", "RulePrimitive") for e in closed.jaxpr.eqns)
    expected = jax.tree.leaves(mlax.jit(fun)(x))
    _check(_evaluate(closed, x), expected)
    _check(mlax.jit(lambda v: _evaluate(closed, v))(x), expected)
    if name not in ("while",):  # while: not reverse-differentiable, in jax too
        total = lambda f: lambda v: sum(mlax.numpy.sum(o) for o in jax.tree.leaves(f(v)))  # noqa: E731
        _check(mlax.grad(total(lambda v: _evaluate(closed, v)))(x), mlax.grad(total(fun))(x))
