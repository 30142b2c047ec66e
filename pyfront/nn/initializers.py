"""mlax.nn.initializers: jax.nn.initializers' weight initializers (jax 0.10.2), on mlax.random.

What: the constant initializers (``zeros``, ``ones``, ``constant``), the scaled samplers
(``uniform``, ``normal``, ``truncated_normal``), ``variance_scaling`` and its named presets
(LeCun, Glorot/Xavier and He/Kaiming, normal and uniform), plus ``orthogonal`` and
``delta_orthogonal``. An initializer is called as ``init(key, shape, dtype=None)`` and
returns an array of ``shape`` and ``dtype`` (default float32, float64 under x64, as jax).

Why this way: code written for jax (Flax-style layers, optax examples) builds its parameters
with these, and the values must be jax's for the same key, so that a model initialised on
mlax starts where it would on jax. Each initializer is therefore jax's recipe step for step,
with the same arithmetic in the same dtype: the draws come from ``mlax.random`` (jax's
threefry bits), the scale is applied afterwards in ``dtype`` exactly as jax rounds it. Nothing
runs on NumPy, so the initializers work eagerly, under ``mlax.jit`` with a traced key and
under ``mlax.vmap`` over keys. A key is the raw ``uint32[2]`` of ``mlax.random.PRNGKey`` (or a
jax typed key, which mlax.random reads).

Complex dtypes draw as jax's (a disk for uniform, a truncated modulus for truncated_normal).
Limits: no sharding (``out_sharding`` must be None). ``orthogonal`` and ``delta_orthogonal`` draw with
``mlax.random.orthogonal`` (a QR of normals), as jax.
"""

from __future__ import annotations

import math
import operator
import typing
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

import numpy as np

from mlax import dtypes as front_dtypes
from mlax import numpy as mnp
from mlax import random

__all__ = [
    "Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal",
    "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones",
    "orthogonal", "truncated_normal", "uniform", "variance_scaling", "xavier_normal", "xavier_uniform",
    "zeros",
]

Array = Any  # an mlax.Array, or a tracer under a transformation
ArrayLike = Any
DTypeLike = Any
RealNumeric = Any  # a Python number or a scalar array
Shape = int | Sequence[int]
Axes = int | Sequence[int]
Mode = Literal["fan_in", "fan_out", "fan_avg", "fan_geo_avg"]
Distribution = Literal["truncated_normal", "normal", "uniform"]

# The standard deviation of a standard normal truncated to (-2, 2): variance_scaling divides by it to
# undo the narrowing that truncation causes (jax's constant).
_TRUNCATED_STDDEV = 0.87962566103423978
_COMPLEX_TRUNCATED_STDDEV = 0.95311164380491208  # a complex standard normal's modulus truncated to 2


def _complex_uniform(key: Array, shape: tuple[int, ...], dtype: DTypeLike) -> Array:
    """jax's complex uniform: on the unit-variance disk, from a radius and an angle draw."""
    key_r, key_theta = random.split(key)
    real = np.array(0, dtype).real.dtype
    r = mnp.sqrt(mnp.multiply(2, random.uniform(key_r, shape, real))).astype(dtype)
    theta = mnp.multiply(2 * np.pi, random.uniform(key_theta, shape, real).astype(dtype))
    return mnp.multiply(r, mnp.exp(mnp.multiply(1j, theta)))


def _complex_truncated_normal(key: Array, upper: float, shape: tuple[int, ...], dtype: DTypeLike) -> Array:
    """jax's complex normal whose modulus is truncated to ``upper`` (variance one before)."""
    key_r, key_theta = random.split(key)
    real = np.array(0, dtype).real.dtype
    t = mnp.multiply(mnp.subtract(1, mnp.exp(mnp.asarray(-(upper ** 2), dtype))),
                     random.uniform(key_r, shape, real).astype(dtype))
    r = mnp.sqrt(mnp.negative(mnp.log(mnp.subtract(1, t))))
    theta = mnp.multiply(2 * np.pi, random.uniform(key_theta, shape, real).astype(dtype))
    return mnp.multiply(r, mnp.exp(mnp.multiply(1j, theta)))


@typing.runtime_checkable
class Initializer(Protocol):
    """What every initializer here is (and what the builders return): a function of a key, a
    shape and an optional dtype, as jax.nn.initializers.Initializer."""

    def __call__(self, key: Array, shape: Shape, dtype: DTypeLike | None = None,
                 out_sharding: Any = None) -> Array:
        raise NotImplementedError


def _resolve(dtype: DTypeLike | None, out_sharding: Any, name: str) -> DTypeLike:
    """The dtype to build (jax's default float when None), after refusing a sharding, which
    mlax cannot place yet."""
    if out_sharding is not None:
        raise NotImplementedError(f"mlax.nn.initializers.{name}: out_sharding is not supported (mlax has "
                                  "no sharding yet); pass None")
    return front_dtypes.default_float() if dtype is None else dtype


def _canonical_shape(shape: Shape, name: str) -> tuple[int, ...]:
    """``shape`` as a tuple of non-negative ints, read as jax's ``canonicalize_shape`` does."""
    dims = (shape,) if isinstance(shape, int) else shape
    try:
        out = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise TypeError(f"mlax.nn.initializers.{name}: shapes must be 1D sequences of concrete values of "
                        f"integer type, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise TypeError(f"mlax.nn.initializers.{name}: only non-negative sizes are allowed, got {out}")
    return out


def _named(name: str, init: Callable[..., Array], doc: str) -> Initializer:
    """``init``, the closure builder ``name`` returns, named as jax's (``init``, qualified by
    its builder: flax prints a module's initializers by name), with ``doc``."""
    init.__name__ = "init"
    init.__qualname__ = f"{name}.<locals>.init"
    init.__doc__ = doc
    return init


# -- constants ------------------------------------------------------------------------------

def zeros(key: Array, shape: Shape, dtype: DTypeLike | None = None, out_sharding: Any = None) -> Array:
    """An array of zeros (the key is ignored): the usual bias initializer."""
    dtype = _resolve(dtype, out_sharding, "zeros")
    return mnp.zeros(_canonical_shape(shape, "zeros"), dtype)


def ones(key: Array, shape: Shape, dtype: DTypeLike | None = None, out_sharding: Any = None) -> Array:
    """An array of ones (the key is ignored): the usual scale initializer of a normalisation."""
    dtype = _resolve(dtype, out_sharding, "ones")
    return mnp.ones(_canonical_shape(shape, "ones"), dtype)


def constant(value: ArrayLike, dtype: DTypeLike | None = None) -> Initializer:
    """An initializer filling arrays with ``value`` (a scalar or an array that broadcasts to
    the shape); ``dtype`` is its default dtype."""
    default_dtype = dtype

    def init(key: Array, shape: Shape, dtype: DTypeLike | None = default_dtype,
             out_sharding: Any = None) -> Array:
        dtype = _resolve(dtype, out_sharding, "constant")
        return mnp.full(_canonical_shape(shape, "constant"), value, dtype=dtype)

    return _named("constant", init, "Arrays full of the builder's constant value.")


# -- scaled samplers ------------------------------------------------------------------------

def _scaled(sample: Callable[[Array, Any, Any], Array], factor: RealNumeric, name: str,
            default_dtype: DTypeLike | None, doc: str) -> Initializer:
    """An initializer drawing ``sample(key, shape, dtype)`` and multiplying it by ``factor``
    rounded to ``dtype`` (jax's order: draw, then scale in the output dtype)."""
    def init(key: Array, shape: Shape, dtype: DTypeLike | None = default_dtype,
             out_sharding: Any = None) -> Array:
        dtype = _resolve(dtype, out_sharding, name)
        return mnp.multiply(sample(key, shape, dtype), mnp.asarray(factor, dtype))

    return _named(name, init, doc)


def uniform(scale: RealNumeric = 1e-2, dtype: DTypeLike | None = None) -> Initializer:
    """An initializer of uniform samples in ``[0, scale)``."""
    def draw(key: Array, shape: Any, dtype: Any) -> Array:
        return random.uniform(key, _canonical_shape(shape, "uniform"), dtype)

    return _scaled(draw, scale, "uniform", dtype, "Uniform samples in [0, scale).")


def normal(stddev: RealNumeric = 1e-2, dtype: DTypeLike | None = None) -> Initializer:
    """An initializer of normal samples with mean 0 and standard deviation ``stddev``."""
    def draw(key: Array, shape: Any, dtype: Any) -> Array:
        return random.normal(key, _canonical_shape(shape, "normal"), dtype)

    return _scaled(draw, stddev, "normal", dtype, "Normal samples of standard deviation stddev.")


def truncated_normal(stddev: RealNumeric = 1e-2, dtype: DTypeLike | None = None, lower: RealNumeric = -2.0,
                     upper: RealNumeric = 2.0) -> Initializer:
    """An initializer of standard normal samples truncated to ``(lower, upper)``, then scaled by
    ``stddev`` (no correction for the variance the truncation removes, unlike
    ``variance_scaling``)."""
    def draw(key: Array, shape: Any, dtype: Any) -> Array:
        # shape None: the broadcast shape of the bounds, as jax.random.truncated_normal reads it
        dims = None if shape is None else _canonical_shape(shape, "truncated_normal")
        return random.truncated_normal(key, lower, upper, dims, dtype)

    return _scaled(draw, stddev, "truncated_normal", dtype,
                   "Standard normal samples truncated to (lower, upper), times stddev.")


# -- variance scaling -----------------------------------------------------------------------

def _axes_size(shape: tuple[int, ...], axes: Axes) -> int:
    return shape[axes] if isinstance(axes, int) else math.prod(shape[a] for a in axes)


def _compute_fans(shape: Sequence[int], in_axis: Axes = -2, out_axis: Axes = -1,
                  batch_axis: Axes = ()) -> tuple[float, float]:
    """(fan_in, fan_out) of a dense or convolution kernel: the input and output sizes, each
    times the receptive field, the product of the axes that are none of in/out/batch (the
    spatial axes of a conv kernel, e.g. H*W of HWIO). Same float arithmetic as jax, so an
    empty axis divides by zero as it does there."""
    shape = tuple(shape)
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional weights tensor "
                         "with default in_axis. Must be at least 2D or specify in_axis explicitly.")
    in_size = _axes_size(shape, in_axis)
    out_size = _axes_size(shape, out_axis)
    receptive_field = math.prod(shape) / in_size / out_size / _axes_size(shape, batch_axis)
    return in_size * receptive_field, out_size * receptive_field


_DENOMINATORS: dict[str, Callable[[float, float], float]] = {
    "fan_in": lambda fan_in, fan_out: fan_in,
    "fan_out": lambda fan_in, fan_out: fan_out,
    "fan_avg": lambda fan_in, fan_out: (fan_in + fan_out) / 2,
    "fan_geo_avg": lambda fan_in, fan_out: (fan_in * fan_out) ** 0.5,
}


def variance_scaling(scale: RealNumeric, mode: Mode, distribution: Distribution, in_axis: Axes = -2,
                     out_axis: Axes = -1, batch_axis: Axes = (),
                     dtype: DTypeLike | None = None) -> Initializer:
    """An initializer whose samples have variance ``scale / n``, ``n`` the kernel's fan in, fan
    out, or their arithmetic or geometric mean (``mode``), so activations keep their scale
    through the layer. ``distribution`` is a normal truncated at two standard deviations
    (rescaled to keep the variance), a normal, or a uniform on ``[-a, a)``. Axes that are not
    ``in_axis``, ``out_axis`` or ``batch_axis`` form the receptive field. Like jax, a bad
    ``mode`` or ``distribution`` is a ValueError when the initializer is called."""
    default_dtype = dtype

    def init(key: Array, shape: Shape, dtype: DTypeLike | None = default_dtype,
             out_sharding: Any = None) -> Array:
        dtype = _resolve(dtype, out_sharding, "variance_scaling")
        shape = _canonical_shape(shape, "variance_scaling")
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode not in _DENOMINATORS:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = mnp.asarray(scale / _DENOMINATORS[mode](fan_in, fan_out), dtype)
        complex_ = front_dtypes.issubdtype(dtype, np.complexfloating)
        if distribution == "truncated_normal" and complex_:
            stddev = mnp.true_divide(mnp.sqrt(variance), mnp.asarray(_COMPLEX_TRUNCATED_STDDEV, dtype))
            return mnp.multiply(_complex_truncated_normal(key, 2, shape, dtype), stddev)
        if distribution == "truncated_normal":
            stddev = mnp.true_divide(mnp.sqrt(variance), mnp.asarray(_TRUNCATED_STDDEV, dtype))
            return mnp.multiply(random.truncated_normal(key, -2, 2, shape, dtype), stddev)
        if distribution == "normal":
            return mnp.multiply(random.normal(key, shape, dtype), mnp.sqrt(variance))
        if distribution == "uniform" and complex_:
            return mnp.multiply(_complex_uniform(key, shape, dtype), mnp.sqrt(variance))
        if distribution == "uniform":  # a uniform on [-a, a) has variance a**2 / 3
            return mnp.multiply(random.uniform(key, shape, dtype, -1), mnp.sqrt(mnp.multiply(3, variance)))
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    return _named("variance_scaling", init, "Samples of variance scale / n, n from the kernel's fans.")


def _preset(name: str, scale: float, mode: Mode, distribution: Distribution,
            reference: str) -> Callable[..., Initializer]:
    """A named builder of ``variance_scaling(scale, mode, distribution, ...)``."""
    def build(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (),
              dtype: DTypeLike | None = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)

    build.__name__ = build.__qualname__ = name
    build.__doc__ = (f"The {reference} initializer: ``variance_scaling({scale}, {mode!r}, "
                     f"{distribution!r})`` with the given axes and default dtype.")
    return build


lecun_normal = _preset("lecun_normal", 1.0, "fan_in", "truncated_normal", "LeCun normal")
lecun_uniform = _preset("lecun_uniform", 1.0, "fan_in", "uniform", "LeCun uniform")
glorot_normal = _preset("glorot_normal", 1.0, "fan_avg", "truncated_normal", "Glorot (Xavier) normal")
glorot_uniform = _preset("glorot_uniform", 1.0, "fan_avg", "uniform", "Glorot (Xavier) uniform")
he_normal = _preset("he_normal", 2.0, "fan_in", "truncated_normal", "He (Kaiming) normal")
he_uniform = _preset("he_uniform", 2.0, "fan_in", "uniform", "He (Kaiming) uniform")
xavier_normal = glorot_normal
xavier_uniform = glorot_uniform
kaiming_normal = he_normal
kaiming_uniform = he_uniform


# -- orthogonal -----------------------------------------------------------------------------

def orthogonal(scale: RealNumeric = 1.0, column_axis: int = -1,
               dtype: DTypeLike | None = None) -> Initializer:
    """An initializer of ``scale`` times a uniformly random matrix with orthonormal rows or
    columns (whichever are fewer), the columns along ``column_axis`` (jax's draw: a
    ``random.orthogonal`` matrix reshaped to ``shape``)."""
    default_dtype = dtype

    def init(key: Array, shape: Shape, dtype: DTypeLike | None = default_dtype,
             out_sharding: Any = None) -> Array:
        dtype = _resolve(dtype, out_sharding, "orthogonal")
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        shape = _canonical_shape(shape, "orthogonal")
        if 0 in shape:
            return mnp.zeros(shape, dtype)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        rest = list(shape)
        del rest[column_axis]
        q = mnp.reshape(q, (*rest, shape[column_axis]))
        return mnp.array(scale, dtype) * mnp.moveaxis(q, -1, column_axis)

    return _named("orthogonal", init, orthogonal.__doc__ or "")


def delta_orthogonal(scale: RealNumeric = 1.0, column_axis: int = -1,
                     dtype: DTypeLike | None = None) -> Initializer:
    """An initializer of 3D-5D convolution kernels that are zero except at the spatial centre,
    which holds an ``orthogonal`` matrix (Xiao et al. 2018), so the layer starts as an
    isometry."""
    default_dtype = dtype

    def init(key: Array, shape: Shape, dtype: DTypeLike | None = default_dtype,
             out_sharding: Any = None) -> Array:
        dtype = _resolve(dtype, out_sharding, "delta_orthogonal")
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        shape = _canonical_shape(shape, "delta_orthogonal")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return mnp.zeros(shape, dtype).at[centre].set(matrix)

    return _named("delta_orthogonal", init, delta_orthogonal.__doc__ or "")

