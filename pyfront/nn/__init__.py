"""mlax.nn: neural-network activations, softmax family and one_hot (as jax.nn).

Each function is jax.nn's formula written with mlax.numpy, so dtypes and weak types follow
from jnp's promotion; softmax, log_softmax and logsumexp subtract the maximum first so
large inputs neither overflow nor lose precision.
"""

from __future__ import annotations

import operator
from functools import partial
from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.custom_derivatives import custom_jvp
from mlax.numpy.util import asarray, normalize_axis, promote_args_inexact
from mlax.scipy.special import logsumexp

__all__ = [
    "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh", "identity",
    "leaky_relu", "log_sigmoid", "log_softmax", "logsumexp", "mish", "one_hot", "relu", "relu6", "selu",
    "sigmoid", "silu", "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "squareplus",
    "standardize", "swish", "tanh",
]

tanh = mnp.tanh


def identity(x: Any) -> Any:
    """The identity activation."""
    return asarray(x)


@custom_jvp
def relu(x: Any) -> Any:
    """``max(x, 0)``; its derivative is 0 at 0 (jax's custom rule, not max's tie-splitting 1/2)."""
    return mnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: mnp.where(mnp.greater(x, 0), g, mnp.zeros_like(g)))


@custom_jvp
def relu6(x: Any) -> Any:
    """``min(max(x, 0), 6)``; its derivative is 1 strictly inside (0, 6) and 0 elsewhere, as jax's."""
    return mnp.minimum(mnp.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: mnp.where(mnp.logical_and(mnp.greater(x, 0), mnp.less(x, 6)), g,
                                          mnp.zeros_like(g)))


def sigmoid(x: Any) -> Any:
    """The logistic function (floating-point inputs only, as jax.nn)."""
    return lax.logistic(x)


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))`` without overflow."""
    return mnp.logaddexp(x, 0)


def log_sigmoid(x: Any) -> Any:
    """``log(sigmoid(x))`` without underflow: ``-softplus(-x)``."""
    return mnp.negative(softplus(mnp.negative(x)))


def silu(x: Any) -> Any:
    """``x * sigmoid(x)``."""
    x = asarray(x)
    return mnp.multiply(x, sigmoid(x))


swish = silu


def mish(x: Any) -> Any:
    """``x * tanh(softplus(x))``."""
    x = asarray(x)
    return mnp.multiply(x, mnp.tanh(softplus(x)))


def soft_sign(x: Any) -> Any:
    """``x / (|x| + 1)``."""
    x = asarray(x)
    return mnp.true_divide(x, mnp.add(mnp.abs(x), 1))


def squareplus(x: Any, b: Any = 4) -> Any:
    """``(x + sqrt(x**2 + b)) / 2``, a smooth relu."""
    return mnp.true_divide(mnp.add(x, mnp.sqrt(mnp.add(mnp.square(x), b))), 2)


def elu(x: Any, alpha: Any = 1.0) -> Any:
    """``x`` above 0, ``alpha * (exp(x) - 1)`` below."""
    x = asarray(x)
    positive = mnp.greater(x, 0)
    return mnp.where(positive, x, mnp.multiply(alpha, mnp.expm1(mnp.where(positive, 0.0, x))))


def selu(x: Any) -> Any:
    """Scaled elu with the self-normalising constants."""
    return mnp.multiply(1.0507009873554805, elu(x, 1.6732632423543772))


def celu(x: Any, alpha: Any = 1.0) -> Any:
    """Continuously differentiable elu: ``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``."""
    return mnp.add(mnp.maximum(x, 0.0),
                   mnp.multiply(alpha, mnp.expm1(mnp.true_divide(mnp.minimum(x, 0.0), alpha))))


def leaky_relu(x: Any, negative_slope: Any = 0.01) -> Any:
    """``x`` at and above 0, ``negative_slope * x`` below."""
    x = asarray(x)
    return mnp.where(mnp.greater_equal(x, 0), x, mnp.multiply(negative_slope, x))


def hard_tanh(x: Any) -> Any:
    """``x`` clipped to [-1, 1] (keeping integer dtypes)."""
    x = asarray(x)
    return mnp.where(mnp.greater(x, 1), 1, mnp.where(mnp.less(x, -1), -1, x))


def hard_sigmoid(x: Any) -> Any:
    """``relu6(x + 3) / 6``."""
    return mnp.true_divide(relu6(mnp.add(x, 3.0)), 6.0)


def hard_silu(x: Any) -> Any:
    """``x * hard_sigmoid(x)``."""
    x = asarray(x)
    return mnp.multiply(x, hard_sigmoid(x))


hard_swish = hard_silu


def sparse_plus(x: Any) -> Any:
    """0 below -1, ``x`` above 1, ``(x + 1)**2 / 4`` between."""
    x = asarray(x)
    middle = mnp.true_divide(mnp.power(mnp.add(x, 1.0), 2), 4)
    return mnp.where(mnp.less_equal(x, -1.0), 0.0, mnp.where(mnp.greater_equal(x, 1.0), x, middle))


def sparse_sigmoid(x: Any) -> Any:
    """``clip(x + 1, 0, 2) / 2``."""
    return mnp.multiply(0.5, mnp.clip(mnp.add(x, 1.0), 0.0, 2.0))


def gelu(x: Any, approximate: bool = True) -> Any:
    """Gaussian error linear unit: the tanh approximation, or exact through ``erfc``."""
    (x,) = promote_args_inexact("gelu", x)
    if approximate:
        c = np.sqrt(2 / np.pi).astype(x.dtype)
        inner = mnp.multiply(c, mnp.add(x, mnp.multiply(0.044715, mnp.power(x, 3))))
        return mnp.multiply(x, mnp.multiply(0.5, mnp.add(1.0, mnp.tanh(inner))))
    sqrt_half = np.sqrt(0.5).astype(x.dtype)
    cdf = lax.erfc(mnp.multiply(mnp.negative(x), sqrt_half))
    return mnp.astype(mnp.multiply(mnp.multiply(0.5, x), cdf), x.dtype)


def glu(x: Any, axis: int = -1) -> Any:
    """Gated linear unit: the first half of ``axis`` times the sigmoid of the second half."""
    x = asarray(x)
    if x.shape[axis] % 2:
        raise ValueError(f"mlax.nn.glu: axis {axis} of size {x.shape[axis]} must be divisible by 2")
    x1, x2 = mnp.split(x, 2, axis)
    return mnp.multiply(x1, sigmoid(x2))


def softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """``exp(x) / sum(exp(x))`` over ``axis``, computed after subtracting the maximum. Its
    derivative is jax's rule ``y * (dx - sum(y * dx))``: no derivative of the maximum, and the
    exponential is computed once, not again for the backward pass."""
    return _softmax(x, axis, where)


@partial(custom_jvp, nondiff_argnums=(1, 2))
def _softmax(x: Any, axis: Any, where: Any) -> Any:
    x_max = mnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else mnp.where(where, x, -np.inf)
    unnormalized = mnp.exp(mnp.subtract(x_safe, x_max))
    result = mnp.true_divide(unnormalized, mnp.sum(unnormalized, axis, where=where, keepdims=True))
    return result if where is None else mnp.where(where, result, 0)


@_softmax.defjvp
def _softmax_jvp(axis: Any, where: Any, primals: tuple[Any, ...],
                 tangents: tuple[Any, ...]) -> tuple[Any, Any]:
    (x,), (x_dot,) = primals, tangents
    y = _softmax(x, axis, where)
    return y, mnp.multiply(y, mnp.subtract(x_dot, mnp.sum(mnp.multiply(y, x_dot), axis, where=where,
                                                              keepdims=True)))


def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """``x - logsumexp(x)`` over ``axis``, computed after subtracting the maximum."""
    x = asarray(x)
    x_max = mnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else mnp.where(where, x, -np.inf)
    shifted = mnp.subtract(x_safe, lax.stop_gradient(x_max))
    shifted_lse = mnp.log(mnp.sum(mnp.exp(shifted), axis, where=where, keepdims=True))
    result = mnp.subtract(shifted, shifted_lse)
    return result if where is None else mnp.where(where, result, -np.inf)


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Any:
    """``x[..., None] == arange(num_classes)`` as ``dtype`` (default float); the class axis is
    inserted at ``axis``. Out-of-range indices give all-zero rows."""
    num_classes = operator.index(num_classes)
    x = asarray(x)
    out_axis = normalize_axis("mlax.nn.one_hot", axis, x.ndim + 1)
    classes_shape = [1] * x.ndim
    classes_shape.insert(out_axis, num_classes)
    classes = lax.broadcasted_iota(x.dtype, classes_shape, out_axis)
    hot = mnp.equal(lax.expand_dims(x, (out_axis,)), classes)
    return mnp.astype(hot, dtype)  # dtype None: the default float type


def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None, epsilon: Any = 1e-05,
                where: Any = None) -> Any:
    """``(x - mean) / sqrt(variance + epsilon)`` with statistics over ``axis`` unless given."""
    if mean is None:
        mean = mnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        variance = mnp.subtract(mnp.mean(mnp.square(x), axis, keepdims=True, where=where), mnp.square(mean))
        variance = mnp.clip(variance, 0)
    return mnp.multiply(mnp.subtract(x, mean), lax.rsqrt(mnp.add(variance, epsilon)))


from mlax.nn import initializers as initializers  # noqa: E402  (jax.nn exposes it as an attribute too)
from mlax.nn.attention import dot_product_attention  # noqa: E402, F401
from mlax.nn.log_functions import log1mexp, logmeanexp  # noqa: E402, F401
