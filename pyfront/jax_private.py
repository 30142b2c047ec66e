"""The front end's one door to jax's private modules (CONVENTIONS.md 12): what mlax relies on
that jax does not export, named once here and pinned by tests/frontend/test_jax_private.py, so
a jax upgrade that moves a name breaks that test with a clear message rather than the modules
using it. Everything else comes from jax's public modules (``jax.api_util.flatten_axes``,
``jax.numpy.promote_types``...). The XLA backend's door is mlax.backends.xla.pjrt; jax's
private checkify module stays with mlax.experimental.checkify, where it loads on use (~20 ms).

All of these load with ``import jax`` itself, so the door costs nothing to open.
"""

from __future__ import annotations

from typing import Any

from jax._src import dtypes  # jax's dtype lattice (lattice_result_type, weak types, extended dtypes)
from jax._src.api_util import fun_sourceinfo  # "f at file:line", as jax's messages name a function
from jax._src.core import _pp_eqn as pp_eqn  # jax's printer of one equation, given its params' order
from jax._src.core import pp_eqn_rules  # jax's printing rules of equations, keyed by primitive
from jax._src.interpreters import ad as ad_rules  # the JVP rules ad.defjvp & co. register
from jax._src.interpreters.batching import AxisData  # the axis record jax hands batching rules

try:  # jax's error class, which jax does not export
    from jax._src.core import ShardingTypeError
except ImportError:  # pragma: no cover - a jax that moved it: keep the name and the message
    class ShardingTypeError(Exception):  # type: ignore[no-redef]
        """jax's error for shardings that do not type-check."""


def prng_impl(key_dtype: Any) -> Any:
    """jax's PRNGImpl of a key dtype (``jax.random.key_dtype(impl)``): its name, key shape and
    functions, which jax's key dtype holds as ``_impl``."""
    return key_dtype._impl


__all__ = ["AxisData", "ShardingTypeError", "ad_rules", "dtypes", "fun_sourceinfo", "pp_eqn", "pp_eqn_rules",
           "prng_impl"]
