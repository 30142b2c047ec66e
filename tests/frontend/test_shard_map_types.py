"""The types of a shard_map body's values against jax's: the mesh axes each value varies over
(``jax.typeof(x)`` prints ``float32[3]{V:i}``; ``typeof(x).manual_axis_type.varying``) through
ops, collectives and ``pcast``, eagerly and under jit; and jax's error for an in_spec other than
its argument's type sharding on an Explicit mesh."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from jax.sharding import AxisType, Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import mlax


@pytest.fixture
def explicit() -> Mesh:
    """A 2x2 mesh ("i", "j") of Explicit axes over the first 4 of the session's devices."""
    return Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("i", "j"), axis_types=(AxisType.Explicit,) * 2)


def types_seen(lib, mesh, in_specs, out_specs, body_of, *args, jitted=False, **options):
    """The texts and varying axes of the types ``body_of(lib, seen)`` records, and its result."""
    seen: list[tuple[str, frozenset[str]]] = []

    def record(x):
        t = lib.typeof(x)
        seen.append((str(t), frozenset(t.manual_axis_type.varying)))

    mapped = lib.shard_map(body_of(lib, record), mesh=mesh, in_specs=in_specs, out_specs=out_specs, **options)
    out = (lib.jit(mapped) if jitted else mapped)(*args)
    return seen, out


def both(*args, **options):
    ours, theirs = (types_seen(lib, *args, **options) for lib in (mlax, jax))
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(np.asarray(ours[1]), np.asarray(theirs[1]), rtol=1e-6)
    return ours[0]


def collectives(lib, record):
    def body(x, w):
        record(x)
        record(w)
        y = lib.lax.psum(x, "j")
        record(y)
        record(y * w + 1.0)
        record(lib.lax.axis_index("j"))
        record(lib.lax.all_gather(y, "i"))
        record(lib.lax.ppermute(w, "j", [(0, 1), (1, 0)]))
        record(lib.lax.pmax(x, ("i", "j")))
        record(lib.lax.pcast(w, "i", to="varying"))
        return y * w
    return body


@pytest.mark.parametrize("jitted", [False, True])
def test_varying_axes_through_ops_and_collectives(explicit, rng, jitted) -> None:
    x = rng.standard_normal((4, 6)).astype(np.float32)
    w = rng.standard_normal(3).astype(np.float32)
    specs = ((P("i", "j"), P()), P("i", "j"))
    results = []
    for lib in (mlax, jax):
        with lib.set_mesh(explicit):
            placed = lib.device_put(x, NamedSharding(explicit, P("i", "j")))
            results.append(types_seen(lib, explicit, *specs, collectives, placed, w, jitted=jitted))
    (ours, ours_out), (theirs, theirs_out) = results
    assert ours == theirs
    assert ours[0][1] == {"i", "j"} and ours[2][1] == {"i"}
    np.testing.assert_allclose(np.asarray(ours_out), np.asarray(theirs_out), rtol=1e-6)


def test_unchecked_bodies_track_nothing(mesh, rng) -> None:
    def body_of(lib, record):
        def body(x):
            record(x)
            record(lib.lax.psum(x, "x"))
            return x
        return body

    x = rng.standard_normal((4, 2)).astype(np.float32)
    seen = both(mesh, P("x"), P("x"), body_of, x, check_vma=False)
    assert all(not varying for _, varying in seen)


def test_an_in_spec_that_is_not_the_argument_s_type(explicit, rng) -> None:
    x = rng.standard_normal(8).astype(np.float32)
    for lib in (mlax, jax):
        with lib.set_mesh(explicit):
            replicated = lib.numpy.asarray(x) * 1.0  # typed P(None) on the context mesh
            split = P(("i", "j"))
            mapped = lib.shard_map(lambda v: v * 2, mesh=explicit, in_specs=split, out_specs=split)
            with pytest.raises(ValueError, match=r"in_specs passed to shard_map: P\(\('i', 'j'\),\) does not "
                               r"match the specs of the input: P\(None,\) for arg: float32\[8\]"):
                mapped(replicated)
            placed = lib.device_put(x, NamedSharding(explicit, split))
            np.testing.assert_allclose(np.asarray(mapped(placed)), 2 * x, rtol=1e-6)


@pytest.mark.parametrize("case", ["varying", "one_of_two", "two_axes"])
def test_replication_an_out_spec_promises_is_checked(case, mesh, rng) -> None:
    """jax's static check: an out spec that leaves out an axis the result varies over raises
    jax's ValueError, word for word; a psum'd result may leave it out."""
    x = rng.standard_normal((4, 6)).astype(np.float32)

    def mapped_of(lib):
        bodies = {
            "varying": (lambda v: v * 2, P("x", "y"), P("x")),
            "one_of_two": (lambda v: (v, lib.lax.psum(v, "y"), v + 1), P("x", "y"),
                           (P("x", "y"), P("x"), P("x"))),
            "two_axes": (lambda v: v, P("x", "y"), P()),
        }
        body, in_specs, out_specs = bodies[case]
        return lib.jit(lib.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs))

    messages = []
    for lib in (mlax, jax):
        with pytest.raises(ValueError) as error:
            mapped_of(lib)(x)
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    fine = [lib.jit(lib.shard_map(lambda v, lib=lib: lib.lax.psum(v, "y"), mesh=mesh, in_specs=P("x", "y"),
                                  out_specs=P("x")))(x) for lib in (mlax, jax)]
    np.testing.assert_allclose(np.asarray(fine[0]), np.asarray(fine[1]), rtol=1e-6)
