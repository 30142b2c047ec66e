"""mlax-lower-to-stablehlo on control flow: calls of cond / while / scan declarations become
stablehlo.case / stablehlo.while, run by XLA.

Hand-written modules (random shapes, every dtype family) are compared bit for bit with the
interpreter: cond with 1, 2 (i1) and 3 (i32, out-of-range selectors clamped) branches, while
with carries of several dtypes and consts, scan forward and reverse over several xs and ys
with consts. Front-end programs (`mlax.jit(f, backend="xla")` of lax.cond / switch /
while_loop / fori_loop / scan / map, nested, and jit(grad) through scan) are compared with the
interpreter backend bit for bit and with jax. Bodies avoid ``a * b + c``, which XLA contracts
into an fma where the interpreter rounds twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from mlir import ir

import mlax
import mlax.numpy as mnp
from mlax.dialect import dtypes, get_context
from mlax.passes.pipeline import PipelineError, run_pipeline
from tests.oracle import assert_same, random_array, random_shape
from tests.passes.stablehlo_harness import (
    assert_bits_equal,
    check_against_interpreter,
    run_on_interpreter,
    run_on_xla,
    tensor_text,
)
from tests.passes.test_lower_control_flow import MALFORMED, _identical, boolean, f32, i32
from tests.passes.test_lower_to_linalg import _floats

FLOATS = [np.float32, np.float16, dtypes.bfloat16, np.float64]
INTS = [np.int32, np.int8, np.uint8, np.int64, np.uint32, np.int16]


def _values(rng: np.random.Generator, dtype: Any, shape: tuple[int, ...]) -> np.ndarray:
    if np.dtype(dtype).kind == "f" or dtype == dtypes.bfloat16:
        return _floats(rng, dtype, shape)
    return random_array(rng, shape, dtype)


def _first_name(pair: tuple) -> str:
    return np.dtype(pair[0]).name


def _binary(op: str, a: str, b: str, t: str) -> str:
    return f'"mlax.{op}"({a}, {b}) : ({t}, {t}) -> {t}'


# --- hand-written declarations -------------------------------------------------------------------

# branch k applies FLOAT_OPS[k] to (a, a) and INT_OPS[k] to (b, b)
FLOAT_OPS, INT_OPS = ["add", "mul", "max"], ["xor", "add", "min"]


def _cond_module(branches: int, selector: str, ta: str, tb: str) -> str:
    functions = []
    for k in range(branches):
        functions.append(f"""
func.func private @b{k}(%a: {ta}, %b: {tb}) -> ({ta}, {tb}) {{
  %x = {_binary(FLOAT_OPS[k], "%a", "%a", ta)}
  %y = {_binary(INT_OPS[k], "%b", "%b", tb)}
  return %x, %y : {ta}, {tb}
}}""")
    names = ", ".join(f"@b{k}" for k in range(branches))
    return f"""
func.func @f(%s: tensor<{selector}>, %a: {ta}, %b: {tb}) -> ({ta}, {tb}) {{
  %r:2 = func.call @cond(%s, %a, %b) : (tensor<{selector}>, {ta}, {tb}) -> ({ta}, {tb})
  return %r#0, %r#1 : {ta}, {tb}
}}
func.func private @cond(tensor<{selector}>, {ta}, {tb}) -> ({ta}, {tb})
    attributes {{mlax.cond = {{branches = [{names}]}}}}
{"".join(functions)}
"""


@pytest.mark.parametrize("branches", [1, 2, 3])
@pytest.mark.parametrize("dtypes_", list(zip(FLOATS, INTS, strict=False)), ids=_first_name)
def test_cond(branches: int, dtypes_: tuple, rng: np.random.Generator, x64: None) -> None:
    """Two branches take an i1 selector; one and three an i32 one, clamped into range."""
    fa, ib = dtypes_
    a, b = _values(rng, fa, random_shape(rng)), _values(rng, ib, random_shape(rng))
    selector = "i1" if branches == 2 else "i32"
    text = _cond_module(branches, selector, tensor_text(a.shape, a.dtype), tensor_text(b.shape, b.dtype))
    if branches == 2:
        choices = [np.array(True), np.array(False)]
    else:
        choices = [np.array(i, np.int32) for i in (-(2 ** 31), -5, -1, 0, 1, 2, 3, 100, 2 ** 31 - 1)]
    for s in choices:
        check_against_interpreter(text, "f", [s, a, b])


def _while_module(ti: str, tx: str, tm: str) -> str:
    carries = f"tensor<i32>, {tx}, {tm}, tensor<i1>"
    return f"""
func.func @f(%x: {tx}, %m: {tm}, %limit: tensor<i32>, %w: {tx}) -> ({carries}) {{
  %zero = "mlax.constant"() {{value = dense<0> : tensor<i32>}} : () -> tensor<i32>
  %no = "mlax.constant"() {{value = dense<false> : tensor<i1>}} : () -> tensor<i1>
  %r:4 = func.call @loop(%zero, %x, %m, %no, %limit, %w)
      : ({carries}, tensor<i32>, {tx}) -> ({carries})
  return %r#0, %r#1, %r#2, %r#3 : {carries}
}}
func.func private @loop({carries}, tensor<i32>, {tx}) -> ({carries})
    attributes {{mlax.while = {{cond = @cond, body = @body}}}}
func.func private @cond(%i: tensor<i32>, %x: {tx}, %m: {tm}, %flag: tensor<i1>, %limit: tensor<i32>,
                        %w: {tx}) -> tensor<i1> {{
  %lt = "mlax.compare"(%i, %limit) {{comparison_direction = "LT"}} : (tensor<i32>, tensor<i32>) -> tensor<i1>
  return %lt : tensor<i1>
}}
func.func private @body(%i: tensor<i32>, %x: {tx}, %m: {tm}, %flag: tensor<i1>, %limit: tensor<i32>,
                        %w: {tx}) -> ({carries}) {{
  %one = "mlax.constant"() {{value = dense<1> : tensor<i32>}} : () -> tensor<i32>
  %i1 = {_binary("add", "%i", "%one", "tensor<i32>")}
  %x1 = {_binary("add", "%x", "%w", tx)}
  %m1 = {_binary("add", "%m", "%m", tm)}
  %f1 = "mlax.not"(%flag) : (tensor<i1>) -> tensor<i1>
  return %i1, %x1, %m1, %f1 : {carries}
}}
"""


@pytest.mark.parametrize("dtypes_", list(zip(FLOATS, INTS[::-1], strict=False)), ids=_first_name)
def test_while(dtypes_: tuple, rng: np.random.Generator, x64: None) -> None:
    """Carries of four dtypes; zero, one and several trips (a negative limit: none)."""
    fx, im = dtypes_
    shape = random_shape(rng)
    x, w, m = _values(rng, fx, shape), _values(rng, fx, shape), _values(rng, im, random_shape(rng))
    text = _while_module("tensor<i32>", tensor_text(x.shape, x.dtype), tensor_text(m.shape, m.dtype))
    for limit in (-3, 0, 1, 7):
        check_against_interpreter(text, "f", [x, m, np.array(limit, np.int32), w])


def _scan_module(length: int, reverse: bool, shape: tuple[int, ...], dtype: Any, row: tuple[int, ...],
                 int_dtype: Any) -> str:
    """carry c and const w of ``shape``; xs: rows of c's type and int rows; ys: the new carry,
    the int row doubled and the carry that entered."""
    tc, ti = tensor_text(shape, dtype), tensor_text(row, int_dtype)
    sc, si = tensor_text((length, *shape), dtype), tensor_text((length, *row), int_dtype)
    ys = f"{sc}, {si}, {sc}"
    flags = (f"length = {length} : i64, reverse = {str(reverse).lower()}, num_carry = 1 : i64, "
             "num_consts = 1 : i64")
    return f"""
func.func @f(%c: {tc}, %xs: {sc}, %is: {si}, %w: {tc}) -> ({tc}, {ys}) {{
  %r:4 = func.call @scan(%c, %xs, %is, %w) : ({tc}, {sc}, {si}, {tc}) -> ({tc}, {ys})
  return %r#0, %r#1, %r#2, %r#3 : {tc}, {ys}
}}
func.func private @scan({tc}, {sc}, {si}, {tc}) -> ({tc}, {ys})
    attributes {{mlax.scan = {{body = @step, {flags}}}}}
func.func private @step(%c: {tc}, %x: {tc}, %i: {ti}, %w: {tc}) -> ({tc}, {tc}, {ti}, {tc}) {{
  %m = {_binary("max", "%c", "%x", tc)}
  %c1 = {_binary("add", "%m", "%w", tc)}
  %i2 = {_binary("add", "%i", "%i", ti)}
  return %c1, %c1, %i2, %c : {tc}, {tc}, {ti}, {tc}
}}
"""


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtypes_", list(zip(FLOATS, INTS, strict=False)), ids=_first_name)
def test_scan(reverse: bool, dtypes_: tuple, rng: np.random.Generator, x64: None) -> None:
    fc, ii = dtypes_
    length, shape, row = int(rng.integers(1, 6)), random_shape(rng, max_rank=2), (int(rng.integers(1, 4)),)
    c, w = _values(rng, fc, shape), _values(rng, fc, shape)
    xs, ints = _values(rng, fc, (length, *shape)), _values(rng, ii, (length, *row))
    check_against_interpreter(_scan_module(length, reverse, shape, fc, row, ii), "f", [c, xs, ints, w])


@pytest.mark.parametrize(("length", "shape", "row"), [(0, (2,), (3,)), (3, (2, 0), (1,)), (4, (), (0,))])
def test_scan_edges(length: int, shape: tuple, row: tuple, rng: np.random.Generator) -> None:
    """Length 0 (the initial carry, empty stacks) and rows with no elements."""
    c, w = _values(rng, np.float32, shape), _values(rng, np.float32, shape)
    xs, ints = _values(rng, np.float32, (length, *shape)), _values(rng, np.int32, (length, *row))
    for reverse in (False, True):
        check_against_interpreter(_scan_module(length, reverse, shape, np.float32, row, np.int32), "f",
                                  [c, xs, ints, w])


def _branches_are_scans(wrapped: bool) -> str:
    """A cond choosing between a forward and a reverse scan declaration, as its branches
    themselves or (``wrapped``) through functions calling them."""
    c, xs = "tensor<2xf32>", "tensor<4x2xf32>"
    wrappers = "".join(f"""
func.func private @call_{name}(%c: {c}, %xs: {xs}) -> ({c}, {xs}) {{
  %r:2 = func.call @{name}(%c, %xs) : ({c}, {xs}) -> ({c}, {xs})
  return %r#0, %r#1 : {c}, {xs}
}}""" for name in ("forward", "backward"))
    scans = "".join(f"""
func.func private @{name}({c}, {xs}) -> ({c}, {xs}) attributes {{mlax.scan = {{body = @step, length = 4 : i64,
    reverse = {reverse}, num_carry = 1 : i64, num_consts = 0 : i64}}}}""" for name, reverse in (
        ("forward", "false"), ("backward", "true")))
    branches = "@call_forward, @call_backward" if wrapped else "@forward, @backward"
    return f"""
func.func @f(%p: tensor<i1>, %c: {c}, %xs: {xs}) -> ({c}, {xs}) {{
  %r:2 = func.call @cond(%p, %c, %xs) : (tensor<i1>, {c}, {xs}) -> ({c}, {xs})
  return %r#0, %r#1 : {c}, {xs}
}}
func.func private @cond(tensor<i1>, {c}, {xs}) -> ({c}, {xs})
    attributes {{mlax.cond = {{branches = [{branches}]}}}}
{scans}{wrappers if wrapped else ""}
func.func private @step(%c: {c}, %x: {c}) -> ({c}, {c}) {{
  %0 = "mlax.sub"(%x, %c) : ({c}, {c}) -> {c}
  return %0, %c : {c}, {c}
}}
"""


def test_branches_that_are_declarations(rng: np.random.Generator) -> None:
    """A cond whose branches are scan declarations themselves: the calls its regions make are
    lowered in the next round. (The interpreter runs only the wrapped form: it calls a branch
    as a function, and a declaration has no body.)"""
    c, xs = _floats(rng, np.float32, (2,)), _floats(rng, np.float32, (4, 2))
    for p in (True, False):
        args = [np.array(p), c, xs]
        expected = run_on_interpreter(_branches_are_scans(wrapped=True), "f", args)
        actual = run_on_xla(_branches_are_scans(wrapped=False), "f", args)
        for got, want in zip(actual, expected, strict=True):
            assert_bits_equal(got, want)


def test_declarations_are_erased_and_bodies_lowered() -> None:
    """No call of a declaration, no declaration and no mlax op is left; the body functions stay."""
    with get_context():
        module = ir.Module.parse(_scan_module(3, True, (2,), np.float32, (1,), np.int8))
        run_pipeline(module, "mlax-lower-to-stablehlo")
        text = str(module)
    assert "mlax." not in text and "@scan" not in text and "func.call @step" in text
    assert text.count('"stablehlo.while"') == 1 and '"stablehlo.dynamic_update_slice"' in text


def test_malformed_declaration_fails_at_it() -> None:
    with get_context():
        module = ir.Module.parse(MALFORMED)
        with pytest.raises(PipelineError) as failure:
            run_pipeline(module, "mlax-lower-to-stablehlo")
    (diagnostic,) = failure.value.diagnostics
    assert "mlax.scan declaration @scan" in diagnostic.message and "tensor<5xf32>" in diagnostic.message


# --- front-end programs --------------------------------------------------------------------------

Make = Callable[[Any, Any], Callable[..., Any]]  # (lax, numpy) -> the function


def check_program(make: Make, *calls: tuple[Any, ...], rtol: float = 1e-6, exact: bool = True) -> None:
    """One XLA program, called on each argument tuple: bit for bit as the interpreter backend
    (within ``rtol`` unless ``exact``), and as jax within ``rtol`` (jax's XLA contracts
    ``a * b + c`` into an fma, where the program's own XLA may not)."""
    xla = mlax.jit(make(mlax.lax, mnp), backend="xla")
    interpreter = mlax.jit(make(mlax.lax, mnp), backend="interpreter")
    reference = jax.jit(make(jax.lax, jnp))
    for args in calls:
        got = xla(*args)
        if exact:
            _identical(got, interpreter(*args))
        else:
            assert_same(got, interpreter(*args), rtol=rtol, atol=rtol)
        assert_same(got, reference(*args), rtol=rtol, atol=rtol)



def test_cond_and_switch(rng: np.random.Generator) -> None:
    shape, other = random_shape(rng), random_shape(rng)
    x, n, flags, w = f32(rng, shape), i32(rng, other), boolean(rng, other), f32(rng, shape)

    def make(lax, np_):
        def f(pred, index, x, n, flags, w):
            two = lax.cond(pred, lambda x, n: (x * w, np_.where(flags, n, -n)),
                           lambda x, n: (x - w, n * 3), x, n)
            three = lax.switch(index, [lambda x: x + 1.0, lambda x: x * x, lambda x: -x], x)
            return two, three
        return f

    selectors = ((True, -4), (False, 1), (True, 9))
    check_program(make, *((np.bool_(p), np.int32(i), x, n, flags, w) for p, i in selectors))


def test_while_and_fori(rng: np.random.Generator) -> None:
    x, n = f32(rng, random_shape(rng), special=False), i32(rng, random_shape(rng))

    def make(lax, np_):
        def f(limit, x, n):
            def body(c):
                i, v, m, done = c
                v = v * 0.5 + 1.0
                return i + 1, v, m ^ i, np_.all(v > 100.0)

            start = (np.int32(0), x, n, np.bool_(False))
            looped = lax.while_loop(lambda c: (c[0] < limit) & ~c[3], body, start)
            static = lax.fori_loop(0, 4, lambda i, v: v * 3 + i, n)
            traced = lax.fori_loop(np.int32(1), limit, lambda i, v: v - i * v, n)
            return looped, static, traced
        return f

    check_program(make, *((np.int32(k), x, n) for k in (-1, 0, 5)))


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_and_map(reverse: bool, rng: np.random.Generator) -> None:
    length, shape = int(rng.integers(1, 6)), random_shape(rng, max_rank=2)
    xs = (f32(rng, (length, *shape)), i32(rng, (length, 3)))
    carry, w = (f32(rng, shape), np.int32(rng.integers(-9, 9))), f32(rng, shape)

    def make(lax, np_):
        def f(carry, xs, w):
            def step(c, x):
                total, count = c
                row, ints = x
                total = np_.maximum(total, row) + w
                return (total, count + ints.sum()), {"y": total - row, "big": ints > count}

            scanned = lax.scan(step, carry, xs, reverse=reverse)
            empty = lax.scan(lambda c, r: (c + r.sum(), r * 2), carry[0], np_.zeros((0, 3), np.float32))
            mapped = lax.map(lambda r: r[::-1] * r[0], xs[1])
            return scanned, empty, mapped
        return f

    check_program(make, (carry, xs, w))


def test_grad_through_scan(rng: np.random.Generator) -> None:
    """jit(grad) of a scan (with a cond in its body) on XLA: the transformations are resolved
    before lowering, into a forward scan, a reverse scan and conds."""
    w, xs = f32(rng, (3,), special=False), f32(rng, (5, 3), special=False)

    def make(lax, np_):
        def loss(w, xs):
            def step(h, x):
                h = np_.tanh(h * w + x)
                h = lax.cond(h.sum() > 0, lambda h: h * 2.0, lambda h: h - 1.0, h)
                return h, (h * h).sum()

            h, ys = lax.scan(step, np_.zeros(3, np.float32), xs)
            return ys.sum() + (h * w).sum()

        return jax.grad(loss, argnums=(0, 1)) if lax is jax.lax else mlax.grad(loss, argnums=(0, 1))

    got = mlax.jit(make(mlax.lax, mnp), backend="xla")(w, xs)
    # tanh differs by ulps between XLA and NumPy; gradient entries that are sums of terms of
    # magnitude ~1 which cancel keep those ulps as an absolute error
    assert_same(got, mlax.jit(make(mlax.lax, mnp), backend="interpreter")(w, xs), rtol=1e-5, atol=1e-5)
    assert_same(got, jax.jit(make(jax.lax, jnp))(w, xs), rtol=1e-5, atol=1e-5)
