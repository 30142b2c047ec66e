"""Primitives of jax's extension API (jax.extend.core.Primitive) on mlax: eager, jit, grad,
vmap and their compositions on every backend, against the same primitive on the real jax."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.core import ShapedArray
from jax.extend import core as jax_core
from jax.interpreters import ad, batching, mlir

import mlax
import mlax.numpy as mnp
from mlax.extend_primitive import Primitive
from tests.oracle import random_array


def _moved(xnp: Any, x: Any, dim: int | None, size: int) -> Any:
    return xnp.broadcast_to(x, (size, *xnp.shape(x))) if dim is None else xnp.moveaxis(x, dim, 0)


def multiply_add(cls: type, xnp: Any, *, jvp: bool = True, transpose: bool = True, batch: bool = True,
                 lowering: bool = True, abstract: bool = True) -> Callable[..., Any]:
    """x * y + z as a primitive of class ``cls`` whose rules compute with ``xnp`` (jax.numpy or
    mlax.numpy), as jax's "How primitives work" page builds it: the JVP rule uses the primitive
    itself, so reverse mode needs its transpose rule."""
    p = cls("multiply_add")

    def bind(x: Any, y: Any, z: Any) -> Any:
        return p.bind(x, y, z)

    p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))
    if abstract:
        p.def_abstract_eval(lambda x, y, z: ShapedArray(x.shape, x.dtype))
    if lowering:
        mlir.register_lowering(p, mlir.lower_fun(lambda x, y, z: xnp.add(xnp.multiply(x, y), z),
                                                 multiple_results=False))

    def zeros(t: Any, like: Any) -> Any:
        return xnp.zeros_like(like) if type(t) is ad.Zero else t

    def value_and_jvp(primals: Any, tangents: Any) -> Any:
        x, y, z = primals
        xt, yt, zt = tangents
        return bind(x, y, z), bind(zeros(xt, x), y, bind(x, zeros(yt, y), zeros(zt, z)))

    def transpose_rule(ct: Any, x: Any, y: Any, z: Any) -> Any:
        if not ad.is_undefined_primal(x):
            return None, (ad.Zero(y.aval) if type(ct) is ad.Zero else bind(x, ct, xnp.zeros_like(x))), ct
        return (ad.Zero(x.aval) if type(ct) is ad.Zero else bind(ct, y, xnp.zeros_like(y))), None, ct

    def batch_rule(args: Any, dims: Any) -> Any:
        size = next(xnp.shape(a)[d] for a, d in zip(args, dims, strict=True) if d is not None)
        return bind(*(_moved(xnp, a, d, size) for a, d in zip(args, dims, strict=True))), 0

    if jvp:
        ad.primitive_jvps[p] = value_and_jvp
    if transpose:
        ad.primitive_transposes[p] = transpose_rule
    if batch:
        batching.primitive_batchers[p] = batch_rule
    bind.primitive = p  # type: ignore[attr-defined]
    return bind


def sincos(cls: type, xnp: Any) -> Callable[..., Any]:
    """A primitive with two results: (sin(x) * scale, cos(x)), ``scale`` a parameter; its batching
    rule registered through axis_primitive_batchers (as equinox does)."""
    p = cls("sincos")
    p.multiple_results = True

    def bind(x: Any, scale: float) -> Any:
        return p.bind(x, scale=scale)

    def impl(x: Any, *, scale: float) -> Any:
        return [xnp.sin(x) * scale, xnp.cos(x)]

    p.def_impl(impl)
    p.def_abstract_eval(lambda x, *, scale: [ShapedArray(x.shape, x.dtype)] * 2)
    mlir.register_lowering(p, mlir.lower_fun(impl, multiple_results=True))

    def jvp(primals: Any, tangents: Any, *, scale: float) -> Any:
        (x,), (t,) = primals, tangents
        s, c = bind(x, scale)
        return [s, c], [c * t * scale, -s / scale * t]

    def batch_rule(size: int, name: Any, spmd: Any, args: Any, dims: Any, *, scale: float) -> Any:
        return bind(_moved(xnp, args[0], dims[0], size), scale), [0, 0]

    ad.primitive_jvps[p] = jvp
    batching.axis_primitive_batchers[p] = batch_rule
    return bind


def helpers_defined(cls: type, xnp: Any) -> Callable[..., Any]:
    """f(x, y) = sin(x * y) - x with primitives whose rules come from jax's helpers: ad.defjvp
    (sin), ad.defbilinear (mul) and ad.deflinear2 (neg), batching.defvectorized."""
    sin_p, mul_p, neg_p = cls("h_sin"), cls("h_mul"), cls("h_neg")
    for p, impl in ((sin_p, xnp.sin), (neg_p, xnp.negative)):
        p.def_impl(impl)
        p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
        mlir.register_lowering(p, mlir.lower_fun(impl, multiple_results=False))
        batching.defvectorized(p)
    mul_p.def_impl(xnp.multiply)
    mul_p.def_abstract_eval(lambda x, y: ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(mul_p, mlir.lower_fun(xnp.multiply, multiple_results=False))
    ad.defjvp(sin_p, lambda t, x: mul_p.bind(t, xnp.cos(x)))
    ad.defbilinear(mul_p, lambda ct, x, y: mul_p.bind(ct, y), lambda ct, x, y: mul_p.bind(x, ct))
    ad.deflinear2(neg_p, lambda ct, x: [neg_p.bind(ct)])

    def mul_batch(args: Any, dims: Any) -> Any:
        size = next(xnp.shape(a)[d] for a, d in zip(args, dims, strict=True) if d is not None)
        return mul_p.bind(*(_moved(xnp, a, d, size) for a, d in zip(args, dims, strict=True))), 0

    batching.primitive_batchers[mul_p] = mul_batch
    return lambda x, y: xnp.sum(sin_p.bind(mul_p.bind(x, y)) + neg_p.bind(x))


def _apply(lib: Any, f: Callable[..., Any], transform: str, x: Any, y: Any) -> Any:
    """``transform`` of ``f`` on (x, y) with ``lib``'s transformations (mlax or jax)."""
    if transform == "jvp":
        return lib.jvp(f, (x, y), (y, x))
    if transform == "vmap_grad":
        return lib.vmap(lib.grad(f), in_axes=(0, None))(np.stack([x, y]), y)
    run = {"grad": lib.grad(f, argnums=(0, 1)), "jit_grad": lib.jit(lib.grad(f)),
           "hessian": lib.jit(lib.hessian(f))}[transform]
    return run(x, y)


@pytest.mark.parametrize("transform", ["grad", "jit_grad", "jvp", "hessian", "vmap_grad"])
def test_rules_from_jax_helpers(backend: str, rng: np.random.Generator, transform: str) -> None:
    x, y = random_array(rng, (4,), np.float32), random_array(rng, (4,), np.float32)
    got = _apply(mlax, helpers_defined(Primitive, mnp), transform, x, y)
    want = _apply(jax, helpers_defined(jax_core.Primitive, jnp), transform, x, y)
    jax.tree.map(lambda g, w: np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=1e-5),
                 got, want)


def _programs(ma: Callable[..., Any], sc: Callable[..., Any], xnp: Any) -> dict[str, Callable[..., Any]]:
    def square_add(a: Any, b: Any) -> Any:
        return ma(a, a, b)

    def mixed(a: Any, b: Any) -> Any:
        s, c = sc(a * b, 1.5)
        return xnp.sum(ma(s, c, b) ** 2)

    def in_scan(a: Any, b: Any) -> Any:
        def body(c: Any, x: Any) -> Any:
            s, co = sc(c * x, 0.5)
            return ma(c, s, x), co

        c, ys = lax_of(xnp).scan(body, a[0], a)
        return c + ys + b

    def in_loop_and_checkpoint(a: Any, b: Any) -> Any:
        step = transforms_of(xnp).checkpoint(lambda c: ma(xnp.sin(c), b, a))
        return lax_of(xnp).fori_loop(0, 3, lambda i, c: step(c), a)

    return {"square_add": square_add, "mixed": mixed, "in_scan": in_scan,
            "in_loop_and_checkpoint": in_loop_and_checkpoint}


def transforms_of(xnp: Any) -> Any:
    return mlax if xnp is mnp else jax


def lax_of(xnp: Any) -> Any:
    return transforms_of(xnp).lax


@pytest.mark.parametrize("name", ["square_add", "mixed", "in_scan", "in_loop_and_checkpoint"])
def test_against_jax(backend: str, rng: np.random.Generator, name: str) -> None:
    mine = _programs(multiply_add(Primitive, mnp), sincos(Primitive, mnp), mnp)[name]
    theirs = _programs(multiply_add(jax_core.Primitive, jnp), sincos(jax_core.Primitive, jnp), jnp)[name]
    a, b = random_array(rng, (3,), np.float32), random_array(rng, (3,), np.float32)

    def scalar(f: Callable[..., Any]) -> Callable[..., Any]:
        return lambda a, b: f(a, b).sum()

    cases: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
        (mlax.jit(mine), jax.jit(theirs)),
        (mlax.grad(scalar(mine), argnums=(0, 1)), jax.grad(scalar(theirs), argnums=(0, 1))),
        (mlax.jit(mlax.grad(scalar(mine))), jax.jit(jax.grad(scalar(theirs)))),
        (lambda a, b: mlax.jvp(mine, (a, b), (b, a)), lambda a, b: jax.jvp(theirs, (a, b), (b, a))),
        (mlax.vmap(mine, in_axes=(0, None)), jax.vmap(theirs, in_axes=(0, None))),
        (mlax.jit(mlax.vmap(mlax.grad(scalar(mine)), in_axes=(0, None))),
         jax.jit(jax.vmap(jax.grad(scalar(theirs)), in_axes=(0, None)))),
        (mlax.jit(mlax.hessian(scalar(mine))), jax.jit(jax.hessian(scalar(theirs)))),
    ]
    if name != "square_add":  # jax's own hessian of "mixed" fails (an out_axes check of its vmap)
        cases.pop()
    for i, (ours, reference) in enumerate(cases):
        args = (np.stack([a, b]), b) if i in (4, 5) else (a, b)
        want = reference(*args)
        got = ours(*args)
        jax.tree.map(lambda g, w: np.testing.assert_allclose(np.asarray(g), np.asarray(w),
                                                             rtol=2e-5, atol=1e-5), got, want)


def test_eager_calls_impl_and_jit_lowers(backend: str, rng: np.random.Generator) -> None:
    ma = multiply_add(Primitive, mnp)
    x, y, z = (random_array(rng, (2, 3), np.float32) for _ in range(3))
    assert isinstance(ma(x, y, z), np.ndarray)  # jax's eager evaluation: the impl, as it is
    np.testing.assert_allclose(ma(x, y, z), x * y + z, rtol=1e-6)
    out = mlax.jit(ma)(x, y, z)
    assert out.dtype == np.float32 and out.shape == (2, 3)
    np.testing.assert_allclose(out, x * y + z, rtol=1e-6)
    s, c = mlax.jit(sincos(Primitive, mnp), static_argnums=1)(x, 2.0)
    np.testing.assert_allclose(s, np.sin(x) * 2, rtol=1e-6)
    np.testing.assert_allclose(c, np.cos(x), rtol=1e-6)


@pytest.mark.parametrize(("missing", "api", "message"), [
    ("abstract", "jit", "Abstract evaluation for 'multiply_add' not implemented"),
    ("lowering", "jit", "MLIR translation rule for primitive 'multiply_add' not found"),
    ("jvp", "jvp", "Differentiation rule for 'multiply_add' not implemented"),
    ("transpose", "grad", r"Transpose rule \(for reverse-mode differentiation\) for 'multiply_add' not "
                          "implemented"),
    ("batch", "vmap", "Batching rule for 'multiply_add' not implemented"),
])
def test_missing_rules_are_jax_errors(missing: str, api: str, message: str) -> None:
    x = np.array([2.0, 3.0], np.float32)
    apis: dict[str, Callable[..., Callable[..., Any]]] = {
        "jit": lambda f: lambda x: f(x),
        "jvp": lambda f: lambda x: jax.jvp(f, (x,), (x,)),
        "grad": lambda f: lambda x: jax.grad(lambda v: f(v).sum())(x),
        "vmap": lambda f: jax.vmap(f),
    }
    for cls, xnp, transforms in ((jax_core.Primitive, jnp, jax), (Primitive, mnp, mlax)):
        ma = multiply_add(cls, xnp, **{missing: False})

        def square_add(x: Any, ma: Callable[..., Any] = ma) -> Any:
            return ma(x, x, x)

        run = apis[api](square_add)
        if api == "jit":
            run = transforms.jit(run)
        elif cls is Primitive:  # the same programs on mlax's transformations
            run = {"jvp": lambda x: mlax.jvp(square_add, (x,), (x,)),
                   "grad": lambda x: mlax.grad(lambda v: square_add(v).sum())(x),
                   "vmap": mlax.vmap(square_add)}[api]
        with pytest.raises(NotImplementedError, match=message) as info:
            run(x)
        assert type(info.value) is NotImplementedError  # exactly (jax's page checks ``type is``)


def test_eager_without_impl_is_jax_error() -> None:
    p = Primitive("no_impl")
    with pytest.raises(NotImplementedError, match="Evaluation rule for 'no_impl' not implemented"):
        p.bind(np.float32(1.0))


def test_lowering_written_in_stablehlo(rng: np.random.Generator) -> None:
    """A lowering rule of StableHLO ops (the docs page's ``hlo.AddOp(hlo.MulOp(...))``): jax lowers
    the primitive on abstract values and mlax imports the program."""
    from jax._src.lib.mlir.dialects import hlo

    p = Primitive("hlo_multiply_add")
    p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))
    p.def_abstract_eval(lambda x, y, z: ShapedArray(x.shape, x.dtype))
    mlir.register_lowering(p, lambda ctx, x, y, z: [hlo.AddOp(hlo.MulOp(x, y), z).result], platform="cpu")
    x, y, z = (random_array(rng, (4,), np.float32) for _ in range(3))
    np.testing.assert_allclose(mlax.jit(lambda x, y, z: p.bind(x, y, z))(x, y, z), x * y + z, rtol=1e-6)


def test_install_as_jax_gives_this_primitive() -> None:
    from mlax.jax_modules import resolve

    assert resolve("jax.extend.core", "Primitive", {}) is Primitive
    assert issubclass(Primitive, jax_core.Primitive)  # jax's rule tables take it as a key


def test_make_jaxpr_shows_the_primitive_and_evaluates(rng: np.random.Generator) -> None:
    """An equation of the user's own primitive with its params, as jax's make_jaxpr gives, so
    that evaluating the jaxpr (jax.extend.core.jaxpr_as_fun) binds it again, eagerly."""
    sc = sincos(Primitive, mnp)
    x = random_array(rng, (3,), np.float32)
    closed = mlax.make_jaxpr(lambda x: sc(x, 2.0))(x)
    (eqn,) = [e for e in closed.jaxpr.eqns if e.primitive is not None and e.primitive.name == "sincos"]
    assert isinstance(eqn.primitive, Primitive) and eqn.params == {"scale": 2.0}
    s, c = jax_core.jaxpr_as_fun(closed)(x)
    np.testing.assert_allclose(s, np.sin(x) * 2, rtol=1e-6)
    np.testing.assert_allclose(c, np.cos(x), rtol=1e-6)


def test_hijax_primitive_eager_only() -> None:
    """jax.experimental.hijax.HiPrimitive after install_as_jax: eager binding is its impl (flax.nnx's
    hijax variables); on mlax's tracers, mlax's NotImplementedError."""
    from mlax.extend_primitive import HiPrimitive
    from mlax.jax_modules import resolve

    assert resolve("jax.experimental.hijax", "HiPrimitive", {}) is HiPrimitive

    class Box(HiPrimitive):
        def impl(self, x: Any) -> tuple[str, Any]:
            return ("box", x)

    box = Box("box")
    x = mnp.arange(3.0)
    assert box.bind(x) == ("box", x)
    with pytest.raises(NotImplementedError, match=r"does not trace jax.experimental.hijax primitives"):
        mlax.jit(box.bind)(x)


def test_programs_with_user_primitives_are_not_stored(tmp_path: Any, rng: np.random.Generator) -> None:
    """The CPU backend's disk cache is keyed by the program's text, where a user primitive is only
    this process's id: its rules (a parameter, the lowering) are not in it, so it is not stored."""
    sc = sincos(Primitive, mnp)
    x = random_array(rng, (5,), np.float32)
    scale = float(rng.uniform(1, 2))
    previous = mlax.config.backend
    mlax.config.update("backend", "cpu")
    mlax.config.update("compilation_cache_dir", str(tmp_path / "cache"))
    try:
        s, _ = mlax.jit(lambda x: sc(x, scale))(x)
        np.testing.assert_allclose(s, np.sin(x) * scale, rtol=1e-6)
    finally:
        mlax.config.update("compilation_cache_dir", None)
        mlax.config.update("backend", previous)
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
