"""mlax.scipy.stats.gaussian_kde: Gaussian kernel density estimation, as jax's class.

The estimator is a frozen dataclass and a pytree (registered with jax's registry, which mlax's
transformations share), so it passes through mlax.jit, grad and vmap. Its kernel is
N(0, covariance): the data's weighted covariance scaled by the bandwidth factor squared. Sums
over the kernels are dense (test points x data points) after whitening both sets with the
Cholesky factor of the inverse covariance.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

import mlax.numpy as mnp
from mlax.numpy.util import check_arraylike, promote_dtypes_inexact
from mlax.scipy.linalg import cho_factor, cho_solve, cholesky
from mlax.scipy.special import logsumexp, ndtr
from mlax.tree_util import register_pytree_node_class

__all__ = ["gaussian_kde"]

BwMethod = None | str | Any | Callable[[Any], Any]


@register_pytree_node_class
@dataclasses.dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:  # noqa: N801 (SciPy's name)
    """scipy.stats.gaussian_kde over ``dataset`` (n,) or (d, n), with optional ``weights`` (n,)
    and ``bw_method`` "scott" (default), "silverman", a scalar factor, or a callable of the
    estimator returning the factor."""

    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset: Any, bw_method: BwMethod = None, weights: Any = None) -> None:
        check_arraylike("gaussian_kde", dataset)
        dataset = mnp.atleast_2d(dataset)
        if mnp.iscomplexobj(dataset):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is None:
            (dataset,) = promote_dtypes_inexact(dataset)
            weights = mnp.full(n, 1.0 / n, dtype=dataset.dtype)
        else:
            check_arraylike("gaussian_kde", weights)
            dataset, weights = promote_dtypes_inexact(dataset, weights)
            weights = mnp.atleast_1d(weights)
            weights = weights / mnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        self._set(dataset=dataset, weights=weights, neff=1 / mnp.sum(weights ** 2))
        factor = self._bandwidth_factor("scott" if bw_method is None else bw_method)
        data_covariance = mnp.atleast_2d(mnp.cov(dataset, rowvar=True, bias=False, aweights=weights))
        self._set(covariance=data_covariance * factor ** 2,
                  inv_cov=mnp.linalg.inv(data_covariance) / factor ** 2)

    def _set(self, **fields: Any) -> None:
        for name, value in fields.items():  # frozen: set once, here and when unflattening
            object.__setattr__(self, name, value)

    def _bandwidth_factor(self, bw_method: BwMethod) -> Any:
        if isinstance(bw_method, str) and bw_method == "scott":
            return mnp.power(self.neff, -1.0 / (self.d + 4))
        if isinstance(bw_method, str) and bw_method == "silverman":
            return mnp.power(self.neff * (self.d + 2) / 4.0, -1.0 / (self.d + 4))
        if mnp.isscalar(bw_method) and not isinstance(bw_method, str):
            return bw_method
        if callable(bw_method):
            return bw_method(self)
        raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")

    def tree_flatten(self) -> tuple[tuple[Any, ...], None]:
        return tuple(getattr(self, f.name) for f in dataclasses.fields(self)), None

    @classmethod
    def tree_unflatten(cls, aux_data: None, children: tuple[Any, ...]) -> gaussian_kde:
        kde = cls.__new__(cls)
        kde._set(**{f.name: child for f, child in zip(dataclasses.fields(cls), children, strict=True)})
        return kde

    @property
    def d(self) -> int:
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        return self.dataset.shape[1]

    def evaluate(self, points: Any) -> Any:
        """The estimated density at ``points`` (d, m), or at one point (d,)."""
        check_arraylike("evaluate", points)
        return _kernel_sums(False, self.dataset, self.weights, self._reshape_points(points), self.inv_cov)

    def __call__(self, points: Any) -> Any:
        return self.evaluate(points)

    def pdf(self, x: Any) -> Any:
        """The estimated density, as ``evaluate``."""
        return self.evaluate(x)

    def logpdf(self, x: Any) -> Any:
        """The log of the estimated density, summed in log space (no underflow far from the data)."""
        check_arraylike("logpdf", x)
        return _kernel_sums(True, self.dataset, self.weights, self._reshape_points(x), self.inv_cov)

    def integrate_gaussian(self, mean: Any, cov: Any) -> Any:
        """The integral of the estimate times the density of N(mean, cov)."""
        mean = mnp.atleast_1d(mnp.squeeze(mean))
        cov = mnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        return _gaussian_convolve(self.covariance + cov, self.dataset, self.weights, mean[:, None])[0]

    def integrate_box_1d(self, low: Any, high: Any) -> Any:
        """The probability mass of a one-dimensional estimate between ``low`` and ``high``."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = mnp.squeeze(mnp.sqrt(self.covariance))
        low = mnp.squeeze((low - self.dataset) / sigma)
        high = mnp.squeeze((high - self.dataset) / sigma)
        return mnp.sum(self.weights * (ndtr(high) - ndtr(low)))

    def integrate_kde(self, other: gaussian_kde) -> Any:
        """The integral of the product of this estimate and ``other``: each kernel of the smaller
        one convolved with all of the larger one's."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        small, large = (self, other) if self.n < other.n else (other, self)
        per_kernel = _gaussian_convolve(self.covariance + other.covariance, large.dataset, large.weights,
                                        small.dataset)
        return mnp.sum(per_kernel * small.weights)

    def resample(self, key: Any, shape: tuple[int, ...] = ()) -> Any:
        """Draws (d, *shape) from the estimate: a data point by weight, plus kernel noise. (jax
        transposes the noise whole, which mismatches shapes of two or more dimensions; here
        the draws stay on the trailing axes.)"""
        from mlax import random  # mlax.random's samplers import mlax.scipy: import it when drawing

        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        mean = mnp.zeros(self.d, self.covariance.dtype)
        eps = random.multivariate_normal(eps_key, mean, self.covariance, shape=shape,
                                         dtype=self.dataset.dtype)
        return self.dataset[:, ind] + mnp.moveaxis(eps, -1, 0)

    def integrate_box(self, low_bounds: Any, high_bounds: Any, maxpts: Any = None) -> Any:
        """Not in jax: only integrate_box_1d."""
        raise NotImplementedError("only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method: BwMethod = None) -> None:
        """Not in jax: the estimator is immutable."""
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")

    def _reshape_points(self, points: Any) -> Any:
        if mnp.iscomplexobj(points):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = mnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d != 1 or m != self.d:
                raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
            points = mnp.reshape(points, (self.d, 1))
        return points


def _kernel_sums(in_log: bool, dataset: Any, weights: Any, points: Any, inv_cov: Any) -> Any:
    """sum_j weights_j N(points_i; dataset_j, inv(inv_cov)) for each point i (its log if ``in_log``)."""
    dataset, weights, points, inv_cov = promote_dtypes_inexact(dataset, weights, points, inv_cov)
    whitening = cholesky(inv_cov, lower=True)
    train, test = dataset.T @ whitening, points.T @ whitening
    d = train.shape[1]
    log_norm = mnp.sum(mnp.log(mnp.diag(whitening))) - 0.5 * d * mnp.log(2 * np.pi)
    arg = log_norm - 0.5 * mnp.sum(mnp.square(train[None, :, :] - test[:, None, :]), axis=-1)  # (m, n)
    if in_log:
        return logsumexp(mnp.log(weights) + arg, axis=1)
    return mnp.sum(weights * mnp.exp(arg), axis=1)


def _gaussian_convolve(cov: Any, target: Any, weights: Any, means: Any) -> Any:
    """For each column of ``means`` (d, k): sum_j weights_j N(target_j; mean, cov), shape (k,)."""
    chol = cho_factor(cov)
    norm = 1.0 / (mnp.sqrt(2 * np.pi) ** target.shape[0] * mnp.prod(mnp.diag(chol[0])))
    d, k = means.shape
    diff = (target[:, None, :] - means[:, :, None]).reshape(d, -1)
    arg = 0.5 * mnp.sum(diff * cho_solve(chol, diff), axis=0).reshape(k, -1)
    return norm * mnp.sum(mnp.exp(-arg) * weights, axis=-1)
