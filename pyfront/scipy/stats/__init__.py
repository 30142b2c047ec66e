"""mlax.scipy.stats (as jax.scipy.stats): one submodule per distribution, each with the
functions jax has for it; mode, rankdata and sem in descriptive.py. Not yet: gaussian_kde and
multivariate_normal (they need linalg)."""

from mlax.scipy.stats import (  # noqa: F401
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from mlax.scipy.stats.descriptive import ModeResult, mode, rankdata, sem  # noqa: F401
