"""Ties and special points against jax, on every backend: inputs full of repeated values
(integer-valued floats, constant and padded windows), where a rule that is right almost
everywhere can still give silently different numbers.

- reduce_window max/min: values, grad (jax's select_and_scatter_add: the first maximum of each
  window takes the cotangent, padding counts as -inf), vmap of grad, jvp, forward-over-reverse;
- reduce_max/min (tied maxima share the cotangent evenly, as jax's reduce_max), maximum/minimum
  and clamp (ties split in halves), argmax/argmin (the first index; NaN first), sort/argsort/top_k
  (stable: tied keys keep their order, and their tangents follow them);
- argmax/argmin of every float dtype on subnormal values (bf16's once went wrong on the CPU
  backend: LLVM flushed them in a bf16 register);
- the derivative of elementwise functions at their special points (0, +-1, ties, infinities,
  NaN): logaddexp at a tie, abs/sign/sqrt at 0, relu & co. at their kinks, asin at 1...

Each test compiles one program per backend holding all its checks; the full grid of special
points is marked slow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import ml_dtypes
import numpy as np
import pytest
from jax import lax as jlax

import mlax
import mlax.numpy as mnp
import mlax.scipy.special as mss
from mlax import lax

F32 = np.float32

# (kind, operand shape, window, strides, padding, base dilation, window dilation)
WINDOWS: list[tuple[Any, ...]] = [
    ("max", (4, 6), (2, 2), (1, 1), "VALID", None, None),
    ("min", (4, 6), (2, 3), (2, 1), ((1, 0), (1, 1)), None, None),
    ("max", (5, 5), (3, 3), (2, 2), "SAME", None, None),
    ("min", (2, 5, 4), (1, 3, 2), (1, 1, 2), ((0, 0), (2, 1), (0, 1)), None, None),
    ("max", (7,), (3,), (1,), ((2, 2),), (2,), None),
    ("min", (3, 4), (2, 2), (1, 1), ((1, 0), (0, 1)), (1, 2), None),
]
# jax has no reverse mode for window dilation; forward mode only.
DILATED = [("max", (6, 5), (2, 2), (1, 1), "VALID", None, (2, 2)),
           ("min", (7,), (3,), (2,), "VALID", (2,), (2,))]


def _pool(module: Any, config: tuple[Any, ...]) -> Callable[[Any], Any]:
    kind, _, window, strides, padding, base, dilation = config
    init = -np.inf if kind == "max" else np.inf
    op = getattr(module, kind)
    return lambda x: module.reduce_window(x, init, op, window, strides, padding, base, dilation)


def _unpadded(config: tuple[Any, ...]) -> bool:
    padding = config[4]
    return padding == "VALID" or (not isinstance(padding, str) and not any(map(any, padding)))


def _ties(rng: np.random.Generator, shape: tuple[int, ...], special: bool = False) -> np.ndarray:
    """Integer-valued floats in {-1, 0, 1}, one constant row, and (``special``) some infinities and
    NaNs."""
    x = rng.integers(-1, 2, shape).astype(F32)
    x[(0,) * (len(shape) - 1)] = 1.0
    if special:
        x[rng.random(shape) < 0.1] = -np.inf
        x[rng.random(shape) < 0.05] = np.inf
        x[rng.random(shape) < 0.05] = np.nan
    return x


def _check(got: Any, want: Any, rtol: float = 1e-6, what: str = "") -> None:
    for i, (g, w) in enumerate(zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True)):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.shape, g.dtype) == (w.shape, w.dtype), f"{what}[{i}]: {g.dtype}{g.shape} {w.dtype}{w.shape}"
        if g.dtype.kind == "f" or g.dtype == ml_dtypes.bfloat16:
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=rtol,
                                       equal_nan=True, err_msg=f"{what}[{i}]")
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"{what}[{i}]")


def test_reduce_window_ties(backend: str, rng: np.random.Generator) -> None:
    """Values, grad (NaN and infinities included), vmap of grad and jvp of max/min pooling on
    tie-heavy inputs: the first maximum of a window takes the tangent, as in jax. jax's jvp
    with padding runs in XLA's order, not always the row-major one its grad uses (a padded
    window of ties can give its tangent to another of the tied positions), so jvp is compared
    where nothing is padded; with padding it must be the transpose of grad."""
    xs = [_ties(rng, c[1]) for c in WINDOWS]
    # grad and vmap of grad at once: a batch of tie-heavy, special (NaN, +-inf) and constant inputs
    batches = [np.stack([x, _ties(rng, c[1], special=True), np.zeros(c[1], F32)])
               for c, x in zip(WINDOWS, xs, strict=True)]
    tangents = [rng.standard_normal(c[1]).astype(F32) for c in WINDOWS + DILATED]
    dilated_xs = [_ties(rng, c[1]) for c in DILATED]

    def program(module: Any, np_module: Any, autodiff: Any) -> Callable[..., Any]:
        def loss(config: tuple[Any, ...]) -> Callable[[Any], Any]:
            return lambda x: np_module.sum(np_module.sin(_pool(module, config)(x)) * 3.0)

        def run(xs: list[Any], batches: list[Any], tangents: list[Any], dilated_xs: list[Any]) -> Any:
            out = []
            for config, x, b, t in zip(WINDOWS, xs, batches, tangents, strict=False):
                pool = _pool(module, config)
                grads = autodiff.vmap(autodiff.grad(loss(config)))(b)
                y, ty = autodiff.jvp(pool, (x,), (t,))
                if _unpadded(config):
                    out += [y, grads, ty]
                else:  # <jvp(t), ct> == <t, grad> (ct: the cotangent of loss at x), relatively
                    forward = np_module.sum(ty * np_module.cos(y) * 3.0)
                    backward = np_module.sum(t * grads[0])
                    scale = np_module.abs(forward) + np_module.abs(backward) + 1
                    out += [y, grads, (forward - backward) / scale]
            for config, x, t in zip(DILATED, dilated_xs, tangents[len(WINDOWS):], strict=True):
                out += [autodiff.jvp(_pool(module, config), (x,), (t,))[1]]
            return out

        return run

    args = (xs, batches, tangents, dilated_xs)
    want = jax.jit(program(jlax, jnp, jax))(*args)
    for i, config in enumerate(WINDOWS):
        if not _unpadded(config):
            want[3 * i + 2] = np.zeros((), F32)  # the transpose identity, up to rounding
    _check(mlax.jit(program(lax, mnp, mlax))(*args), want, rtol=2e-6, what="pooling")


def test_max_pool_tie_examples(backend: str) -> None:
    """The examples: a window [[1, 1], [1, 1]] sends its cotangent to the first element (jax's
    [1, 0, 0, 0], not [.25, .25, .25, .25]); with padding the padded positions (-inf) never win;
    min pools likewise; -0.0 and 0.0 tie."""
    def program(module: Any, autodiff: Any) -> Callable[..., Any]:
        def run(x: Any, z: Any) -> Any:
            pools = [lambda v: module.reduce_window(v, -np.inf, module.max, (2, 2), (1, 1), "VALID"),
                     lambda v: module.reduce_window(v, -np.inf, module.max, (3, 3), (1, 1), "SAME"),
                     lambda v: module.reduce_window(v, np.inf, module.min, (2, 2), (2, 2), ((1, 1), (1, 1)))]
            return [autodiff.grad(lambda v, p=p: p(v).sum())(arg) for p in pools for arg in (x, z)]

        return run

    x = np.ones((2, 2), F32)
    z = np.array([[0.0, -0.0], [-0.0, 0.0]], F32)
    got = mlax.jit(program(lax, mlax))(x, z)
    np.testing.assert_array_equal(got[0], [[1.0, 0.0], [0.0, 0.0]])
    _check(got, jax.jit(program(jlax, jax))(x, z), what="examples")


def test_pooling_second_order(backend: str, rng: np.random.Generator) -> None:
    """Forward over reverse and reverse over reverse of a max and a min pool (no padding: jax's
    forward mode with padding uses XLA's order), on ties."""
    x = _ties(rng, (3, 5, 6))
    v = rng.standard_normal(x.shape).astype(F32)

    def program(module: Any, np_module: Any, autodiff: Any) -> Callable[..., Any]:
        def f(x: Any) -> Any:
            y = module.reduce_window(x, -np.inf, module.max, (1, 3, 2), (1, 2, 1), "VALID")
            z = module.reduce_window(x, np.inf, module.min, (1, 2, 2), (1, 1, 2), "VALID")
            return np_module.sum(y * y * x[:, :y.shape[1], :y.shape[2]]) + np_module.sum(np_module.sin(z) * z)

        def run(x: Any, v: Any) -> Any:
            return [autodiff.jvp(autodiff.grad(f), (x,), (v,))[1],
                    autodiff.grad(lambda x: np_module.vdot(autodiff.grad(f)(x), v))(x),
                    autodiff.jvp(f, (x,), (v,))[1]]

        return run

    _check(mlax.jit(program(lax, mnp, mlax))(x, v), jax.jit(program(jlax, jnp, jax))(x, v), rtol=1e-5,
           what="second order")


def test_reductions_and_elementwise_ties(backend: str, rng: np.random.Generator) -> None:
    """reduce_max/min over tied values (the cotangent shared evenly, as jax), their vmap, and
    over a NaN (jax.jit's gradient is 0 there: nothing equals the NaN maximum); maximum/minimum/
    clamp at ties (halves); argmax/argmin on ties and NaN (the first)."""
    x = _ties(rng, (4, 5))
    x[2] = np.nan
    y = _ties(rng, (4, 5))
    z = rng.integers(0, 2, (4, 5)).astype(F32)

    def program(module: Any, np_module: Any, autodiff: Any) -> Callable[..., Any]:
        def run(x: Any, y: Any, z: Any) -> Any:
            finite = x[:2]
            return [
                np_module.max(x, 1), np_module.min(x, 0), np_module.argmax(x, 1), np_module.argmin(x, 0),
                np_module.argmax(y), np_module.argmin(y, 1), np_module.argmax(z, 0),
                autodiff.grad(lambda v: np_module.sum(np_module.max(v, 1) * 2.0))(finite),
                autodiff.grad(lambda v: np_module.sum(np_module.max(v, 1)))(x),
                autodiff.grad(lambda v: np_module.sum(np_module.min(v, 0)))(x),
                autodiff.jvp(lambda v: np_module.min(v, 0), (x,), (y,))[1],
                autodiff.grad(lambda v: np_module.sum(np_module.min(v, (0, 1))))(y),
                autodiff.grad(lambda v: np_module.sum(np_module.max(v, 0, initial=0.0)))(y),
                autodiff.vmap(autodiff.grad(lambda v: np_module.max(v)))(z),
                autodiff.grad(lambda a, b: np_module.sum(np_module.maximum(a, b) * 3.0), (0, 1))(y, z),
                autodiff.grad(lambda a, b: np_module.sum(np_module.minimum(a, b)), (0, 1))(y, z),
                autodiff.grad(lambda a, b: np_module.sum(module.max(a, b) + module.min(b, a)), (0, 1))(y, y),
                autodiff.grad(lambda lo, v, hi: np_module.sum(module.clamp(lo, v, hi)), (0, 1, 2))(
                    np_module.zeros_like(y), y, np_module.ones_like(y)),
                autodiff.grad(lambda v: np_module.sum(np_module.clip(v, 0.0, 1.0)))(y),
                autodiff.jvp(lambda v: np_module.max(v, 1), (finite,), (y[:2],))[1],
                autodiff.jvp(lambda a, b: np_module.maximum(a, b), (y, z), (z, y))[1],
            ]

        return run

    _check(mlax.jit(program(lax, mnp, mlax))(x, y, z), jax.jit(program(jlax, jnp, jax))(x, y, z), what="ties")


def test_complex_extremes_with_nan_parts(backend: str, rng: np.random.Generator) -> None:
    """Complex max/min compare lexicographically and a comparison with a NaN part is false, so
    the order of combination decides: XLA folds (accumulator, element) in order, and a NaN
    stands until a later element replaces it. Reductions over each axis and all, eagerly (the
    interpreter) and jitted, against jax. Not yet the same: cummax/cummin and max/min windows
    (each window or prefix is folded in another order than XLA's: docs/reliability.md)."""
    parts = rng.choice(np.array([np.nan, -np.inf, np.inf, 0.0, 1.0, -1.0, 2.0], np.float32), (2, 5, 4))
    x = (parts[0] + 1j * parts[1]).astype(np.complex64)

    def program(np_module: Any) -> Callable[..., Any]:
        return lambda x: [np_module.max(x, 0), np_module.min(x, 1), np_module.max(x),
                          np_module.min(x, (0, 1))]

    want = jax.jit(program(jnp))(x)
    _check(mlax.jit(program(mnp))(x), want, what="jit")
    _check(program(mnp)(x), want, what="eager")


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16],
                         ids=lambda d: np.dtype(d).name)
def test_argmax_subnormals(dtype: Any, backend: str, rng: np.random.Generator) -> None:
    """argmax/argmin over subnormals, zeros of both signs and a few normal values. The CPU
    backend once answered neither numpy nor jax for bf16 (LLVM kept the running bf16 maximum in
    a register through vcvtneps2bf16, which flushes subnormals). mlax computes with subnormals
    as numpy does; XLA's CPU flushes f32 and bf16 subnormals to zero before comparing (all tie
    with 0: the first index), so on the xla backend the answer is jax's."""
    tiny = float(ml_dtypes.finfo(dtype).smallest_subnormal)
    rows = [rng.integers(-40, 41, 37) * tiny for _ in range(6)]
    rows[1][[3, 17]] = 0.0
    rows[2][5] = -0.0
    rows[3][[0, 30]] = [1.0, -1.0]  # normal values decide
    rows[4][::2] = 0.0
    rows[5][:] = rows[5][7]  # all equal
    x = np.stack(rows).astype(dtype)

    def program(np_module: Any) -> Callable[[Any], Any]:
        return lambda x: [np_module.argmax(x, 1), np_module.argmin(x, 1), np_module.argmax(x.T, 0),
                          np_module.argmin(x[:, ::-1], 1), np_module.argmax(x)]

    got = mlax.jit(program(mnp))(x)
    flushes = backend == "xla" and np.dtype(dtype) != np.float16
    want = jax.jit(program(jnp))(x) if flushes else program(np)(x)
    _check(got, [np.asarray(w, np.int32) for w in want], what=f"argmax {np.dtype(dtype).name}")
    if np.dtype(dtype) == np.float16:  # no flushing anywhere: jax agrees too
        _check(got, jax.jit(program(jnp))(x), what="argmax f16 vs jax")


def test_sort_and_top_k_are_stable(backend: str, rng: np.random.Generator) -> None:
    """Tied keys keep their order in sort/argsort/top_k (the lower index first), -0.0 and 0.0
    tie, NaN sorts last; the tangents of tied values follow their own elements."""
    x = _ties(rng, (3, 8))
    x[0, 3], x[0, 5] = -0.0, 0.0
    x[1, 2] = np.nan
    t = rng.standard_normal(x.shape).astype(F32)
    keys = rng.integers(0, 3, (2, 7)).astype(np.int32)

    def program(module: Any, np_module: Any, autodiff: Any) -> Callable[..., Any]:
        def run(x: Any, t: Any, keys: Any) -> Any:
            values, indices = module.top_k(x, 4)
            return [np_module.sort(x, 1), np_module.argsort(x, 1), np_module.argsort(x, 0, stable=True),
                    values, indices, np_module.argsort(keys, 1), np_module.argsort(-keys, 1, descending=True),
                    module.sort((keys, x[:2, :7]), num_keys=1)[1],
                    autodiff.jvp(lambda v: np_module.sort(v, 1), (x,), (t,))[1],
                    autodiff.jvp(lambda v: module.top_k(v, 3)[0], (x,), (t,))[1],
                    autodiff.grad(lambda v: np_module.sum(np_module.sort(v, 0)[0] * 2.0))(x)]

        return run

    _check(mlax.jit(program(lax, mnp, mlax))(x, t, keys), jax.jit(program(jlax, jnp, jax))(x, t, keys),
           what="sort")


# --- derivatives at special points -------------------------------------------------------------

POINTS = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, 6.0, 3.0, np.inf, -np.inf, np.nan], F32)


def _unary(m: Any, mn: Any, ms: Any, nn: Any) -> dict[str, Callable[[Any], Any]]:
    """Functions of one variable with kinks, ties or singular points among POINTS, built the same
    way from (lax, numpy, scipy.special, nn) of jax or of mlax."""
    return {
        "logaddexp0": lambda x: mn.logaddexp(x, 0.0), "logaddexp_self": lambda x: mn.logaddexp(x, x),
        "logaddexp2": lambda x: mn.logaddexp2(x, 0.0), "softplus": nn.softplus, "log_sigmoid": nn.log_sigmoid,
        "abs": mn.abs, "sign": mn.sign, "sqrt": mn.sqrt, "cbrt": mn.cbrt, "rsqrt": m.rsqrt,
        "maximum0": lambda x: mn.maximum(x, 0.0), "minimum_self": lambda x: mn.minimum(x, x),
        "fmax": lambda x: mn.fmax(x, 0.0), "clip": lambda x: mn.clip(x, -1.0, 2.0),
        "clamp": lambda x: m.clamp(-1.0, x, 2.0), "where": lambda x: mn.where(x > 0, x, 0.0),
        "relu": nn.relu, "relu6": nn.relu6, "leaky_relu": nn.leaky_relu, "elu": nn.elu, "celu": nn.celu,
        "selu": nn.selu, "gelu": nn.gelu, "silu": nn.silu, "hard_tanh": nn.hard_tanh,
        "hard_sigmoid": nn.hard_sigmoid, "sparse_plus": nn.sparse_plus, "soft_sign": nn.soft_sign,
        "asin": mn.arcsin, "acos": mn.arccos, "atanh": mn.arctanh, "acosh": mn.arccosh, "asinh": mn.arcsinh,
        "sinh": mn.sinh, "power_neg": lambda x: m.integer_pow(x, -2), "power_half": lambda x: x ** 0.5,
        "logit": ms.logit, "xlogy": lambda x: ms.xlogy(x, x), "entr": ms.entr, "sinc": mn.sinc,
        "hypot": lambda x: mn.hypot(x, 0.0), "arctan2": lambda x: mn.arctan2(x, x),
        "norm": lambda x: mn.linalg.norm(mn.stack([x, 0.0 * x])), "heaviside": lambda x: mn.heaviside(x, 0.5),
        "copysign": lambda x: mn.copysign(x, -1.0), "round": mn.round, "i0": mn.i0,
    }


FAST = ["logaddexp0", "logaddexp_self", "softplus", "abs", "sign", "sqrt", "maximum0", "clamp", "where",
        "relu", "relu6", "hard_tanh", "asin", "acosh", "power_neg", "logit"]


def _special_points(names: list[str], backend: str) -> None:
    import jax.nn as jnn

    import mlax.nn as mnn

    ones = np.ones_like(POINTS)

    def program(functions: dict[str, Callable[[Any], Any]], np_module: Any,
                autodiff: Any) -> Callable[..., Any]:
        def run(x: Any, t: Any) -> Any:
            return [(autodiff.vmap(autodiff.grad(lambda v, f=functions[n]: np_module.sum(f(v) * 2.0)))(x),
                     autodiff.jvp(autodiff.vmap(functions[n]), (x,), (t,))[1]) for n in names]

        return run

    want = jax.jit(program(_unary(jlax, jnp, jss, jnn), jnp, jax))(POINTS, ones)
    got = mlax.jit(program(_unary(lax, mnp, mss, mnn), mnp, mlax))(POINTS, ones)
    for name, g, w in zip(names, got, want, strict=True):
        _check(g, w, rtol=1e-5, what=f"{name} at {POINTS}")


def test_derivatives_at_special_points(backend: str) -> None:
    """grad and jvp at 0, +-1, +-2, 6, +-inf and NaN of the functions whose rules are special
    there: logaddexp at a tie (jax's custom_jvp: 1/2, not max's 1/2 minus abs's 1/2), abs/sign/
    sqrt at 0, relu's kinks, asin'(1) = inf, acosh'(-2) = 1/sqrt(3), (x**-2)'(0) = -inf..."""
    _special_points(FAST, backend)


@pytest.mark.slow
def test_derivatives_at_special_points_all(backend: str) -> None:
    names = list(_unary(jlax, jnp, jss, jax.nn))
    _special_points(names, backend)


_BINARY: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "max": (jlax.max, lax.max), "min": (jlax.min, lax.min), "logaddexp": (jnp.logaddexp, mnp.logaddexp),
    "pow": (jlax.pow, lax.pow), "atan2": (jnp.arctan2, mnp.arctan2), "hypot": (jnp.hypot, mnp.hypot),
    "div": (jnp.divide, mnp.divide), "rem": (jlax.rem, lax.rem), "xlogy": (jss.xlogy, mss.xlogy),
    "clamp_lo": (lambda x, y: jlax.clamp(x, y, 1.0), lambda x, y: lax.clamp(x, y, 1.0)),
}


def test_binary_derivatives_at_special_points(backend: str) -> None:
    """Both partial derivatives and the jvp of binary functions on every pair of special points
    (ties on the diagonal)."""
    p = np.array([0.0, -0.0, 1.0, -1.0, 2.0, np.inf, -np.inf, np.nan], F32)
    x, y = (a.ravel() for a in np.meshgrid(p, p, indexing="ij"))

    def program(index: int, autodiff: Any, np_module: Any) -> Callable[..., Any]:
        def run(x: Any, y: Any) -> Any:
            out = []
            for pair in _BINARY.values():
                f = pair[index]
                out += [autodiff.vmap(autodiff.grad(f, (0, 1)))(x, y),
                        autodiff.jvp(autodiff.vmap(f), (x, y), (np_module.ones_like(x), y * 0.0 + 2.0))[1]]
            return out

        return run

    want = jax.jit(program(0, jax, jnp))(x, y)
    got = mlax.jit(program(1, mlax, mnp))(x, y)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        _check(g, w, rtol=1e-5, what=f"{list(_BINARY)[i // 2]} on {list(zip(x, y, strict=True))}")
