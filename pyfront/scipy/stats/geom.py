"""mlax.scipy.stats.geom: the geometric distribution's pmf, as jax.scipy.stats.geom (the same
formulas; arguments are promoted together to an inexact dtype and broadcast)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.numpy.util import promote_args_inexact
from mlax.scipy.special import xlog1py

__all__ = ["logpmf", "pmf"]


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``(x - 1) log(1 - p) + log p`` for x = k - loc >= 1."""
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    x = k - loc
    return mnp.where(x <= 0, -np.inf, xlog1py(x - 1, -p) + lax.log(p))


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """``exp(logpmf)``."""
    return mnp.exp(logpmf(k, p, loc))
