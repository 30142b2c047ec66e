"""mlax.shard_map called outside jit, against jax's: what the body prints. jax runs the body
eagerly, so a body value prints as each device's block under its mesh coordinates; mlax traces
the body and prints the same text once the program has run (pyfront/shard_mapping.py `_eager`)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

import mlax


@pytest.fixture
def line() -> Mesh:
    return Mesh(np.array(jax.devices()[:4]), ("i",))


def printed(capsys: pytest.CaptureFixture[str], lib, mapped_of, *args):
    """(stdout, result) of ``mapped_of(lib)(*args)``."""
    capsys.readouterr()
    out = mapped_of(lib)(*args)
    return capsys.readouterr().out, out


def both(capsys, mapped_of, *args):
    ours, theirs = (printed(capsys, lib, mapped_of, *args) for lib in (mlax, jax))
    assert ours[0] == theirs[0]
    for a, b in zip(jax.tree_util.tree_leaves(ours[1]), jax.tree_util.tree_leaves(theirs[1]), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    return ours[0]


def test_a_printed_argument_shows_each_device_block(capsys, line, rng) -> None:
    x = rng.standard_normal(8).astype(np.float32)

    def mapped_of(lib):
        def body(block):
            print("before:", block)
            return 2 * block
        return lib.shard_map(body, mesh=line, in_specs=P("i"), out_specs=P("i"))

    text = both(capsys, mapped_of, x)
    assert text.count("On cpu:") == 4


def test_collectives_and_fstrings_on_two_mesh_axes(capsys, mesh, rng) -> None:
    x = rng.integers(-50, 50, (4, 6)).astype(np.int32)

    def mapped_of(lib):
        def body(block):
            total = lib.lax.psum(block, "x")
            print(f"sum over x: {total}", "and the block:", block, sep="\n")
            return total
        return lib.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P(None, "y"))

    both(capsys, mapped_of, x)


def test_a_replicated_argument_and_every_call_prints(capsys, line, rng) -> None:
    x = rng.standard_normal(3).astype(np.float32)

    def mapped_of(lib):
        def body(v):
            print(lib.lax.psum(v, "i"))
            return v + 1
        mapped = lib.shard_map(body, mesh=line, in_specs=P(), out_specs=P())
        return lambda v: (mapped(v), mapped(v))

    text = both(capsys, mapped_of, x)
    assert text.count("On cpu:0") == 2


def test_a_quiet_body_and_a_jitted_one(capsys, line, rng) -> None:
    x = rng.standard_normal(8).astype(np.float32)

    def quiet(lib):
        return lib.shard_map(lambda v: lib.lax.pmax(v, "i"), mesh=line, in_specs=P("i"), out_specs=P())

    assert both(capsys, quiet, x) == ""
    assert both(capsys, quiet, x) == ""

    def jitted(lib):  # under jit the body's values are abstract on both (unchecked: no varying axes)
        def body(v):
            print(v)
            return v
        return lib.jit(lib.shard_map(body, mesh=line, in_specs=P("i"), out_specs=P("i"), check_vma=False))

    assert "JitTracer(float32[2])" in both(capsys, jitted, x)


def test_a_body_that_fails_after_printing(capsys, line) -> None:
    def body(v):
        print("reached", v.shape)
        raise ValueError("the body's own error")

    x = np.arange(8.0, dtype=np.float32)
    for lib in (mlax, jax):
        with pytest.raises(ValueError, match="the body's own error"):
            lib.shard_map(body, mesh=line, in_specs=P("i"), out_specs=P("i"))(x)
        assert capsys.readouterr().out == "reached (2,)\n"
