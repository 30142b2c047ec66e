"""mlax.scipy.special (as jax.scipy.special): logsumexp and the error-function primitives
here; the families in their modules (gamma_family.py: gamma, beta, incomplete gamma/beta,
...; zeta_family.py: zeta, polygamma, bernoulli; bessel.py; error.py: erfcx, dawsn; entropy.py: xlogy,
entr, Box-Cox, softmax, ...; ndtr.py: the normal CDF and its inverse), on mlax.lax's special
functions; integrals.py: exp1, expi, expn, sici, fresnel, spence; hypergeometric.py: hyp1f1,
hyp2f1, owens_t, bessel_jn; faddeeva.py: wofz; spherical_harmonics.py: sph_harm_y."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlax import lax
from mlax import numpy as mnp
from mlax.custom_derivatives import custom_jvp
from mlax.numpy.reductions import reduction_axes
from mlax.numpy.util import const_like, promote_args_inexact
from mlax.scipy.special import bessel as _bessel
from mlax.scipy.special import entropy as _entropy
from mlax.scipy.special import error as _error
from mlax.scipy.special import faddeeva as _faddeeva
from mlax.scipy.special import gamma_family as _gamma_family
from mlax.scipy.special import hypergeometric as _hypergeometric
from mlax.scipy.special import integrals as _integrals
from mlax.scipy.special import ndtr as _ndtr
from mlax.scipy.special import spherical_harmonics as _spherical_harmonics
from mlax.scipy.special import zeta_family as _zeta_family
from mlax.scipy.special.bessel import *  # noqa: F403
from mlax.scipy.special.entropy import *  # noqa: F403
from mlax.scipy.special.error import *  # noqa: F403
from mlax.scipy.special.faddeeva import *  # noqa: F403
from mlax.scipy.special.gamma_family import *  # noqa: F403
from mlax.scipy.special.hypergeometric import *  # noqa: F403
from mlax.scipy.special.integrals import *  # noqa: F403
from mlax.scipy.special.ndtr import *  # noqa: F403
from mlax.scipy.special.spherical_harmonics import *  # noqa: F403
from mlax.scipy.special.zeta_family import *  # noqa: F403

__all__ = ["erf", "erfc", "erfinv", "expit", "logit", "logsumexp"]
for _module in (_bessel, _entropy, _error, _faddeeva, _gamma_family, _hypergeometric, _integrals, _ndtr,
                _spherical_harmonics, _zeta_family):
    __all__ += _module.__all__


erf = _gamma_family._lax_unary("erf", "erf", "The error function.")
erfc = _gamma_family._lax_unary("erfc", "erfc", "``1 - erf(x)``, accurate for large x.")
erfinv = _gamma_family._lax_unary("erfinv", "erf_inv", "The inverse error function.")
expit = _gamma_family._lax_unary("expit", "logistic", "The logistic sigmoid ``1 / (1 + exp(-x))``.")


@custom_jvp
def _logit(x: Any) -> Any:
    return lax.log(lax.div(x, lax.sub(const_like(x, 1), x)))


# jax's rule: g / (x (1 - x)), so logit'(0) = inf and logit'(1) = inf (the quotient rule through
# log(x / (1 - x)) gives NaN there).
_logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(const_like(x, 1), x))))


def logit(x: Any) -> Any:
    """The inverse of ``expit``: ``log(x / (1 - x))``."""
    (x,) = promote_args_inexact("logit", x)
    return _logit(x)


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False, return_sign: bool = False,
              where: Any = None) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis``, shifted by the maximum so it neither overflows nor
    underflows; with ``return_sign`` also the sign of the sum (needed when ``b`` has negatives)."""
    if where is not None:
        a = mnp.where(where, a, 0)
    if b is not None:
        a, b = promote_args_inexact("logsumexp", a, b)
        a = mnp.where(mnp.not_equal(b, 0), a, -np.inf)
    else:
        (a,) = promote_args_inexact("logsumexp", a)
    dims = reduction_axes("logsumexp", axis, a.ndim)
    amax = mnp.max(a, axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    amax = lax.stop_gradient(mnp.where(mnp.isfinite(amax), amax, 0))
    amax_kept = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = mnp.exp(mnp.subtract(a, amax_kept))
    if b is not None:
        exp_a = lax.mul(exp_a, b)
    total = mnp.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(total)
    out = lax.add(lax.log(lax.abs(total)), amax)
    if return_sign:
        return out, sign
    if b is not None:
        out = mnp.where(mnp.less(sign, 0), np.array(np.nan, out.dtype), out)
    return out
