"""Spherical harmonics of mlax.scipy.special (as jax.scipy.special.sph_harm_y).

Y_n^m(theta, phi) = N_n^m P_n^|m|(cos theta) e^{i |m| phi}, and (-1)^m conj(Y_n^|m|) for m < 0,
where N_n^m P_n^m are the orthonormalized associated Legendre functions (with the
Condon-Shortley phase). As jax, they come from three recurrences over the degrees, up to a
static `n_max`, on a table indexed [order, degree, point]:

- diagonal: P_m^m = P_0^0 prod_{a <= m} (-sqrt(1 + 1 / (2a))) (1 - x^2)^(m/2), P_0^0 = 1 / (2 sqrt(pi));
- next to it: P_{m+1}^m = sqrt(2m + 3) x P_m^m;
- the rest: P_l^m = d0 x P_{l-1}^m - d1 P_{l-2}^m, d0 = sqrt((4l^2 - 1) / (l^2 - m^2)),
  d1 = sqrt((2l + 1)((l - 1)^2 - m^2) / ((2l - 3)(l^2 - m^2))).

Point k reads entry [|m_k|, n_k, k] with every index clipped into the table, as jax's
``mode="clip"`` gather: degrees above `n_max` read `n_max`, and a scalar theta serves every
point. The recurrence coefficients are exact NumPy constants; the table is built one degree
at a time (n_max + 1 vector steps), so grad/jvp/vmap go through ordinary ops.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.errors import ConcretizationTypeError
from mlax.numpy.util import concrete

__all__ = ["sph_harm_y"]


def _recurrence_coefficients(n_max: int) -> tuple[np.ndarray, np.ndarray]:
    """d0[m, l] and d1[m, l] for l >= m + 2 (zero elsewhere), in float64."""
    d0, d1 = np.zeros((2, n_max + 1, n_max + 1))
    for l in range(2, n_max + 1):
        m = np.arange(l - 1)
        gap = l * l - m * m
        d0[m, l] = np.sqrt((4.0 * l * l - 1.0) / gap)
        d1[m, l] = np.sqrt((2.0 * l + 1.0) * ((l - 1.0) ** 2 - m * m) / ((2.0 * l - 3.0) * gap))
    return d0, d1


def _legendre_table(n_max: int, x: Any) -> Any:
    """The normalized associated Legendre functions at ``x`` (rank 1), shape (order, degree, point)."""
    dtype = x.dtype
    orders = n_max + 1
    start = 0.5 / math.sqrt(math.pi)
    diagonal_factor = start * np.cumprod(-np.sqrt(1.0 + 0.5 / np.arange(1, orders)))
    next_factor = np.sqrt(2.0 * np.arange(orders) + 3.0)
    d0, d1 = (c.astype(dtype)[:, :, None] for c in _recurrence_coefficients(n_max))
    sine = lax.sqrt(np.array(1, dtype) - x * x)
    unit = np.eye(orders, dtype=dtype)[:, :, None]  # unit[m] picks order m

    power = mnp.ones_like(x)
    diagonals = [mnp.full_like(x, start)]
    degrees = [unit[0] * diagonals[0]]
    for l in range(1, orders):
        power = power * sine
        diagonals.append(np.array(diagonal_factor[l - 1], dtype) * power)
        beside = np.array(next_factor[l - 1], dtype) * x * diagonals[l - 1]
        row = unit[l] * diagonals[l] + unit[l - 1] * beside
        if l >= 2:
            row = row + (d0[:, l] * (degrees[l - 1] * x) - d1[:, l] * degrees[l - 2])
        degrees.append(row)
    return mnp.stack(degrees, axis=1)


def _static_n_max(n: Any, n_max: Any) -> int:
    try:
        return int(np.max(concrete(n)) if n_max is None else concrete(n_max))
    except ConcretizationTypeError as error:
        error.add_note("The `n_max` argument of `mlax.scipy.special.sph_harm_y` must be statically specified "
                       "to use `sph_harm_y` within transformations (as jax).")
        raise


def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None,
               n_max: int | None = None) -> Any:
    """The spherical harmonics Y_n^m(theta, phi) (theta the colatitude, phi the longitude) of
    the degrees ``n`` (rank 1) and orders ``m``; ``n_max`` (static, default ``max(n)``) bounds
    the degrees, larger ones are clipped to it (jax's extra argument)."""
    if diff_n is not None:
        raise NotImplementedError("The 'diff_n' argument to mlax.scipy.special.sph_harm_y is not supported "
                                  "(as jax).")
    if mnp.isscalar(theta):
        theta = mnp.array([theta])
    n_max = _static_n_max(n, n_max)
    n, m = mnp.asarray(n), mnp.asarray(m)
    x = mnp.cos(theta)
    table = _legendre_table(n_max, x)
    order = mnp.abs(m)
    points = mnp.arange(len(n))
    value = table[mnp.clip(order, 0, n_max), mnp.clip(n, 0, n_max), mnp.clip(points, 0, x.shape[0] - 1)]
    angle = order * phi
    harmonic = lax.complex(value * mnp.cos(angle), value * mnp.sin(angle))
    return mnp.where(m < 0, (-1.0) ** order * mnp.conj(harmonic), harmonic)
