"""mlax.from_stablehlo: jax's StableHLO, imported, against jax on random values.

Every case is a jax function lowered by jax (`jax.jit(f, keep_unused=True).lower(*args)`),
imported, and run eagerly and under `mlax.jit` on the cpu and interpreter backends (and,
separately, the xla backend), compared with jax's own result in value and dtype. Then the
headline programs: an MLP's loss differentiated by mlax (and its SGD step), an RNN over
`lax.scan` differentiated by mlax, and `mlax.vmap` of an imported per-example loss.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

import mlax

Args = Callable[[np.random.Generator], tuple[Any, ...]]


def normal(r: np.random.Generator, *shape: int, dtype: Any = np.float32) -> np.ndarray:
    return r.normal(size=shape).astype(dtype)


def ints(r: np.random.Generator, *shape: int, low: int = -9, high: int = 10,
         dtype: Any = np.int32) -> np.ndarray:
    return r.integers(low, high, size=shape).astype(dtype)


def specials(r: np.random.Generator, *shape: int) -> np.ndarray:
    """Normal values with some NaN, +-inf, -0.0 and repeated values mixed in."""
    x = normal(r, *shape).reshape(-1)
    picks = r.choice(x.size, size=min(4, x.size), replace=False)
    x[picks] = np.array([np.nan, np.inf, -0.0, -np.inf], np.float32)[: len(picks)]
    if x.size > 5:
        x[-1] = x[-2]
    return x.reshape(shape)


@dataclass(frozen=True)
class Case:
    name: str
    fun: Callable[..., Any]
    args: Args
    tol: float = 2e-5

    def __str__(self) -> str:
        return self.name


def _case(name: str, fun: Callable[..., Any], args: Args, tol: float = 2e-5) -> Any:
    return pytest.param(Case(name, fun, args, tol), id=name)


def x34(r: np.random.Generator) -> tuple[Any, ...]:
    return (normal(r, 3, 4),)


def pos34(r: np.random.Generator) -> tuple[Any, ...]:
    return (np.abs(normal(r, 3, 4)) + 0.1,)


def unit34(r: np.random.Generator) -> tuple[Any, ...]:
    return (np.tanh(normal(r, 3, 4)) * 0.9,)


def xy34(r: np.random.Generator) -> tuple[Any, ...]:
    return normal(r, 3, 4), normal(r, 3, 4)


def ij(r: np.random.Generator) -> tuple[Any, ...]:
    signs = np.where(r.random((3, 4)) < 0.5, -1, 1).astype(np.int32)
    return ints(r, 3, 4), ints(r, 3, 4, low=1, high=6) * signs


def unary_float(x: Any) -> Any:
    return (jnp.exp(x), jnp.tanh(x), jnp.sin(x), jnp.cos(x), jnp.tan(x), jax.nn.sigmoid(x), jnp.expm1(x),
            jnp.cbrt(x), jnp.floor(x), jnp.ceil(x), jnp.sign(x), jnp.abs(x), -x, jnp.round(x), lax.round(x),
            jnp.exp2(x))


def unary_positive(x: Any) -> Any:
    return jnp.log(x), jnp.log1p(x), jnp.sqrt(x), lax.rsqrt(x), jnp.arccosh(x + 1)


def chlo_unary(x: Any) -> Any:
    return (lax.erf(x), lax.erfc(x), lax.erf_inv(x), jnp.arcsin(x), jnp.arccos(x), jnp.arctan(x), jnp.sinh(x),
            jnp.cosh(x), jnp.arcsinh(x), jnp.arctanh(x), jnp.square(x))


def special_values(x: Any) -> Any:
    return (jnp.isfinite(x), jnp.isinf(x), jnp.isposinf(x), jnp.isneginf(x), jnp.isnan(x),
            jnp.nextafter(x, jnp.zeros_like(x)))


def binary_float(x: Any, y: Any) -> Any:
    return (x + y, x - y, x * y, x / y, jnp.fmod(x, y), x % y, jnp.maximum(x, y), jnp.minimum(x, y),
            jnp.arctan2(x, y), jnp.abs(x) ** y, x ** 3, jnp.clip(x, -0.5, 0.5), jnp.where(x > y, x, y))


def compare_args(r: np.random.Generator) -> tuple[Any, ...]:
    return specials(r, 3, 4), np.where(r.random((3, 4)) < 0.3, 0.0, normal(r, 3, 4)).astype(np.float32)


def integer(i: Any, j: Any) -> Any:
    return (i // j, i % j, lax.div(i, j), lax.rem(i, j), i & j, i | j, i ^ j, ~i, -i, jnp.abs(i), jnp.sign(i),
            jnp.maximum(i, j), i < j, i == j, i * j)


def shifts_bits(u: Any, s: Any) -> Any:
    return (lax.shift_left(u, s), lax.shift_right_logical(u, s),
            lax.shift_right_arithmetic(u.astype(jnp.int32), s.astype(jnp.int32)), lax.population_count(u),
            lax.clz(u), lax.bitcast_convert_type(u, jnp.float32))


def shift_args(r: np.random.Generator) -> tuple[Any, ...]:
    return (r.integers(0, 2**32, (3, 4), dtype=np.uint64).astype(np.uint32),
            r.integers(0, 33, (3, 4)).astype(np.uint32))


def converts(x: Any) -> Any:
    return (x.astype(jnp.float16), x.astype(jnp.bfloat16), (x * 100).astype(jnp.int8),
            (x * 100).astype(jnp.uint8), x.astype(bool), (x * 5).astype(jnp.int32).astype(jnp.float32),
            lax.reduce_precision(x, 5, 10),
            lax.reduce_precision(x, 8, 7))


ELEMENTWISE = [
    _case("unary_float", unary_float, x34),
    _case("unary_positive", unary_positive, pos34),
    _case("chlo_unary", chlo_unary, unit34, 1e-4),
    _case("specials", special_values, lambda r: (specials(r, 3, 4),)),
    _case("binary_float", binary_float, xy34),
    _case("compare", lambda x, y: (x < y, x <= y, x > y, x >= y, x == y, x != y), compare_args),
    _case("integer", integer, ij),
    _case("shifts_bits", shifts_bits, shift_args),
    _case("bools", lambda a, b: (a & b, a | b, a ^ b, ~a, jnp.where(a, 1.0, 2.0), a.astype(jnp.int32)),
          lambda r: (r.random((3, 4)) < 0.5, r.random((3, 4)) < 0.5)),
    _case("converts", converts, x34),
    _case("half_math", lambda h: (h * h + h, jnp.tanh(h), jnp.exp(h).astype(jnp.float32)),
          lambda r: (normal(r, 3, 4, dtype=np.float16),), 2e-3),
    _case("bf16_math", lambda h: (h * h + h, jnp.maximum(h, 0)),
          lambda r: (normal(r, 3, 4, dtype=ml_dtypes.bfloat16),), 1e-2),
]


def shape_ops(x: Any) -> Any:
    return (x.T, x.reshape(2, 6), x[::-1, 1:], x[1:, ::2], jnp.broadcast_to(x[0], (2, 3, 4)),
            jnp.concatenate([x, x * 2], 0), jnp.stack([x, x], 1), x[None, :, None],
            jnp.pad(x, ((1, 2), (0, 1))), lax.pad(x, 1.5, ((1, -1, 1), (0, 2, 0))), jnp.tile(x, (2, 1)),
            jnp.flip(x, 1), jnp.moveaxis(x[None], 0, 2))


def dynamic_slices(x: Any, i: Any, j: Any) -> Any:
    return (lax.dynamic_slice(x, (i, j), (2, 2)), lax.dynamic_update_slice(x, jnp.ones((2, 3)), (i, j)),
            lax.dynamic_index_in_dim(x, i, 0, False), x[i])


def gathers(x: Any, i: Any) -> Any:
    return (x[i], x[:, i], x[i, i], jnp.take(x, i, axis=1, mode="clip"),
            jnp.take_along_axis(x[:4], jnp.abs(i[:, None]) % 5, 1), x.at[i].get(mode="fill"))


def scatters(x: Any, i: Any, u: Any) -> Any:
    return (x.at[i].set(u), x.at[i].add(u), x.at[i].mul(u), x.at[i].min(u), x.at[i].max(u),
            x.at[i, 2].add(u[:, 0]), x.at[i].add(u, mode="drop"))


SHAPES = [
    _case("shape_ops", shape_ops, x34),
    _case("iota", lambda x: (jnp.arange(12.0).reshape(3, 4) * x, jnp.eye(3, 4) + x,
                             lax.broadcasted_iota(jnp.int32, (3, 4), 1)), x34),
    _case("dynamic_slices", dynamic_slices,
          lambda r: (normal(r, 4, 5), np.int32(r.integers(-6, 7)), np.int32(r.integers(-6, 7)))),
    _case("gather", gathers, lambda r: (normal(r, 6, 5), ints(r, 4, low=-7, high=7))),
    _case("scatter", scatters, lambda r: (normal(r, 6, 5), ints(r, 3, low=-7, high=7), normal(r, 3, 5))),
]


def reduces(x: Any) -> Any:
    return (jnp.sum(x, 0), jnp.prod(x, 1), jnp.max(x), jnp.min(x, 0), jnp.mean(x), jnp.var(x, 1),
            jax.nn.logsumexp(x, 1), jax.nn.softmax(x), jnp.linalg.norm(x), jnp.all(x > 0, 1), jnp.any(x > 1),
            jnp.sum((x * 3).astype(jnp.int32), 1), jnp.max((x * 3).astype(jnp.int8)))


def windows(x: Any) -> Any:
    return (lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 2), "SAME"),
            lax.reduce_window(x, 0.0, lax.add, (2, 3), (1, 1), "VALID"),
            lax.reduce_window(x, jnp.inf, lax.min, (3, 1), (2, 1), ((1, 1), (0, 0))),
            jnp.cumsum(x, 1), lax.cumsum(x, 0, reverse=True), lax.cummax(x, 1), lax.cummin(x, 0),
            lax.reduce_window(x, 2.0, lax.max, (2, 2), (1, 1), "VALID"), jnp.cumprod(x, 1),
            lax.cummax(x, 0, reverse=True))


REDUCTIONS = [
    _case("reduce", reduces, x34),
    _case("arg_extremes",
          lambda x, i: (jnp.argmax(x, 1), jnp.argmin(x, 0), jnp.argmax(i, 0), jnp.argmin(i, 1)),
          lambda r: (specials(r, 3, 4), ints(r, 3, 4, low=-2, high=3))),
    _case("windows", windows, x34),
]


def dots(a: Any, b: Any, c: Any) -> Any:
    return (a @ b, jnp.einsum("ij,kj->ik", a, c), jnp.dot(a[0], b),
            jnp.einsum("bij,bjk->bik", jnp.stack([a, a]), jnp.stack([b, b])))


def convolutions(x: Any, k: Any) -> Any:
    return (lax.conv(x, k, (1, 1), "SAME"),
            lax.conv_general_dilated(x, k, (2, 1), ((1, 0), (2, 1)), rhs_dilation=(1, 2)),
            lax.conv_general_dilated(x.transpose(0, 2, 3, 1), k.transpose(2, 3, 1, 0), (1, 1), "VALID",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC")),
            lax.conv_general_dilated(x, k[:, :1], (1, 1), "SAME", feature_group_count=2))


LINALG = [
    _case("dots", dots, lambda r: (normal(r, 3, 4), normal(r, 4, 5), normal(r, 2, 4))),
    _case("int_dots", lambda a, b: (jnp.matmul(a, b, preferred_element_type=jnp.int32),
                                    a.astype(jnp.int32) @ b),
          lambda r: (ints(r, 3, 4, dtype=np.int8), ints(r, 4, 2, dtype=np.int8))),
    _case("convolutions", convolutions, lambda r: (normal(r, 2, 2, 6, 5), normal(r, 4, 2, 3, 2)), 1e-4),
]


def sorts(x: Any, i: Any) -> Any:
    return (jnp.sort(x, 1), jnp.argsort(x, 0), jnp.sort(i, 0), jnp.argsort(i, 1),
            lax.sort((i[0], i[1], x[0]), num_keys=2), lax.top_k(x[:, :3].reshape(-1), 3),
            jnp.sort(x, 1, descending=True), jnp.median(x[:, :2]))


SORTING = [_case("sorts", sorts, lambda r: (specials(r, 3, 4), ints(r, 3, 4, low=-2, high=3)))]


def conds(x: Any, i: Any) -> Any:
    return (lax.cond(x.sum() > 0, lambda: x, lambda: -x),
            lax.switch(i, [jnp.sin, jnp.cos, lambda v: v * 2], x),
            lax.cond(i > 0, lambda v: (v, i + 1), lambda v: (v * 3, i), x))


def loops(x: Any) -> Any:
    def nested(k: Any, c: Any) -> Any:
        return lax.fori_loop(0, 3, lambda m, d: d + m * c, c)

    return (lax.fori_loop(0, 3, lambda k, c: c * x + k, x),
            lax.while_loop(lambda c: c[1].sum() < 50, lambda c: (c[0] + 1, c[1] * 2 + 1), (0, jnp.abs(x))),
            lax.scan(lambda c, r: (c + r, c * r), x[0], x),
            lax.scan(lambda c, r: (c * 0.5 + r, jnp.sin(c)), jnp.float32(1), x, reverse=True),
            lax.map(jnp.cos, x), lax.fori_loop(0, 2, nested, x))


def randoms(key: Any) -> Any:
    return (jax.random.uniform(key, (3,)), jax.random.normal(jax.random.fold_in(key, 3), (2, 2)),
            jax.random.bits(jax.random.split(key)[1], (4,)))


CONTROL_FLOW = [
    _case("cond_switch", conds, lambda r: (normal(r, 3), np.int32(r.integers(-2, 5)))),
    _case("loops", loops, lambda r: (normal(r, 3),)),
    _case("random", randoms, lambda r: (np.asarray(jax.random.PRNGKey(int(r.integers(0, 1000)))),)),
]

CASES = ELEMENTWISE + SHAPES + REDUCTIONS + LINALG + SORTING + CONTROL_FLOW


def lower(fun: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    return jax.jit(fun, keep_unused=True).lower(*args)


def assert_like(got: Any, want: Any, tol: float) -> None:
    got_leaves, want_leaves = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for a, b in zip(got_leaves, want_leaves, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape, f"{a.dtype}{a.shape} != {b.dtype}{b.shape}"
        if np.issubdtype(b.dtype, np.floating) or b.dtype == ml_dtypes.bfloat16:
            np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("mode", ["eager", "cpu", "interpreter"])
def test_op_families_match_jax(case: Case, mode: str, rng: np.random.Generator) -> None:
    args = case.args(rng)
    imported = mlax.from_stablehlo(lower(case.fun, args))
    got = imported(*args) if mode == "eager" else mlax.jit(imported, backend=mode)(*args)
    assert_like(got, jax.jit(case.fun)(*args), case.tol)


@pytest.mark.parametrize("case", CASES)
def test_op_families_on_xla(case: Case, rng: np.random.Generator) -> None:
    """The round trip jax -> StableHLO -> mlax -> StableHLO -> XLA."""
    args = case.args(rng)
    imported = mlax.from_stablehlo(lower(case.fun, args))
    assert_like(mlax.jit(imported, backend="xla")(*args), jax.jit(case.fun)(*args), case.tol)


# --- the headline programs --------------------------------------------------------------------------


def mlp_params(r: np.random.Generator) -> dict[str, np.ndarray]:
    return {"w1": normal(r, 3, 8), "b1": normal(r, 8), "w2": normal(r, 8, 2), "b2": normal(r, 2)}


def mlp_loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((hidden @ params["w2"] + params["b2"] - y) ** 2)


@pytest.mark.parametrize("backend", ["cpu", "interpreter", "xla"])
def test_mlp_train_step(backend: str, rng: np.random.Generator) -> None:
    """jax lowers the loss; mlax differentiates the imported program; the SGD step matches jax's."""
    params, x, y = mlp_params(rng), normal(rng, 16, 3), normal(rng, 16, 2)
    loss = mlax.from_stablehlo(jax.jit(mlp_loss).lower(params, x, y))
    grads = mlax.jit(mlax.grad(loss), backend=backend)(params, x, y)
    assert_like(grads, jax.grad(mlp_loss)(params, x, y), 1e-5)

    def sgd(step_loss: Any, grad: Any) -> Any:
        def step(p: Any, x: Any, y: Any) -> Any:
            value, g = grad(step_loss)(p, x, y)
            return jax.tree.map(lambda w, d: w - 0.1 * d, p, g), value

        return step

    new_params, value = mlax.jit(sgd(loss, mlax.value_and_grad), backend=backend)(params, x, y)
    want_params, want_value = jax.jit(sgd(mlp_loss, jax.value_and_grad))(params, x, y)
    assert_like((new_params, value), (want_params, want_value), 1e-5)
    assert set(new_params) == set(params)


def rnn_loss(params: dict[str, Any], xs: Any) -> Any:
    def cell(h: Any, x: Any) -> Any:
        h = jnp.tanh(params["W"] @ h + params["U"] @ x + params["b"])
        return h, jnp.sum(h * x[:1])

    h, ys = lax.scan(cell, jnp.zeros(4), xs)
    return jnp.sum(h ** 2) + jnp.mean(ys)


@pytest.mark.parametrize("backend", ["cpu", "interpreter", "xla"])
def test_rnn_scan_grad(backend: str, rng: np.random.Generator) -> None:
    """lax.scan reaches StableHLO as a counted while loop; imported as a scan, mlax
    reverse-differentiates it."""
    params = {"W": normal(rng, 4, 4) * 0.5, "U": normal(rng, 4, 3), "b": normal(rng, 4)}
    xs = normal(rng, 7, 3)
    loss = mlax.from_stablehlo(jax.jit(rnn_loss).lower(params, xs))
    assert "mlax.scan" in mlax.make_mlir(loss)(params, xs)
    want = jax.grad(rnn_loss, argnums=(0, 1))(params, xs)
    assert_like(mlax.grad(loss, argnums=(0, 1))(params, xs), want, 1e-5)
    assert_like(mlax.jit(mlax.grad(loss, argnums=(0, 1)), backend=backend)(params, xs), want, 1e-5)


@pytest.mark.parametrize("backend", ["cpu", "interpreter", "xla"])
def test_vmap_of_per_example_loss(backend: str, rng: np.random.Generator) -> None:
    params = mlp_params(rng)
    xs, ys = normal(rng, 6, 3), normal(rng, 6, 2)

    def per_example(p: Any, x: Any, y: Any) -> Any:
        return mlp_loss(p, x[None], y[None])

    loss = mlax.from_stablehlo(jax.jit(per_example).lower(params, xs[0], ys[0]))
    want = jax.vmap(per_example, in_axes=(None, 0, 0))(params, xs, ys)
    assert_like(mlax.vmap(loss, in_axes=(None, 0, 0))(params, xs, ys), want, 1e-5)
    per_grads = mlax.jit(mlax.vmap(mlax.grad(loss), in_axes=(None, 0, 0)), backend=backend)(params, xs, ys)
    assert_like(per_grads, jax.vmap(jax.grad(per_example), in_axes=(None, 0, 0))(params, xs, ys), 1e-5)


def test_transformations_through_control_flow(rng: np.random.Generator) -> None:
    """jvp through a while loop (forward mode), vmap of a cond on a batched predicate."""
    def loop(x: Any) -> Any:
        return lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, jnp.sin(c[1]) * c[1]), (0, x))[1]

    def branch(x: Any) -> Any:
        return lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x)

    x, t = normal(rng, 3), normal(rng, 3)
    assert_like(mlax.jvp(mlax.from_stablehlo(lower(loop, (x,))), (x,), (t,)), jax.jvp(loop, (x,), (t,)), 1e-5)
    xs = normal(rng, 5, 3)
    batched = mlax.vmap(mlax.from_stablehlo(lower(branch, (x,))))(xs)
    assert_like(batched, jax.vmap(branch)(xs), 1e-5)
    def dynamic_loop(v: Any) -> Any:
        return lax.while_loop(lambda c: c.sum() < 9, lambda c: c * 2, v)

    dynamic = mlax.from_stablehlo(lower(dynamic_loop, (x,)))
    with pytest.raises(Exception, match="Reverse-mode differentiation does not work for lax.while_loop"):
        mlax.grad(lambda v: dynamic(v).sum())(np.abs(x) + 0.5)


# --- program forms, arguments, errors -----------------------------------------------------------------


def test_program_forms(rng: np.random.Generator) -> None:
    """Pretty text, generic text, a jaxlib module, a portable artifact, Lowered and Exported."""
    def f(p: dict[str, Any], x: Any) -> Any:
        return {"out": jnp.tanh(x @ p["w"]), "n": jnp.sum(x)}

    p, x = {"w": normal(rng, 3, 2)}, normal(rng, 4, 3)
    lowered = lower(f, (p, x))
    want = f(p, x)
    module = lowered.compiler_ir("stablehlo")
    generic = module.operation.get_asm(print_generic_op_form=True)
    exported = jax.export.export(jax.jit(f))(p, x)
    flat = [lowered.as_text(), lowered.as_text(debug_info=True), generic, generic.encode(), module,
            exported.mlir_module_serialized]
    for program in flat:
        out = mlax.from_stablehlo(program)(p["w"], x)
        assert isinstance(out, tuple) and len(out) == 2
        assert_like(sorted(out, key=np.ndim), [want["n"], want["out"]], 1e-5)
    for program in (lowered, exported):
        assert_like(mlax.from_stablehlo(program)(p, x), want, 1e-5)
    tree = mlax.from_stablehlo(lowered.as_text(), in_tree=lowered.in_tree, out_tree=lowered.out_tree)
    assert_like(tree(p, x), want, 1e-5)


def test_argument_checks(rng: np.random.Generator) -> None:
    imported = mlax.from_stablehlo(lower(lambda x, s: x * s, (normal(rng, 3), np.float32(2))))
    x = normal(rng, 3)
    assert_like(imported(x, 2.0), x * np.float32(2), 0)  # a Python scalar takes the declared type
    with pytest.raises(TypeError, match=r"argument 0 of .* must be float32\[3\], got int32\[3\]"):
        imported(np.arange(3, dtype=np.int32), 2.0)
    with pytest.raises(TypeError, match="takes arguments of the structure"):
        imported(x)
    with pytest.raises(TypeError, match=r"takes 2 positional arguments \(tensor<3xf32>, tensor<f32>\), got"):
        mlax.from_stablehlo(lower(lambda x, s: x * s, (x, np.float32(2))).as_text())(x)
    pruned = jax.jit(lambda x, y: x * 2).lower(x, x)
    with pytest.raises(ValueError, match="keep_unused=True"):
        mlax.from_stablehlo(pruned)
    with pytest.raises(ValueError, match="no function @nope"):
        mlax.from_stablehlo(pruned.as_text(), entry="nope")
    with pytest.raises(ValueError, match="does not parse"):
        mlax.from_stablehlo("module { func.func @main( }")
    with pytest.raises(TypeError, match="expects StableHLO text"):
        mlax.from_stablehlo(42)


def test_64_bit_programs(rng: np.random.Generator, x64: None) -> None:
    x = rng.normal(size=(3,))
    imported = mlax.from_stablehlo(lower(lambda v: (jnp.sin(v) * 2, jnp.arange(3) + 1), (x,)))
    assert_like(imported(x), (np.sin(x) * 2, np.arange(3, dtype=np.int64) + 1), 1e-12)


def test_64_bit_signature_needs_x64() -> None:
    with jax.enable_x64(True):
        text = jax.jit(lambda v: v * 2).lower(np.zeros(3)).as_text()
    with pytest.raises(ValueError, match=r"64-bit types; enable them with mlax.config.update\('x64', True\)"):
        mlax.from_stablehlo(text)(np.zeros(3))


def test_unsupported_ops_are_located_errors() -> None:
    key = np.zeros(4, np.uint32)
    line = test_unsupported_ops_are_located_errors.__code__.co_firstlineno + 5
    with pytest.raises(NotImplementedError, match=r"stablehlo.rng_bit_generator: mlax has no counterpart") \
            as info:
        mlax.from_stablehlo(jax.jit(lambda k: lax.rng_bit_generator(k, (2, 3))[1]).lower(key))
    assert f"test_from_stablehlo.py:{line}:" in str(info.value)
    x = np.zeros(3, np.float32)

    def callback(v: Any) -> Any:
        return jax.pure_callback(np.sin, jax.ShapeDtypeStruct((3,), x.dtype), v)

    with pytest.raises(NotImplementedError, match="custom call target 'xla_ffi_python_cpu_callback'"):
        mlax.from_stablehlo(jax.jit(callback).lower(x))
    odd_reduce = mlax.from_stablehlo(
        jax.jit(lambda v: lax.reduce(v, np.float32(1), lambda a, b: a * b + 1, (0,))).lower(x))
    with pytest.raises(NotImplementedError, match="stablehlo.reduce: a body that is neither") as info:
        odd_reduce(np.ones(3, np.float32))
    assert "test_from_stablehlo.py:" in str(info.value)
    with pytest.raises(NotImplementedError, match=r"'lapack_sgesvd_ffi' .*\n  at line \d+:\d+ of the"):
        mlax.from_stablehlo(jax.jit(lambda x: lax.linalg.svd(x, algorithm=lax.linalg.SvdAlgorithm.QR))
                            .lower(np.eye(3, dtype=np.float32)).as_text())


def test_import_table() -> None:
    from mlax.import_stablehlo import import_table
    from mlax.import_stablehlo.table import CONVERTERS

    table = import_table()
    assert [name for name, _ in table] == sorted(CONVERTERS)
    names = dict(table)
    for op in ("stablehlo.while", "stablehlo.reduce", "stablehlo.sort", "stablehlo.gather", "chlo.top_k"):
        assert op in names
    assert all(target for _, target in table)


def test_other_threads(rng: np.random.Generator) -> None:
    """Each thread reads the program in its own MLIR context."""
    import threading

    x = normal(rng, 3)
    imported = mlax.from_stablehlo(lower(lambda v: jnp.sin(v) * 2, (x,)))
    results: list[Any] = []
    thread = threading.Thread(target=lambda: results.append((imported(x), mlax.jit(imported)(x))))
    thread.start()
    thread.join()
    assert_like(results[0], (np.sin(x) * 2, np.sin(x) * 2), 1e-6)
