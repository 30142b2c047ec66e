"""mlax.make_jaxpr against jax.make_jaxpr: avals, primitives, printed text, return_shape, errors."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.extend.core as jex
import numpy as np
import pytest
from jax.core import ShapedArray

import mlax
from mlax.dialect import OPS
from mlax.dialect.ops.comparison import COMPARISONS
from mlax.jaxpr import _RENAMES, MLAX_ONLY_OPS

RNG = np.random.default_rng(0)
F32, I32 = np.float32, np.int32


def _f32(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape).astype(F32)


CONST = _f32(2, 3)


@dataclass
class Case:
    """``make(m)`` builds the function for ``m`` (mlax or jax); ``mlax_extra``/``jax_extra``
    are the primitives one trace has and the other has not (the documented differences)."""

    name: str
    make: Callable[[Any], Callable[..., Any]]
    args: tuple[Any, ...]
    static_argnums: tuple[int, ...] = ()
    mlax_extra: dict[str, int] = field(default_factory=dict)
    jax_extra: dict[str, int] = field(default_factory=dict)
    same_text: bool = False  # the printed programs are identical


CASES = [
    Case("elementwise", lambda m: lambda x, y: m.numpy.sin(x * y) - m.numpy.exp(m.numpy.abs(x)) / y,
         (_f32(3), _f32(3))),
    Case("broadcasting", lambda m: lambda x, y: x + y, (_f32(3), _f32(2, 3))),
    Case("dot", lambda m: lambda x, y: m.numpy.dot(x, y), (_f32(2, 3), _f32(3, 4))),
    Case("reductions", lambda m: lambda x: (x.sum(axis=0), m.numpy.max(x), m.numpy.argmax(x, axis=1)),
         (_f32(2, 3),)),
    Case("pytrees", lambda m: lambda d: {"s": d["a"] + d["b"][0], "p": (d["b"][0] * d["b"][1],)},
         ({"a": _f32(3), "b": (_f32(3), _f32(3))},)),
    Case("static_argnums", lambda m: lambda x, n: x * n if n > 1 else x, (_f32(3), 3), static_argnums=(1,)),
    Case("weak_scalar", lambda m: lambda x: x * 2 + 1, (1.5,), same_text=True),
    # jax's binary ops take a rank-0 operand as it is; mlax's operands have equal shapes
    Case("weak_and_strong", lambda m: lambda x, y: x * y, (2, _f32(3)), mlax_extra={"broadcast_in_dim": 1}),
    # jax converts a weak x to strong with an equation; mlax only changes the tracer's weak type
    Case("weak_to_strong", lambda m: lambda x: x * np.float32(2), (1.5,),
         jax_extra={"convert_element_type": 1}),
    Case("closure_constant", lambda m: lambda x: m.numpy.dot(x, CONST.T), (_f32(4, 3),)),
    Case("convert", lambda m: lambda x: x.astype(I32) * 2, (_f32(3),)),
    Case("slicing", lambda m: lambda x: m.numpy.concatenate([x[1:], x[:1]]).reshape(3, 1), (_f32(3),)),
    Case("integers", lambda m: lambda i, j: (i // j, i % j, i & j, i << 1),
         (np.arange(3, dtype=I32), np.arange(1, 4, dtype=I32)),
         jax_extra={"broadcast_in_dim": 1}),  # jax broadcasts a scalar that mlax folds into a constant
    Case("where", lambda m: lambda x: m.numpy.where(x > 0, x, 0.0), (_f32(3),),
         jax_extra={"broadcast_in_dim": 1, "convert_element_type": 1}),
    # jax's bool predicate becomes an int index: the jaxpr shows mlax's so too
    Case("cond", lambda m: lambda x: m.lax.cond(x.sum() > 0, m.numpy.sin, m.numpy.cos, x), (_f32(3),)),
    Case("while", lambda m: lambda x: m.lax.while_loop(lambda c: c < 3.0, lambda c: c + 1.0, x), (0.5,)),
    Case("fori_loop", lambda m: lambda x: m.lax.fori_loop(0, 3, lambda i, c: c * 2.0, x), (_f32(3),)),
    Case("scan", lambda m: lambda x, xs: m.lax.scan(lambda c, y: (c + y, c * y), x, xs), (_f32(), _f32(4))),
    # mlax keeps grad as a vjp declaration (resolved by a pass); jax differentiates while tracing
    Case("grad", lambda m: lambda x: m.grad(lambda y: m.numpy.sin(y).sum())(x), (_f32(3),),
         mlax_extra={"vjp": 1}, jax_extra={"cos": 1, "mul": 1, "broadcast_in_dim": 1}),
]


def _names(closed: jex.ClosedJaxpr) -> Counter[str]:
    """Primitive names of every equation, nested jaxprs included. A jax ``jit`` equation counts
    as its contents: jax.numpy wraps many functions in jit, which mlax inlines."""
    names: Counter[str] = Counter()

    def walk(jaxpr: jex.Jaxpr) -> None:
        for eqn in jaxpr.eqns:
            if eqn.primitive.name != "jit":
                names[eqn.primitive.name] += 1
            for sub in jex.jaxprs_in_params(eqn.params):
                walk(sub)

    walk(closed.jaxpr)
    return names


def _aval_key(aval: ShapedArray) -> tuple[Any, ...]:
    return (aval.shape, aval.dtype, aval.weak_type)


def _both(case: Case) -> tuple[jex.ClosedJaxpr, jex.ClosedJaxpr]:
    ours = mlax.make_jaxpr(case.make(mlax), static_argnums=case.static_argnums)(*case.args)
    theirs = jax.make_jaxpr(case.make(jax), static_argnums=case.static_argnums)(*case.args)
    return ours, theirs


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_avals_match_jax(case: Case) -> None:
    ours, theirs = _both(case)
    assert all(type(a) is ShapedArray for a in ours.in_avals + ours.out_avals)
    assert [_aval_key(a) for a in ours.in_avals] == [_aval_key(a) for a in theirs.in_avals]
    assert [_aval_key(a) for a in ours.out_avals] == [_aval_key(a) for a in theirs.out_avals]
    assert ours.in_avals == theirs.in_avals and ours.out_avals == theirs.out_avals


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_primitives_match_jax(case: Case) -> None:
    ours, theirs = _both(case)
    mine, jaxs = _names(ours), _names(theirs)
    assert dict(mine - jaxs) == case.mlax_extra
    assert dict(jaxs - mine) == case.jax_extra


_VAR = r"[a-z]+:(?:bool|[fiu]\d+|bf16)\[[\d,]*\]"
_ATOM = r"(?:[a-z]+|_|-?[\d.e+-]+:(?:bool|[fiu]\d+|bf16)\[[\d,]*\]|True:bool\[[\d,]*\]|False:bool\[[\d,]*\])"
_HEADER = re.compile(rf"^\{{ lambda (?:{_VAR} ?)*; (?:{_VAR} ?)*\. let")
_FOOTER = re.compile(rf"in \((?:{_ATOM}(?:, )?)*,?\) \}}$")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_printed_text(case: Case) -> None:
    ours, theirs = _both(case)
    text = str(ours)
    assert _HEADER.match(text), text
    assert _FOOTER.search(text), text
    for eqn in ours.jaxpr.eqns:
        outs = " ".join(rf"(?:{_VAR}|_:\S+)" for _ in eqn.outvars)
        assert re.search(rf"{outs} = {re.escape(eqn.primitive.name)}\b", text), (eqn.primitive.name, text)
    if case.same_text:
        assert text == str(theirs)


def test_text_of_a_simple_program() -> None:
    closed = mlax.make_jaxpr(lambda a, b: mlax.numpy.sin(a * b))(_f32(3), _f32(3))
    assert str(closed) == "{ lambda ; a:f32[3] b:f32[3]. let c:f32[3] = mul a b; d:f32[3] = sin c in (d,) }"
    assert str(closed) == str(jax.make_jaxpr(lambda a, b: jax.numpy.sin(a * b))(_f32(3), _f32(3)))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_return_shape_matches_jax(case: Case) -> None:
    closed, shape = mlax.make_jaxpr(case.make(mlax), static_argnums=case.static_argnums,
                                    return_shape=True)(*case.args)
    _, expected = jax.make_jaxpr(case.make(jax), static_argnums=case.static_argnums,
                                 return_shape=True)(*case.args)
    assert jax.tree_util.tree_structure(shape) == jax.tree_util.tree_structure(expected)
    assert jax.tree_util.tree_leaves(shape) == jax.tree_util.tree_leaves(expected)
    assert all(type(s) is jax.ShapeDtypeStruct for s in jax.tree_util.tree_leaves(shape))
    assert isinstance(closed, jex.ClosedJaxpr)


def test_structure_and_params() -> None:
    closed = mlax.make_jaxpr(lambda x, y: (mlax.numpy.dot(x, y).sum(axis=1) > 0).astype(F32))(
        _f32(2, 3), _f32(3, 4))
    jaxpr = closed.jaxpr
    assert jaxpr.invars == closed.jaxpr.invars and not jaxpr.constvars and closed.consts == []
    names = ["dot_general", "reduce_sum", "gt", "convert_element_type"]
    assert [str(e.primitive) for e in jaxpr.eqns] == names
    dot, total, gt, convert = jaxpr.eqns
    assert dot.primitive.name == "dot_general" and dot.invars == jaxpr.invars
    # jax's params (dimension numbers as lists, precision None for the default, which its printer omits)
    assert dot.params == {"dimension_numbers": (([1], [0]), ([], [])), "precision": None,
                          "preferred_element_type": np.dtype(F32), "out_sharding": None}
    assert total.params == {"axes": (1,), "out_sharding": None} and total.invars == dot.outvars
    assert gt.params == {} and gt.outvars[0].aval == ShapedArray((2,), np.bool_)
    assert isinstance(gt.invars[1], jex.Literal) and gt.invars[1].val == 0
    assert gt.invars[1].aval.shape == ()  # a scalar operand, as jax's
    assert convert.params == {"new_dtype": np.dtype(F32), "weak_type": False, "sharding": None}
    assert jaxpr.outvars == convert.outvars
    assert all(isinstance(v.aval, ShapedArray) for e in jaxpr.eqns for v in e.invars + e.outvars)


def test_closure_constants_are_constvars_and_scalars_literals() -> None:
    ours = mlax.make_jaxpr(lambda x: x @ CONST.T + 2.0)(_f32(4, 3))
    theirs = jax.make_jaxpr(lambda x: x @ CONST.T + 2.0)(_f32(4, 3))
    assert len(ours.consts) == len(ours.jaxpr.constvars) == len(theirs.consts) == 1
    np.testing.assert_array_equal(ours.consts[0], np.asarray(theirs.consts[0]))
    assert ours.literals == ours.consts
    assert ours.jaxpr.constvars[0].aval == theirs.jaxpr.constvars[0].aval
    literal = ours.jaxpr.eqns[-1].invars[1]
    assert isinstance(literal, jex.Literal) and float(literal.val) == 2.0  # a splat: its one value


def test_nested_jaxprs_are_closed_jaxprs_in_params() -> None:
    def f(x):
        return mlax.lax.cond(x > 0, lambda y: y * 2.0, lambda y: -y, x)

    closed = mlax.make_jaxpr(f)(1.0)
    (cond,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "cond"]
    branches = cond.params["branches"]
    assert len(branches) == 2 and all(isinstance(b, jex.ClosedJaxpr) for b in branches)
    assert [e.primitive.name for b in branches for e in b.eqns] == ["neg", "mul"]  # (false, true) as jax
    assert "branches=(" in str(closed)


def test_transform_declarations_print_their_callee() -> None:
    closed = mlax.make_jaxpr(lambda x: mlax.vmap(lambda y: mlax.numpy.sin(y).sum())(x))(_f32(2, 3))
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive.name == "vmap"
    assert eqn.params["in_axes"] == (0,) and eqn.params["axis_size"] == 2
    assert [e.primitive.name for e in eqn.params["jaxpr"].eqns] == ["sin", "reduce_sum"]


def test_shape_dtype_struct_and_keyword_arguments() -> None:
    def f(x, *, scale):
        return x * scale

    structs = (jax.ShapeDtypeStruct((2, 3), F32),)
    ours = mlax.make_jaxpr(f)(*structs, scale=jax.ShapeDtypeStruct((3,), F32))
    theirs = jax.make_jaxpr(f)(*structs, scale=jax.ShapeDtypeStruct((3,), F32))
    assert ours.in_avals == theirs.in_avals and ours.out_avals == theirs.out_avals


def test_jitted_function_keeps_its_static_arguments() -> None:
    g = mlax.jit(lambda x, n: x * n if n > 1 else x, static_argnums=1)
    closed = mlax.make_jaxpr(g)(_f32(3), 3)
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["mul"] and len(closed.in_avals) == 1


def test_inside_a_trace() -> None:
    seen = []

    @mlax.jit
    def outer(x):
        seen.append(mlax.make_jaxpr(mlax.numpy.sin)(x))
        return x * 2

    np.testing.assert_allclose(outer(np.arange(3, dtype=F32)), np.arange(3) * 2)
    assert [e.primitive.name for e in seen[0].jaxpr.eqns] == ["sin"]
    assert seen[0].in_avals == [ShapedArray((3,), np.dtype(F32))]


def test_inside_a_trace_enclosing_values_are_constvars_as_jax() -> None:
    """The values of the enclosing trace a function uses are its jaxpr's constvars, their consts
    those very tracers (equinox's filter_closure_convert checks it), as jax's; the text is jax's."""
    x, y = _f32(), _f32()
    for lib in (mlax, jax):
        seen: dict[str, Any] = {}

        def outer(x, y, lib=lib, seen=seen):
            z = x + y
            w = lib.numpy.sin(x)
            closed = lib.make_jaxpr(lambda a: z * a + w)(np.float32(1.5))
            seen["same"] = sorted(map(id, closed.consts)) == sorted([id(z), id(w)])
            seen["text"], seen["avals"] = str(closed), closed.in_avals
            return z * w

        seen["grad"] = lib.grad(outer)(x, y)
        if lib is mlax:
            mine = seen
    assert mine["same"] and seen["same"]
    assert mine["text"] == seen["text"] and mine["avals"] == seen["avals"]
    np.testing.assert_allclose(np.asarray(mine["grad"]), np.asarray(seen["grad"]), rtol=1e-6)


def test_every_op_has_jax_name_or_is_documented() -> None:
    from jax._src.lax import linalg as jax_linalg  # geqrf_p, geqp3_p: jax's, but exported nowhere public

    jax_names = {getattr(m, a).name for m in (jax.lax, jex.primitives, jax_linalg) for a in dir(m)
                 if isinstance(getattr(m, a), jex.Primitive)}
    for op in OPS:
        if op == "constant" or op in MLAX_ONLY_OPS:
            continue
        if op == "compare":
            names = [_RENAMES[op]({"comparison_direction": d}, [], False)[0] for d in COMPARISONS]
        elif op == "dot_general":
            names = ["dot_general"]
        elif op in _RENAMES:  # the attributes of a rank-1 op, of every renamed kind
            params = {"new_dtype": F32, "dimensions": (0,), "axis": 0, "index_dtype": I32, "reverse": 0,
                      "shape": (2,), "edge_padding_low": (0,), "edge_padding_high": (0,),
                      "interior_padding": (0,), "rounding_method": "away_from_zero", "strides": (1,), "k": 1,
                      "fft_type": "FFT",
                      "slice_sizes": (1,), "mode": "clip", "padding": (0, 0), "precision": ("DEFAULT",),
                      **dict.fromkeys(("window_strides", "lhs_dilation", "rhs_dilation", "lhs_spec",
                                       "rhs_spec", "out_spec"), (0,)),
                      "feature_group_count": 1, "batch_group_count": 1, "index_vector_dim": 0,
                      **dict.fromkeys(("offset_dims", "collapsed_slice_dims", "start_index_map",
                                       "operand_batching_dims", "start_indices_batching_dims",
                                       "update_window_dims", "inserted_window_dims",
                                       "scatter_dims_to_operand_dims", "input_batching_dims",
                                       "scatter_indices_batching_dims"), ())}
            invars = [jex.Var(ShapedArray((2,), F32)) for _ in range(3)]
            names = [_RENAMES[op](params, invars, False)[0]]
        else:
            names = [op]
        assert set(names) <= jax_names, op
    assert not MLAX_ONLY_OPS & jax_names


@pytest.mark.parametrize("make", [
    lambda m: lambda x: x.sum(0), lambda m: lambda x: m.lax.reduce_sum(x, (0, 1)),
    lambda m: lambda x: x.max(1), lambda m: lambda x: m.numpy.min(x), lambda m: lambda x: x.prod(0),
    lambda m: lambda x: (x > 0).all(0), lambda m: lambda x: (x > 0).any(),
    lambda m: lambda x: x.argmax(1), lambda m: lambda x: m.numpy.argmin(x, 0),
    lambda m: lambda x: m.lax.cummax(x, 0, reverse=True), lambda m: lambda x: m.lax.cummin(x, 1),
], ids=["sum", "lax_sum", "max", "min", "prod", "all", "any", "argmax", "argmin", "cummax", "cummin"])
def test_reduction_params_print_as_jax(make: Callable[[Any], Callable[..., Any]]) -> None:
    """reduce_* print jax's ``axes`` (and reduce_sum its ``out_sharding``), argmax/argmin a
    one-axis ``axes``, cumulative ops a boolean ``reverse`` (jax's docs page jaxpr.md)."""
    x = _f32(2, 3)
    assert str(mlax.make_jaxpr(make(mlax))(x)) == str(jax.make_jaxpr(make(jax))(x))


@pytest.mark.parametrize("make", [
    lambda m: lambda x: m.lax.cond(x >= 0.0, lambda x: x + 3.0, lambda x: x - 3.0, x),
    lambda m: lambda x, y: m.lax.cond(x > y, lambda a, b: a * b, lambda a, b: m.numpy.sin(a - b), x, y),
], ids=["one_operand", "two_operands"])
def test_cond_predicate_prints_as_jax_index(make: Callable[[Any], Callable[..., Any]]) -> None:
    """lax.cond's boolean predicate is shown converted to jax's int32 index (jaxpr.md)."""
    args = tuple(_f32() for _ in range(make(jax).__code__.co_argcount))
    assert str(mlax.make_jaxpr(make(mlax))(*args)) == str(jax.make_jaxpr(make(jax))(*args))


@pytest.mark.parametrize("calls", [1, 2])
def test_nested_jit_prints_as_jax(calls: int) -> None:
    """A nested jit shows ``name`` first and its binders named as the equation's operands and
    results, as jax's printing rule for jit; a jaxpr called twice is shared (``let``)."""
    def make(m: Any) -> Callable[..., Any]:
        @m.jit
        def inner(x: Any, y: Any) -> Any:
            return m.numpy.sin(x) * y + 1.0

        def outer(x: Any, y: Any) -> Any:
            return inner(x * 2.0, y) - (inner(y, x) if calls == 2 else y)

        return outer

    args = (_f32(), _f32())
    assert str(mlax.make_jaxpr(make(mlax))(*args)) == str(jax.make_jaxpr(make(jax))(*args))


def test_select_becomes_select_n_with_jax_operand_order() -> None:
    select = mlax.make_jaxpr(lambda p, a, b: mlax.lax.select(p, a, b))
    closed = select(np.array([True, False]), _f32(2), _f32(2))
    (eqn,) = closed.jaxpr.eqns
    p, a, b = closed.jaxpr.invars
    assert eqn.primitive.name == "select_n" and eqn.invars == [p, b, a]


def test_nothing_is_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    import mlax.aot

    def fail(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("make_jaxpr compiled")

    monkeypatch.setattr(mlax.aot, "compile_cached", fail)
    mlax.make_jaxpr(lambda x: mlax.numpy.cos(x) * 3)(_f32(3))


@pytest.mark.parametrize("make, error", [
    (lambda m: m.make_jaxpr(3), TypeError),
    (lambda m: m.make_jaxpr(lambda x: x, static_argnums=3)(1.0), ValueError),
    (lambda m: m.make_jaxpr(lambda x: x, static_argnums="a")(1.0), TypeError),
    (lambda m: m.make_jaxpr(lambda x: x, static_argnums=(1.5,))(1.0), TypeError),
    (lambda m: m.make_jaxpr(lambda x: x)("not an array"), TypeError),
    (lambda m: m.make_jaxpr(lambda x: x, static_argnums=0)(np.ones(2)), ValueError),
], ids=["not_callable", "static_out_of_range", "static_not_int", "static_float", "bad_leaf", "unhashable"])
def test_errors_as_jax(make: Callable[[Any], Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        make(jax)
    with pytest.raises(error) as info:
        make(mlax)
    assert "argument:" in str(info.value)


def test_unsupported_options() -> None:
    with pytest.raises(NotImplementedError, match="axis_env"):
        mlax.make_jaxpr(lambda x: x, axis_env=[("i", 2)])
    with pytest.raises(NotImplementedError, match="abstracted_axes"):
        mlax.make_jaxpr(lambda x: x, abstracted_axes=({0: "n"},))


def _custom_jvp_sin() -> Callable[..., Any]:
    @mlax.custom_jvp
    def f(x):
        return mlax.numpy.sin(x)

    f.defjvp(lambda primals, tangents: (mlax.numpy.sin(primals[0]), mlax.numpy.cos(primals[0]) * tangents[0]))
    return f


def _custom_vjp_double() -> Callable[..., Any]:
    @mlax.custom_vjp
    def g(x):
        return x * 2.0

    g.defvjp(lambda x: (x * 2.0, x), lambda residual, cotangent: (cotangent * 2.0,))
    return g


@pytest.mark.parametrize("make, name, jaxpr_params", [
    (_custom_jvp_sin, "custom_jvp_call", {"call_jaxpr": ["sin"], "jvp_jaxpr": ["sin", "cos", "mul"]}),
    (_custom_vjp_double, "custom_vjp_call",
     {"call_jaxpr": ["mul"], "fwd_jaxpr": ["mul"], "bwd_jaxpr": ["mul"]}),
    (lambda: mlax.checkpoint(mlax.numpy.sin), "checkpoint", {"jaxpr": ["sin"]}),
    (lambda: lambda x: mlax.jvp(mlax.numpy.sin, (x,), (x,)), "jvp", {"jaxpr": ["sin"]}),
    (lambda: lambda x: mlax.jvp(mlax.vmap(mlax.numpy.sin), (x,), (x,)), "jvp", {"jaxpr": ["vmap"]}),
], ids=["custom_jvp", "custom_vjp", "checkpoint", "jvp", "jvp_of_vmap"])
def test_declarations(make: Callable[[], Callable[..., Any]], name: str,
                      jaxpr_params: dict[str, list[str]]) -> None:
    closed = mlax.make_jaxpr(make())(_f32(2))
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive.name == name
    for param, names in jaxpr_params.items():
        assert isinstance(eqn.params[param], jex.ClosedJaxpr)
        assert [e.primitive.name for e in eqn.params[param].eqns] == names
    assert _HEADER.match(str(closed)) and _FOOTER.search(str(closed))


def test_mlax_only_sort_and_dtypes() -> None:
    closed = mlax.make_jaxpr(lambda x: mlax.numpy.sort(x) > 1)(np.array([3, 1, 2], np.uint8))
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["sort_permutation", "apply_permutation", "gt"]
    assert re.search(r"bool\[3\] = gt [a-z]+ 1:u8\[\]", str(closed)), str(closed)
    bf16 = mlax.make_jaxpr(lambda x: x * 3)(np.ones(2, jax.numpy.bfloat16))
    assert bf16.out_avals == [ShapedArray((2,), jax.numpy.bfloat16)] and "3.0:bf16[]" in str(bf16)


def test_threads() -> None:
    import threading

    results: dict[int, list[str]] = {i: [] for i in range(4)}

    def work(i: int) -> None:
        for _ in range(5):
            results[i].append(str(mlax.make_jaxpr(lambda x: mlax.numpy.sin(x) * i)(np.ones(i + 1, F32))))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for i, texts in results.items():
        assert len(texts) == 5 and len(set(texts)) == 1 and f"f32[{i + 1}]" in texts[0]


def test_prng_key_arguments_trace_as_their_data() -> None:
    def f(m: Any) -> Callable[..., Any]:
        return lambda key: (m.random.split(key), m.random.uniform(key, (2,)))

    closed, shape = mlax.make_jaxpr(f(mlax), return_shape=True)(mlax.random.key(0))
    _, expected = jax.make_jaxpr(f(jax), return_shape=True)(jax.random.key(0))
    assert shape == expected  # keys come out as abstract keys, as jax's
    assert closed.in_avals == [ShapedArray((2,), np.dtype(np.uint32))]  # jax: key<fry>[]


def test_exported() -> None:
    assert "make_jaxpr" in dir(mlax)
    from mlax.jaxpr import make_jaxpr

    assert mlax.make_jaxpr is make_jaxpr
