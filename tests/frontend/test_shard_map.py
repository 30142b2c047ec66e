"""mlax.shard_map against jax.shard_map on the session's 4 CPU devices: the IR it traces (an
`mlax.shard_map` declaration over a body of local types), every collective, grad and vmap of
it, outside and inside jit, and jax's errors naming the argument."""

from __future__ import annotations

import functools

import jax
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import mlax

HERE = __file__
BACKENDS = ["xla", "interpreter"]


@pytest.fixture
def line() -> Mesh:
    return Mesh(np.array(jax.devices()[:4]), ("i",))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest):
    previous = mlax.config.backend
    # the default backend (cpu) sends a program with a mesh to xla
    mlax.config.update("backend", "cpu" if request.param == "xla" else request.param)
    yield request.param
    mlax.config.update("backend", previous)


def floats(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def both(body, mesh, in_specs, out_specs, *args, jitted=True, **options):
    """The shard_map of ``body(lib)`` on mlax and on jax, called on ``args``."""
    outs = []
    for lib in (mlax, jax):
        mapped = lib.shard_map(body(lib), mesh=mesh, in_specs=in_specs, out_specs=out_specs, **options)
        outs.append((lib.jit(mapped) if jitted else mapped)(*args))
    return outs


def assert_close(ours, theirs, sharded: bool = False) -> None:
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-5)
        assert a.shape == b.shape and a.dtype == b.dtype
        if sharded:
            assert a.sharding.is_equivalent_to(b.sharding, b.ndim), (a.sharding, b.sharding)


# --- the IR --------------------------------------------------------------------------------------


def test_the_declaration_and_its_body(mesh, rng) -> None:
    x, b = floats(rng, 8, 4), floats(rng, 4)

    def body(x, b):
        return mlax.lax.psum(x * b, "y")

    mapped = mlax.shard_map(body, mesh=mesh, in_specs=(P("x", "y"), P("y")), out_specs=P("x"))
    text = mlax.jit(lambda x, b: mapped(x, b)).lower(x, b).as_text("mlax", debug_info=False)
    assert 'mlax.mesh = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>' in text
    assert "func.func private @body(%arg0: tensor<4x2xf32>, %arg1: tensor<2xf32>) -> tensor<4x2xf32>" in text
    assert ('func.func private @body_shard_map(tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x2xf32> attributes '
            '{mlax.shard_map = {axis_names = ["x", "y"], axis_sizes = array<i64: 2, 2>, callee = @body, '
            'check_vma = true, in_specs = [[["x"], ["y"]], [["y"]]], out_specs = [[["x"], []]]}}') in text
    assert "call @body_shard_map(%arg0, %arg1)" in text
    assert '"mlax.psum"' in text and 'axes = ["y"]' in text


def test_captured_values_are_replicated(mesh, rng) -> None:
    x, c = floats(rng, 8, 4), floats(rng, 2)

    def f(x, c):
        return mlax.shard_map(lambda x: x * c[0], mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x)

    text = mlax.jit(f).lower(x, c).as_text("mlax", debug_info=False)
    assert 'in_specs = [[["x"], []], [[]]]' in text


def test_the_context_mesh_is_the_default(mesh, rng) -> None:
    x = floats(rng, 8, 4)
    with mlax.set_mesh(mesh):
        mapped = mlax.shard_map(lambda x: x, in_specs=P("y"), out_specs=P("y"))
        text = mlax.jit(mapped).lower(x).as_text("mlax")
    assert 'mlax.mesh = {axis_names = ["x", "y"]' in text


# --- values against jax ----------------------------------------------------------------------------


COLLECTIVES = {
    "psum": lambda lib: lambda x: lib.lax.psum(x, "i"),
    "pmean": lambda lib: lambda x: lib.lax.pmean(x, "i"),
    "pmax": lambda lib: lambda x: lib.lax.pmax(x, "i"),
    "pmin": lambda lib: lambda x: lib.lax.pmin(x, "i"),
    "all_gather": lambda lib: lambda x: lib.lax.all_gather(x, "i", axis=1, tiled=True),
    "all_gather_untiled": lambda lib: lambda x: lib.lax.all_gather(x, "i")[0],
    "psum_scatter": lambda lib: lambda x: lib.lax.psum_scatter(x, "i", scatter_dimension=1, tiled=True),
    "ppermute": lambda lib: lambda x: lib.lax.ppermute(x, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]),
    "ppermute_partial": lambda lib: lambda x: lib.lax.ppermute(x, "i", [(0, 2), (1, 0)]),
    "all_to_all": lambda lib: lambda x: lib.lax.all_to_all(x, "i", 1, 0, tiled=True),
    "axis_index": lambda lib: lambda x: x + lib.lax.axis_index("i").astype(x.dtype),
    "axis_size": lambda lib: lambda x: x * lib.lax.axis_size("i"),
}


@pytest.mark.parametrize("name", COLLECTIVES)
def test_collectives_against_jax(name, line, rng, backend) -> None:
    x = floats(rng, 8, 8)
    ours, theirs = both(COLLECTIVES[name], line, P("i"), P("i"), x)
    assert_close(ours, theirs, sharded=backend == "xla")


def test_collectives_over_two_axes(mesh, rng, backend) -> None:
    x = floats(rng, 4, 8)

    def body(lib):
        def f(x):
            total = lib.lax.psum(x, ("x", "y"))
            index = lib.lax.axis_index(("x", "y")).astype(x.dtype)
            return total + lib.lax.pmax(x, "y") * index, lib.lax.all_gather(x, "x", axis=0, tiled=True)
        return f

    ours, theirs = both(body, mesh, P("x", "y"), (P("x", "y"), P(None, "y")), x, check_vma=False)
    assert_close(ours, theirs, sharded=backend == "xla")


def test_replicated_inputs_and_pytrees(mesh, rng, backend) -> None:
    params = {"w": floats(rng, 4, 6), "b": floats(rng, 6)}
    x = floats(rng, 8, 4)

    def body(lib):
        return lambda params, x: lib.lax.pmean(lib.numpy.tanh(x @ params["w"] + params["b"]), "x")

    ours, theirs = both(body, mesh, (P(), P("x")), P(), params, x, check_vma=False)
    assert_close(ours, theirs)


def test_outside_jit(line, rng) -> None:
    x = floats(rng, 8, 3)
    ours, theirs = both(COLLECTIVES["psum"], line, P("i"), P("i"), x, jitted=False)
    assert_close(ours, theirs, sharded=True)


def test_the_older_experimental_signature(line, rng) -> None:
    from jax.experimental.shard_map import shard_map as jax_shard_map

    from mlax.experimental.shard_map import shard_map

    x = floats(rng, 8, 2)
    ours = mlax.jit(shard_map(lambda x: mlax.lax.psum(x, "i"), line, P("i"), P("i")))(x)
    theirs = jax.jit(jax_shard_map(lambda x: jax.lax.psum(x, "i"), line, P("i"), P("i")))(x)
    assert_close(ours, theirs)


def test_inside_a_jit_with_in_shardings(mesh, rng) -> None:
    x = floats(rng, 8, 4)

    def program(lib):
        mapped = lib.shard_map(lambda x: lib.lax.psum(x, "x") * 2.0, mesh=mesh, in_specs=P("x", "y"),
                               out_specs=P(None, "y"))
        return lib.jit(lambda x: mapped(x) + 1.0, in_shardings=NamedSharding(mesh, P("x", "y")))

    assert_close(program(mlax)(x), program(jax)(x), sharded=True)


# --- transformations of it -------------------------------------------------------------------------


def test_grad_of_shard_map(mesh, rng, backend) -> None:
    x, w = floats(rng, 8, 4), floats(rng, 4, 4)

    def loss(lib):
        def local(x, w):
            return lib.lax.psum(lib.numpy.sum(lib.numpy.tanh(x @ w) ** 2), ("x", "y"))

        mapped = lib.shard_map(local, mesh=mesh, in_specs=(P("x"), P(None, "y")), out_specs=P())
        return lib.jit(lib.grad(mapped, argnums=(0, 1)))

    assert_close(loss(mlax)(x, w), loss(jax)(x, w))


# Replicated operands whose uses vary per device, invariant results computed without a psum,
# and a psum of a replicated value: the cases where the transpose's psum over the axes an in
# spec does not name, and its division by those an out spec does not name, are needed.
GRAD_CASES = {
    "data_parallel": (lambda lib: lambda w, x: lib.lax.pmean(lib.numpy.sum(lib.numpy.tanh(x @ w) ** 2), "x"),
                      (P(), P("x")), P()),
    "invariant_result": (lambda lib: lambda w, x: (w * 3.0, x[:, :2] * w[0]), (P(), P("x")), (P(), P("x"))),
    "psum_of_replicated": (lambda lib: lambda w, x: (lib.lax.psum(w, ("x", "y")), x), (P(), P("x")),
                           (P(), P("x"))),
    "sharded_weight": (lambda lib: lambda w, x: lib.lax.psum(x[:, :2] @ w, "y"), (P("y"), P("x", "y")),
                       P("x")),
}


def _scalar(lib, outs):
    leaves = jax.tree_util.tree_leaves(outs)
    return sum(lib.numpy.sum(lib.numpy.sin(leaf) * (k + 1)) for k, leaf in enumerate(leaves))


@pytest.mark.parametrize("case", list(GRAD_CASES))
def test_grad_cases(case, mesh, rng, backend) -> None:
    body, in_specs, out_specs = GRAD_CASES[case]
    w, x = floats(rng, 4, 3) if case == "sharded_weight" else floats(rng, 4, 2), floats(rng, 8, 4)

    def gradient(lib):
        mapped = lib.shard_map(body(lib), mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False)
        return lib.jit(lib.grad(lambda w, x: _scalar(lib, mapped(w, x)), argnums=(0, 1)))

    assert_close(gradient(mlax)(w, x), gradient(jax)(w, x))


def test_grad_against_finite_differences(line, rng, backend) -> None:
    x, w = floats(rng, 8, 3).astype(np.float64), floats(rng, 3).astype(np.float64)

    def loss(w, x):
        local = lambda w, x: mlax.lax.psum(mlax.numpy.sum(mlax.numpy.cos(x * w)), "i")  # noqa: E731
        return mlax.shard_map(local, mesh=line, in_specs=(P(), P("i")), out_specs=P())(w, x)

    grad = np.asarray(mlax.jit(mlax.grad(loss))(w.astype(np.float32), x.astype(np.float32)))
    eps = 1e-3
    numeric = [(np.sum(np.cos(x * (w + eps * e))) - np.sum(np.cos(x * (w - eps * e)))) / (2 * eps)
               for e in np.eye(3)]
    np.testing.assert_allclose(grad, numeric, rtol=2e-3, atol=2e-3)


# grad INSIDE the body: with check_vma (jax's default) values are typed by the mesh axes they
# vary over, so a replicated parameter's gradient is summed over the devices and psum's
# transpose is the identity; without it, the gradient is each device's own.
INNER_LOSSES = {
    "psum": lambda lib: lambda w, x: lib.lax.psum(lib.numpy.sum(lib.numpy.tanh(x @ w) ** 2), "x"),
    "pmean_x": lambda lib: lambda w, x: lib.lax.pmean(lib.numpy.sum((x @ w) ** 2), "x"),
    "no_collective": lambda lib: lambda w, x: lib.numpy.sum(lib.numpy.sin(x @ w)),
    "psum_of_replicated": lambda lib: lambda w, x: lib.numpy.sum(lib.lax.psum(w, "y") * lib.numpy.sum(x)),
    "all_gather": lambda lib: lambda w, x: lib.numpy.sum(lib.lax.all_gather(x @ w, "y", tiled=True) ** 2),
}


@pytest.mark.parametrize("check_vma", [True, False])
@pytest.mark.parametrize("loss", list(INNER_LOSSES))
def test_grad_inside_the_body(loss, check_vma, mesh, rng, backend) -> None:
    w, x = floats(rng, 4, 3), floats(rng, 8, 4)

    def program(lib):
        def body(w, x):
            return lib.grad(INNER_LOSSES[loss](lib), argnums=(0, 1))(w, x)

        out_w = P() if check_vma else P(("x", "y"))
        mapped = lib.shard_map(body, mesh=mesh, in_specs=(P(), P("x")), out_specs=(out_w, P("x")),
                               check_vma=check_vma)
        if not check_vma:  # each device's own gradient of w: stack them
            inner = body
            mapped = lib.shard_map(lambda w, x: (inner(w, x)[0][None], inner(w, x)[1]), mesh=mesh,
                                   in_specs=(P(), P("x")), out_specs=(out_w, P("x")), check_vma=False)
        return lib.jit(mapped)

    assert_close(program(mlax)(w, x), program(jax)(w, x))


def test_jvp_of_shard_map(mesh, rng, backend) -> None:
    x, t = floats(rng, 8, 4), floats(rng, 8, 4)

    def program(lib):
        mapped = lib.shard_map(lambda x: lib.lax.psum(lib.numpy.sin(x), "y") * x, mesh=mesh,
                               in_specs=P("x", "y"), out_specs=P("x", "y"))
        return lib.jit(lambda x, t: lib.jvp(mapped, (x,), (t,)))

    assert_close(program(mlax)(x, t), program(jax)(x, t))


def test_vmap_of_grad_of_shard_map(line, rng, backend) -> None:
    xs, w = floats(rng, 3, 8, 2), floats(rng, 2)

    def program(lib):
        mapped = lib.shard_map(lambda w, x: lib.lax.psum(lib.numpy.sum(x * w) ** 2, "i"), mesh=line,
                               in_specs=(P(), P("i")), out_specs=P())
        return lib.jit(lib.vmap(lib.grad(mapped), in_axes=(None, 0)))

    assert_close(program(mlax)(w, xs), program(jax)(w, xs))


def test_vmap_of_shard_map(line, rng, backend) -> None:
    xs = floats(rng, 3, 8, 2)

    def program(lib):
        mapped = lib.shard_map(lambda x: lib.lax.psum(x, "i") * x, mesh=line, in_specs=P("i"),
                               out_specs=P("i"))
        return lib.jit(lib.vmap(mapped))

    assert_close(program(mlax)(xs), program(jax)(xs))


def test_shard_map_of_vmap_with_a_named_axis(line, rng, backend) -> None:
    x = floats(rng, 8, 3)

    def body(lib):
        def row_sums(row):
            return lib.lax.psum(row, "b") + lib.lax.psum(row, "i")

        return lambda x: lib.vmap(row_sums, axis_name="b")(x)

    ours, theirs = both(body, line, P("i"), P("i"), x, check_vma=False)
    assert_close(ours, theirs)


# --- errors ------------------------------------------------------------------------------------------


def test_a_spec_that_does_not_divide_names_the_argument(line) -> None:
    def f(a, b):
        return a

    x, y = np.ones((6, 2), np.float32), np.ones((8, 2), np.float32)
    with pytest.raises(ValueError) as theirs:
        jax.shard_map(f, mesh=line, in_specs=(P(None, "i"), P("i")), out_specs=P())(x, y)
    with pytest.raises(ValueError) as ours:
        mlax.shard_map(f, mesh=line, in_specs=(P(None, "i"), P("i")), out_specs=P())(x, y)
    message = str(ours.value)
    assert message.startswith("shard_map applied to the function 'f' was given argument arrays with axis "
                              "sizes "
                              "that are not evenly divisible")
    assert "which maps array axis 1 (of size 2) to mesh axis 'i' (of size 4)" in message
    assert "parameter 'a'" in message and HERE in message
    assert "which maps array axis 1 (of size 2) to mesh axis 'i' (of size 4)" in str(theirs.value)


def test_a_spec_longer_than_the_rank(line) -> None:
    with pytest.raises(ValueError, match="was given an in_specs entry which is too long") as info:
        mlax.shard_map(lambda a: a, mesh=line, in_specs=P("i", None), out_specs=P())(np.ones(4, np.float32))
    assert HERE in str(info.value)


def test_an_axis_not_in_the_mesh(line) -> None:
    args = (np.ones(4, np.float32),)
    with pytest.raises(ValueError) as theirs:
        jax.shard_map(lambda a: a, mesh=line, in_specs=P("z"), out_specs=P())(*args)
    with pytest.raises(ValueError) as ours:
        mlax.shard_map(lambda a: a, mesh=line, in_specs=P("z"), out_specs=P())(*args)
    assert str(ours.value).startswith(str(theirs.value).split("\n")[0])
    assert "in_specs refers to 'z'" in str(ours.value)


def test_a_collective_outside_a_named_axis(line) -> None:
    with pytest.raises(NameError, match="unbound axis name: j"):
        mlax.shard_map(lambda a: mlax.lax.psum(a, "j"), mesh=line, in_specs=P("i"), out_specs=P("i"))(
            np.ones(4, np.float32))
    with pytest.raises(NameError, match="unbound axis name: i"):
        mlax.jit(lambda a: mlax.lax.psum(a, "i"))(np.ones(4, np.float32))


def test_two_meshes_in_one_program(line, mesh) -> None:
    x = np.ones((8, 4), np.float32)
    other = Mesh(np.array(jax.devices()[:2]), ("i",))

    def f(x):
        a = mlax.shard_map(lambda v: v, mesh=line, in_specs=P("i"), out_specs=P("i"))(x)
        return mlax.shard_map(lambda v: v, mesh=other, in_specs=P("i"), out_specs=P("i"))(a)

    with pytest.raises(ValueError, match="Received incompatible devices"):
        mlax.jit(f)(x)


def test_mesh_errors(line) -> None:
    with pytest.raises(ValueError, match="The context mesh cannot be empty"):
        mlax.shard_map(lambda a: a, in_specs=P(), out_specs=P())(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="shard_map in_specs argument must be a pytree"):
        mlax.shard_map(lambda a: a, mesh=line, in_specs=None, out_specs=P())(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="in_specs argument must be a pytree of `jax.sharding.PartitionSpec`"):
        # in_specs=Infer needs Explicit axes
        mlax.shard_map(lambda a: a, mesh=line, out_specs=P())(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="requires a callable"):
        mlax.shard_map(3, mesh=line, in_specs=P(), out_specs=P())


def test_inferred_in_specs_on_an_explicit_mesh(rng) -> None:
    mesh = mlax.make_mesh((4,), ("i",))  # Explicit axes (jax's default)
    x = mlax.device_put(floats(rng, 8, 2), NamedSharding(mesh, P("i")))
    mapped = mlax.shard_map(functools.partial(mlax.lax.psum, axis_name="i"), mesh=mesh, out_specs=P("i"))
    expected = jax.shard_map(functools.partial(jax.lax.psum, axis_name="i"), mesh=mesh, out_specs=P("i"))(
        jax.device_put(np.asarray(x), NamedSharding(mesh, P("i"))))
    assert_close(mapped(x), expected)


def test_grad_inside_a_checked_body_through_a_scan(line, rng, backend) -> None:
    """Every operand of the scan varies over "i": its values are typed exactly."""
    x = floats(rng, 8, 3)

    def program(lib):
        def loss(x):
            c, ys = lib.lax.scan(lambda c, r: (lib.numpy.sin(c * r), c.sum()), x[0], x)
            return lib.lax.psum(c.sum() + ys.sum(), "i")

        return lib.jit(lib.shard_map(lib.grad(loss), mesh=line, in_specs=P("i"), out_specs=P("i")))

    assert_close(program(mlax)(x), program(jax)(x))


@pytest.mark.parametrize("construct", ["scan", "cond", "fori_loop"])
def test_grad_inside_a_checked_body_through_mixed_control_flow(construct, line, rng, backend) -> None:
    """A replicated parameter meets per-device rows inside the construct (pcast makes the
    carry varying, as jax's typing asks): its gradient is summed over the devices inside the
    bodies' typed vjps."""
    w, x = floats(rng, 3), floats(rng, 8, 3)

    def program(lib):
        def loss(w, x):
            start = lib.lax.pcast(0.0, "i", to="varying")
            if construct == "scan":
                c, _ = lib.lax.scan(lambda c, r: (c + lib.numpy.sin(r @ w), None), start, x)
            elif construct == "cond":
                c = lib.lax.cond(True, lambda v: lib.numpy.sum(lib.numpy.tanh(x @ v)), lambda v: start, w)
            else:
                c = lib.lax.fori_loop(0, 3, lambda i, c: c * 0.5 + lib.numpy.sum(lib.numpy.cos(x @ w)), start)
            return lib.lax.psum(c, "i")

        mapped = lib.shard_map(lambda w, x: lib.grad(loss)(w, x), mesh=line, in_specs=(P(), P("i")),
                               out_specs=P())
        return lib.jit(mapped)

    assert_close(program(mlax)(w, x), program(jax)(w, x))
