"""mlax.tree: ``jax.tree`` itself (map, leaves, flatten, structure, reduce, ...).

mlax pytrees are JAX's pytrees (one registry, ``jax.tree_util``), and mlax Arrays and tracers
are not registered nodes, so they are leaves to JAX's functions exactly as jax.Arrays and
JAX's tracers are: the functions are re-exported, not reimplemented.
"""

from jax import tree as _jax_tree

_PUBLIC = [name for name in dir(_jax_tree) if not name.startswith("_")]
globals().update({name: getattr(_jax_tree, name) for name in _PUBLIC})
__all__ = _PUBLIC
