"""Operators and jax.Array methods shared by `mlax.Array` and tracers.

Every method forwards to `mlax.numpy`, so an expression means the same thing eagerly,
traced, and in JAX.
"""

from __future__ import annotations

from typing import Any


def _mnp() -> Any:
    import mlax.numpy as mnp

    return mnp


def _binary(name: str, reflected: bool = False) -> Any:
    def method(self: Any, other: Any) -> Any:
        from mlax.core import is_array_like

        if hasattr(type(other), "__jax_array__") and not is_array_like(other):
            other = other.__jax_array__()  # as jax's operators (flax.nnx's Variables)
        if not is_array_like(other) and not isinstance(other, (list, tuple)):
            return NotImplemented
        fn = getattr(_mnp(), name)
        return fn(other, self) if reflected else fn(self, other)

    method.__name__ = f"__{'r' if reflected else ''}{name}__"
    return method


def _forward(name: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(_mnp(), name)(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"Same as ``mlax.numpy.{name}(self, ...)``."
    return method


class ArrayType(type):
    """The metaclass of `mlax.Array`: ``isinstance(tracer, mlax.Array)`` is True, as
    ``isinstance(tracer, jax.Array)`` is in JAX (``issubclass(Tracer, Array)`` stays False, also
    as in JAX). mlax's own code tells a concrete array by ``type(x) is Array``, which this leaves
    as fast as ever (and ``isinstance`` of an actual Array never reaches this method)."""

    also_arrays: tuple[type, ...] = ()  # typed PRNG key arrays are jax.Arrays too (mlax.prng)

    def __instancecheck__(cls, instance: Any) -> bool:
        return (type.__instancecheck__(cls, instance) or isinstance(instance, ArrayMethods)
                or isinstance(instance, ArrayType.also_arrays))


class ArrayMethods:
    """Mixin: needs ``shape``, ``dtype`` and ``aval`` from the concrete class."""

    __slots__ = ()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        size = 1
        for d in self.shape:
            size *= d
        return size

    @property
    def T(self) -> Any:
        return _mnp().transpose(self)

    @property
    def mT(self) -> Any:
        return _mnp().swapaxes(self, -1, -2)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Any:
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __getitem__(self, index: Any) -> Any:
        from mlax.numpy.indexing import getitem

        return getitem(self, index)

    @property
    def real(self) -> Any:
        return _mnp().real(self)

    @property
    def imag(self) -> Any:
        return _mnp().imag(self)

    @property
    def at(self) -> Any:
        from mlax.numpy.indexing import AtIndexer

        return AtIndexer(self)

    __add__ = _binary("add")
    __radd__ = _binary("add", True)
    __sub__ = _binary("subtract")
    __rsub__ = _binary("subtract", True)
    __mul__ = _binary("multiply")
    __rmul__ = _binary("multiply", True)
    __truediv__ = _binary("true_divide")
    __rtruediv__ = _binary("true_divide", True)
    __floordiv__ = _binary("floor_divide")
    __rfloordiv__ = _binary("floor_divide", True)
    __mod__ = _binary("remainder")
    __rmod__ = _binary("remainder", True)
    __pow__ = _binary("power")
    __rpow__ = _binary("power", True)
    __matmul__ = _binary("matmul")
    __rmatmul__ = _binary("matmul", True)
    __and__ = _binary("bitwise_and")
    __rand__ = _binary("bitwise_and", True)
    __or__ = _binary("bitwise_or")
    __ror__ = _binary("bitwise_or", True)
    __xor__ = _binary("bitwise_xor")
    __rxor__ = _binary("bitwise_xor", True)
    __lshift__ = _binary("left_shift")
    __rlshift__ = _binary("left_shift", True)
    __rshift__ = _binary("right_shift")
    __rrshift__ = _binary("right_shift", True)
    __lt__ = _binary("less")
    __le__ = _binary("less_equal")
    __gt__ = _binary("greater")
    __ge__ = _binary("greater_equal")
    __eq__ = _binary("equal")  # type: ignore[assignment]
    __ne__ = _binary("not_equal")  # type: ignore[assignment]

    def __neg__(self) -> Any:
        return _mnp().negative(self)

    def __pos__(self) -> Any:
        return _mnp().positive(self)

    def __abs__(self) -> Any:
        return _mnp().abs(self)

    def __invert__(self) -> Any:
        return _mnp().invert(self)

    def __divmod__(self, other: Any) -> Any:
        return _mnp().divmod(self, other)

    def __round__(self, ndigits: int | None = None) -> Any:
        """``round(x)`` as jax's: ``jnp.round`` to ``ndigits`` decimals, an int array when
        ``ndigits`` is None (as ``round(7.5)`` is an int)."""
        out = _mnp().round(self, decimals=ndigits or 0)
        return out.astype(int) if ndigits is None else out

    sum = _forward("sum")
    mean = _forward("mean")
    max = _forward("max")
    min = _forward("min")
    prod = _forward("prod")
    argmax = _forward("argmax")
    argmin = _forward("argmin")
    all = _forward("all")
    any = _forward("any")
    std = _forward("std")
    var = _forward("var")
    cumsum = _forward("cumsum")
    cumprod = _forward("cumprod")
    ravel = _forward("ravel")
    squeeze = _forward("squeeze")
    dot = _forward("dot")
    clip = _forward("clip")
    round = _forward("round")
    conj = _forward("conj")
    conjugate = _forward("conjugate")
    swapaxes = _forward("swapaxes")
    sort = _forward("sort")  # returns the sorted copy, as jax.Array.sort
    argsort = _forward("argsort")
    nonzero = _forward("nonzero")
    take = _forward("take")
    searchsorted = _forward("searchsorted")
    copy = _forward("copy")  # mlax.Array overrides it with a host copy
    argpartition = _forward("argpartition")
    choose = _forward("choose")
    diagonal = _forward("diagonal")
    ptp = _forward("ptp")
    repeat = _forward("repeat")
    trace = _forward("trace")  # a Tracer's own ``trace`` slot (its Trace) shadows it there

    def compress(self, condition: Any, axis: int | None = None, **kwargs: Any) -> Any:
        """``x.compress(c)`` is ``compress(c, x)``: the array is the second argument there."""
        return _mnp().compress(condition, self, axis=axis, **kwargs)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def reshape(self, *shape: Any, order: str = "C", out_sharding: Any = None) -> Any:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _mnp().reshape(self, shape, order=order, out_sharding=out_sharding)

    def transpose(self, *axes: Any) -> Any:
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return _mnp().transpose(self, axes or None)

    def astype(self, dtype: Any) -> Any:
        return _mnp().astype(self, dtype)

    def flatten(self) -> Any:
        return _mnp().ravel(self)
