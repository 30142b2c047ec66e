"""mlax.vmap through cond / switch / while_loop / fori_loop / scan / map against jax.vmap of the
same jax.lax program: random shapes and values, random batch axes, batched and unbatched
predicates, indices out of range, loops whose examples finish at different iterations,
pytree carries, captured consts, nesting and vmap of vmap; on the reference interpreter and
the CPU backend."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same, random_array

F32, F16, I32 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.int32)
BACKENDS = ("interpreter", None)  # None: the default (CPU) backend
Program = Callable[[Any, Any], Callable[..., Any]]  # (lax, numpy) -> the function to vmap


@dataclass(frozen=True)
class Case:
    program: Program
    example: Callable[[np.random.Generator, tuple[int, ...]], list[np.ndarray]]  # one example's args
    patterns: tuple[str, ...]  # per argument: b batched (at a random axis), . unbatched


def _shape(rng: np.random.Generator) -> tuple[int, ...]:
    return tuple(int(d) for d in rng.integers(0, 4, size=int(rng.integers(0, 3))))


def _float(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype = F32) -> np.ndarray:
    """Random values with a few -0.0, inf and NaN."""
    x = random_array(rng, shape, dtype)
    specials = rng.choice(np.array([-0.0, np.inf, -np.inf, np.nan], dtype), shape)
    return np.where(rng.random(shape) < 0.1, specials, x).astype(dtype)


def _scalar(rng: np.random.Generator, lo: int, hi: int) -> np.ndarray:
    return np.asarray(rng.integers(lo, hi + 1), I32)


def _cond(L: Any, N: Any) -> Callable[..., Any]:
    return lambda p, x, y: L.cond(p > 0, lambda x, y: (x * y, N.sin(x)), lambda x, y: (x - y, x + 1.0), x, y)


def _cond_consts(L: Any, N: Any) -> Callable[..., Any]:
    return lambda p, x, w: L.cond(p, lambda x: x * w + 1.0, lambda x: N.cos(x) - w, x)


def _switch(L: Any, N: Any) -> Callable[..., Any]:
    return lambda i, x, w: L.switch(i, [lambda x: x * w, lambda x: N.cos(x), lambda x: x - w], x)


def _switch2(L: Any, N: Any) -> Callable[..., Any]:
    return lambda i, x: L.switch(i, [lambda x: (x * 2.0, i), lambda x: (N.exp(x), i + 1)], x)


def _while_lanes(L: Any, N: Any) -> Callable[..., Any]:
    return lambda n, x: L.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 0.5 + 1.0), (0, x))


def _while_pytree(L: Any, N: Any) -> Callable[..., Any]:
    def f(x, lim, w):
        # at most 6 steps: a sum of -inf, NaN or no elements never reaches the limit
        return L.while_loop(lambda c: (N.sum(c["a"]) < lim) & (c["k"] < 6),
                            lambda c: {"a": c["a"] + N.abs(w) + 0.5, "k": c["k"] + 1}, {"a": x, "k": 0})
    return f


def _fori_static(L: Any, N: Any) -> Callable[..., Any]:
    return lambda x, w: L.fori_loop(0, 4, lambda i, c: c * w + L.convert_element_type(i, np.float32), x)


def _fori_traced(L: Any, N: Any) -> Callable[..., Any]:
    return lambda lo, hi, x: L.fori_loop(lo, hi, lambda i, c: c * 0.5 + L.convert_element_type(i, F32), x)


def _scan(reverse: bool) -> Program:
    def program(L: Any, N: Any) -> Callable[..., Any]:
        return lambda c, xs, w: L.scan(lambda c, x: (c * w + x, (c + x, N.sin(x))), c, xs, reverse=reverse)
    return program


def _scan_pytree(L: Any, N: Any) -> Callable[..., Any]:
    def f(a, b, xs):
        def step(c, x):
            return (c[0] + x, {"b": c[1]["b"] * 0.5}), c[0] * x
        return L.scan(step, (a, {"b": b}), xs)
    return f


def _map(L: Any, N: Any) -> Callable[..., Any]:
    return lambda xs, w: L.map(lambda x: N.sin(x) * w, xs)


def _scan_in_cond(L: Any, N: Any) -> Callable[..., Any]:
    def f(p, xs, c):
        return L.cond(p > 0, lambda xs, c: L.scan(lambda c, x: (c + x, c * x), c, xs)[1],
                      lambda xs, c: xs * 2.0 - c, xs, c)
    return f


def _cond_in_scan(L: Any, N: Any) -> Callable[..., Any]:
    def f(c, xs):
        return L.scan(lambda c, x: (L.cond(N.sum(x) > 0, lambda c: c * 0.5, lambda c: c + x, c), c), c, xs)
    return f


def _cond_f16(L: Any, N: Any) -> Callable[..., Any]:
    return lambda p, x: L.cond(p, lambda x: (x * x, x > 0), lambda x: (-x, N.isnan(x)), x)


def _scan_ints(L: Any, N: Any) -> Callable[..., Any]:
    """Bool and wrapping int8 carries and outputs."""
    def f(b, k, xs):
        return L.scan(lambda c, x: ((c[0] ^ (x > 0), c[1] + x), c[1] * x), (b, k), xs)
    return f


def _pxy(rng: np.random.Generator, s: tuple[int, ...]) -> list[np.ndarray]:
    """A float predicate (> 0, NaN: false) and two operands."""
    p = np.asarray(rng.choice([-1.0, 1.0, np.nan]) * rng.random(), F32)
    return [p, _float(rng, s), _float(rng, s)]


def _stacked(rng: np.random.Generator, s: tuple[int, ...], length: int) -> list[np.ndarray]:
    return [_float(rng, s), _float(rng, (length, *s)), _float(rng, s)]


CASES: dict[str, Case] = {
    "cond": Case(_cond, _pxy, ("b..", ".b.", "..b", "bbb", "b.b")),
    "cond_consts": Case(_cond_consts, lambda r, s: [np.asarray(r.random() < 0.5), _float(r, s), _float(r, s)],
                        ("b..", ".b.", "..b", "b.b")),
    "cond_f16": Case(_cond_f16, lambda r, s: [np.asarray(r.random() < 0.5), _float(r, s, F16)],
                     ("b.", ".b")),
    "scan_ints": Case(_scan_ints, lambda r, s: [random_array(r, s, np.bool_), random_array(r, s, np.int8),
                                               random_array(r, (3, *s), np.int8)], ("b..", ".b.", "..b")),
    "switch": Case(_switch, lambda r, s: [_scalar(r, -2, 4), _float(r, s), _float(r, s)],
                   ("b..", ".b.", "..b", "bb.")),
    "switch2": Case(_switch2, lambda r, s: [_scalar(r, -1, 3), _float(r, s)], ("b.", ".b")),
    "while_lanes": Case(_while_lanes, lambda r, s: [_scalar(r, 0, 5), _float(r, s)], ("b.", ".b", "bb")),
    "while_pytree": Case(_while_pytree, lambda r, s: [_float(r, s), np.asarray(r.uniform(-3, 6), F32),
                                                      _float(r, s)], ("b..", ".b.", "..b", "bbb")),
    "fori_static": Case(_fori_static, lambda r, s: [_float(r, s), _float(r, s)], ("b.", ".b")),
    "fori_traced": Case(_fori_traced, lambda r, s: [_scalar(r, 0, 3), _scalar(r, 0, 6), _float(r, s)],
                        ("b..", ".b.", "..b", "bb.")),
    "scan": Case(_scan(False), lambda r, s: _stacked(r, s, 4), ("b..", ".b.", "..b", "bbb")),
    "scan_reverse": Case(_scan(True), lambda r, s: _stacked(r, s, 3), (".b.", "b.b")),
    "scan_pytree": Case(_scan_pytree, lambda r, s: [_float(r, s), _float(r, s), _float(r, (3, *s))],
                        ("b..", ".b.", "..b")),
    "map": Case(_map, lambda r, s: [_float(r, (3, *s)), _float(r, s)], ("b.", ".b")),
    "scan_in_cond": Case(_scan_in_cond, lambda r, s: [_pxy(r, ())[0], _float(r, (3, *s)), _float(r, s)],
                         ("b..", ".b.", "bb.", "..b")),
    "cond_in_scan": Case(_cond_in_scan, lambda r, s: [_float(r, s), _float(r, (4, *s))], ("b.", ".b")),
}
PARAMS = [(name, pattern) for name, case in CASES.items() for pattern in case.patterns]


def _batched_args(rng: np.random.Generator, case: Case, pattern: str, size: int
                  ) -> tuple[list[np.ndarray], tuple[int | None, ...]]:
    """Arguments with a batch of ``size`` examples at a random axis where ``pattern`` says b."""
    shape = _shape(rng)
    first = case.example(rng, shape)
    examples = [case.example(rng, shape) for _ in range(size)]
    args, axes = [], []
    for k, flag in enumerate(pattern):
        if flag == ".":
            args.append(first[k])
            axes.append(None)
            continue
        stack = np.stack([ex[k] for ex in examples]) if size else np.zeros((0, *first[k].shape),
                                                                          first[k].dtype)
        axis = int(rng.integers(0, stack.ndim))
        args.append(np.moveaxis(stack, 0, axis))
        axes.append(axis)
    return args, tuple(axes)


def _check(f: Callable[..., Any], args: list[np.ndarray], expected: Any) -> None:
    for backend in BACKENDS:
        assert_same(mlax.jit(f, backend=backend)(*args), expected, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("name,pattern", PARAMS, ids=[f"{n}-{p}" for n, p in PARAMS])
def test_vmap_against_jax(rng: np.random.Generator, name: str, pattern: str) -> None:
    case = CASES[name]
    size = int(rng.choice([1, 3, 4]))
    args, axes = _batched_args(rng, case, pattern, size)
    expected = jax.vmap(case.program(jax.lax, jnp), in_axes=axes)(*args)
    _check(mlax.vmap(case.program(mlax.lax, mnp), in_axes=axes), args, expected)


@pytest.mark.parametrize("name", ["switch", "while_lanes", "scan", "scan_in_cond"])
def test_vmap_of_vmap(rng: np.random.Generator, name: str) -> None:
    """The inner vmap batches every argument at 0; the outer one the first argument only."""
    case = CASES[name]
    inner, outer = 3, 2
    shape = _shape(rng)
    grid = [[case.example(rng, shape) for _ in range(inner)] for _ in range(outer)]
    args = [np.stack([np.stack([ex[k] for ex in row]) for row in grid]) for k in range(len(grid[0][0]))]
    args[1:] = [a[0] for a in args[1:]]
    axes = (0,) + (None,) * (len(args) - 1)

    def twice(vmap: Any, L: Any, N: Any) -> Callable[..., Any]:
        return vmap(vmap(case.program(L, N)), in_axes=axes)

    _check(twice(mlax.vmap, mlax.lax, mnp), args, twice(jax.vmap, jax.lax, jnp)(*args))


def test_empty_batch() -> None:
    """A batch of 0 examples: the loop over no examples never runs."""
    rng = np.random.default_rng(0)
    args, axes = _batched_args(rng, CASES["while_lanes"], "bb", 0)
    expected = jax.vmap(_while_lanes(jax.lax, jnp), in_axes=axes)(*args)
    _check(mlax.vmap(_while_lanes(mlax.lax, mnp), in_axes=axes), args, expected)


def _scan_cond_loss(L: Any, N: Any) -> Callable[..., Any]:
    def loss(w, xs):
        c, ys = L.scan(lambda c, x: (N.sin(c * w + x), c * x), 0.5, xs)
        return c + N.sum(ys) + L.cond(w > 0, lambda: w * 2.0, lambda: -w)
    return loss


def test_composes_with_grad(rng: np.random.Generator) -> None:
    """Per-example gradients through scan and cond (vmap of grad), and grad of a vmap."""
    w, xs = random_array(rng, (3,), F32), random_array(rng, (3, 4), F32)
    per_example = mlax.vmap(mlax.grad(_scan_cond_loss(mlax.lax, mnp)))
    _check(per_example, [w, xs], jax.vmap(jax.grad(_scan_cond_loss(jax.lax, jnp)))(w, xs))
    total = mlax.grad(lambda w, xs: mnp.sum(mlax.vmap(_scan_cond_loss(mlax.lax, mnp))(w, xs)))
    expected = jax.grad(lambda w, xs: jnp.sum(jax.vmap(_scan_cond_loss(jax.lax, jnp))(w, xs)))(w, xs)
    _check(total, [w, xs], expected)
