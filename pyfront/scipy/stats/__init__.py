"""mlax.scipy.stats (as jax.scipy.stats): one submodule per distribution, each with the
functions jax has for it; mode, rankdata and sem in descriptive.py; the gaussian_kde class in
kde.py."""

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
    multivariate_normal,
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
from mlax.scipy.stats.kde import gaussian_kde  # noqa: F401
