"""What the front end takes from jax's private modules, pinned: mlax.jax_private is the one door
(CONVENTIONS.md 12), so a jax upgrade that moves or changes a name fails here, by name."""

from __future__ import annotations

import ast
import functools

import jax
import jax.extend.core as jex
import numpy as np
from jax.interpreters import ad

from mlax import jax_private
from tests.test_layers import MODULES, _layer

# Front-end modules that may import jax._src, and why not through the door.
OTHER_DOORS = {
    "mlax.jax_private": "the door",
    "mlax.experimental.checkify": "jax's checkify internals load on use (~20 ms), not with the door",
    "mlax.experimental.checkify_rules": "checkify's automatic checks build jax's exception classes",
}


def test_only_the_door_imports_jax_private_modules() -> None:
    found = set()
    for module, path in MODULES.items():
        if _layer(module) != "mlax" or module in OTHER_DOORS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if any(name == "jax._src" or name.startswith("jax._src.") for name in names):
                found.add(module)
    assert not found, f"import jax's private modules through mlax.jax_private: {sorted(found)}"


def test_dtypes_lattice() -> None:
    """mlax.dtypes' promotion is jax's lattice: (dtype, weak) of mixed operands."""
    dtypes = jax_private.dtypes
    assert dtypes.lattice_result_type(np.dtype(np.int32), 2.0)[0] == np.float32
    assert dtypes.lattice_result_type(2.0) == (np.float32, True)  # a Python float is weak
    assert dtypes.lattice_result_type(np.dtype(np.float16), np.dtype(np.float32)) == (np.float32, False)
    assert dtypes.promote_types(np.int8, np.uint8) == np.int16
    for name in ("TypePromotionError", "canonicalize_dtype", "finfo", "iinfo", "float0", "itemsize_bits",
                 "scalar_type_of", "extended", "prng_key", "issubdtype"):
        assert hasattr(dtypes, name), name


def test_fun_sourceinfo_names_function_and_line() -> None:
    def branch(x: object) -> object:
        return x

    assert jax_private.fun_sourceinfo(branch).startswith(f"branch at {__file__}:")


def test_printing_rules_are_keyed_by_primitive() -> None:
    assert jax_private.pp_eqn_rules.get(jax.lax.dot_general_p) is not None
    assert callable(jax_private.pp_eqn)  # a nested jit's rule prints through it (params in jax's order)


def test_jvp_rules_registered_by_defjvp_are_recognizable() -> None:
    """extend_primitive reads a primitive's JVP rule back: defjvp and deflinear register
    partials of these functions."""
    rules = jax_private.ad_rules
    unary, linear = jex.Primitive("pinned_unary"), jex.Primitive("pinned_linear")
    ad.defjvp(unary, lambda g, x: g)
    ad.deflinear(linear, lambda ct: [ct])
    assert isinstance(ad.primitive_jvps[unary], functools.partial)
    assert ad.primitive_jvps[unary].func in (rules.standard_jvp, rules.standard_jvp2)
    assert ad.primitive_jvps[linear].func is rules.linear_jvp


def test_axis_data_and_sharding_type_error() -> None:
    axis = jax_private.AxisData("i", 4, None, None)
    assert (axis.name, axis.size) == ("i", 4)
    assert jax_private.ShardingTypeError.__module__.startswith("jax")  # jax's class, not the fallback
