"""mlax.tree_util: JAX's pytree utilities, so pytrees registered with JAX work unchanged.

mlax uses JAX's pytree registry itself (flax/optax structures, NamedTuples, dataclasses
registered with ``jax.tree_util`` all flatten the same way here).
"""

from jax import tree_util as _jax_tree_util

_PUBLIC = [name for name in dir(_jax_tree_util) if not name.startswith("_")]
globals().update({name: getattr(_jax_tree_util, name) for name in _PUBLIC})
__all__ = _PUBLIC
