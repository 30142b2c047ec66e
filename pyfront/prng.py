"""PRNG key arrays: arrays whose elements are PRNG keys, as ``jax.random.key``'s.

A key array wraps uint32 *data*, an mlax Array (or a Tracer inside a trace) whose trailing
dimensions, its implementation's key shape ((2,) for threefry2x32, (4,) for rbg, a custom
implementation's own), hold one key's words. Its shape is the data's without them and its dtype
is JAX's own key dtype object (``key<fry>``, ``jax.random.key_dtype(impl)``), so
``jax.dtypes.issubdtype(k.dtype, jax.dtypes.prng_key)`` holds and code written for JAX's typed
keys (flax.nnx's ``Rngs``) sees what it expects. Like JAX's, a key array is a pytree *leaf*,
unhashable, and has no arithmetic: only indexing, reshaping and equality.

mlax's programs compute on arrays, not keys. :func:`tree_flatten` and
:func:`tree_flatten_with_path` are the one place where key leaves become their data on the way
into a transformation (jit, vmap, grad, control flow, eval_shape all flatten arguments and
results through them): each key's place in the returned treedef is a node that
``tree_unflatten`` turns back into a key around whatever data (a tracer, a computed Array) it
is given, so keys come out of every transformation as keys.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jax
import numpy as np
from jax import ShapeDtypeStruct, tree_util

from mlax.array import Array
from mlax.array_methods import ArrayMethods, ArrayType
from mlax.configuration import default_prng_impl
from mlax.errors import user_error
from mlax.jax_private import prng_impl
from mlax.tracer_text import describe

__all__ = ["KEY_DTYPE", "PRNGKeyArray", "default_dtype", "impl_of", "is_key", "is_key_dtype", "key_data",
           "key_mask", "key_shape", "resolve_dtype",
           "tree_flatten", "tree_flatten_with_path", "wrap_key_data"]

KEY_DTYPE = jax.random.key_dtype("threefry2x32")
_KEY_DTYPE_TYPE = type(KEY_DTYPE)
_U32 = np.dtype(np.uint32)


def _mnp() -> Any:
    import mlax.numpy as mnp

    return mnp


def resolve_dtype(impl: Any, dtype: Any, api: str) -> Any:
    """The key dtype that ``impl=`` / ``dtype=`` of ``mlax.random.<api>`` name (by default
    ``jax_default_prng_impl``'s); JAX's errors for names it does not know."""
    if impl is not None and dtype is not None:
        raise user_error(ValueError, f"Cannot specify both `impl` and `dtype` arguments to mlax.random.{api}",
                         f"impl of mlax.random.{api}")
    spec = dtype if dtype is not None else impl
    if spec is None:
        return default_dtype()
    try:
        return jax.random.key_dtype(spec)
    except (TypeError, ValueError) as err:
        raise user_error(type(err), str(err), f"impl of mlax.random.{api}") from None


def default_dtype() -> Any:
    """The key dtype of ``jax_default_prng_impl`` (that of raw uint32 keys)."""
    return jax.random.key_dtype(default_prng_impl.value)


def impl_of(dtype: Any) -> Any:
    """jax's PRNGImpl record of a key dtype: its name, key shape and functions."""
    return prng_impl(dtype)


def key_shape(dtype: Any) -> tuple[int, ...]:
    """The trailing shape of one key's data for keys of ``dtype``."""
    return tuple(prng_impl(dtype).key_shape)


def is_key_dtype(dtype: Any) -> bool:
    """Whether ``dtype`` is a PRNG key dtype (JAX's ``KeyTy``)."""
    return isinstance(dtype, _KEY_DTYPE_TYPE)


def is_key(x: Any) -> bool:
    """Whether ``x`` has a key dtype: an mlax key array, a JAX typed key array, or an abstract
    one (a ``ShapeDtypeStruct`` of a key dtype)."""
    return is_key_dtype(getattr(x, "dtype", None))


def _data_of(x: Any, argument: str) -> Any:
    """The data of a key leaf: an mlax key's own, a JAX key's as an mlax Array, and for an
    abstract key the abstract data."""
    if type(x) is PRNGKeyArray:
        return x._base_array
    if isinstance(x, jax.Array):
        return Array._wrap(np.asarray(jax.random.key_data(x)))
    if isinstance(x, ShapeDtypeStruct):
        return ShapeDtypeStruct((*x.shape, *key_shape(x.dtype)), _U32)
    raise user_error(TypeError, f"unexpected PRNG key type {type(x)}", argument)


def key_data(keys: Any, argument: str) -> Any:
    """The uint32 data (an mlax Array or Tracer) of a key array, mlax's or JAX's."""
    if not is_key(keys) or isinstance(keys, ShapeDtypeStruct):
        raise user_error(TypeError, f"unexpected PRNG key type {type(keys)}", argument)
    return _data_of(keys, argument)


def wrap_key_data(data: Any, dtype: Any = KEY_DTYPE, argument: str = "key_bits_array") -> PRNGKeyArray:
    """Keys around uint32 ``data`` of shape ``(..., *key_shape)``, checked as JAX checks key data."""
    if is_key(data):
        raise user_error(TypeError, "invalid PRNG key data: expected uint32 key data, got a key array of "
                         f"dtype {data.dtype} (its data is mlax.random.key_data(keys))", argument)
    if not all(hasattr(data, attr) for attr in ("ndim", "shape", "dtype")):
        raise user_error(TypeError, "invalid PRNG key data: expected key_data to have ndim, shape, and dtype "
                         f"attributes. Got {data!r}", argument)
    trailing = key_shape(dtype)
    if data.ndim < len(trailing):
        raise user_error(TypeError, f"invalid PRNG key data: expected key_data.ndim >= {len(trailing)}; got "
                         f"ndim={data.ndim}", argument)
    if tuple(data.shape[data.ndim - len(trailing):]) != trailing:
        raise user_error(TypeError, f"invalid PRNG key data: expected key_data.shape to end with {trailing}; "
                         f"got shape={tuple(data.shape)} for impl {prng_impl(dtype).name}", argument)
    if np.dtype(data.dtype) != _U32:
        raise user_error(TypeError, "invalid PRNG key data: expected key_data.dtype = uint32; got "
                         f"dtype={np.dtype(data.dtype)}", argument)
    if not isinstance(data, ArrayMethods):
        data = Array(np.asarray(data))
    return PRNGKeyArray._from_data(data, dtype)


class _KeyUpdates:
    __slots__ = ("_keys",)

    def __init__(self, keys: PRNGKeyArray) -> None:
        self._keys = keys

    def __getitem__(self, index: Any) -> _KeyUpdate:
        return _KeyUpdate(self._keys, index)


class _KeyUpdate:
    """``keys.at[index]``: the data's update at the same index, its last dimension whole."""

    __slots__ = ("_index", "_keys")

    def __init__(self, keys: PRNGKeyArray, index: Any) -> None:
        self._keys, self._index = keys, keys._data_index(index)

    def get(self, **kwargs: Any) -> PRNGKeyArray:
        return self._keys._with(self._keys._base_array.at[self._index].get(**kwargs))

    def set(self, values: Any, **kwargs: Any) -> PRNGKeyArray:
        if not is_key(values):
            raise user_error(TypeError, f"Cannot interpret '{self._keys.dtype}' as a data type: a key "
                             f"array's elements are set to keys, got {type(values).__name__}",
                             "the values of .at[].set")
        data = _data_of(values, "the values of .at[].set")
        return self._keys._with(self._keys._base_array.at[self._index].set(data, **kwargs))


class PRNGKeyArray:
    """An array of PRNG keys over uint32 data whose trailing dimensions are the key shape of
    its implementation (build one with ``mlax.random.key``, ``split`` or ``wrap_key_data``)."""

    __slots__ = ("_base_array", "_dtype")
    __array_priority__ = 100
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, data: Any, dtype: Any = KEY_DTYPE) -> None:
        checked = wrap_key_data(data, dtype)
        self._base_array, self._dtype = checked._base_array, checked._dtype

    @classmethod
    def _from_data(cls, data: Any, dtype: Any = KEY_DTYPE) -> PRNGKeyArray:
        """Keys around ``data`` as it is (mlax's own results: already checked, or traced)."""
        keys = cls.__new__(cls)
        keys._base_array = data
        keys._dtype = dtype
        return keys

    def _with(self, data: Any) -> PRNGKeyArray:
        return PRNGKeyArray._from_data(data, self._dtype)

    @property
    def dtype(self) -> Any:
        return self._dtype

    @property
    def _key_rank(self) -> int:
        return len(key_shape(self._dtype))

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._base_array.shape[:len(self._base_array.shape) - self._key_rank])

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.itemsize * self.size

    # -- indexing and shape changes: on the key dimensions, never the data's last one ------

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[PRNGKeyArray]:
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def _data_index(self, index: Any) -> tuple[Any, ...]:
        """A key index as the data's: the key dimensions indexed, each key's words whole."""
        index = index if isinstance(index, tuple) else (index,)
        if not any(i is Ellipsis for i in index):
            index = (*index, Ellipsis)
        return (*index, *[slice(None)] * self._key_rank)

    def __getitem__(self, index: Any) -> PRNGKeyArray:
        return self._with(self._base_array[self._data_index(index)])

    def reshape(self, *shape: Any, order: str = "C") -> PRNGKeyArray:
        if order != "C":
            raise user_error(NotImplementedError, f"key arrays reshape in C order only, got order={order!r}",
                             "order of reshape")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return self._with(_mnp().reshape(self._base_array, (*shape, *key_shape(self._dtype))))

    def ravel(self) -> PRNGKeyArray:
        return self.reshape(-1)

    flatten = ravel

    def squeeze(self, axis: Any = None) -> PRNGKeyArray:
        if axis is None:
            axes = tuple(i for i, d in enumerate(self.shape) if d == 1)
        else:
            axes = tuple(self._axis("squeeze", a) for a in (axis if isinstance(axis, tuple) else (axis,)))
        return self._with(_mnp().squeeze(self._base_array, axis=axes))

    def transpose(self, *axes: Any) -> PRNGKeyArray:
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        order = tuple(self._axis("transpose", a) for a in axes) if axes else tuple(reversed(range(self.ndim)))
        return self._with(_mnp().transpose(self._base_array,
                                           (*order, *range(self.ndim, self.ndim + self._key_rank))))

    @property
    def T(self) -> PRNGKeyArray:
        return self.transpose()

    def swapaxes(self, axis1: int, axis2: int) -> PRNGKeyArray:
        order = list(range(self.ndim))
        a, b = self._axis("swapaxes", axis1), self._axis("swapaxes", axis2)
        order[a], order[b] = order[b], order[a]
        return self.transpose(order)

    def _axis(self, name: str, axis: Any) -> int:
        from mlax.numpy.util import normalize_axis

        return normalize_axis(f"mlax key array {name}", axis, self.ndim)

    @property
    def at(self) -> _KeyUpdates:
        """``keys.at[index].get()`` and ``.set(other_keys)``, as jax's key arrays (flax keeps keys
        in a while_loop's carry so); keys have no arithmetic, so no ``add`` and the like."""
        return _KeyUpdates(self)

    # -- equality (keys have no arithmetic) --------------------------------------------------

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        words = tuple(range(-self._key_rank, 0))
        return _mnp().all(_mnp().equal(self._base_array, self._other_data("equal", other)), axis=words)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        words = tuple(range(-self._key_rank, 0))
        different = _mnp().not_equal(self._base_array, self._other_data("not_equal", other))
        return _mnp().any(different, axis=words)

    def _other_data(self, name: str, other: Any) -> Any:
        if not is_key(other):
            got = other.dtype if hasattr(other, "dtype") else type(other).__name__
            raise TypeError(f"{name} does not accept dtypes {self._dtype}, {got}.")
        return _data_of(other, f"the operand of {name}")

    # -- conversions: none, as JAX's ---------------------------------------------------------

    def __bool__(self) -> bool:
        raise TypeError("key array cannot be converted to boolean.")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError("mlax array with PRNGKey dtype cannot be converted to a NumPy array. Use "
                        "mlax.random.key_data(arr) if you wish to extract the underlying integer array.")

    def copy(self) -> PRNGKeyArray:
        """The same keys (mlax arrays are immutable, so the data is shared)."""
        return self._with(self._base_array)

    def block_until_ready(self) -> PRNGKeyArray:
        if hasattr(self._base_array, "block_until_ready"):
            self._base_array.block_until_ready()
        return self

    @property
    def device(self) -> Any:
        return self._base_array.device

    @property
    def known(self) -> Any:
        """What concrete mode knows of the keys: what it knows of their data (pyfront/staging.py
        sets it on each traced argument leaf, keys included)."""
        return getattr(self._base_array, "known", None)

    @known.setter
    def known(self, value: Any) -> None:
        self._base_array.known = value

    def __repr__(self) -> str:
        from mlax.core import Tracer
        if isinstance(self._base_array, Tracer):
            return describe(self._base_array, f"{self._dtype.name}[{','.join(map(str, self.shape))}]")
        return f"Array({self.shape}, dtype={self._dtype.name}) overlaying:\n{self._base_array}"

    __str__ = __repr__


ArrayType.also_arrays = (*ArrayType.also_arrays, PRNGKeyArray)  # isinstance(key, mlax.Array), as in jax


# -- key leaves in the pytrees of transformations ----------------------------------------------

class _KeyNode:
    """A key leaf seen as a pytree node whose one child is its data (only inside mlax's
    flattening: users' pytrees hold PRNGKeyArray leaves)."""

    __slots__ = ("data", "dtype")

    def __init__(self, data: Any, dtype: Any) -> None:
        self.data, self.dtype = data, dtype


def _rebuild(dtype: Any, children: Any) -> Any:
    """Keys around the data ``tree_unflatten`` gives a key's place: a ShapeDtypeStruct of data
    (eval_shape's results) becomes the abstract keys; anything else is wrapped as it is."""
    (data,) = children
    if isinstance(data, ShapeDtypeStruct):
        return ShapeDtypeStruct(data.shape[:len(data.shape) - len(key_shape(dtype))], dtype)
    return PRNGKeyArray._from_data(data, dtype)


tree_util.register_pytree_node(_KeyNode, lambda node: ((node.data,), node.dtype), _rebuild)


def _box(leaves: list[Any], treedef: Any) -> tuple[list[Any], Any]:
    """The leaves with each key as its data, and the treedef with a `_KeyNode` at each key."""
    data = [_data_of(leaf, "a PRNG key") if is_key(leaf) else leaf for leaf in leaves]
    nodes = [_KeyNode(d, leaf.dtype) if is_key(leaf) else leaf for d, leaf in zip(data, leaves, strict=True)]
    return data, tree_util.tree_structure(tree_util.tree_unflatten(treedef, nodes))


def tree_flatten(tree: Any) -> tuple[list[Any], Any]:
    """``jax.tree_util.tree_flatten``, with key leaves as their data (see the module doc)."""
    leaves, treedef = tree_util.tree_flatten(tree)
    if not any(is_key(leaf) for leaf in leaves):
        return leaves, treedef
    return _box(leaves, treedef)


def tree_flatten_with_path(tree: Any) -> tuple[list[tuple[Any, Any]], Any]:
    """``jax.tree_util.tree_flatten_with_path``, with key leaves as their data; a key's path is
    the key's own."""
    pairs, treedef = tree_util.tree_flatten_with_path(tree)
    if not any(is_key(leaf) for _, leaf in pairs):
        return pairs, treedef
    data, treedef = _box([leaf for _, leaf in pairs], treedef)
    return [(path, d) for (path, _), d in zip(pairs, data, strict=True)], treedef


def key_mask(treedef: Any) -> list[bool]:
    """For each leaf of a treedef from :func:`tree_flatten`, whether it is a key's data."""
    node = treedef.node_data()
    if node is None:
        return [False]
    if node[0] is _KeyNode:
        return [True]
    return [mask for child in treedef.children() for mask in key_mask(child)]
