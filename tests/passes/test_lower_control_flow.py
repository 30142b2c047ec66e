"""`mlax-lower-control-flow`, executed: programs using mlax.lax.cond / switch / while_loop /
fori_loop / scan / map compiled by the CPU backend (and by the XLA one, whose control flow
`mlax-lower-to-stablehlo` lowers), against the interpreter (bit for bit) and against the same
program written with jax.lax.

Each case is written once as ``make(lax, np_)`` and built for both libraries; every distinct
program costs a compile, so each test builds one program and calls it on several inputs.
The bodies use exact arithmetic (add, mul, select, integer ops): integers and bools agree
with JAX exactly, floats to an ulp (XLA's CPU contracts ``a * b + c`` into an fma).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from tests.oracle import assert_same, random_array, random_shape

Make = Callable[[Any, Any], Callable[..., Any]]  # (lax, numpy) -> the function


def _identical(actual: Any, expected: Any) -> None:
    """Same pytree, shapes, dtypes and bits (NaN equal to NaN, -0 differs from +0)."""
    a_leaves, a_tree = jax.tree_util.tree_flatten(actual)
    e_leaves, e_tree = jax.tree_util.tree_flatten(expected)
    assert a_tree == e_tree
    for a, e in zip(a_leaves, e_leaves, strict=True):
        a, e = np.asarray(a), np.asarray(e)
        assert (a.shape, a.dtype) == (e.shape, e.dtype)
        np.testing.assert_array_equal(a, e)
        if a.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(a), np.signbit(e))


def check(make: Make, *calls: tuple[Any, ...]) -> None:
    """One compiled program per backend, called on each argument tuple of ``calls``: the CPU's
    scf road bit for bit as the interpreter, the XLA road within an ulp of it (XLA contracts
    ``a * b + c`` into an fma), both as jax."""
    interpreter = mlax.jit(make(mlax.lax, mnp), backend="interpreter")
    cpu, xla = (mlax.jit(make(mlax.lax, mnp), backend=backend) for backend in ("cpu", "xla"))
    reference = jax.jit(make(jax.lax, jnp))
    for args in calls:
        expected, want = interpreter(*args), reference(*args)
        got = cpu(*args)
        _identical(got, expected)
        assert_same(got, want, rtol=1e-6)
        on_xla = xla(*args)
        assert_same(on_xla, expected, rtol=1e-6, atol=1e-6)
        assert_same(on_xla, want, rtol=1e-6, atol=1e-6)


def f32(rng: np.random.Generator, shape: tuple[int, ...], special: bool = True) -> np.ndarray:
    """Random floats; with ``special`` some NaN, inf and -0 among them."""
    x = random_array(rng, shape, np.float32)
    if special and x.size:
        flat = x.reshape(-1)
        for value in (np.nan, np.inf, -0.0):
            flat[rng.integers(0, flat.size)] = value
    return x


def i32(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return random_array(rng, shape, np.int32)


def boolean(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return random_array(rng, shape, np.bool_)


def test_cond_pytree_and_consts(rng: np.random.Generator) -> None:
    shape, other = random_shape(rng), random_shape(rng)
    a, b, flags, w = f32(rng, shape), i32(rng, other), boolean(rng, other), f32(rng, shape)

    def make(lax, np_):
        def f(pred, ops, w):
            def yes(o):
                return {"a": o["a"] * w + 1.0, "b": (o["b"][0] * 3 - 1, ~o["b"][1])}

            def no(o):
                return {"a": o["a"] - w, "b": (np_.where(o["b"][1], o["b"][0], -o["b"][0]), o["b"][1])}

            return lax.cond(pred, yes, no, ops)
        return f

    ops = {"a": a, "b": (b, flags)}
    check(make, (np.bool_(True), ops, w), (np.bool_(False), ops, w))


def test_switch_clamps_the_index(rng: np.random.Generator) -> None:
    shape = random_shape(rng)
    x, n = f32(rng, shape), i32(rng, shape)

    def make(lax, np_):
        def f(index, x, n):
            three = lax.switch(index, [lambda x, n: (x + 1.0, n * 2), lambda x, n: (x * x, n - 7),
                                       lambda x, n: (-x, n ^ 5)], x, n)
            two = lax.switch(index, [lambda x: x - 2.0, lambda x: x * 0.5], x)
            return three, two
        return f

    check(make, *((np.int32(i), x, n) for i in (-7, -1, 0, 1, 2, 3, 100)))


def test_while_loop_with_zero_trips(rng: np.random.Generator) -> None:
    shape = random_shape(rng)
    x, w = f32(rng, shape, special=False), f32(rng, shape, special=False)

    def make(lax, np_):
        def f(limit, x, w):
            def cond(c):
                i, _, done = c
                return (i < limit) & ~done

            def body(c):
                i, v, _ = c
                v = v * 0.5 + w
                return i + 1, v, np_.all(v > 100.0)

            return lax.while_loop(cond, body, (np.int32(0), x, np.bool_(False)))
        return f

    check(make, *((np.int32(n), x, w) for n in (0, 1, 6)))


def test_fori_loop_static_and_traced_bounds(rng: np.random.Generator) -> None:
    x = i32(rng, random_shape(rng))

    def make(lax, np_):
        def f(hi, x):
            static = lax.fori_loop(0, 5, lambda i, v: v * 3 + i, x)
            traced = lax.fori_loop(np.int32(2), hi, lambda i, v: v - i * v, x)
            return static, traced
        return f

    check(make, *((np.int32(hi), x) for hi in (-1, 2, 7)))


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_pytrees(rng: np.random.Generator, reverse: bool) -> None:
    length, shape = int(rng.integers(1, 7)), random_shape(rng, max_rank=2)
    xs = (f32(rng, (length, *shape)), i32(rng, (length, 3)))
    carry, w = (f32(rng, shape), np.int32(rng.integers(-9, 9))), f32(rng, shape)

    def make(lax, np_):
        def f(carry, xs, w):
            def step(c, x):
                total, count = c
                row, ints = x
                total = total * w + row
                return (total, count + ints.sum()), {"y": total - row, "big": ints > count}
            return lax.scan(step, carry, xs, reverse=reverse)
        return f

    check(make, (carry, xs, w))


def test_scan_of_length_zero_without_xs_and_map(rng: np.random.Generator) -> None:
    shape = random_shape(rng)
    x, rows = f32(rng, shape), i32(rng, (int(rng.integers(1, 5)), 2))

    def make(lax, np_):
        def f(x, rows):
            empty = lax.scan(lambda c, r: (c + r.sum(), (r * 2, c)), x, np_.zeros((0, 3), np.float32))
            counted = lax.scan(lambda c, _: (c * 2.0, c), x, None, length=4)
            mapped = lax.map(lambda r: r[::-1] * r[0], rows)
            return empty, counted, mapped
        return f

    check(make, (x, rows))


def test_scan_inside_cond_inside_while(rng: np.random.Generator) -> None:
    shape = random_shape(rng, max_rank=2)
    x, xs = f32(rng, shape, special=False), f32(rng, (3, *shape), special=False)

    def make(lax, np_):
        def f(x, xs, trips):
            def body(c):
                i, v = c

                def scanned(v):
                    return lax.scan(lambda acc, row: (acc * 0.5 + row, acc), v, xs)[0]

                return i + 1, lax.cond(i % 2 == 0, scanned, lambda v: v - xs[0], v)

            return lax.while_loop(lambda c: c[0] < trips, body, (np.int32(0), x))
        return f

    check(make, *((x, xs, np.int32(n)) for n in (0, 3)))


MALFORMED = """
func.func @f(%c: tensor<f32>, %xs: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %0:2 = func.call @scan(%c, %xs) : (tensor<f32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<f32>, tensor<4xf32>
}
func.func private @scan(tensor<f32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) attributes {
    mlax.scan = {body = @step, length = 5 : i64, reverse = false, num_carry = 1 : i64, num_consts = 0 : i64}}
func.func private @step(%c: tensor<f32>, %x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  return %c, %x : tensor<f32>, tensor<f32>
}
"""


def test_malformed_declaration_fails_at_it(parse: Callable[[str], Any]) -> None:
    """Run without input verification, the pass still refuses a declaration whose type does not
    follow from its body (length 5, xs of 4 rows), with the error at the declaration."""
    from mlax.passes.pipeline import PipelineError, run_pipeline

    module = parse(MALFORMED)
    with pytest.raises(PipelineError) as failure:
        run_pipeline(module, "mlax-lower-control-flow")
    (diagnostic,) = failure.value.diagnostics
    assert "mlax.scan declaration @scan" in diagnostic.message and "tensor<5xf32>" in diagnostic.message
    assert diagnostic.loc is not None and diagnostic.loc.line == 6
