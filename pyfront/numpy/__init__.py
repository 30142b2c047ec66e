"""mlax.numpy: the NumPy API on mlax arrays (as jax.numpy)."""

import jax.numpy as _jax_numpy  # noqa: E402

from mlax.array import Array as ndarray  # noqa: F401
from mlax.numpy import (
    fft,  # noqa: F401  (jnp.fft's namespace)
    linalg,  # noqa: F401  (jnp.linalg's namespace; the products are mlax.numpy.products)
)
from mlax.numpy.assembly import *  # noqa: F403
from mlax.numpy.bessel import *  # noqa: F403
from mlax.numpy.bitpacking import *  # noqa: F403
from mlax.numpy.complex_numbers import *  # noqa: F403
from mlax.numpy.creation import *  # noqa: F403
from mlax.numpy.differences import *  # noqa: F403
from mlax.numpy.dtypes import *  # noqa: F403
from mlax.numpy.elementwise import *  # noqa: F403
from mlax.numpy.histograms import *  # noqa: F403
from mlax.numpy.host_io import *  # noqa: F403
from mlax.numpy.index_tricks import *  # noqa: F403
from mlax.numpy.indexing import *  # noqa: F403
from mlax.numpy.manipulation import *  # noqa: F403
from mlax.numpy.math_extra import *  # noqa: F403
from mlax.numpy.math_more import *  # noqa: F403
from mlax.numpy.polynomials import *  # noqa: F403
from mlax.numpy.products import *  # noqa: F403
from mlax.numpy.reductions import *  # noqa: F403
from mlax.numpy.selection import *  # noqa: F403
from mlax.numpy.setops import *  # noqa: F403
from mlax.numpy.sorting import *  # noqa: F403
from mlax.numpy.statistics import *  # noqa: F403
from mlax.numpy.util import array, asarray  # noqa: F401
from mlax.numpy.vectorize import vectorize  # noqa: F401
from mlax.numpy.whole_arrays import *  # noqa: F403
from mlax.numpy.windows import *  # noqa: F403
from mlax.out_sharding import accept_out_sharding as _accept_out_sharding  # noqa: E402

_accept_out_sharding(globals(), _jax_numpy, "mlax.numpy")

from mlax.numpy.ufuncs import as_ufuncs as _as_ufuncs  # noqa: E402
from mlax.numpy.ufuncs import frompyfunc, ufunc  # noqa: E402, F401

_as_ufuncs(globals())  # add, multiply, maximum, logaddexp, ... are ufuncs, as in jnp
