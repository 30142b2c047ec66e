"""mlax.tree against jax.tree: random pytrees of mlax Arrays, eagerly, under jit, grad and vmap."""

from __future__ import annotations

import collections
import dataclasses
import operator
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mlax
import mlax.numpy as mnp
from mlax.core import Tracer
from tests.oracle import ALL_DTYPES, FLOAT_DTYPES, assert_same, random_array, random_shape

Point = collections.namedtuple("Point", "x y")


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Layer:
    w: Any
    b: Any
    name: str = jax.tree.static(default="layer")


def random_tree(rng: np.random.Generator, dtypes: tuple[Any, ...] = ALL_DTYPES, depth: int = 0,
                leading: tuple[int, ...] = ()) -> Any:
    """A random pytree of NumPy arrays (every container kind JAX knows, None included)."""
    kind = int(rng.integers(0, 7)) if depth < 3 else 0

    def sub() -> Any:
        return random_tree(rng, dtypes, depth + 1, leading)

    if kind == 0 or (kind == 6 and depth == 0):
        dtype = dtypes[int(rng.integers(len(dtypes)))]
        return random_array(rng, leading + random_shape(rng, max_rank=2, max_dim=3), dtype)
    if kind == 1:
        return [sub() for _ in range(int(rng.integers(1, 4)))]
    if kind == 2:
        return tuple(sub() for _ in range(int(rng.integers(0, 3))))
    if kind == 3:
        return {f"k{i}": sub() for i in rng.permutation(3)[: int(rng.integers(1, 4))]}
    if kind == 4:
        return Point(sub(), sub())
    if kind == 5:
        return Layer(sub(), sub(), name=f"layer{depth}")
    return None


def as_mlax(tree: Any) -> Any:
    return jax.tree.map(mnp.asarray, tree)


def as_jax(tree: Any) -> Any:
    return jax.tree.map(jnp.asarray, tree)


def _first_level_prefix(tree: Any) -> Any:
    """``tree`` with each child of its root replaced by a scalar (a prefix of it)."""
    return jax.tree.map(lambda _: 1.5, tree, is_leaf=lambda node: node is not tree)


def tree_program(tree_mod: Any, np_mod: Any, tree: Any) -> dict[str, Any]:
    """Every jax.tree function on ``tree``, written once for (mlax.tree, mlax.numpy) and
    (jax.tree, jax.numpy); what it returns is a pytree of arrays."""
    leaves, treedef = tree_mod.flatten(tree)
    sums = tree_mod.map(lambda x: np_mod.sum(x), tree)
    total = tree_mod.reduce(lambda acc, x: acc + np_mod.sum(x), tree, 0)
    out = {
        "map": tree_mod.map(lambda x, y: x * 2 + y, tree, tree),
        "map_with_path": tree_mod.map_with_path(lambda path, x: x + len(path), tree),
        "leaves": tree_mod.leaves(tree),
        "leaves_with_path_lengths": [len(p) + x for p, x in tree_mod.leaves_with_path(tree)],
        "flatten_with_path": [x for _, x in tree_mod.flatten_with_path(tree)[0]],
        "unflatten": tree_mod.unflatten(treedef, [x + 1 for x in leaves]),
        "reduce": total,
        "reduce_associative": tree_mod.reduce_associative(operator.add, sums, identity=np_mod.zeros(())),
        "broadcast": tree_mod.broadcast(_first_level_prefix(tree), tree),
        "transpose": tree_mod.transpose(tree_mod.structure([0, 0]), tree_mod.structure(tree),
                                        [tree, tree_mod.map(lambda x: x * 3, tree)]),
    }
    assert tree_mod.structure(tree) == treedef
    return out


def test_same_names_as_jax_tree() -> None:
    public = {name for name in dir(jax.tree) if not name.startswith("_")}
    assert public <= set(dir(mlax.tree))
    for name in public:
        assert getattr(mlax.tree, name) is getattr(jax.tree, name)  # one registry, one behaviour
    assert "tree" in dir(mlax)


@pytest.mark.parametrize("case", range(12))
def test_eagerly_on_mlax_arrays(rng: np.random.Generator, case: int) -> None:
    tree = random_tree(rng)
    mlax_tree = as_mlax(tree)
    assert mlax.tree.structure(mlax_tree) == jax.tree.structure(as_jax(tree))
    for leaf in mlax.tree.leaves(mlax_tree):
        assert type(leaf) is mlax.Array
    assert_same(tree_program(mlax.tree, mnp, mlax_tree), tree_program(jax.tree, jnp, as_jax(tree)))
    flags = mlax.tree.map(lambda x: (x == x).all(), mlax_tree)
    assert mlax.tree.all(flags) is jax.tree.all(jax.tree.map(lambda x: (x == x).all(), as_jax(tree)))


@pytest.mark.parametrize("case", range(3))
def test_under_jit_tracers_are_leaves(rng: np.random.Generator, case: int) -> None:
    tree = random_tree(rng)
    structure = jax.tree.structure(tree)

    def program(t: Any) -> Any:
        assert mlax.tree.structure(t) == structure
        assert all(isinstance(leaf, Tracer) for leaf in mlax.tree.leaves(t))
        return tree_program(mlax.tree, mnp, t)

    expected = jax.jit(lambda t: tree_program(jax.tree, jnp, t))(as_jax(tree))
    assert_same(mlax.jit(program)(as_mlax(tree)), expected)


def test_static_field_of_a_dataclass_is_a_static_argument(rng: np.random.Generator) -> None:
    layer = Layer(random_array(rng, (3,), np.float32), random_array(rng, (3,), np.float32), "dense")
    calls = []

    def program(tree_mod: Any, np_mod: Any, lay: Layer) -> Any:
        calls.append(lay.name)
        return tree_mod.map(np_mod.tanh, lay)

    got = mlax.jit(lambda lay: program(mlax.tree, mnp, lay))(layer)
    assert got.name == "dense" and calls == ["dense"]
    assert_same(got, jax.jit(lambda lay: program(jax.tree, jnp, lay))(layer), rtol=2e-6)


def test_all_of_traced_leaves_is_a_concretization_error(rng: np.random.Generator) -> None:
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda t: jax.tree.all(t) and t)([jnp.ones(())])
    with pytest.raises(mlax.ConcretizationTypeError):
        mlax.jit(lambda t: mlax.tree.all(t) and t)([mnp.ones(())])


def _loss(tree_mod: Any, np_mod: Any, params: Any) -> Any:
    terms = tree_mod.map(lambda p: np_mod.sum(np_mod.sin(p) ** 2), params)
    return tree_mod.reduce(operator.add, terms, 0.0)


@pytest.mark.parametrize("case", range(3))
def test_under_grad(rng: np.random.Generator, case: int) -> None:
    params = random_tree(rng, (np.float32,))
    expected = jax.grad(lambda p: _loss(jax.tree, jnp, p))(as_jax(params))
    assert_same(mlax.grad(lambda p: _loss(mlax.tree, mnp, p))(as_mlax(params)), expected, rtol=1e-5)
    jitted = mlax.jit(mlax.value_and_grad(lambda p: _loss(mlax.tree, mnp, p)))(as_mlax(params))
    expected = jax.jit(jax.value_and_grad(lambda p: _loss(jax.tree, jnp, p)))(as_jax(params))
    assert_same(jitted, expected, rtol=1e-5)


def test_under_vmap(rng: np.random.Generator) -> None:
    tree = random_tree(rng, FLOAT_DTYPES, leading=(4,))

    def per_example(tree_mod: Any, np_mod: Any, t: Any) -> Any:
        leaves, treedef = tree_mod.flatten(t)
        scale = tree_mod.reduce(lambda acc, x: acc + np_mod.mean(x), t, 0.0)
        return tree_mod.unflatten(treedef, [x * scale for x in leaves])

    expected = jax.vmap(lambda t: per_example(jax.tree, jnp, t))(as_jax(tree))
    assert_same(mlax.vmap(lambda t: per_example(mlax.tree, mnp, t))(as_mlax(tree)), expected, rtol=5e-2)
