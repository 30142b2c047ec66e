"""mlax.numpy dtypes: scalar-type constructors, promotion queries, constants and shape queries.

``mnp.float32`` is both a dtype (``np.dtype(mnp.float32)``, ``x.dtype == mnp.float32``) and a
constructor: ``mnp.float32(3)`` is a rank-0 mlax Array, canonicalised as jnp does (without x64,
``mnp.float64(1)`` is float32). The promotion rules are JAX's (see ``mlax.dtypes``).
"""

from __future__ import annotations

import builtins
from typing import Any

import ml_dtypes
import numpy as np
from jax.numpy import promote_types as jax_promote_types

from mlax import dtypes as front_dtypes
from mlax.core import abstractify
from mlax.numpy.util import asarray

__all__ = [
    "bfloat16", "bool", "bool_", "can_cast", "cdouble", "complex128", "complex64", "complex_",
    "complexfloating", "csingle", "double", "dtype", "e", "euler_gamma", "finfo", "float16",
    "float32", "float64", "float_", "floating", "generic", "iinfo", "inexact", "inf", "int16", "int32",
    "int64", "int8", "int_", "integer", "iscomplexobj", "isdtype", "isrealobj", "isscalar",
    "issubdtype", "nan", "ndim", "newaxis", "number", "pi", "promote_types", "result_type", "shape",
    "signedinteger", "single", "size", "uint", "uint16", "uint32", "uint64", "uint8", "unsignedinteger",
]


class _ScalarMeta(type):
    """Metaclass of the scalar types: they compare and hash like NumPy's and build Arrays."""

    dtype: np.dtype

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other: Any) -> bool:
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other: Any) -> bool:
        return not cls == other

    def __call__(cls, x: Any) -> Any:
        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls) -> str:
        return f"mlax.numpy.{cls.__name__}"


def _scalar_type(np_type: Any) -> _ScalarMeta:
    dt = np.dtype(np_type)
    name = "bool_" if dt == np.bool_ else dt.name
    doc = f"The {dt.name} scalar type: a dtype, and a constructor of mlax Arrays of that dtype."
    return _ScalarMeta(name, (object,), {"dtype": dt, "__doc__": doc, "__module__": "mlax.numpy"})


bool_ = bool = _scalar_type(np.bool_)  # noqa: A001 (jnp.bool is jnp.bool_)
int8 = _scalar_type(np.int8)
int16 = _scalar_type(np.int16)
int32 = _scalar_type(np.int32)
int64 = int_ = _scalar_type(np.int64)
uint8 = _scalar_type(np.uint8)
uint16 = _scalar_type(np.uint16)
uint32 = _scalar_type(np.uint32)
uint64 = uint = _scalar_type(np.uint64)
float16 = _scalar_type(np.float16)
bfloat16 = _scalar_type(ml_dtypes.bfloat16)
float32 = single = _scalar_type(np.float32)
float64 = double = float_ = _scalar_type(np.float64)
complex64 = csingle = _scalar_type(np.complex64)
complex128 = cdouble = complex_ = _scalar_type(np.complex128)

# The abstract scalar types are NumPy's (bfloat16 counts as floating through ``issubdtype``).
generic = np.generic
number = np.number
inexact = np.inexact
floating = np.floating
complexfloating = np.complexfloating
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger

dtype = np.dtype
finfo = ml_dtypes.finfo
iinfo = ml_dtypes.iinfo

pi = np.pi
e = np.e
euler_gamma = np.euler_gamma
inf = np.inf
nan = np.nan
newaxis = None


def _plain(x: Any) -> Any:
    """A scalar type's NumPy dtype; anything else unchanged (for NumPy/JAX helpers)."""
    return x.dtype if isinstance(x, _ScalarMeta) else x


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """``jnp.issubdtype``: NumPy's, except that bfloat16 is a floating type."""
    return front_dtypes.issubdtype(_plain(arg1), _plain(arg2))


def promote_types(a: Any, b: Any) -> np.dtype:
    """The dtype JAX's lattice promotes two dtypes to; like jnp, not narrowed to 32 bits."""
    return np.dtype(jax_promote_types(np.dtype(_plain(a)), np.dtype(_plain(b))))


def result_type(*args: Any) -> np.dtype:
    """JAX's result type of arrays, dtypes and (weakly typed) Python scalars, canonicalised."""
    return front_dtypes.result_type(*(_plain(a) for a in args))


def can_cast(from_: Any, to: Any, casting: str = "safe") -> builtins.bool:
    """NumPy's casting rule between dtypes (of arrays, scalar types or dtype names)."""
    if hasattr(from_, "aval"):
        from_ = abstractify(from_).dtype
    return np.can_cast(_plain(from_), np.dtype(_plain(to)), casting=casting)


_KINDS = {
    "bool": lambda d: d == np.bool_,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: front_dtypes.issubdtype(d, np.floating),
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d != np.bool_,
}


def isdtype(dtype: Any, kind: Any) -> builtins.bool:
    """The array-API kind test: ``kind`` is a kind name, a dtype, or a tuple of them."""
    dt = np.dtype(_plain(dtype))
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"mlax.numpy.isdtype: unknown kind {k!r}; known: {sorted(_KINDS)}")
            if _KINDS[k](dt):
                return True
        elif dt == np.dtype(_plain(k)):
            return True
    return False


def isscalar(element: Any) -> builtins.bool:
    """Whether ``element`` is a scalar: a Python or NumPy scalar, or a rank-0 array."""
    if np.isscalar(element):
        return True
    if hasattr(element, "aval") or isinstance(element, np.ndarray):
        return ndim(element) == 0
    return False


def iscomplexobj(x: Any) -> builtins.bool:
    """Whether ``x`` is complex: a complex scalar, or an array (mlax's too) or dtype of complex type."""
    if isinstance(x, (complex, np.complexfloating)):
        return True
    dtype = getattr(x, "dtype", None)
    return dtype is not None and np.dtype(dtype).kind == "c"


def isrealobj(x: Any) -> builtins.bool:
    """Whether ``x`` is not complex."""
    return not iscomplexobj(x)


def ndim(a: Any) -> int:
    """The rank of an array, tracer or scalar (never traces anything)."""
    return len(shape(a))


def shape(a: Any) -> tuple[int, ...]:
    """The static shape of an array, tracer or scalar."""
    if hasattr(a, "aval"):
        return tuple(abstractify(a).shape)
    return tuple(np.shape(a))


def size(a: Any, axis: int | None = None) -> int:
    """The number of elements of ``a`` (or along ``axis``)."""
    dims = shape(a)
    if axis is not None:
        return dims[axis]
    return int(np.prod(dims, dtype=np.int64))

